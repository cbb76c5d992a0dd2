//! Names, resolved while parsing: globals and function parameters get numbered slots, user
//! functions get indices (a call may come before the definition), and every use is recorded as
//! scalar or array. A name passed bare to a function takes the kind of the parameter it lands
//! in, so kinds flow through calls until nothing changes; a name used both ways is an error at
//! its first conflicting use, and a function called but never defined is one at its first call.

use std::collections::HashMap;

use super::ast::{ArrayRef, SPECIAL_GLOBALS, Slot, Special};
use super::error::{Pos, SyntaxError, SyntaxErrorKind as E};

/// Functions gawk has and POSIX awk (and so the sandbox) does not: named, a call is refused as
/// unsupported rather than reported as undefined.
const GAWK_FUNCTIONS: &[&str] = &[
    "gensub",
    "asort",
    "asorti",
    "patsplit",
    "mktime",
    "strtonum",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
    "compl",
    "isarray",
    "typeof",
    "bindtextdomain",
    "dcgettext",
    "dcngettext",
];

/// How a name has been used so far: where first as a scalar and where first as an array.
#[derive(Debug, Default, Clone, Copy)]
struct Uses {
    scalar: Option<Pos>,
    array: Option<Pos>,
}

impl Uses {
    fn is_array(&self) -> bool {
        self.array.is_some()
    }
}

/// A bare name passed as argument `index` to function `callee`.
struct BareArg {
    callee: u32,
    index: usize,
    name: NameRef,
    pos: Pos,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameRef {
    Global(u32),
    Local(u32, u32),
}

struct FunctionInfo {
    name: String,
    defined: bool,
    params: Vec<String>,
    uses: Vec<Uses>,
    /// The first call, with its argument count, for "not defined" and arity errors.
    calls: Vec<(Pos, usize)>,
}

#[derive(Default)]
pub struct Symbols {
    globals: Vec<(String, Uses)>,
    global_index: HashMap<String, u32>,
    functions: Vec<FunctionInfo>,
    function_index: HashMap<String, u32>,
    bare_args: Vec<BareArg>,
    /// The function whose body is being parsed.
    scope: Option<u32>,
}

impl Symbols {
    pub fn new() -> Symbols {
        let mut symbols = Symbols::default();
        for (slot, name) in SPECIAL_GLOBALS.iter().enumerate() {
            let mut uses = Uses::default();
            let here = Some(Pos { line: 0, column: 0 });
            if slot as u32 >= super::ast::ENVIRON {
                uses.array = here;
            } else {
                uses.scalar = here;
            }
            symbols.global_index.insert(name.to_string(), slot as u32);
            symbols.globals.push((name.to_string(), uses));
        }
        symbols
    }

    fn function(&mut self, name: &str) -> u32 {
        if let Some(index) = self.function_index.get(name) {
            return *index;
        }
        let index = self.functions.len() as u32;
        self.functions.push(FunctionInfo {
            name: name.to_string(),
            defined: false,
            params: Vec::new(),
            uses: Vec::new(),
            calls: Vec::new(),
        });
        self.function_index.insert(name.to_string(), index);
        index
    }

    /// Starts the definition of `name` with `params`; its body's names resolve against them
    /// until [`Symbols::end_function`].
    pub fn begin_function(
        &mut self,
        name: &str,
        params: &[(String, Pos)],
        pos: Pos,
    ) -> Result<u32, SyntaxError> {
        if self.global_index.contains_key(name) && (self.global_index[name] as usize) < 13 {
            return Err(SyntaxError::new(pos, E::BadParameter(name.to_string())));
        }
        let index = self.function(name);
        if self.functions[index as usize].defined {
            return Err(SyntaxError::new(
                pos,
                E::FunctionRedefined(name.to_string()),
            ));
        }
        for (i, (param, at)) in params.iter().enumerate() {
            let clash = param == name
                || self.function_index.contains_key(param)
                || params[..i].iter().any(|(p, _)| p == param);
            if clash {
                return Err(SyntaxError::new(*at, E::BadParameter(param.clone())));
            }
        }
        let info = &mut self.functions[index as usize];
        info.defined = true;
        info.params = params.iter().map(|(p, _)| p.clone()).collect();
        info.uses = vec![Uses::default(); params.len()];
        self.scope = Some(index);
        Ok(index)
    }

    pub fn end_function(&mut self) {
        self.scope = None;
    }

    pub fn in_function(&self) -> bool {
        self.scope.is_some()
    }

    fn name_ref(&mut self, name: &str) -> NameRef {
        if let Some(scope) = self.scope {
            let info = &self.functions[scope as usize];
            if let Some(i) = info.params.iter().position(|p| p == name) {
                return NameRef::Local(scope, i as u32);
            }
        }
        if let Some(index) = self.global_index.get(name) {
            return NameRef::Global(*index);
        }
        let index = self.globals.len() as u32;
        self.globals.push((name.to_string(), Uses::default()));
        self.global_index.insert(name.to_string(), index);
        NameRef::Global(index)
    }

    fn uses(&mut self, name: NameRef) -> &mut Uses {
        match name {
            NameRef::Global(i) => &mut self.globals[i as usize].1,
            NameRef::Local(f, i) => &mut self.functions[f as usize].uses[i as usize],
        }
    }

    fn check_not_function(&self, name: &str, pos: Pos) -> Result<(), SyntaxError> {
        let is_param = self.scope.is_some_and(|scope| {
            self.functions[scope as usize]
                .params
                .iter()
                .any(|p| p == name)
        });
        if self.function_index.contains_key(name) && !is_param {
            return Err(SyntaxError::new(
                pos,
                E::Unexpected(format!("function name `{name}'")),
            ));
        }
        Ok(())
    }

