//! awk's parser, program and statement level: rules (`BEGIN`, `END`, patterns, ranges),
//! function definitions, and statements. Expressions are in [`super::parse_expr`]; names go
//! through [`Symbols`], which numbers them and settles which are arrays once the whole program
//! is read. A construct the sandbox's awk lacks is a [`SyntaxError`] naming it, at the token
//! where it stands, before anything runs.

use super::ast::{
    ArrayRef, Expr, Function, Output, OutputMode, Pattern, Program, Rule, Slot, Stmt, StmtKind,
};
use super::error::{Pos, SyntaxError, SyntaxErrorKind as E};
use super::lex::{Punct, Token, TokenKind, lex};
use super::symbols::Symbols;

/// How deeply blocks and parentheses may nest: each level is a few frames of recursion in the
/// parser and the evaluator, and the browser's stack is small.
const MAX_DEPTH: usize = 100;

pub type Parsed<T> = Result<T, SyntaxError>;

/// Parses a whole program.
pub fn parse(src: &str) -> Parsed<Program> {
    let (tokens, end) = lex(src)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        end,
        symbols: Symbols::new(),
        depth: 0,
        loops: 0,
        in_rule: false,
    };
    let mut rules = Vec::new();
    let mut bodies = Vec::new();
    loop {
        parser.skip_terminators();
        if parser.peek().is_none() {
            break;
        }
        if parser.is_name("function") || parser.is_name("func") {
            bodies.push(parser.function()?);
        } else {
            rules.push(parser.rule()?);
        }
    }
    let (globals, kinds) = parser.symbols.finish()?;
    let mut functions: Vec<Function> = kinds
        .into_iter()
        .map(|(name, arrays)| Function {
            name,
            params: arrays.len(),
            arrays,
            body: Vec::new(),
        })
        .collect();
    for (index, body) in bodies {
        functions[index as usize].body = body;
    }
    Ok(Program {
        rules,
        functions,
        globals,
    })
}

pub struct Parser {
    pub(super) tokens: Vec<Token>,
    pub(super) pos: usize,
    /// Where the program ends, for errors there.
    end: Pos,
    pub(super) symbols: Symbols,
    pub(super) depth: usize,
    /// Loops around the statement being parsed (for `break` and `continue`).
    loops: usize,
    /// Whether a rule's action (not `BEGIN`/`END`, not a function) is being parsed.
    in_rule: bool,
}

impl Parser {
    pub(super) fn peek(&self) -> Option<&TokenKind> {
        self.tokens.get(self.pos).map(|t| &t.kind)
    }

    pub(super) fn peek_at(&self, offset: usize) -> Option<&TokenKind> {
        self.tokens.get(self.pos + offset).map(|t| &t.kind)
    }

    /// Where the next token starts (the end of the program if there is none).
    pub(super) fn here(&self) -> Pos {
        self.tokens.get(self.pos).map_or(self.end, |t| t.pos)
    }

    pub(super) fn error(&self, kind: E) -> SyntaxError {
        SyntaxError::new(self.here(), kind)
    }

    /// An error at the next token: the program ends early, or the token cannot stand here.
    pub(super) fn unexpected(&self) -> SyntaxError {
        match self.peek() {
            None => self.error(E::UnexpectedEnd),
            Some(token) => self.error(E::Unexpected(describe(token))),
        }
    }

    pub(super) fn is(&self, punct: Punct) -> bool {
        self.peek() == Some(&TokenKind::Punct(punct))
    }

