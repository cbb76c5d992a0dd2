//! awk's evaluator: a [`Machine`] runs a parsed [`Program`] — `BEGIN` rules, every other rule
//! on each record of the input, then `END` rules — within its budgets: [`MAX_STEPS`]
//! statements, [`MAX_TEXT_WORK`] bytes of text moved (a run-time regex compile counts
//! [`REGEX_COMPILE_WORK`], each match, field or key [`PIECE_WORK`], writing a number what its
//! conversion costs), strings of at most [`MAX_STRING_BYTES`], [`MAX_ELEMENTS`] array
//! elements, user functions [`MAX_CALL_DEPTH`] deep. `x = x …` appends in place, so building a
//! string piece by piece stays linear. Records, fields and I/O are in [`super::io`], builtin
//! functions and `printf` in [`super::builtins`].
//!
//! `next`, `nextfile` and `exit` unwind through expressions (a function may call them) as a
//! [`Stop`], the error side of every evaluation, beside real errors.

use std::cell::RefCell;
use std::rc::Rc;

use super::array::{Array, Key};
use super::ast::*;
use super::error::{AwkError, AwkErrorKind};
use super::io::Io;
use super::value::{NumFormat, Value};
use crate::Ctx;

/// Statements (and records) one `awk` run may execute.
pub const MAX_STEPS: u64 = 2_000_000;

/// The longest string a value or the record may hold.
pub const MAX_STRING_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of text one run may move in total — every string value read or built, every record
/// split or rebuilt — so that a few steps on long strings cannot take as long as billions.
pub const MAX_TEXT_WORK: u64 = 1 << 30;

/// What compiling a regular expression computed at run time counts against
/// [`MAX_TEXT_WORK`], beyond its length: about what moving this many bytes costs.
pub const REGEX_COMPILE_WORK: usize = 64 * 1024;

/// What each match a scan finds (`gsub`), each field split or joined and each key listed
/// counts against [`MAX_TEXT_WORK`], beyond its text: finding an empty match or joining a
/// field takes 30–80 ns here, about what moving this many bytes costs, so that millions of
/// tiny pieces cannot take as long as billions of bytes.
pub const PIECE_WORK: usize = 128;

/// Array elements alive at once, over all arrays (about 100 bytes each).
pub const MAX_ELEMENTS: usize = 1_000_000;

/// User functions calling each other (or themselves) at most this deep: each level is a few
/// frames of the evaluator's recursion, and the browser's stack is small.
pub const MAX_CALL_DEPTH: usize = 200;

/// Expressions and statements being evaluated inside one another, calls included: each is a
/// frame or two of the evaluator's recursion (about 300 bytes in a release build), so this
/// keeps the evaluator within about half of the browser's 1 MiB stack whatever the program.
pub const MAX_NESTING: usize = 1500;

/// What an awk run from awk (`system("awk …")`) counts against [`MAX_NESTING`] before its own
/// evaluation begins: the frames between the two evaluators and the inner program's parse
/// (which nests up to 100 levels of its own). The inner run's evaluation starts where its
/// caller's stands plus this, so a chain of awks run from awks shares the one stack bound —
/// at most ten deep — rather than each taking a whole one.
pub const NESTED_RUN: usize = 150;

/// Steps ([`MAX_STEPS`]: statements, records, …) between two checks of the call's limits
/// ([`crate::CallLimits::check`]): a clock read in the browser costs about a step's time, so
/// this is well under 1 % of a run, and a run that outlives the call's time stops within a
/// millisecond or so of it.
const CHECK_EVERY: u64 = 4096;

thread_local! {
    /// Where an awk starting now begins its nesting: 0, or inside a command an awk runs, that
    /// awk's nesting plus [`NESTED_RUN`].
    static NESTING_BASE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Runs `command` (one an awk at `nesting` runs) with any awk it starts evaluating on top.
pub(super) fn nested<T>(nesting: usize, command: impl FnOnce() -> T) -> T {
    /// Puts the caller's base back however `command` ends (a panic included).
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            NESTING_BASE.with(|base| base.set(self.0));
        }
    }
    let _restore = Restore(NESTING_BASE.with(|base| base.replace(nesting + NESTED_RUN)));
    command()
}

