//! The compound commands — `for`, `while`/`until`, `if`, `[[ … ]]`, `case`, groups — one
//! method each. Loops count every iteration against the call's limit and take the `break`
//! and `continue` aimed at them; conditions run with `set -e` suspended, as in bash.

use super::ast::{Compound, ConditionalPart, Script, Word};
use super::conditional::{self, CondToken, Scope};
use super::exec::{Abort, Local, Shell, Streams, fail, report};

/// What a loop does after its body ran.
enum LoopStep {
    Next,
    Stop,
}

impl Shell<'_> {
    /// Runs a compound command other than a plain group, boxed: these recurse into scripts,
    /// and the box keeps the frame of every caller small.
    pub(super) fn control<'a>(
        &'a mut self,
        compound: &'a Compound,
        io: &'a mut Streams,
    ) -> Local<'a, i32> {
        Box::pin(async move {
            match compound {
                Compound::For { var, items, body } => self.for_loop(var, items, body, io).await,
                Compound::While {
                    until,
                    condition,
                    body,
                } => self.while_loop(*until, condition, body, io).await,
                Compound::If {
                    branches,
                    otherwise,
                } => self.if_chain(branches, otherwise.as_ref(), io).await,
                Compound::Conditional(parts) => self.conditional(parts, io).await,
                Compound::Case { word, arms } => self.case(word, arms, io).await,
                Compound::Group { subshell, body } => {
                    if *subshell {
                        self.subshell(body, io).await
                    } else {
                        self.script(body, io).await
                    }
                }
            }
        })
    }

    /// `for VAR in WORDS; do BODY; done`.
    async fn for_loop(
        &mut self,
        var: &str,
        items: &[Word],
        body: &Script,
        io: &mut Streams,
    ) -> i32 {
        let values = match self.expand_words(items, io).await {
            Ok(values) => values,
            Err(e) => return fail(&mut io.err, e),
        };
        let mut status = 0;
        self.loop_depth += 1;
        for value in values {
            if !self.tick_iteration() {
                break;
            }
            self.sandbox.env.insert(var.to_string(), value);
            status = self.script(body, io).await;
            if let LoopStep::Stop = self.after_body() {
                break;
            }
        }
        self.loop_depth -= 1;
        status
    }

    /// `while CONDITION; do BODY; done`, and `until` when `until` is set.
    async fn while_loop(
        &mut self,
        until: bool,
        condition: &Script,
        body: &Script,
        io: &mut Streams,
    ) -> i32 {
        let mut status = 0;
        self.loop_depth += 1;
        loop {
            if !self.tick_iteration() {
                break;
            }
            let test = self.test(condition, io).await;
            if self.abort.is_some() || (test == 0) == until {
                break;
            }
            status = self.script(body, io).await;
            if let LoopStep::Stop = self.after_body() {
                break;
            }
        }
        self.loop_depth -= 1;
        status
    }

    /// `if C1; then B1; elif C2; then B2; …; else B; fi`.
    async fn if_chain(
        &mut self,
        branches: &[(Script, Script)],
        otherwise: Option<&Script>,
        io: &mut Streams,
    ) -> i32 {
        for (condition, body) in branches {
            let test = self.test(condition, io).await;
            if self.abort.is_some() {
                return test;
            }
            if test == 0 {
                return self.script(body, io).await;
            }
        }
        match otherwise {
            Some(body) => self.script(body, io).await,
            None => 0,
        }
    }

    /// Runs a loop's or an `if`'s condition, where a failure does not trigger `set -e`.
    async fn test(&mut self, condition: &Script, io: &mut Streams) -> i32 {
        self.condition_depth += 1;
        let status = self.script(condition, io).await;
        self.condition_depth -= 1;
        status
    }

    /// `[[ … ]]`: the words expanded (each also as a pattern, for `==` and `!=`), then
    /// evaluated against the VFS and the variables. 0 true, 1 false, 2 a malformed test.
    async fn conditional(&mut self, parts: &[ConditionalPart], io: &mut Streams) -> i32 {
        let mut tokens = Vec::new();
        for part in parts {
            tokens.push(match part {
                ConditionalPart::Op(op) => CondToken::Op(op),
                ConditionalPart::Word(word) => {
                    let text = match self.expand_single(word, io).await {
                        Ok(text) => text,
                        Err(e) => return fail(&mut io.err, e),
                    };
                    match self.expand_pattern(word, io).await {
                        Ok(pattern) => CondToken::Word { text, pattern },
                        Err(e) => return fail(&mut io.err, e),
                    }
                }
            });
        }
        let scope = Scope {
            vfs: &self.sandbox.vfs,
            cwd: &self.sandbox.cwd,
            env: &self.sandbox.env,
        };
        match conditional::evaluate(&tokens, &scope) {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(message) => {
                report(&mut io.err, message);
                2
            }
        }
    }

    /// `case WORD in PATTERN|PATTERN) BODY;; … esac`: the first arm with a matching pattern.
    async fn case(&mut self, word: &Word, arms: &[(Vec<Word>, Script)], io: &mut Streams) -> i32 {
        let value = match self.expand_single(word, io).await {
            Ok(value) => value,
            Err(e) => return fail(&mut io.err, e),
        };
        for (patterns, body) in arms {
            for pattern in patterns {
                let pattern = match self.expand_pattern(pattern, io).await {
                    Ok(pattern) => pattern,
                    Err(e) => return fail(&mut io.err, e),
                };
                if super::glob::matches(&pattern, &value) {
                    return self.script(body, io).await;
                }
            }
        }
        0
    }

    /// Consumes a pending `break`/`continue` aimed at this loop and says whether to go on.
    fn after_body(&mut self) -> LoopStep {
        match self.abort {
            None => LoopStep::Next,
            Some(Abort::Break(levels)) => {
                self.abort = (levels > 1).then_some(Abort::Break(levels - 1));
                LoopStep::Stop
            }
            Some(Abort::Continue(levels)) if levels > 1 => {
                self.abort = Some(Abort::Continue(levels - 1));
                LoopStep::Stop
            }
            Some(Abort::Continue(_)) => {
                self.abort = None;
                LoopStep::Next
            }
            Some(_) => LoopStep::Stop,
        }
    }
}
