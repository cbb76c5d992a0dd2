//! The builtins that declare and remove variables: `declare`/`typeset` (`-a -A -i -l -u -r
//! -x -g -p -f -F`), `local`, `export`, `readonly`, `unset` and `let`, with `declare -p`'s
//! output in bash's form. Inside a function `declare` and `typeset` make locals, as `local`
//! does, unless `-g`.

use super::assign::{Assignment, DeclArg, Value};
use super::exec::{Shell, Streams, report, unsupported};
use super::parse::is_name;
use super::variables::Mode;
use super::vars::{Array, Attributes};

/// The options of one declaration command.
#[derive(Debug, Default)]
struct Flags {
    indexed: bool,
    assoc: bool,
    global: bool,
    print: bool,
    functions: bool,
    function_names: bool,
    /// Attributes turned on (`-i`) and off (`+i`).
    on: Attributes,
    off: Attributes,
}

impl Shell<'_> {
    /// `declare`, `typeset`, `local`, `export` and `readonly` with their arguments.
    pub(super) fn declaration(
        &mut self,
        command: &str,
        args: Vec<DeclArg>,
        io: &mut Streams,
    ) -> i32 {
        let mut flags = Flags::default();
        match command {
            "export" => flags.on.exported = true,
            "readonly" => flags.on.readonly = true,
            _ => {}
        }
        let mut targets = Vec::new();
        let mut options_done = false;
        for arg in args {
            match arg {
                DeclArg::Word(word) if !options_done && word == "--" => options_done = true,
                DeclArg::Word(word)
                    if !options_done
                        && word.len() > 1
                        && (word.starts_with('-') || word.starts_with('+')) =>
                {
                    let on = word.starts_with('-');
                    for flag in word[1..].chars() {
                        match flags.set(flag, on, command) {
                            Ok(()) => {}
                            Err(FlagError::Invalid(message)) => {
                                report(&mut io.err, message);
                                return 2;
                            }
                            Err(FlagError::Unsupported(what)) => {
                                return unsupported(self, &mut io.err, what);
                            }
                        }
                    }
                }
                DeclArg::Word(word) => {
                    options_done = true;
                    targets.push(match word.split_once('=') {
                        Some((name, value)) if is_name(name.trim_end_matches('+')) => {
                            DeclArg::Assign(Assignment {
                                name: name.trim_end_matches('+').to_string(),
                                subscript: None,
                                mode: if name.ends_with('+') {
                                    Mode::Append
                                } else {
                                    Mode::Set
                                },
                                value: Value::Scalar(value.to_string()),
                            })
                        }
                        _ => DeclArg::Word(word),
                    });
                }
                assign @ DeclArg::Assign(_) => {
                    options_done = true;
                    targets.push(assign);
                }
            }
        }
        let local = command == "local"
            || (matches!(command, "declare" | "typeset")
                && !flags.global
                && !self.locals.is_empty());
        if command == "local" && self.locals.is_empty() {
            report(&mut io.err, "local: can only be used in a function");
            return 1;
        }
        if flags.functions || flags.function_names {
            return self.print_functions(&targets, flags.function_names, io);
        }
        if flags.print || (targets.is_empty() && command != "local") {
            return self.print_declarations(command, &targets, &flags, io);
        }
        let mut status = 0;
        for target in targets {
            let (name, assignment) = match target {
                DeclArg::Word(name) => (name, None),
                DeclArg::Assign(assignment) => (assignment.name.clone(), Some(assignment)),
            };
            if !is_name(&name) {
                report(
                    &mut io.err,
                    format!("{command}: `{name}': not a valid identifier"),
                );
                status = 1;
                continue;
            }
            if let Err(message) = self.declare_one(&name, assignment, &flags, local) {
                report(&mut io.err, format!("{command}: {message}"));
                status = 1;
            }
        }
        status
    }

    fn declare_one(
        &mut self,
        name: &str,
        assignment: Option<Assignment>,
        flags: &Flags,
        local: bool,
    ) -> Result<(), String> {
        if local
            && let Some(frame) = self.locals.last()
            && !frame.iter().any(|(n, _)| n == name)
        {
            let saved = self.save_var(name);
            if let Some(frame) = self.locals.last_mut() {
                frame.push((name.to_string(), saved));
            }
            if assignment.is_none() {
                self.state.env.remove(name);
                self.state.arrays.remove(name);
                self.state.attributes.remove(name);
            }
        }
        if flags.indexed || flags.assoc {
            self.declare_array(name, flags.assoc)
                .map_err(|e| e.to_string())?;
        }
        let readonly_now = flags.on.readonly;
        let mut attributes = self.state.attributes.get(name).copied().unwrap_or_default();
        attributes.integer = (attributes.integer || flags.on.integer) && !flags.off.integer;
        attributes.lower = (attributes.lower || flags.on.lower) && !flags.off.lower;
        attributes.upper = (attributes.upper || flags.on.upper) && !flags.off.upper;
        if flags.on.lower && flags.on.upper {
            attributes.lower = false;
            attributes.upper = false;
        }
        attributes.exported = (attributes.exported || flags.on.exported) && !flags.off.exported;
        if attributes.readonly && flags.off.readonly {
            return Err(format!("{name}: readonly variable"));
        }
        if attributes.is_empty() {
            self.state.attributes.remove(name);
        } else {
            self.state.attributes.insert(name.to_string(), attributes);
        }
        if let Some(assignment) = assignment {
            self.store(assignment).map_err(|e| e.to_string())?;
        } else if flags.on.exported && !self.is_set(name) {
            self.state.env.insert(name.to_string(), String::new());
        }
        if readonly_now {
            attributes.readonly = true;
            self.state.attributes.insert(name.to_string(), attributes);
        }
        Ok(())
    }

    /// `declare -p [NAMES]`, and `declare`/`export`/`readonly` without names.
    fn print_declarations(
        &mut self,
        command: &str,
        targets: &[DeclArg],
        flags: &Flags,
        io: &mut Streams,
    ) -> i32 {
        let names: Vec<String> = if targets.is_empty() {
            let mut all: Vec<String> = self
                .state
                .env
                .keys()
                .chain(self.state.arrays.keys())
                .cloned()
                .collect();
            all.sort();
            all.into_iter()
                .filter(|name| {
                    let a = self.state.attributes.get(name).copied().unwrap_or_default();
                    match command {
                        "export" => a.exported || self.state.env.contains_key(name),
                        "readonly" => a.readonly,
                        _ => true,
                    }
                })
                .collect()
        } else {
            targets
                .iter()
                .map(|t| match t {
                    DeclArg::Word(name) => name.clone(),
                    DeclArg::Assign(a) => a.name.clone(),
                })
                .collect()
        };
        let mut status = 0;
        for name in names {
            match self.describe(&name, command == "export" && !flags.print) {
                Some(line) => {
                    io.out.extend_from_slice(line.as_bytes());
                    io.out.push(b'\n');
                }
                None => {
                    report(&mut io.err, format!("declare: {name}: not found"));
                    status = 1;
                }
            }
        }
        status
    }

    /// `declare -p NAME`'s line.
    fn describe(&self, name: &str, exported: bool) -> Option<String> {
        let mut attributes = self.state.attributes.get(name).copied().unwrap_or_default();
        attributes.exported |= exported;
        let array = self.state.arrays.get(name);
        let mut flags = String::new();
        match array {
            Some(Array::Indexed(_)) => flags.push('a'),
            Some(Array::Assoc(_)) => flags.push('A'),
            None => {}
        }
        for (on, c) in [
            (attributes.integer, 'i'),
            (attributes.readonly, 'r'),
            (attributes.exported, 'x'),
            (attributes.lower, 'l'),
            (attributes.upper, 'u'),
        ] {
            if on {
                flags.push(c);
            }
        }
        let flags = if flags.is_empty() {
            "-".to_string()
        } else {
            flags
        };
        let value = match array {
            Some(array) => {
                let items: Vec<String> = array
                    .keys()
                    .into_iter()
                    .zip(array.values())
                    .map(|(k, v)| format!("[{k}]={}", quote(&v)))
                    .collect();
                if items.is_empty() {
                    String::new()
                } else if array.is_assoc() {
                    format!("=({} )", items.join(" "))
                } else {
                    format!("=({})", items.join(" "))
                }
            }
            None => match self.state.env.get(name) {
                Some(value) => format!("={}", quote(value)),
                None if self.state.attributes.contains_key(name) => String::new(),
                None => return None,
            },
        };
        Some(format!("declare -{flags} {name}{value}"))
    }

    fn print_functions(&mut self, targets: &[DeclArg], names_only: bool, io: &mut Streams) -> i32 {
        if !names_only {
            return unsupported(self, &mut io.err, "declare: -f (printing function bodies)");
        }
        let wanted: Vec<&str> = targets
            .iter()
            .filter_map(|t| match t {
                DeclArg::Word(w) => Some(w.as_str()),
                DeclArg::Assign(_) => None,
            })
            .collect();
        let mut status = 0;
        if wanted.is_empty() {
            for name in self.state.functions.keys() {
                io.out
                    .extend_from_slice(format!("declare -f {name}\n").as_bytes());
            }
        }
        for name in wanted {
            if self.state.functions.contains_key(name) {
                io.out.extend_from_slice(format!("{name}\n").as_bytes());
            } else {
                status = 1;
            }
        }
        status
    }

    /// `unset [-v] [-f] NAME…`, `unset 'NAME[SUBSCRIPT]'`.
    pub(super) fn unset(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let mut functions = false;
        let mut status = 0;
        for arg in args {
            match arg.as_str() {
                "-f" => functions = true,
                "-v" => functions = false,
                "-n" => {}
                _ if functions => {
                    std::rc::Rc::make_mut(&mut self.state.functions).remove(arg);
                }
                _ => {
                    let result = match arg.split_once('[') {
                        Some((name, rest)) if is_name(name) && rest.ends_with(']') => {
                            self.unset_element(name, &rest[..rest.len() - 1])
                        }
                        _ if is_name(arg) => {
                            if !self.is_set(arg) && self.state.functions.contains_key(arg) {
                                std::rc::Rc::make_mut(&mut self.state.functions).remove(arg);
                                Ok(())
                            } else {
                                self.unset_var(arg)
                            }
                        }
                        _ => {
                            report(
                                &mut io.err,
                                format!("unset: `{arg}': not a valid identifier"),
                            );
                            status = 1;
                            continue;
                        }
                    };
                    if let Err(e) = result {
                        report(&mut io.err, format!("unset: {e}"));
                        status = 1;
                    }
                }
            }
        }
        status
    }

    /// `let EXPR…`: 0 when the last expression is non-zero.
    pub(super) fn let_(&mut self, args: &[String], io: &mut Streams) -> i32 {
        if args.is_empty() {
            report(&mut io.err, "let: expression expected");
            return 1;
        }
        let mut last = 0;
        for arg in args {
            match self.eval_arith(arg) {
                Ok(value) => last = value,
                Err(e) => {
                    report(&mut io.err, format!("let: {e}"));
                    return 1;
                }
            }
        }
        i32::from(last == 0)
    }
}