/// Why evaluation is unwinding: an error, or a statement that leaves the rule.
#[derive(Debug)]
pub enum Stop {
    Error(AwkError),
    Next,
    NextFile,
    Exit,
}

impl From<AwkError> for Stop {
    fn from(error: AwkError) -> Self {
        Stop::Error(error)
    }
}

impl From<AwkErrorKind> for Stop {
    fn from(kind: AwkErrorKind) -> Self {
        Stop::Error(kind.into())
    }
}

pub type Run<T> = Result<T, Stop>;

/// What a statement asks of the enclosing loop or function.
pub enum Flow {
    Normal,
    Break,
    Continue,
    Return(Value),
}

/// A variable's storage: a scalar, or an array shared by reference with the functions it is
/// passed to.
#[derive(Debug)]
pub enum Cell {
    Val(Value),
    Arr(Rc<RefCell<Array>>),
}

pub struct Machine<'p, 'c, 'a> {
    pub(super) program: &'p Program,
    pub(super) ctx: &'c mut Ctx<'a>,
    pub(super) globals: Vec<Cell>,
    /// Every active function's parameters, the innermost last; `frame` is where it starts.
    pub(super) locals: Vec<Cell>,
    pub(super) frame: usize,
    pub(super) calls: usize,
    /// Evaluations in progress inside one another (see [`MAX_NESTING`]).
    pub(super) nesting: usize,
    pub(super) io: Io,
    pub(super) steps: u64,
    /// Text work so far ([`MAX_TEXT_WORK`]); a cell so that writing a number, which reads
    /// the machine, can add what it cost, checked at the next step or charge.
    pub(super) work: std::cell::Cell<u64>,
    pub(super) elements: usize,
    /// The program line of the statement running, for errors.
    pub(super) line: usize,
    pub exit_code: i32,
}

impl<'p, 'c, 'a> Machine<'p, 'c, 'a> {
    /// A machine for `program` with the operands `args` (files and assignments, becoming
    /// `ARGV`) and the `-v` assignments already made in `assigned`.
    pub fn new(
        program: &'p Program,
        ctx: &'c mut Ctx<'a>,
        args: &[String],
        assigned: Vec<(String, String)>,
    ) -> Self {
        let mut globals: Vec<Cell> = program
            .globals
            .iter()
            .map(|(_, is_array)| {
                if *is_array {
                    Cell::Arr(Rc::default())
                } else {
                    Cell::Val(Value::Uninit)
                }
            })
            .collect();
        let defaults = [
            (FS, " "),
            (OFS, " "),
            (ORS, "\n"),
            (RS, "\n"),
            (SUBSEP, "\x1c"),
            (CONVFMT, "%.6g"),
            (OFMT, "%.6g"),
        ];
        for (slot, text) in defaults {
            globals[slot as usize] = Cell::Val(Value::Str(text.into()));
        }
        globals[RSTART as usize] = Cell::Val(Value::Num(0.0));
        globals[RLENGTH as usize] = Cell::Val(Value::Num(-1.0));
        globals[ARGC as usize] = Cell::Val(Value::Num((args.len() + 1) as f64));
        let mut machine = Machine {
            program,
            ctx,
            globals,
            locals: Vec::new(),
            frame: 0,
            calls: 0,
            nesting: NESTING_BASE.with(std::cell::Cell::get),
            io: Io::default(),
            steps: 0,
            work: std::cell::Cell::new(0),
            elements: 0,
            line: 0,
            exit_code: 0,
        };
        let environ: Vec<(String, String)> = machine
            .ctx
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Cell::Arr(array) = &machine.globals[ENVIRON as usize] {
            let mut array = array.borrow_mut();
            for (name, value) in environ {
                *array.entry(Key::Str(&name)) = Value::Data(value);
            }
        }
        if let Cell::Arr(array) = &machine.globals[ARGV as usize] {
            let mut array = array.borrow_mut();
            *array.entry(Key::Int(0)) = Value::Str("awk".into());
            for (i, arg) in args.iter().enumerate() {
                *array.entry(Key::Int(i as i32 + 1)) = Value::Data(arg.clone());
            }
        }
        for (name, value) in assigned {
            machine.assign_by_name(&name, value);
        }
        machine
    }

