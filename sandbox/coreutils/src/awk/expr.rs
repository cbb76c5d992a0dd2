//! awk's expressions, evaluated: variables (global slots, the running function's frame, the
//! record counters), array elements and their subscripts, assignment, arithmetic and
//! comparison with awk's number-or-string rules, and calls of user functions (arrays by
//! reference, everything else by value). `x = x …` appends in place.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::rc::Rc;

use super::array::{Array, Key};
use super::ast::*;
use super::error::AwkErrorKind;
use super::eval::{Cell, Flow, MAX_CALL_DEPTH, Machine, Run, check_size};
use super::value::Value;

impl Machine<'_, '_, '_> {
    /// The array a reference names (a local one is made on first use).
    pub(super) fn array(&mut self, array: ArrayRef) -> Run<Rc<RefCell<Array>>> {
        let cell = match array {
            ArrayRef::Global(i) => &mut self.globals[i as usize],
            ArrayRef::Local(i) => &mut self.locals[self.frame + i as usize],
        };
        match cell {
            Cell::Arr(array) => Ok(array.clone()),
            Cell::Val(Value::Uninit) => {
                let array: Rc<RefCell<Array>> = Rc::default();
                *cell = Cell::Arr(array.clone());
                Ok(array)
            }
            Cell::Val(_) => {
                Err(AwkErrorKind::ArrayScalar("a scalar used as an array".into()).into())
            }
        }
    }

    /// A subscript list as a key: one integral number keys by integer, anything else by its
    /// text; several are joined by `SUBSEP`.
    pub(super) fn subscript(&mut self, subscripts: &[Expr]) -> Run<Subscript> {
        if let [only] = subscripts {
            let value = self.eval(only)?;
            if let Value::Num(n) = value
                && n.fract() == 0.0
                && n.abs() <= f64::from(i32::MAX)
            {
                return Ok(Subscript::Int(n as i32));
            }
            return Ok(Subscript::Str(self.take_text(value)));
        }
        let subsep = self.text_of_global(SUBSEP);
        let mut key = String::new();
        for (i, expr) in subscripts.iter().enumerate() {
            if i > 0 {
                key.push_str(&subsep);
            }
            let value = self.eval(expr)?;
            key.push_str(&self.take_text(value));
        }
        Ok(Subscript::Str(key))
    }

    /// The value of a scalar slot.
    fn slot(&mut self, slot: Slot) -> Run<Value> {
        let cell = match slot {
            Slot::Global(i) => &self.globals[i as usize],
            Slot::Local(i) => &self.locals[self.frame + i as usize],
            Slot::Special(special) => return self.special(special),
        };
        match cell {
            Cell::Val(value) => Ok(value.clone()),
            Cell::Arr(_) => {
                Err(AwkErrorKind::ArrayScalar("an array used as a scalar".into()).into())
            }
        }
    }

    fn special(&mut self, special: Special) -> Run<Value> {
        Ok(Value::Num(match special {
            Special::Nr => self.io.nr,
            Special::Fnr => self.io.fnr,
            Special::Nf => self.nf()? as f64,
        }))
    }

    pub(super) fn set_slot(&mut self, slot: Slot, value: Value) -> Run<()> {
        let cell = match slot {
            Slot::Global(i) => &mut self.globals[i as usize],
            Slot::Local(i) => &mut self.locals[self.frame + i as usize],
            Slot::Special(Special::Nr) => {
                self.io.nr = value.number();
                return Ok(());
            }
            Slot::Special(Special::Fnr) => {
                self.io.fnr = value.number();
                return Ok(());
            }
            Slot::Special(Special::Nf) => return self.set_nf(value.number()),
        };
        match cell {
            Cell::Val(old) => {
                *old = value;
                Ok(())
            }
            Cell::Arr(_) => Err(AwkErrorKind::ArrayScalar("assignment to an array".into()).into()),
        }
    }

    /// Assigns `value` to an lvalue: a variable, an element or a field.
    pub(super) fn assign(&mut self, target: &Expr, value: Value) -> Run<()> {
        match target {
            Expr::Var(slot) => self.set_slot(*slot, value),
            Expr::Field(index) => {
                let index = self.field_number(index)?;
                let text = self.take_text(value);
                self.set_field(index, text)
            }
            Expr::Index(array, subscripts) => {
                let key = self.subscript(subscripts)?;
                let array = self.array(*array)?;
                let before = array.borrow().len();
                *array.borrow_mut().entry(key.as_key()) = value;
                let after = array.borrow().len();
                self.count_elements(before, after)
            }
            _ => Err(AwkErrorKind::NotSupported("assignment to a non-variable".into()).into()),
        }
    }

    /// A field number: non-negative, below the field cap.
    pub(super) fn field_number(&mut self, index: &Expr) -> Run<usize> {
        let n = self.eval(index)?.number();
        if !(0.0..=super::io::MAX_FIELDS as f64).contains(&n) {
            return Err(AwkErrorKind::FieldIndex(n).into());
        }
        Ok(n as usize)
    }

    /// Evaluates `expr` for its effects only: `x = x …` then appends to `x` in place rather
    /// than copying it (its value, a copy, is not needed).
    pub(super) fn eval_for_effect(&mut self, expr: &Expr) -> Run<()> {
        let Expr::Assign {
            target,
            op: None,
            value,
        } = expr
        else {
            return self.eval(expr).map(drop);
        };
        let (Expr::Var(slot @ (Slot::Global(_) | Slot::Local(_))), Some(operands)) =
            (target.as_ref(), appended_to(target, value))
        else {
            return self.eval(expr).map(drop);
        };
        // The operands cannot change the variable, so evaluating them first is what awk does.
        let mut tail = String::new();
        for operand in operands {
            let value = self.eval(operand)?;
            tail.push_str(&self.take_text(value));
            check_size(tail.len())?;
        }
        let current = std::mem::take(match slot {
            Slot::Global(i) => &mut self.globals[*i as usize],
            Slot::Local(i) => &mut self.locals[self.frame + *i as usize],
            Slot::Special(_) => unreachable!("matched above"),
        });
        let mut text = match current {
            Cell::Val(value) => self.take_text(value),
            Cell::Arr(array) => {
                self.set_cell(*slot, Cell::Arr(array));
                return Err(AwkErrorKind::ArrayScalar("assignment to an array".into()).into());
            }
        };
        let fits = check_size(text.len() + tail.len()).and_then(|()| self.charge(tail.len()));
        if fits.is_ok() {
            text.push_str(&tail);
        }
        self.set_cell(*slot, Cell::Val(Value::Str(text)));
        fits
    }

    fn set_cell(&mut self, slot: Slot, cell: Cell) {
        match slot {
            Slot::Global(i) => self.globals[i as usize] = cell,
            Slot::Local(i) => self.locals[self.frame + i as usize] = cell,
            Slot::Special(_) => {}
        }
    }

    /// Evaluates `expr`; every string it reads or builds counts against [`MAX_TEXT_WORK`].
    pub(super) fn eval(&mut self, expr: &Expr) -> Run<Value> {
        let value = match expr {
            // Leaves: no recursion to count.
            Expr::Num(n) => return Ok(Value::Num(*n)),
            Expr::Var(slot) => self.slot(*slot)?,
            _ => {
                self.enter()?;
                let value = self.eval_uncounted(expr);
                self.nesting -= 1;
                value?
            }
        };
        if let Value::Str(text) | Value::Data(text) = &value {
            self.charge(text.len())?;
        }
        Ok(value)
    }

    fn eval_uncounted(&mut self, expr: &Expr) -> Run<Value> {
        Ok(match expr {
            Expr::Num(n) => Value::Num(*n),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Regex(re) => {
                self.charge(self.io.record.len())?;
                Value::from_bool(re.is_match(&self.io.record))
            }
            Expr::Field(index) => {
                let index = self.field_number(index)?;
                self.field(index)?
            }
            Expr::Var(slot) => self.slot(*slot)?,
            Expr::Index(array, subscripts) => {
                let key = self.subscript(subscripts)?;
                let array = self.array(*array)?;
                let before = array.borrow().len();
                let value = array.borrow_mut().entry(key.as_key()).clone();
                let after = array.borrow().len();
                self.count_elements(before, after)?;
                value
            }
            Expr::In(subscripts, array) => {
                let key = self.subscript(subscripts)?;
                let array = self.array(*array)?;
                let found = array.borrow_mut().contains(key.as_key());
                Value::from_bool(found)
            }
            Expr::Assign { target, op, value } => {
                let value = self.eval(value)?;
                let value = match op {
                    None => value,
                    Some(op) => {
                        let current = self.eval(target)?.number();
                        Value::Num(arithmetic(*op, current, value.number())?)
                    }
                };
                self.assign(target, value.clone())?;
                value
            }
            Expr::Step {
                target,
                delta,
                prefix,
            } => {
                let old = self.eval(target)?.number();
                self.assign(target, Value::Num(old + delta))?;
                Value::Num(if *prefix { old + delta } else { old })
            }
            Expr::Neg(inner) => Value::Num(-self.eval(inner)?.number()),
            Expr::Plus(inner) => Value::Num(self.eval(inner)?.number()),
            Expr::Not(inner) => Value::from_bool(!self.eval(inner)?.truthy()),
            Expr::And(left, right) => {
                Value::from_bool(self.eval(left)?.truthy() && self.eval(right)?.truthy())
            }
            Expr::Or(left, right) => {
                Value::from_bool(self.eval(left)?.truthy() || self.eval(right)?.truthy())
            }
            Expr::Compare(cmp, left, right) => {
                let (a, b) = (self.eval(left)?, self.eval(right)?);
                let order = if a.is_numeric() && b.is_numeric() {
                    // As C compares: NaN is neither below nor above, so "equal".
                    let (x, y) = (a.number(), b.number());
                    if x < y {
                        Ordering::Less
                    } else if x > y {
                        Ordering::Greater
                    } else {
                        Ordering::Equal
                    }
                } else {
                    self.text(&a).cmp(&self.text(&b))
                };
                Value::from_bool(match cmp {
                    Cmp::Eq => order.is_eq(),
                    Cmp::Ne => order.is_ne(),
                    Cmp::Lt => order.is_lt(),
                    Cmp::Le => order.is_le(),
                    Cmp::Gt => order.is_gt(),
                    Cmp::Ge => order.is_ge(),
                })
            }
            Expr::Arith(op, left, right) => {
                let (a, b) = (self.eval(left)?.number(), self.eval(right)?.number());
                Value::Num(arithmetic(*op, a, b)?)
            }
            Expr::Concat(left, right) => {
                let left = self.eval(left)?;
                let mut text = self.take_text(left);
                let right = self.eval(right)?;
                let right = self.take_text(right);
                check_size(text.len() + right.len())?;
                text.push_str(&right);
                Value::Str(text)
            }
            Expr::Match {
                text,
                pattern,
                negate,
            } => {
                let value = self.eval(text)?;
                let text = self.take_text(value);
                let regex = self.pattern(pattern)?;
                Value::from_bool(regex.is_match(&text) != *negate)
            }
            Expr::Cond(condition, yes, no) => {
                if self.condition(condition)? {
                    self.eval(yes)?
                } else {
                    self.eval(no)?
                }
            }
            Expr::Call(builtin, args) => self.call(*builtin, args)?,
            Expr::User(index, args) => self.call_user(*index as usize, args)?,
            Expr::Getline { source, target } => self.getline(source, target.as_deref())?,
        })
    }

    /// Calls user function `index`: bare names that are (or must be) arrays pass by
    /// reference, everything else by value; missing arguments are uninitialised.
    fn call_user(&mut self, index: usize, args: &[Expr]) -> Run<Value> {
        let program = self.program;
        let function = &program.functions[index];
        if self.calls >= MAX_CALL_DEPTH {
            return Err(AwkErrorKind::CallDepth(MAX_CALL_DEPTH).into());
        }
        let mut frame = Vec::with_capacity(function.params);
        for (i, wants_array) in function.arrays.iter().enumerate() {
            let cell = match args.get(i) {
                None if *wants_array => Cell::Arr(Rc::default()),
                None => Cell::Val(Value::Uninit),
                Some(Expr::Var(slot @ (Slot::Global(_) | Slot::Local(_)))) => {
                    let reference = match slot {
                        Slot::Global(i) => ArrayRef::Global(*i),
                        _ => ArrayRef::Local(match slot {
                            Slot::Local(i) => *i,
                            _ => 0,
                        }),
                    };
                    let is_array = matches!(self.cell(*slot), Cell::Arr(_));
                    if is_array || *wants_array {
                        Cell::Arr(self.array(reference).map_err(|_| {
                            AwkErrorKind::ArrayScalar(format!(
                                "a scalar passed as array parameter {} of `{}'",
                                i + 1,
                                function.name
                            ))
                        })?)
                    } else {
                        Cell::Val(self.slot(*slot)?)
                    }
                }
                Some(_) if *wants_array => {
                    return Err(AwkErrorKind::ArrayScalar(format!(
                        "a scalar passed as array parameter {} of `{}'",
                        i + 1,
                        function.name
                    ))
                    .into());
                }
                Some(expr) => Cell::Val(self.eval(expr)?),
            };
            frame.push(cell);
        }
        for extra in args.iter().skip(function.params) {
            self.eval(extra)?;
        }
        let base = self.locals.len();
        self.locals.extend(frame);
        let saved = std::mem::replace(&mut self.frame, base);
        self.calls += 1;
        let line = self.line;
        let result = self.run(&function.body);
        self.line = line;
        self.calls -= 1;
        self.frame = saved;
        let mut freed = 0;
        for cell in self.locals.drain(base..) {
            if let Cell::Arr(array) = cell
                && Rc::strong_count(&array) == 1
            {
                freed += array.borrow().len();
            }
        }
        self.elements = self.elements.saturating_sub(freed);
        match result? {
            Flow::Return(value) => Ok(value),
            _ => Ok(Value::Uninit),
        }
    }

    fn cell(&self, slot: Slot) -> &Cell {
        match slot {
            Slot::Global(i) => &self.globals[i as usize],
            Slot::Local(i) => &self.locals[self.frame + i as usize],
            Slot::Special(_) => &Cell::Val(Value::Uninit),
        }
    }

    /// `length(x)` of a lone name: an array's size or the text's length.
    pub(super) fn length_of(&mut self, slot: Slot) -> Run<f64> {
        if let Cell::Arr(array) = self.cell(slot) {
            return Ok(array.borrow().len() as f64);
        }
        let value = self.slot(slot)?;
        Ok(self.text(&value).chars().count() as f64)
    }
}

