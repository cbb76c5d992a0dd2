//! Reading and assigning variables as bash does: a name is a string or an array (`$a` is
//! `${a[0]}`), an indexed array's subscript is arithmetic (negative counts from the end), an
//! associative array's is a key, and attributes (`readonly`, `-i`, `-l`, `-u`) act on every
//! assignment. Every assignment in the interpreter goes through here.

use super::arith::{self, ArithError};
use super::exec::Shell;
use super::vars::{Array, Assoc, Attributes, Key};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarError {
    #[error("{0}: readonly variable")]
    Readonly(String),
    #[error("{0}: bad array subscript")]
    BadSubscript(String),
    #[error("{0}: cannot convert associative to indexed array")]
    AssocToIndexed(String),
    #[error("{0}: cannot convert indexed to associative array")]
    IndexedToAssoc(String),
    #[error("{0}")]
    Arithmetic(#[from] ArithError),
}

impl From<VarError> for ArithError {
    fn from(e: VarError) -> Self {
        match e {
            VarError::Arithmetic(e) => e,
            other => ArithError::Variable(other.to_string()),
        }
    }
}

/// What an assignment stores: `name=value`, `name+=value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Set,
    Append,
}

/// A variable as it was, to be put back (`local`, `VAR=x cmd`).
#[derive(Debug, Clone)]
pub(crate) struct SavedVar {
    value: Option<String>,
    array: Option<Array>,
    attributes: Option<Attributes>,
}

