//! Word expansion, in bash's order: braces (see [`brace`](super::brace)), then tilde,
//! parameters (see [`super::parameter`]), command substitution, arithmetic and process
//! substitution; then field splitting of unquoted results by `IFS` (see [`super::ifs`]); then
//! pathname expansion of unquoted glob characters (a pattern that matches nothing stays as
//! written). `"$@"` and `"${a[@]}"` make one field per element.

use super::ast::{Command, Redirect, RedirectOp, Script, Word, WordPart};
use super::exec::{Local, Shell, Streams};
use super::ifs::{Ifs, Piece};
use super::variables::VarError;
use super::{arith, glob, parse};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("{0}: unbound variable")]
    Unbound(String),
    /// `${x?message}` on an unset `x`.
    #[error("{0}: {1}")]
    Unset(String, String),
    #[error("${{{0}}}: bad substitution")]
    BadSubstitution(String),
    #[error("{0}")]
    Arithmetic(#[from] arith::ArithError),
    #[error("{0}")]
    Variable(#[from] VarError),
    /// A construct bash has and this shell does not.
    #[error("{0}: not supported in this sandbox")]
    Unsupported(String),
    #[error("{0}")]
    Syntax(String),
    #[error("{0}")]
    File(String),
    #[error("expansion stopped: a limit was exceeded")]
    Limit,
}

impl ExpandError {
    /// The status a non-interactive bash exits with after this error.
    pub fn exit_status(&self) -> i32 {
        match self {
            ExpandError::Unbound(_) | ExpandError::Unset(..) => 127,
            ExpandError::Unsupported(_) | ExpandError::Syntax(_) => 2,
            _ => 1,
        }
    }
}

/// What a parameter expansion produced: one string, or a list (`$@`, `${a[@]}`; `star` for
/// `$*` and `${a[*]}`, which quoted join into one field).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expansion {
    Scalar(String),
    List { items: Vec<String>, star: bool },
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
    /// Unquoted expansions are not split (patterns, assignment-like contexts).
    no_split: bool,
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

    /// Ends the current field, if one has begun.
    fn end_field(&mut self) {
        if let Some(field) = self.current.take() {
            self.done.push(field);
        }
    }

    /// An unquoted expansion result: IFS separates fields.
    fn split(&mut self, text: &str, ifs: &Ifs) {
        if self.no_split {
            self.literal(text);
            return;
        }
        for piece in ifs.pieces(text) {
            match piece {
                Piece::Text(text) => self.literal(&text),
                Piece::Separator { hard } => {
                    if self.current.is_some() {
                        self.end_field();
                    } else if hard {
                        self.done.push(Field::default());
                    }
                }
            }
        }
    }

    fn finish(mut self) -> Vec<Field> {
        self.done.extend(self.current.take());
        self.done
    }
}