    /// A command-line assignment (`-v name=value` or a `name=value` operand).
    pub(super) fn assign_by_name(&mut self, name: &str, value: String) {
        let slot = self.program.globals.iter().position(|(n, _)| n == name);
        let value = Value::Data(value);
        match (name, slot) {
            ("NR", _) => self.io.nr = value.number(),
            ("FNR", _) => self.io.fnr = value.number(),
            ("NF", _) => {
                let _ = self.set_nf(value.number());
            }
            (_, Some(slot)) => {
                if let Cell::Val(v) = &mut self.globals[slot] {
                    *v = value;
                }
            }
            _ => {}
        }
    }

    /// Runs the program: `BEGIN`, the records, `END`. An error ends it (and is returned);
    /// `exit` skips to `END` (or, within `END`, ends it).
    pub fn execute(&mut self) -> Result<(), AwkError> {
        let program = self.program;
        let mut exited = false;
        for rule in &program.rules {
            if let (Pattern::Begin, Some(action)) = (&rule.pattern, &rule.action) {
                match self.run_action(action) {
                    Ok(()) => {}
                    Err(Stop::Exit) => {
                        exited = true;
                        break;
                    }
                    Err(Stop::Next | Stop::NextFile) => {
                        return Err(self.error(AwkErrorKind::NotSupported(
                            "`next' in a BEGIN action".into(),
                        )));
                    }
                    Err(Stop::Error(e)) => return Err(e),
                }
            }
        }
        let reads_input = program
            .rules
            .iter()
            .any(|r| !matches!(r.pattern, Pattern::Begin));
        if !exited && reads_input {
            match self.records() {
                Ok(()) => {}
                Err(Stop::Exit) => {}
                Err(Stop::Next | Stop::NextFile) => {}
                Err(Stop::Error(e)) => return Err(e),
            }
        }
        for rule in &program.rules {
            if let (Pattern::End, Some(action)) = (&rule.pattern, &rule.action) {
                match self.run_action(action) {
                    Ok(()) => {}
                    Err(Stop::Exit) => break,
                    Err(Stop::Next | Stop::NextFile) => {
                        return Err(self
                            .error(AwkErrorKind::NotSupported("`next' in an END action".into())));
                    }
                    Err(Stop::Error(e)) => return Err(e),
                }
            }
        }
        Ok(())
    }

    fn error(&self, kind: AwkErrorKind) -> AwkError {
        AwkError {
            kind,
            line: self.line,
        }
    }

    fn run_action(&mut self, action: &[Stmt]) -> Run<()> {
        match self.run(action)? {
            Flow::Normal | Flow::Return(_) | Flow::Break | Flow::Continue => Ok(()),
        }
    }

    /// The main rules over every record, until the input ends or `exit`.
    fn records(&mut self) -> Run<()> {
        let program = self.program;
        let mut in_range = vec![false; program.rules.len()];
        while self.next_main_record()? {
            self.tick()?;
            for (index, rule) in program.rules.iter().enumerate() {
                if !self.selects(&rule.pattern, &mut in_range[index])? {
                    continue;
                }
                let result = match &rule.action {
                    Some(action) => self.run_action(action),
                    None => self.print_record(),
                };
                match result {
                    Ok(()) => {}
                    Err(Stop::Next) => break,
                    Err(Stop::NextFile) => {
                        self.io.skip_file();
                        break;
                    }
                    Err(other) => return Err(other),
                }
            }
        }
        Ok(())
    }

    fn print_record(&mut self) -> Run<()> {
        self.print(&[], None)
    }