enum FlagError {
    Invalid(String),
    Unsupported(String),
}

impl Flags {
    fn set(&mut self, flag: char, on: bool, command: &str) -> Result<(), FlagError> {
        let attributes = if on { &mut self.on } else { &mut self.off };
        match flag {
            'a' => self.indexed = on,
            'A' => self.assoc = on,
            'g' => self.global = on,
            'p' => self.print = true,
            'f' => self.functions = true,
            'F' => self.function_names = true,
            'i' => attributes.integer = true,
            'l' => attributes.lower = true,
            'u' => attributes.upper = true,
            'r' => attributes.readonly = true,
            'x' => attributes.exported = true,
            'n' if command == "export" => {}
            'n' => {
                return Err(FlagError::Unsupported(format!(
                    "{command}: -n (name references)"
                )));
            }
            _ => {
                return Err(FlagError::Invalid(format!(
                    "{command}: -{flag}: invalid option"
                )));
            }
        }
        Ok(())
    }
}

/// A value as `declare -p` quotes it: `"…"` with `\`, `"`, `$` and `` ` `` escaped, or
/// `$'…'` when it holds control characters.
fn quote(value: &str) -> String {
    if value.chars().any(|c| c.is_control()) {
        let mut out = String::from("$'");
        for c in value.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\'' => out.push_str("\\'"),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => out.push_str(&format!("\\{:03o}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    let mut out = String::from("\"");
    for c in value.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}
