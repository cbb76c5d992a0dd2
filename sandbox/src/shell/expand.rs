//! Word expansion, in bash's order: braces (see [`brace`](super::brace)), then tilde,
//! parameters, command substitution and arithmetic;
//! then field splitting of unquoted results on blanks; then pathname expansion of unquoted glob
//! characters (a pattern that matches nothing stays as written).

use super::ast::{Word, WordPart};
use super::exec::{Local, Shell, Streams};
use super::{arith, glob, parse};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("{0}: unbound variable")]
    Unbound(String),
    #[error("${{{0}}}: bad substitution")]
    BadSubstitution(String),
    #[error("{0}")]
    Arithmetic(#[from] arith::ArithError),
    #[error("expansion stopped: a limit was exceeded")]
    Limit,
}

/// One field under construction: its text, and the same text as a glob pattern in which
/// quoted characters are escaped.
#[derive(Debug, Default)]
struct Field {
    text: String,
    pattern: String,
    globbing: bool,
}

#[derive(Debug, Default)]
struct Fields {
    done: Vec<Field>,
    current: Option<Field>,
}

impl Fields {
    fn field(&mut self) -> &mut Field {
        self.current.get_or_insert_with(Field::default)
    }

    fn quoted(&mut self, text: &str) {
        let field = self.field();
        field.text.push_str(text);
        for c in text.chars() {
            if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                field.pattern.push('\\');
            }
            field.pattern.push(c);
        }
    }

    fn literal(&mut self, text: &str) {
        let field = self.field();
        field.text.push_str(text);
        for c in text.chars() {
            if c == '\\' {
                field.pattern.push('\\');
            }
            if matches!(c, '*' | '?' | '[') {
                field.globbing = true;
            }
            field.pattern.push(c);
        }
    }

    /// Ends the current field and starts another (`"$@"`).
    fn next_field(&mut self) {
        if let Some(field) = self.current.take() {
            self.done.push(field);
        }
        self.field();
    }

    /// An unquoted expansion result: blanks separate fields.
    fn split(&mut self, text: &str) {
        for (index, piece) in text.split([' ', '\t', '\n']).enumerate() {
            if index > 0
                && let Some(field) = self.current.take()
            {
                self.done.push(field);
            }
            if !piece.is_empty() {
                self.literal(piece);
            }
        }
    }

    fn finish(mut self) -> Vec<Field> {
        self.done.extend(self.current.take());
        self.done
    }
}