    /// Whether `pattern` selects the current record; `in_range` is a range pattern's state.
    fn selects(&mut self, pattern: &Pattern, in_range: &mut bool) -> Run<bool> {
        Ok(match pattern {
            Pattern::Begin | Pattern::End => false,
            Pattern::All => true,
            Pattern::When(expr) => self.condition(expr)?,
            Pattern::Range(start, end) => {
                if *in_range || self.condition(start)? {
                    *in_range = !self.condition(end)?;
                    true
                } else {
                    false
                }
            }
        })
    }

    /// An expression as a condition: a regex literal alone matches `$0`.
    pub(super) fn condition(&mut self, expr: &Expr) -> Run<bool> {
        Ok(self.eval(expr)?.truthy())
    }

    /// Counts one level of nesting (pair with `self.nesting -= 1`); an error past
    /// [`MAX_NESTING`].
    pub(super) fn enter(&mut self) -> Run<()> {
        if self.nesting >= MAX_NESTING {
            return Err(self.error(AwkErrorKind::Nesting(MAX_NESTING)).into());
        }
        self.nesting += 1;
        Ok(())
    }

    pub(super) fn tick(&mut self) -> Run<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.error(AwkErrorKind::Steps(MAX_STEPS)).into());
        }
        if self.steps.is_multiple_of(CHECK_EVERY) {
            self.ctx.limits.check().map_err(AwkErrorKind::Limit)?;
        }
        self.charge(0)
    }

    /// Counts `bytes` of text moved against [`MAX_TEXT_WORK`].
    pub(super) fn charge(&mut self, bytes: usize) -> Run<()> {
        self.add_work(bytes);
        if self.work.get() > MAX_TEXT_WORK {
            return Err(self.error(AwkErrorKind::Work(MAX_TEXT_WORK >> 20)).into());
        }
        Ok(())
    }

    /// Counts work without checking the budget: the next [`Machine::tick`] or
    /// [`Machine::charge`] does.
    pub(super) fn add_work(&self, bytes: usize) {
        self.work.set(self.work.get().saturating_add(bytes as u64));
    }

    /// Counts a change in the number of array elements against [`MAX_ELEMENTS`].
    pub(super) fn count_elements(&mut self, before: usize, after: usize) -> Run<()> {
        self.elements = (self.elements + after).saturating_sub(before);
        if self.elements > MAX_ELEMENTS {
            return Err(self.error(AwkErrorKind::Elements(MAX_ELEMENTS)).into());
        }
        Ok(())
    }

    pub(super) fn convfmt(&self) -> NumFormat<'_> {
        match &self.globals[CONVFMT as usize] {
            Cell::Val(Value::Str(s) | Value::Data(s)) => NumFormat::of(s),
            _ => NumFormat::G6,
        }
    }

    /// How `print` writes numbers: `OFMT`.
    fn ofmt(&self) -> NumFormat<'_> {
        match &self.globals[OFMT as usize] {
            Cell::Val(Value::Str(s) | Value::Data(s)) => NumFormat::of(s),
            _ => NumFormat::G6,
        }
    }

    /// A value as text, numbers through `CONVFMT`.
    pub(super) fn text(&self, value: &Value) -> String {
        let (text, work) = self.convfmt().text(value);
        self.add_work(work);
        text
    }

    pub(super) fn take_text(&self, value: Value) -> String {
        let (text, work) = self.convfmt().take_text(value);
        self.add_work(work);
        text
    }

    /// A number as `print` writes it, through `OFMT`.
    pub(super) fn output_number(&self, n: f64) -> String {
        let (text, work) = self.ofmt().number_with_work(n);
        self.add_work(work);
        text
    }

    /// A special global's text (`FS`, `OFS`, `ORS`, `SUBSEP`, …).
    pub(super) fn text_of_global(&self, slot: u32) -> String {
        match &self.globals[slot as usize] {
            Cell::Val(value) => self.text(value),
            Cell::Arr(_) => String::new(),
        }
    }

    pub(super) fn run(&mut self, statements: &[Stmt]) -> Run<Flow> {
        for statement in statements {
            match self.exec(statement)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, statement: &Stmt) -> Run<Flow> {
        self.line = statement.line;
        self.tick()?;
        self.enter()?;
        let result = self.exec_kind(&statement.kind);
        self.nesting -= 1;
        if let Err(Stop::Error(e)) = &result
            && e.line == 0
        {
            let kind = e.kind.clone();
            return Err(AwkError {
                kind,
                line: statement.line,
            }
            .into());
        }
        result
    }

    fn exec_kind(&mut self, kind: &StmtKind) -> Run<Flow> {
        match kind {
            StmtKind::Print(args, output) => self.print(args, output.as_ref())?,
            StmtKind::Printf(args, output) => self.printf(args, output.as_ref())?,
            StmtKind::Eval(expr) => self.eval_for_effect(expr)?,
            StmtKind::If(condition, then, otherwise) => {
                if self.condition(condition)? {
                    return self.exec(then);
                } else if let Some(otherwise) = otherwise {
                    return self.exec(otherwise);
                }
            }
            StmtKind::While(condition, body) => {
                while self.condition(condition)? {
                    self.tick()?;
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Normal | Flow::Continue => {}
                        other => return Ok(other),
                    }
                }
            }
            StmtKind::DoWhile(body, condition) => loop {
                self.tick()?;
                match self.exec(body)? {
                    Flow::Break => break,
                    Flow::Normal | Flow::Continue => {}
                    other => return Ok(other),
                }
                if !self.condition(condition)? {
                    break;
                }
            },
            StmtKind::For(init, condition, step, body) => {
                if let Some(init) = init {
                    self.eval_for_effect(init)?;
                }
                loop {
                    self.tick()?;
                    if let Some(condition) = condition
                        && !self.condition(condition)?
                    {
                        break;
                    }
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Normal | Flow::Continue => {}
                        other => return Ok(other),
                    }
                    if let Some(step) = step {
                        self.eval_for_effect(step)?;
                    }
                }
            }
            StmtKind::ForIn(var, array, body) => {
                let keys = self.array(*array)?.borrow_mut().keys();
                let listed: usize = keys.iter().map(|key| key.len() + PIECE_WORK).sum();
                self.charge(listed)?;
                for key in keys {
                    self.tick()?;
                    self.set_slot(*var, Value::Str(key))?;
                    match self.exec(body)? {
                        Flow::Break => break,
                        Flow::Normal | Flow::Continue => {}
                        other => return Ok(other),
                    }
                }
            }
            StmtKind::Block(statements) => return self.run(statements),
            StmtKind::Delete(array, subscripts) => {
                let array = self.array(*array)?;
                let before = array.borrow().len();
                match subscripts {
                    None => array.borrow_mut().clear(),
                    Some(subscripts) => {
                        let key = self.subscript(subscripts)?;
                        array.borrow_mut().remove(key.as_key());
                    }
                }
                let after = array.borrow().len();
                self.count_elements(before, after)?;
            }
            StmtKind::Next => return Err(Stop::Next),
            StmtKind::NextFile => return Err(Stop::NextFile),
            StmtKind::Exit(code) => {
                if let Some(code) = code {
                    self.exit_code = self.eval(code)?.number() as i32;
                }
                return Err(Stop::Exit);
            }
            StmtKind::Return(value) => {
                let value = match value {
                    Some(value) => self.eval(value)?,
                    None => Value::Uninit,
                };
                return Ok(Flow::Return(value));
            }
            StmtKind::Break => return Ok(Flow::Break),
            StmtKind::Continue => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }
}

impl Default for Cell {
    fn default() -> Self {
        Cell::Val(Value::Uninit)
    }
}

/// Refuses a string longer than [`MAX_STRING_BYTES`] before it is built.
pub fn check_size(bytes: usize) -> Run<()> {
    if bytes > MAX_STRING_BYTES {
        return Err(AwkErrorKind::StringSize(MAX_STRING_BYTES >> 20).into());
    }
    Ok(())
}