impl Shell<'_> {
    pub(crate) fn ifs(&self) -> Ifs {
        Ifs::new(self.var("IFS").as_deref())
    }

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
                        glob::expand(&self.state.vfs, &self.state.cwd, &field.pattern)
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
        let mut fields = Fields {
            no_split: true,
            ..Fields::default()
        };
        self.expand_into(&word.parts, false, &mut fields, io)
            .await?;
        Ok(fields
            .finish()
            .into_iter()
            .map(|f| f.text)
            .collect::<Vec<_>>()
            .join(" "))
    }

    /// Expands a word into a glob pattern in which quoted characters match literally (the
    /// patterns of `case`, `[[ == ]]` and `${x#pattern}`).
    pub(crate) async fn expand_pattern(
        &mut self,
        word: &Word,
        io: &mut Streams,
    ) -> Result<String, ExpandError> {
        self.pattern_of(&word.parts, io).await
    }

    pub(crate) async fn pattern_of(
        &mut self,
        parts: &[WordPart],
        io: &mut Streams,
    ) -> Result<String, ExpandError> {
        let mut fields = Fields {
            no_split: true,
            ..Fields::default()
        };
        self.expand_into(parts, false, &mut fields, io).await?;
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
                    WordPart::DoubleQuoted(inner) => {
                        if let [WordPart::Parameter(text)] = inner.as_slice() {
                            let expansion = self.parameter(text, io).await?;
                            if matches!(&expansion, Expansion::List { items, star: false } if items.is_empty())
                            {
                                continue;
                            }
                            fields.field();
                            self.push_expansion(expansion, true, fields)?;
                            continue;
                        }
                        fields.field();
                        self.expand_into(inner, true, fields, io).await?;
                        continue;
                    }
                    WordPart::Tilde => self.var("HOME").unwrap_or_else(|| "/".into()),
                    WordPart::Parameter(text) => {
                        let expansion = self.parameter(text, io).await?;
                        self.push_expansion(expansion, quoted, fields)?;
                        continue;
                    }
                    WordPart::CommandSubstitution(text) => self.substitute(text, io).await,
                    WordPart::Arithmetic(text) => {
                        let expr = if text.contains(['$', '`', '\\']) {
                            self.expand_quoted_parts(&parse::expandable_text(text), io)
                                .await?
                        } else {
                            text.clone()
                        };
                        self.eval_arith(&expr)?.to_string()
                    }
                    WordPart::ProcessSubstitution { text, output } => {
                        let path = self.process_substitution(text, *output, io).await?;
                        fields.quoted(&path);
                        continue;
                    }
                    WordPart::ArrayLiteral(_) => {
                        return Err(ExpandError::Syntax(
                            "syntax error near unexpected token `('".into(),
                        ));
                    }
                };
                self.push_expansion(Expansion::Scalar(value), quoted, fields)?;
            }
            Ok(())
        })
    }

    /// Adds an expansion's result to the fields: quoted as is (a list one field per item, or
    /// joined by IFS's first character for `*`), unquoted split by IFS.
    fn push_expansion(
        &mut self,
        expansion: Expansion,
        quoted: bool,
        fields: &mut Fields,
    ) -> Result<(), ExpandError> {
        let size = match &expansion {
            Expansion::Scalar(value) => value.len(),
            Expansion::List { items, .. } => items.iter().map(String::len).sum(),
        };
        if self.value_too_large(size) {
            return Err(ExpandError::Limit);
        }
        let ifs = self.ifs();
        match expansion {
            Expansion::Scalar(value) if quoted => fields.quoted(&value),
            Expansion::Scalar(value) => fields.split(&value, &ifs),
            Expansion::List { items, star: true } if quoted => {
                fields.quoted(&items.join(&ifs.joiner()));
            }
            Expansion::List { items, .. } if quoted => {
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        fields.end_field();
                        fields.field();
                    }
                    fields.quoted(item);
                }
            }
            Expansion::List { items, .. } if fields.no_split => {
                fields.literal(&items.join(" "));
            }
            Expansion::List { items, .. } => {
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        fields.end_field();
                    }
                    fields.split(item, &ifs);
                }
            }
        }
        Ok(())
    }

    /// `$(…)`: runs the text in a subshell and returns its output minus trailing newlines.
    async fn substitute(&mut self, text: &str, io: &mut Streams) -> String {
        let script = match parse::parse(text) {
            Ok(script) => script,
            Err(e) => {
                io.err
                    .extend_from_slice(format!("bash: command substitution: {e}\n").as_bytes());
                self.status = 2;
                self.substitution_status = Some(2);
                return String::new();
            }
        };
        if let Some(file) = read_only_redirect(&script) {
            // `$(< FILE)`: the file's content, without running anything.
            let path = match self.expand_single(file, io).await {
                Ok(target) => crate::vfs::normalize(&self.state.cwd, &target),
                Err(e) => {
                    super::exec::report(&mut io.err, e);
                    self.substitution_status = Some(1);
                    return String::new();
                }
            };
            let (text, status) = match self.state.vfs.read(&path) {
                Ok(data) => (String::from_utf8_lossy(data).into_owned(), 0),
                Err(e) => {
                    super::exec::report(&mut io.err, format!("{path}: {e}"));
                    (String::new(), 1)
                }
            };
            self.status = status;
            self.substitution_status = Some(status);
            return text.trim_end_matches('\n').to_string();
        }
        let mut inner = Streams::default();
        self.status = self.subshell(&script, &mut inner).await;
        self.substitution_status = Some(self.status);
        io.err.append(&mut inner.err);
        let mut out = String::from_utf8_lossy(&inner.out).into_owned();
        while out.ends_with('\n') {
            out.pop();
        }
        out
    }
}

/// The file of `$(< FILE)`: a script that is one command of nothing but `< FILE`.
fn read_only_redirect(script: &Script) -> Option<&Word> {
    let [item] = script.items.as_slice() else {
        return None;
    };
    if !item.rest.is_empty() || item.first.negated {
        return None;
    }
    match item.first.commands.as_slice() {
        [
            Command::Simple {
                assigns,
                words,
                redirects,
            },
        ] if assigns.is_empty() && words.is_empty() => match redirects.as_slice() {
            [
                Redirect {
                    fd: 0,
                    op: RedirectOp::Read(file),
                },
            ] => Some(file),
            _ => None,
        },
        _ => None,
    }
}