impl Shell<'_> {
    pub(crate) fn save_var(&self, name: &str) -> SavedVar {
        SavedVar {
            value: self.state.env.get(name).cloned(),
            array: self.state.arrays.get(name).cloned(),
            attributes: self.state.attributes.get(name).copied(),
        }
    }

    pub(crate) fn restore_var(&mut self, name: &str, saved: SavedVar) {
        match saved.value {
            Some(value) => self.state.env.insert(name.to_string(), value),
            None => self.state.env.remove(name),
        };
        match saved.array {
            Some(array) => self.state.arrays.insert(name.to_string(), array),
            None => self.state.arrays.remove(name),
        };
        match saved.attributes {
            Some(attributes) => self.state.attributes.insert(name.to_string(), attributes),
            None => self.state.attributes.remove(name),
        };
    }

    /// `$name`: a string variable, or element 0 (key `0`) of an array.
    pub(crate) fn var(&self, name: &str) -> Option<String> {
        if let Some(value) = self.state.env.get(name) {
            return Some(value.clone());
        }
        let array = self.state.arrays.get(name)?;
        let key = match array {
            Array::Indexed(_) => Key::Index(0),
            Array::Assoc(_) => Key::Name("0".into()),
        };
        array.get(&key).cloned()
    }

    pub(crate) fn is_set(&self, name: &str) -> bool {
        self.state.env.contains_key(name) || self.state.arrays.contains_key(name)
    }

    fn check_writable(&self, name: &str) -> Result<(), VarError> {
        match self.state.attributes.get(name) {
            Some(a) if a.readonly => Err(VarError::Readonly(name.into())),
            _ => Ok(()),
        }
    }

    /// Applies `-i` (arithmetic, adding for `+=`) and `-l`/`-u` to a value being assigned
    /// over `old`.
    fn converted(
        &mut self,
        name: &str,
        old: Option<String>,
        value: String,
        mode: Mode,
    ) -> Result<String, VarError> {
        let attributes = self.state.attributes.get(name).copied().unwrap_or_default();
        let value = if attributes.integer {
            let mut number = self.eval_arith(&value)?;
            if mode == Mode::Append {
                let old = self.eval_arith(old.as_deref().unwrap_or(""))?;
                number = old.wrapping_add(number);
            }
            number.to_string()
        } else if mode == Mode::Append {
            old.unwrap_or_default() + &value
        } else {
            value
        };
        Ok(attributes.fold(value))
    }

    /// `name=value` / `name+=value`; on an array it assigns element 0.
    pub(crate) fn assign(&mut self, name: &str, value: String, mode: Mode) -> Result<(), VarError> {
        self.check_writable(name)?;
        if self.state.arrays.contains_key(name) {
            return self.assign_element(name, "0", value, mode);
        }
        let old = self.state.env.get(name).cloned();
        let value = self.converted(name, old, value, mode)?;
        if self.value_too_large(value.len()) {
            return Ok(());
        }
        self.state.env.insert(name.to_string(), value);
        Ok(())
    }

    /// Resolves a subscript of `name`: a key of an associative array, or an arithmetic index
    /// of an indexed one (of a new one when `name` is not an array yet).
    pub(crate) fn key(&mut self, name: &str, subscript: &str) -> Result<Key, VarError> {
        if self
            .state
            .arrays
            .get(name)
            .is_some_and(|array| array.is_assoc())
        {
            if subscript.is_empty() {
                return Err(VarError::BadSubscript(format!("{name}[{subscript}]")));
            }
            return Ok(Key::Name(subscript.to_string()));
        }
        let index = self.eval_arith(subscript)?;
        let index = if index < 0 {
            let len = self
                .state
                .arrays
                .get(name)
                .map_or(0, |a| a.next_index() as i64);
            index + len
        } else {
            index
        };
        usize::try_from(index)
            .map(Key::Index)
            .map_err(|_| VarError::BadSubscript(format!("{name}[{subscript}]")))
    }

    /// `${name[subscript]}`.
    pub(crate) fn element(
        &mut self,
        name: &str,
        subscript: &str,
    ) -> Result<Option<String>, VarError> {
        if !self.state.arrays.contains_key(name) {
            // A string variable is an array of one element.
            let key = self.key(name, subscript)?;
            return Ok(match key {
                Key::Index(0) => self.state.env.get(name).cloned(),
                _ => None,
            });
        }
        let key = match self.key(name, subscript) {
            Ok(key) => key,
            Err(VarError::BadSubscript(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(self
            .state
            .arrays
            .get(name)
            .and_then(|a| a.get(&key))
            .cloned())
    }

    /// `name[subscript]=value` (or `+=`); makes `name` an indexed array if it is not one.
    pub(crate) fn assign_element(
        &mut self,
        name: &str,
        subscript: &str,
        value: String,
        mode: Mode,
    ) -> Result<(), VarError> {
        self.check_writable(name)?;
        let key = self.key(name, subscript)?;
        self.promote(name);
        let old = self
            .state
            .arrays
            .get(name)
            .and_then(|a| a.get(&key))
            .cloned();
        let value = self.converted(name, old, value, mode)?;
        if self.value_too_large(value.len()) {
            return Ok(());
        }
        if let Some(array) = self.state.arrays.get_mut(name) {
            array.set(key, value);
        }
        Ok(())
    }

    /// Turns a string variable (or nothing) into an indexed array holding it at 0.
    fn promote(&mut self, name: &str) {
        if !self.state.arrays.contains_key(name) {
            let values = self.state.env.remove(name);
            self.state
                .arrays
                .insert(name.to_string(), Array::indexed(values));
        }
    }

    /// `name=(…)` / `name+=(…)`: each item with its `[key]=` if it had one.
    pub(crate) fn assign_array(
        &mut self,
        name: &str,
        items: Vec<(Option<String>, String)>,
        mode: Mode,
    ) -> Result<(), VarError> {
        self.check_writable(name)?;
        let assoc = self.state.arrays.get(name).is_some_and(Array::is_assoc);
        if mode == Mode::Set || !self.state.arrays.contains_key(name) {
            let old = self.state.env.remove(name);
            let fresh = if assoc {
                Array::Assoc(Assoc::default())
            } else if mode == Mode::Append {
                Array::indexed(old)
            } else {
                Array::indexed(None)
            };
            self.state.arrays.insert(name.to_string(), fresh);
        }
        let mut next = self.state.arrays[name].next_index();
        for (subscript, value) in items {
            match subscript {
                Some(subscript) => {
                    let key = self.key(name, &subscript)?;
                    if let Key::Index(i) = key {
                        next = i + 1;
                    }
                    let value = self.converted(name, None, value, Mode::Set)?;
                    if let Some(array) = self.state.arrays.get_mut(name) {
                        array.set(key, value);
                    }
                }
                None if assoc => {
                    return Err(VarError::BadSubscript(format!(
                        "{name}: {value}: must use subscript when assigning associative array"
                    )));
                }
                None => {
                    let value = self.converted(name, None, value, Mode::Set)?;
                    if let Some(array) = self.state.arrays.get_mut(name) {
                        array.set(Key::Index(next), value);
                    }
                    next += 1;
                }
            }
        }
        Ok(())
    }

    /// `unset name`.
    pub(crate) fn unset_var(&mut self, name: &str) -> Result<(), VarError> {
        self.check_writable(name)?;
        self.state.env.remove(name);
        self.state.arrays.remove(name);
        self.state.attributes.remove(name);
        Ok(())
    }

    /// `unset 'name[subscript]'`.
    pub(crate) fn unset_element(&mut self, name: &str, subscript: &str) -> Result<(), VarError> {
        self.check_writable(name)?;
        if !self.state.arrays.contains_key(name) {
            if self.key(name, subscript)? == Key::Index(0) {
                self.state.env.remove(name);
            }
            return Ok(());
        }
        let key = self.key(name, subscript)?;
        if let Some(array) = self.state.arrays.get_mut(name) {
            array.remove(&key);
        }
        Ok(())
    }

    /// Makes `name` an array of the given kind if it is not one yet (`declare -a`/`-A`).
    pub(crate) fn declare_array(&mut self, name: &str, assoc: bool) -> Result<(), VarError> {
        match self.state.arrays.get(name) {
            Some(array) if array.is_assoc() && !assoc => Err(VarError::AssocToIndexed(name.into())),
            Some(array) if !array.is_assoc() && assoc => Err(VarError::IndexedToAssoc(name.into())),
            Some(_) => Ok(()),
            None => {
                let old = self.state.env.remove(name);
                let array = if assoc {
                    let mut assoc = Assoc::default();
                    if let Some(old) = old {
                        assoc.insert("0".into(), old);
                    }
                    Array::Assoc(assoc)
                } else {
                    Array::indexed(old)
                };
                self.state.arrays.insert(name.to_string(), array);
                Ok(())
            }
        }
    }
}

/// How many parsed expressions a call keeps (a loop re-evaluates the same few).
const ARITH_CACHE: usize = 256;

impl Shell<'_> {
    /// Evaluates an expression, parsing each distinct text once per call: a loop's condition,
    /// step and body expressions are the same text every iteration.
    pub(crate) fn eval_arith(&mut self, text: &str) -> Result<i64, ArithError> {
        let parsed = match self.arith_cache.get(text) {
            Some(parsed) => parsed.clone(),
            None => {
                let parsed = std::rc::Rc::new(arith::parse(text)?);
                if self.arith_cache.len() >= ARITH_CACHE {
                    self.arith_cache.clear();
                }
                self.arith_cache.insert(text.to_string(), parsed.clone());
                parsed
            }
        };
        match parsed.as_ref() {
            None => Ok(0),
            Some(expr) => arith::evaluate_parsed(text, expr, self),
        }
    }
}

impl arith::Variables for Shell<'_> {
    fn get(&mut self, name: &str, subscript: Option<&str>) -> Result<Option<String>, ArithError> {
        match subscript {
            None => Ok(self.var(name)),
            Some(subscript) => Ok(self.element(name, subscript)?),
        }
    }

    fn set(&mut self, name: &str, subscript: Option<&str>, value: i64) -> Result<(), ArithError> {
        match subscript {
            None => self.assign(name, value.to_string(), Mode::Set)?,
            Some(subscript) => {
                self.assign_element(name, subscript, value.to_string(), Mode::Set)?
            }
        }
        Ok(())
    }
}