    /// A name used as a scalar.
    pub fn scalar(&mut self, name: &str, pos: Pos) -> Result<Slot, SyntaxError> {
        match name {
            "NR" => return Ok(Slot::Special(Special::Nr)),
            "FNR" => return Ok(Slot::Special(Special::Fnr)),
            "NF" => return Ok(Slot::Special(Special::Nf)),
            _ => {}
        }
        self.check_not_function(name, pos)?;
        let name_ref = self.name_ref(name);
        let uses = self.uses(name_ref);
        uses.scalar.get_or_insert(pos);
        Ok(match name_ref {
            NameRef::Global(i) => Slot::Global(i),
            NameRef::Local(_, i) => Slot::Local(i),
        })
    }

    /// A name used as an array.
    pub fn array(&mut self, name: &str, pos: Pos) -> Result<ArrayRef, SyntaxError> {
        if matches!(name, "NR" | "FNR" | "NF") {
            return Err(SyntaxError::new(pos, E::ArrayScalarClash(name.to_string())));
        }
        self.check_not_function(name, pos)?;
        let name_ref = self.name_ref(name);
        let uses = self.uses(name_ref);
        uses.array.get_or_insert(pos);
        Ok(match name_ref {
            NameRef::Global(i) => ArrayRef::Global(i),
            NameRef::Local(_, i) => ArrayRef::Local(i),
        })
    }

    /// A name passed bare as argument `index` of a call to `callee`: its kind is settled by
    /// the parameter's. Returns its slot (read as a scalar if it is one).
    pub fn bare_arg(
        &mut self,
        name: &str,
        callee: u32,
        index: usize,
        pos: Pos,
    ) -> Result<Slot, SyntaxError> {
        if matches!(name, "NR" | "FNR" | "NF") {
            return self.scalar(name, pos);
        }
        self.check_not_function(name, pos)?;
        let name_ref = self.name_ref(name);
        self.bare_args.push(BareArg {
            callee,
            index,
            name: name_ref,
            pos,
        });
        Ok(match name_ref {
            NameRef::Global(i) => Slot::Global(i),
            NameRef::Local(_, i) => Slot::Local(i),
        })
    }

    /// A lone name given to `length()`: an array or a scalar, whichever it turns out to be,
    /// so its use settles nothing.
    pub fn length_arg(&mut self, name: &str, pos: Pos) -> Result<Slot, SyntaxError> {
        if matches!(name, "NR" | "FNR" | "NF") {
            return self.scalar(name, pos);
        }
        self.check_not_function(name, pos)?;
        Ok(match self.name_ref(name) {
            NameRef::Global(i) => Slot::Global(i),
            NameRef::Local(_, i) => Slot::Local(i),
        })
    }

    /// The function a call names (perhaps defined later), or a refusal for gawk's own.
    pub fn callee(&mut self, name: &str, pos: Pos) -> Result<u32, SyntaxError> {
        if GAWK_FUNCTIONS.contains(&name) {
            return Err(SyntaxError::new(
                pos,
                E::NotSupported(format!("gawk's function `{name}'")),
            ));
        }
        Ok(self.function(name))
    }

    /// Records a call of function `index` with `args` arguments, checked once all is read.
    pub fn called(&mut self, index: u32, args: usize, pos: Pos) {
        self.functions[index as usize].calls.push((pos, args));
    }

    /// Settles every name's kind, checks calls against definitions, and returns the globals
    /// (name, is-array) and, per function, its name and which parameters are arrays.
    #[allow(clippy::type_complexity)]
    pub fn finish(
        mut self,
    ) -> Result<(Vec<(String, bool)>, Vec<(String, Vec<bool>)>), SyntaxError> {
        for info in &self.functions {
            if let Some((pos, _)) = info.calls.first().filter(|_| !info.defined) {
                return Err(SyntaxError::new(
                    *pos,
                    E::UndefinedFunction(info.name.clone()),
                ));
            }
            for (pos, args) in &info.calls {
                if *args > info.params.len() {
                    return Err(SyntaxError::new(
                        *pos,
                        E::Arity {
                            function: info.name.clone(),
                            given: *args,
                            least: 0,
                            most: info.params.len(),
                        },
                    ));
                }
            }
        }
        // Kinds flow both ways between a bare argument and its parameter until stable.
        loop {
            let mut changed = false;
            for i in 0..self.bare_args.len() {
                let (callee, index, name, pos) = {
                    let arg = &self.bare_args[i];
                    (arg.callee, arg.index, arg.name, arg.pos)
                };
                let param = NameRef::Local(callee, index as u32);
                let arg_array = self.uses(name).is_array();
                let param_array = self.uses(param).is_array();
                if arg_array && !param_array {
                    self.uses(param).array = Some(pos);
                    changed = true;
                } else if param_array && !arg_array {
                    self.uses(name).array = Some(pos);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let clash = |name: &str, uses: &Uses| match (uses.scalar, uses.array) {
            (Some(s), Some(a)) => Err(SyntaxError::new(
                if s.line > a.line || (s.line == a.line && s.column > a.column) {
                    s
                } else {
                    a
                },
                E::ArrayScalarClash(name.to_string()),
            )),
            _ => Ok(()),
        };
        for (name, uses) in &self.globals {
            clash(name, uses)?;
        }
        for info in &self.functions {
            for (name, uses) in info.params.iter().zip(&info.uses) {
                clash(name, uses)?;
            }
        }
        let globals = self
            .globals
            .iter()
            .map(|(name, uses)| (name.clone(), uses.is_array()))
            .collect();
        let functions = self
            .functions
            .iter()
            .map(|info| {
                (
                    info.name.clone(),
                    info.uses.iter().map(Uses::is_array).collect(),
                )
            })
            .collect();
        Ok((globals, functions))
    }
}