    pub(super) fn eat(&mut self, punct: Punct) -> bool {
        if self.is(punct) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, punct: Punct) -> Parsed<()> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(self.error(E::Expected(punct.text())))
        }
    }

    pub(super) fn is_name(&self, name: &str) -> bool {
        matches!(self.peek(), Some(TokenKind::Name(n)) if n == name)
    }

    /// Counts one level of nesting; an error past [`MAX_DEPTH`]. Pair with `self.depth -= 1`.
    pub(super) fn nest(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(E::TooDeep));
        }
        Ok(())
    }

    /// Whether the statement ends here (nothing, a newline, `;` or `}` follows).
    fn at_statement_end(&self) -> bool {
        matches!(
            self.peek(),
            None | Some(
                TokenKind::Newline | TokenKind::Punct(Punct::Semicolon | Punct::RightBrace)
            )
        )
    }

    /// Requires the end of a simple statement: what follows must not continue it.
    fn end_statement(&mut self) -> Parsed<()> {
        if self.at_statement_end() {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn skip_terminators(&mut self) {
        while matches!(
            self.peek(),
            Some(TokenKind::Newline | TokenKind::Punct(Punct::Semicolon))
        ) {
            self.pos += 1;
        }
    }

    pub(super) fn skip_newlines(&mut self) {
        while self.peek() == Some(&TokenKind::Newline) {
            self.pos += 1;
        }
    }

    fn rule(&mut self) -> Parsed<Rule> {
        let start = self.here();
        let pattern = if self.is_name("BEGIN") {
            self.pos += 1;
            Pattern::Begin
        } else if self.is_name("END") {
            self.pos += 1;
            Pattern::End
        } else if self.is(Punct::LeftBrace) {
            Pattern::All
        } else {
            let first = self.expr()?;
            if self.eat(Punct::Comma) {
                self.skip_newlines();
                Pattern::Range(first, self.expr()?)
            } else {
                Pattern::When(first)
            }
        };
        let begin_or_end = matches!(pattern, Pattern::Begin | Pattern::End);
        if begin_or_end {
            self.skip_newlines();
        }
        let action = if self.is(Punct::LeftBrace) {
            self.in_rule = !begin_or_end;
            let block = self.block();
            self.in_rule = false;
            Some(block?)
        } else if begin_or_end {
            return Err(SyntaxError::new(start, E::NeedsAction));
        } else {
            self.end_statement()?;
            None
        };
        Ok(Rule { pattern, action })
    }

    /// `function name(params) { body }`: the function's index and body.
    fn function(&mut self) -> Parsed<(u32, Vec<Stmt>)> {
        self.pos += 1;
        let at = self.here();
        let name = match self.peek() {
            Some(TokenKind::Name(n) | TokenKind::FuncName(n)) => n.clone(),
            _ => return Err(self.unexpected()),
        };
        self.pos += 1;
        self.expect(Punct::LeftParen)?;
        let mut params = Vec::new();
        while !self.eat(Punct::RightParen) {
            self.skip_newlines();
            let param_at = self.here();
            match self.peek() {
                Some(TokenKind::Name(p)) => params.push((p.clone(), param_at)),
                _ => return Err(self.unexpected()),
            }
            self.pos += 1;
            self.skip_newlines();
            if !self.is(Punct::RightParen) {
                self.expect(Punct::Comma)?;
            }
        }
        self.skip_newlines();
        let index = self.symbols.begin_function(&name, &params, at)?;
        let body = self.block();
        self.symbols.end_function();
        Ok((index, body?))
    }

    fn block(&mut self) -> Parsed<Vec<Stmt>> {
        self.expect(Punct::LeftBrace)?;
        self.nest()?;
        let mut statements = Vec::new();
        loop {
            self.skip_terminators();
            if self.eat(Punct::RightBrace) {
                self.depth -= 1;
                return Ok(statements);
            }
            if self.peek().is_none() {
                return Err(self.error(E::Expected("}")));
            }
            statements.push(self.statement()?);
        }
    }

    /// The body of `if`, `else`, a loop: one statement (a block, or `;` alone for none).
    fn body(&mut self) -> Parsed<Stmt> {
        self.skip_newlines();
        let line = self.here().line;
        if self.eat(Punct::Semicolon) {
            return Ok(Stmt {
                line,
                kind: StmtKind::Block(Vec::new()),
            });
        }
        self.statement()
    }

    fn loop_body(&mut self) -> Parsed<Stmt> {
        self.loops += 1;
        let body = self.body();
        self.loops -= 1;
        body
    }

    fn statement(&mut self) -> Parsed<Stmt> {
        let line = self.here().line;
        let kind = self.statement_kind()?;
        Ok(Stmt { line, kind })
    }

    fn statement_kind(&mut self) -> Parsed<StmtKind> {
        if self.is(Punct::LeftBrace) {
            return Ok(StmtKind::Block(self.block()?));
        }
        let keyword = match self.peek() {
            Some(TokenKind::Name(n) | TokenKind::FuncName(n)) => n.clone(),
            _ => String::new(),
        };
        let at = self.here();
        let simple = match keyword.as_str() {
            "print" | "printf" => self.print(keyword == "printf")?,
            "if" => {
                self.pos += 1;
                let condition = self.condition()?;
                let then = self.body()?;
                let save = self.pos;
                self.skip_terminators();
                if self.is_name("else") {
                    self.pos += 1;
                    let otherwise = self.body()?;
                    return Ok(StmtKind::If(
                        condition,
                        Box::new(then),
                        Some(Box::new(otherwise)),
                    ));
                }
                self.pos = save;
                return Ok(StmtKind::If(condition, Box::new(then), None));
            }
            "while" => {
                self.pos += 1;
                let condition = self.condition()?;
                return Ok(StmtKind::While(condition, Box::new(self.loop_body()?)));
            }
            "do" => {
                self.pos += 1;
                let body = self.loop_body()?;
                self.skip_terminators();
                if !self.is_name("while") {
                    return Err(self.error(E::Expected("while")));
                }
                self.pos += 1;
                let condition = self.condition()?;
                StmtKind::DoWhile(Box::new(body), condition)
            }
            "for" => return self.for_loop(),
            "next" | "nextfile" => {
                self.pos += 1;
                if !self.in_rule {
                    let word = if keyword == "next" {
                        "next"
                    } else {
                        "nextfile"
                    };
                    return Err(SyntaxError::new(at, E::OutOfPlace(word)));
                }
                if keyword == "next" {
                    StmtKind::Next
                } else {
                    StmtKind::NextFile
                }
            }
            "break" | "continue" => {
                self.pos += 1;
                if self.loops == 0 {
                    let word = if keyword == "break" {
                        "break"
                    } else {
                        "continue"
                    };
                    return Err(SyntaxError::new(at, E::OutOfPlace(word)));
                }
                if keyword == "break" {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                }
            }
            "exit" => {
                self.pos += 1;
                StmtKind::Exit(self.optional_expr()?)
            }
            "return" => {
                self.pos += 1;
                if !self.symbols.in_function() {
                    return Err(SyntaxError::new(at, E::OutOfPlace("return")));
                }
                StmtKind::Return(self.optional_expr()?)
            }
            "delete" => self.delete()?,
            "in" | "else" | "function" | "func" | "BEGIN" | "END" => return Err(self.unexpected()),
            _ => StmtKind::Eval(self.expr()?),
        };
        self.end_statement()?;
        Ok(simple)
    }

    fn optional_expr(&mut self) -> Parsed<Option<Expr>> {
        if self.at_statement_end() {
            Ok(None)
        } else {
            Ok(Some(self.expr()?))
        }
    }

    /// `( expr )` after `if` or `while`, and the newlines after it.
    fn condition(&mut self) -> Parsed<Expr> {
        self.expect(Punct::LeftParen)?;
        self.skip_newlines();
        let condition = self.expr()?;
        self.skip_newlines();
        self.expect(Punct::RightParen)?;
        self.skip_newlines();
        Ok(condition)
    }

    /// `delete a[i]` or `delete a`.
    fn delete(&mut self) -> Parsed<StmtKind> {
        self.pos += 1;
        let at = self.here();
        let Some(TokenKind::Name(name)) = self.peek().cloned() else {
            return Err(self.unexpected());
        };
        self.pos += 1;
        let array = self.symbols.array(&name, at)?;
        if self.eat(Punct::LeftBracket) {
            let subscripts = self.subscripts()?;
            return Ok(StmtKind::Delete(array, Some(subscripts)));
        }
        Ok(StmtKind::Delete(array, None))
    }

    fn print(&mut self, formatted: bool) -> Parsed<StmtKind> {
        let at = self.here();
        self.pos += 1;
        let args = self.print_args()?;
        let output = if self.eat(Punct::Gt) {
            Some(OutputMode::Truncate)
        } else if self.eat(Punct::AppendTo) {
            Some(OutputMode::Append)
        } else if self.eat(Punct::Pipe) {
            Some(OutputMode::Pipe)
        } else {
            None
        };
        let output = match output {
            Some(mode) => Some(Output {
                mode,
                target: self.concat()?,
            }),
            None => None,
        };
        if !formatted {
            return Ok(StmtKind::Print(args, output));
        }
        if args.is_empty() {
            return Err(SyntaxError::new(
                at,
                E::Arity {
                    function: "printf".into(),
                    given: 0,
                    least: 1,
                    most: usize::MAX,
                },
            ));
        }
        Ok(StmtKind::Printf(args, output))
    }

    /// The expressions of `print`: `(a, b)` as a whole when the parenthesis closes the list,
    /// otherwise a list in which `>` redirects rather than compares.
    fn print_args(&mut self) -> Parsed<Vec<Expr>> {
        let mut args = Vec::new();
        if self.at_statement_end()
            || self.is(Punct::Gt)
            || self.is(Punct::AppendTo)
            || self.is(Punct::Pipe)
        {
            return Ok(args);
        }
        if self.is(Punct::LeftParen) {
            let save = self.pos;
            self.pos += 1;
            self.nest()?;
            let grouped = self.expr_list(Punct::RightParen);
            self.depth -= 1;
            if let Ok(list) = grouped {
                let closes = self.at_statement_end()
                    || self.is(Punct::Gt)
                    || self.is(Punct::AppendTo)
                    || self.is(Punct::Pipe);
                if closes {
                    return Ok(list);
                }
            }
            self.pos = save;
        }
        args.push(self.expr_no_gt()?);
        while self.eat(Punct::Comma) {
            self.skip_newlines();
            args.push(self.expr_no_gt()?);
        }
        Ok(args)
    }

    /// Expressions separated by commas up to `close` (which is consumed).
    pub(super) fn expr_list(&mut self, close: Punct) -> Parsed<Vec<Expr>> {
        let mut list = Vec::new();
        self.skip_newlines();
        if self.eat(close) {
            return Ok(list);
        }
        loop {
            list.push(self.expr()?);
            self.skip_newlines();
            if self.eat(close) {
                return Ok(list);
            }
            if !self.eat(Punct::Comma) {
                return Err(self.error(E::Expected(close.text())));
            }
            self.skip_newlines();
        }
    }

    /// The subscripts after `[`, through `]`.
    pub(super) fn subscripts(&mut self) -> Parsed<Vec<Expr>> {
        let list = self.expr_list(Punct::RightBracket)?;
        if list.is_empty() {
            return Err(self.unexpected());
        }
        Ok(list)
    }

    fn for_loop(&mut self) -> Parsed<StmtKind> {
        self.pos += 1;
        self.expect(Punct::LeftParen)?;
        // `for (k in a)`, optionally with the name in parentheses.
        let name_at = |parser: &Parser, offset: usize| match parser.peek_at(offset) {
            Some(TokenKind::Name(n)) if n != "in" => Some(n.clone()),
            _ => None,
        };
        if let (Some(var), Some(TokenKind::Name(word)), Some(array)) =
            (name_at(self, 0), self.peek_at(1), name_at(self, 2))
            && word == "in"
            && self.peek_at(3) == Some(&TokenKind::Punct(Punct::RightParen))
        {
            let var_at = self.here();
            self.pos += 2;
            let array_at = self.here();
            self.pos += 2;
            let slot = self.symbols.scalar(&var, var_at)?;
            let array = self.symbols.array(&array, array_at)?;
            self.skip_newlines();
            return Ok(StmtKind::ForIn(slot, array, Box::new(self.loop_body()?)));
        }
        let init = self.optional_until(Punct::Semicolon)?;
        self.expect(Punct::Semicolon)?;
        self.skip_newlines();
        let condition = self.optional_until(Punct::Semicolon)?;
        self.expect(Punct::Semicolon)?;
        self.skip_newlines();
        let step = self.optional_until(Punct::RightParen)?;
        self.expect(Punct::RightParen)?;
        Ok(StmtKind::For(
            init,
            condition,
            step,
            Box::new(self.loop_body()?),
        ))
    }

    fn optional_until(&mut self, close: Punct) -> Parsed<Option<Expr>> {
        if self.is(close) {
            Ok(None)
        } else {
            Ok(Some(self.expr()?))
        }
    }

    /// An array named at the parser's position (for `in` and `split`), consumed.
    pub(super) fn array_name(&mut self) -> Parsed<ArrayRef> {
        let at = self.here();
        match self.peek().cloned() {
            Some(TokenKind::Name(name)) => {
                self.pos += 1;
                self.symbols.array(&name, at)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// A scalar variable named `name` at `at`.
    pub(super) fn scalar(&mut self, name: &str, at: Pos) -> Parsed<Slot> {
        self.symbols.scalar(name, at)
    }
}

/// A token as an error message names it.
pub(super) fn describe(token: &TokenKind) -> String {
    match token {
        TokenKind::Punct(punct) => format!("`{}'", punct.text()),
        TokenKind::Newline => "end of line".into(),
        TokenKind::Num(n) => format!("number {n}"),
        TokenKind::Str(s) => format!("string \"{s}\""),
        TokenKind::Regex(r) => format!("/{r}/"),
        TokenKind::Name(n) | TokenKind::FuncName(n) => format!("`{n}'"),
    }
}