impl Shell<'_> {
    /// Expands command words into argv.
    pub(crate) fn expand_words<'a>(
        &'a mut self,
        words: &'a [Word],
        io: &'a mut Streams,
    ) -> Local<'a, Result<Vec<String>, ExpandError>> {
        Box::pin(async move {
            let mut argv = Vec::new();
            for word in words.iter().flat_map(super::brace::expand) {
                let mut fields = Fields::default();
                self.expand_into(&word.parts, false, &mut fields, io)
                    .await?;
                for field in fields.finish() {
                    let matches = if field.globbing {
                        glob::expand(&self.sandbox.vfs, &self.sandbox.cwd, &field.pattern)
                    } else {
                        Vec::new()
                    };
                    if matches.is_empty() {
                        argv.push(field.text);
                    } else {
                        argv.extend(matches);
                    }
                }
            }
            Ok(argv)
        })
    }

    /// Expands a word to one string, without splitting or globbing (assignments, redirect
    /// targets, here-strings).
    pub(crate) async fn expand_single(
        &mut self,
        word: &Word,
        io: &mut Streams,
    ) -> Result<String, ExpandError> {
        let mut fields = Fields::default();
        self.expand_into(&word.parts, true, &mut fields, io).await?;
        Ok(fields
            .finish()
            .into_iter()
            .map(|f| f.text)
            .collect::<Vec<_>>()
            .join(" "))
    }

    /// Expands a word into a glob pattern in which quoted characters match literally (the
    /// patterns of `case`).
    pub(crate) async fn expand_pattern(
        &mut self,
        word: &Word,
        io: &mut Streams,
    ) -> Result<String, ExpandError> {
        let mut fields = Fields::default();
        self.expand_into(&word.parts, false, &mut fields, io)
            .await?;
        Ok(fields
            .finish()
            .into_iter()
            .map(|f| f.pattern)
            .collect::<Vec<_>>()
            .join(" "))
    }

    /// Expands parts as if inside double quotes (heredoc bodies, `${x:-word}`).
    pub(crate) async fn expand_quoted_parts(
        &mut self,
        parts: &[WordPart],
        io: &mut Streams,
    ) -> Result<String, ExpandError> {
        let mut fields = Fields::default();
        self.expand_into(parts, true, &mut fields, io).await?;
        Ok(fields.finish().into_iter().map(|f| f.text).collect())
    }

    fn expand_into<'a>(
        &'a mut self,
        parts: &'a [WordPart],
        quoted: bool,
        fields: &'a mut Fields,
        io: &'a mut Streams,
    ) -> Local<'a, Result<(), ExpandError>> {
        Box::pin(async move {
            for part in parts {
                let value = match part {
                    WordPart::Literal(text) if quoted => {
                        fields.quoted(text);
                        continue;
                    }
                    WordPart::Literal(text) => {
                        fields.literal(text);
                        continue;
                    }
                    WordPart::Quoted(text) => {
                        fields.quoted(text);
                        continue;
                    }
                    WordPart::DoubleQuoted(inner)
                        if self.positional.is_empty()
                            && matches!(inner.as_slice(), [WordPart::Parameter(p)] if p == "@") =>
                    {
                        continue;
                    }
                    WordPart::DoubleQuoted(inner) => {
                        fields.field();
                        self.expand_into(inner, true, fields, io).await?;
                        continue;
                    }
                    WordPart::Tilde => self
                        .sandbox
                        .env
                        .get("HOME")
                        .cloned()
                        .unwrap_or_else(|| "/".into()),
                    WordPart::Parameter(text) if quoted && text == "@" => {
                        for (index, arg) in self.positional.iter().enumerate() {
                            if index > 0 {
                                fields.next_field();
                            }
                            fields.quoted(arg);
                        }
                        continue;
                    }
                    WordPart::Parameter(text) => self.parameter(text, io).await?,
                    WordPart::CommandSubstitution(text) => self.substitute(text, io).await,
                    WordPart::Arithmetic(text) => {
                        let expr = self
                            .expand_quoted_parts(&parse::expandable_text(text), io)
                            .await?;
                        arith::evaluate(&expr, &self.sandbox.env)?.to_string()
                    }
                };
                if self.value_too_large(value.len()) {
                    return Err(ExpandError::Limit);
                }
                if quoted {
                    fields.quoted(&value);
                } else {
                    fields.split(&value);
                }
            }
            Ok(())
        })
    }

    fn lookup(&self, name: &str) -> Option<String> {
        match name {
            "?" => Some(self.status.to_string()),
            "#" => Some(self.positional.len().to_string()),
            "$" => Some("1".into()),
            "0" => Some(self.arg0.clone()),
            "@" | "*" => Some(self.positional.join(" ")),
            _ if name.chars().all(|c| c.is_ascii_digit()) => name
                .parse::<usize>()
                .ok()
                .and_then(|n| self.positional.get(n.checked_sub(1)?).cloned()),
            _ => self.sandbox.env.get(name).cloned(),
        }
    }

    async fn parameter(&mut self, text: &str, io: &mut Streams) -> Result<String, ExpandError> {
        if let Some(name) = text.strip_prefix('#')
            && !name.is_empty()
        {
            return Ok(self
                .lookup(name)
                .unwrap_or_default()
                .chars()
                .count()
                .to_string());
        }
        let name_len =
            if text.chars().next().is_some_and(|c| {
                matches!(c, '?' | '#' | '$' | '@' | '*' | '!') || c.is_ascii_digit()
            }) {
                1
            } else {
                text.find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
                    .unwrap_or(text.len())
            };
        let (name, op) = text.split_at(name_len);
        if name.is_empty() {
            return Err(ExpandError::BadSubstitution(text.into()));
        }
        let value = self.lookup(name);
        let operator_len = if op.starts_with(":-")
            || op.starts_with(":=")
            || op.starts_with(":+")
            || op.starts_with("%%")
            || op.starts_with("##")
        {
            2
        } else {
            op.chars().next().map_or(0, char::len_utf8)
        };
        let (operator, argument) = op.split_at(operator_len);
        let mut word = async |shell: &mut Self| {
            shell
                .expand_quoted_parts(&parse::expandable_text(argument), io)
                .await
        };
        Ok(match operator {
            "" => match value {
                Some(value) => value,
                None if self.nounset() && name != "@" && name != "*" => {
                    return Err(ExpandError::Unbound(name.into()));
                }
                None => String::new(),
            },
            ":-" | "-" => match value {
                Some(v) if !(v.is_empty() && operator == ":-") => v,
                _ => word(self).await?,
            },
            ":=" | "=" => match value {
                Some(v) if !(v.is_empty() && operator == ":=") => v,
                _ => {
                    let v = word(self).await?;
                    self.sandbox.env.insert(name.into(), v.clone());
                    v
                }
            },
            ":+" | "+" => match value {
                Some(v) if !(v.is_empty() && operator == ":+") => word(self).await?,
                _ => String::new(),
            },
            "%" | "%%" | "#" | "##" => {
                let value = value.unwrap_or_default();
                let pattern = word(self).await?;
                remove_affix(&value, &pattern, operator)
            }
            _ => return Err(ExpandError::BadSubstitution(text.into())),
        })
    }

    /// `$(…)`: runs the text in a subshell and returns its output minus trailing newlines.
    async fn substitute(&mut self, text: &str, io: &mut Streams) -> String {
        let script = match parse::parse(text) {
            Ok(script) => script,
            Err(e) => {
                io.err
                    .extend_from_slice(format!("bash: command substitution: {e}\n").as_bytes());
                self.status = 2;
                return String::new();
            }
        };
        let mut inner = Streams::default();
        self.status = self.subshell(&script, &mut inner).await;
        io.err.append(&mut inner.err);
        let mut out = String::from_utf8_lossy(&inner.out).into_owned();
        while out.ends_with('\n') {
            out.pop();
        }
        out
    }
}

/// `${v%pat}`, `${v%%pat}`, `${v#pat}`, `${v##pat}`.
fn remove_affix(value: &str, pattern: &str, operator: &str) -> String {
    let bounds: Vec<usize> = value
        .char_indices()
        .map(|(i, _)| i)
        .chain([value.len()])
        .collect();
    match operator {
        "%" => bounds
            .iter()
            .rev()
            .find(|i| glob::matches(pattern, &value[**i..]))
            .map_or(value.into(), |i| value[..*i].into()),
        "%%" => bounds
            .iter()
            .find(|i| glob::matches(pattern, &value[**i..]))
            .map_or(value.into(), |i| value[..*i].into()),
        "#" => bounds
            .iter()
            .find(|i| glob::matches(pattern, &value[..**i]))
            .map_or(value.into(), |i| value[*i..].into()),
        _ => bounds
            .iter()
            .rev()
            .find(|i| glob::matches(pattern, &value[..**i]))
            .map_or(value.into(), |i| value[*i..].into()),
    }
}
