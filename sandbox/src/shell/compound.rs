//! The compound commands — `for`, `while`/`until`, `if`, `[[ … ]]`, `case`, groups — one
//! method each. Loops count every iteration against the call's limit and take the `break`
//! and `continue` aimed at them; conditions run with `set -e` suspended, as in bash.

use super::ast::{CaseEnd, Compound, ConditionalPart, Script, Word};
use super::conditional::{self, CondToken, Scope};
use super::exec::{Abort, Local, Shell, Streams, fail, report};
use super::variables::Mode;

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
                Compound::Arith(text) => match self.arithmetic(text, io).await {
                    Some(value) => i32::from(value == 0),
                    None => 1,
                },
                Compound::ArithFor {
                    init,
                    condition,
                    step,
                    body,
                } => self.arith_for(init, condition, step, body, io).await,
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
            Err(e) => return self.expansion_failed(e, io),
        };
        let mut status = 0;
        self.loop_depth += 1;
        for value in values {
            if !self.tick_iteration() {
                break;
            }
            if let Err(e) = self.assign(var, value, Mode::Set) {
                status = fail(&mut io.err, e);
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

    /// Expands `text` like `$(( ))` and evaluates it; `None` after an error (reported, the
    /// command failing with 1 but the shell going on, as for `(( ))` in bash).
    pub(super) async fn arithmetic(&mut self, text: &str, io: &mut Streams) -> Option<i64> {
        let expr = if text.contains(['$', '`', '\\']) {
            match self
                .expand_quoted_parts(&super::parse::expandable_text(text), io)
                .await
            {
                Ok(expr) => expr,
                Err(e) => {
                    self.expansion_failed(e, io);
                    return None;
                }
            }
        } else {
            text.to_string()
        };
        match self.eval_arith(&expr) {
            Ok(value) => Some(value),
            Err(e) => {
                report(&mut io.err, format!("((: {e}"));
                None
            }
        }
    }

    /// `for (( INIT; CONDITION; STEP )); do BODY; done`; an empty condition is true.
    async fn arith_for(
        &mut self,
        init: &str,
        condition: &str,
        step: &str,
        body: &Script,
        io: &mut Streams,
    ) -> i32 {
        if self.arithmetic(init, io).await.is_none() {
            return 1;
        }
        let mut status = 0;
        self.loop_depth += 1;
        loop {
            if !self.tick_iteration() {
                break;
            }
            let go = if condition.trim().is_empty() {
                Some(1)
            } else {
                self.arithmetic(condition, io).await
            };
            match go {
                None => {
                    status = 1;
                    break;
                }
                Some(0) => break,
                Some(_) => {}
            }
            if self.abort.is_some() {
                break;
            }
            status = self.script(body, io).await;
            if let LoopStep::Stop = self.after_body() {
                break;
            }
            if self.arithmetic(step, io).await.is_none() {
                status = 1;
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
                        Err(e) => return self.expansion_failed(e, io),
                    };
                    match self.expand_pattern(word, io).await {
                        Ok(pattern) => CondToken::Word { text, pattern },
                        Err(e) => return self.expansion_failed(e, io),
                    }
                }
            });
        }
        match conditional::evaluate(&tokens, self) {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(message) => {
                report(&mut io.err, message);
                2
            }
        }
    }

    /// `case WORD in PATTERN|PATTERN) BODY;; … esac`: the first arm with a matching pattern.
    async fn case(
        &mut self,
        word: &Word,
        arms: &[(Vec<Word>, Script, CaseEnd)],
        io: &mut Streams,
    ) -> i32 {
        let value = match self.expand_single(word, io).await {
            Ok(value) => value,
            Err(e) => return self.expansion_failed(e, io),
        };
        let mut status = 0;
        let mut falling = false;
        for (patterns, body, end) in arms {
            if !falling {
                let mut matched = false;
                for pattern in patterns {
                    let pattern = match self.expand_pattern(pattern, io).await {
                        Ok(pattern) => pattern,
                        Err(e) => return self.expansion_failed(e, io),
                    };
                    if super::glob::matches(&pattern, &value) {
                        matched = true;
                        break;
                    }
                }
                if !matched {
                    continue;
                }
            }
            status = self.script(body, io).await;
            match end {
                CaseEnd::Break => return status,
                CaseEnd::FallThrough => falling = true,
                CaseEnd::TestNext => falling = false,
            }
            if self.abort.is_some() {
                return status;
            }
        }
        status
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

impl Scope for Shell<'_> {
    fn vfs(&self) -> &crate::vfs::Vfs {
        &self.state.vfs
    }

    fn cwd(&self) -> &str {
        &self.state.cwd
    }

    fn is_set(&mut self, operand: &str) -> bool {
        match operand.split_once('[') {
            Some((name, rest)) if rest.ends_with(']') => self
                .element(name, &rest[..rest.len() - 1])
                .is_ok_and(|value| value.is_some()),
            _ => Shell::is_set(self, operand),
        }
    }

    fn number(&mut self, text: &str) -> Result<i64, String> {
        self.eval_arith(text).map_err(|e| e.to_string())
    }

    fn matched(&mut self, groups: Vec<String>) {
        let _ = self.unset_var("BASH_REMATCH");
        let items = groups.into_iter().map(|g| (None, g)).collect();
        let _ = self.assign_array("BASH_REMATCH", items, Mode::Set);
    }
}
