//! Assignments: `NAME=VALUE`, `NAME+=VALUE`, `NAME[SUBSCRIPT]=VALUE` and `NAME=(…)`, before
//! a command, alone, or as arguments of `declare`, `local`, `export`, `readonly`, `typeset`.
//! A value is expanded without field splitting or globbing; the items of `(…)` are split and
//! globbed like command words, except `[KEY]=VALUE` items, which stay one word. The result is
//! stored through [`super::variables`].

use super::ast::{Assign, AssignValue, Word, WordPart};
use super::exec::{Shell, Streams};
use super::expand::ExpandError;
use super::parse::assignment;
use super::variables::{Mode, VarError};

/// An assignment with its words expanded, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Assignment {
    pub name: String,
    pub subscript: Option<String>,
    pub mode: Mode,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Scalar(String),
    /// Items with their `[KEY]`, if given.
    Array(Vec<(Option<String>, String)>),
}

/// An argument of a declaration builtin: an option or name, or an assignment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DeclArg {
    Word(String),
    Assign(Assignment),
}

impl Shell<'_> {
    pub(crate) async fn evaluate_assign(
        &mut self,
        assign: &Assign,
        io: &mut Streams,
    ) -> Result<Assignment, ExpandError> {
        let subscript = match &assign.subscript {
            Some(word) => Some(self.expand_single(word, io).await?),
            None => None,
        };
        let value = match &assign.value {
            AssignValue::Scalar(word) => Value::Scalar(self.expand_single(word, io).await?),
            AssignValue::Array(items) => {
                let mut values = Vec::new();
                for (key, word) in items {
                    match key {
                        Some(key) => {
                            let key = self.expand_single(key, io).await?;
                            let value = self.expand_single(word, io).await?;
                            values.push((Some(key), value));
                        }
                        None => {
                            let words = self.expand_words(std::slice::from_ref(word), io).await?;
                            values.extend(words.into_iter().map(|w| (None, w)));
                        }
                    }
                }
                Value::Array(values)
            }
        };
        Ok(Assignment {
            name: assign.name.clone(),
            subscript,
            mode: if assign.append {
                Mode::Append
            } else {
                Mode::Set
            },
            value,
        })
    }

    pub(crate) fn store(&mut self, assignment: Assignment) -> Result<(), VarError> {
        let Assignment {
            name,
            subscript,
            mode,
            value,
        } = assignment;
        match (subscript, value) {
            (None, Value::Scalar(value)) => self.assign(&name, value, mode),
            (Some(subscript), Value::Scalar(value)) => {
                self.assign_element(&name, &subscript, value, mode)
            }
            (_, Value::Array(items)) => self.assign_array(&name, items, mode),
        }
    }

    /// The arguments of `declare`, `local` and the like: assignments are expanded as
    /// assignments (`local x=$y` keeps spaces in `$y`), everything else as command words.
    pub(crate) async fn declaration_args(
        &mut self,
        words: &[Word],
        io: &mut Streams,
    ) -> Result<Vec<DeclArg>, ExpandError> {
        let mut args = Vec::new();
        for word in words {
            match assignment(word) {
                Some(assign) => {
                    args.push(DeclArg::Assign(self.evaluate_assign(&assign, io).await?))
                }
                None if word
                    .parts
                    .iter()
                    .any(|p| matches!(p, WordPart::ArrayLiteral(_))) =>
                {
                    return Err(ExpandError::Unsupported(
                        "an array assignment with a quoted name".into(),
                    ));
                }
                None => {
                    for field in self.expand_words(std::slice::from_ref(word), io).await? {
                        args.push(DeclArg::Word(field));
                    }
                }
            }
        }
        Ok(args)
    }
}