/// An evaluated subscript.
pub enum Subscript {
    Int(i32),
    Str(String),
}

impl Subscript {
    pub fn as_key(&self) -> Key<'_> {
        match self {
            Subscript::Int(i) => Key::Int(*i),
            Subscript::Str(s) => Key::Str(s),
        }
    }
}

/// For `name = name a b …` (a variable assigned itself with more appended), the appended
/// operands — when evaluating them cannot change the variable, so appending them in place
/// gives what copying would.
fn appended_to<'e>(target: &Expr, value: &'e Expr) -> Option<Vec<&'e Expr>> {
    let Expr::Var(name) = target else {
        return None;
    };
    let mut operands = Vec::new();
    let mut left = value;
    while let Expr::Concat(inner, right) = left {
        operands.push(right.as_ref());
        left = inner;
    }
    let appends = matches!(left, Expr::Var(first) if first == name);
    if !appends || operands.is_empty() || !operands.iter().all(|e| pure(e)) {
        return None;
    }
    operands.reverse();
    Some(operands)
}

/// Whether evaluating `expr` changes no variable, field, record or input position.
fn pure(expr: &Expr) -> bool {
    match expr {
        Expr::Num(_) | Expr::Str(_) | Expr::Regex(_) | Expr::Var(_) => true,
        Expr::Field(inner) | Expr::Neg(inner) | Expr::Not(inner) | Expr::Plus(inner) => pure(inner),
        Expr::Arith(_, a, b)
        | Expr::Compare(_, a, b)
        | Expr::And(a, b)
        | Expr::Or(a, b)
        | Expr::Concat(a, b) => pure(a) && pure(b),
        Expr::Match { text, pattern, .. } => pure(text) && pure(pattern),
        Expr::Cond(a, b, c) => pure(a) && pure(b) && pure(c),
        Expr::Call(builtin, args) => {
            !matches!(
                builtin,
                Builtin::Sub
                    | Builtin::Gsub
                    | Builtin::Split
                    | Builtin::Match
                    | Builtin::System
                    | Builtin::Close
                    | Builtin::Srand
                    | Builtin::Rand
            ) && args.iter().all(pure)
        }
        Expr::Index(_, subscripts) | Expr::In(subscripts, _) => subscripts.iter().all(pure),
        Expr::Assign { .. } | Expr::Step { .. } | Expr::User(..) | Expr::Getline { .. } => false,
    }
}

fn arithmetic(op: Arith, a: f64, b: f64) -> Run<f64> {
    Ok(match op {
        Arith::Add => a + b,
        Arith::Sub => a - b,
        Arith::Mul => a * b,
        Arith::Pow => a.powf(b),
        Arith::Div | Arith::Mod if b == 0.0 => return Err(AwkErrorKind::DivisionByZero.into()),
        Arith::Div => a / b,
        Arith::Mod => a % b,
    })
}
