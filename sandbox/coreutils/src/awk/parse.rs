//! awk's parser: tokens to [`Rule`]s, by recursive descent in awk's precedence order
//! (`?:`, assignment, `||`, `&&`, `~`, comparison, concatenation, `+ -`, `* / %`, unary,
//! `^`, `++ --`, `$`). Names are resolved here: an operator becomes an [`Arith`] or a [`Cmp`],
//! a call a [`Builtin`] with its arity checked, a special variable a [`Var`] variant. A call
//! of any other function, or a construct the sandbox's awk lacks, is a [`SyntaxError`] at the
//! token where it stands.

use std::rc::Rc;

use super::ast::{Arith, Builtin, Cmp, Expr, Pattern, Redirect, Rule, Stmt, Var, compile};
use super::lex::{Pos, Punct, SyntaxError, Token, TokenKind, lex};

/// Parses a whole program.
pub fn parse(src: &str) -> Result<Vec<Rule>, SyntaxError> {
    let (tokens, end) = lex(src)?;
    Parser {
        tokens,
        pos: 0,
        end,
    }
    .program()
}

/// awk's builtin functions and statements that the sandbox's awk does not have: named, they
/// are refused rather than taken for variables.
const UNSUPPORTED: &[&str] = &[
    "getline", "function", "func", "delete", "in", "split", "system", "break", "continue", "do",
    "return", "nextfile", "match", "close", "fflush", "srand", "rand", "sqrt", "exp", "log", "sin",
    "cos", "atan2",
];

type Parsed<T> = Result<T, SyntaxError>;

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// Where the program ends, for errors there.
    end: Pos,
}

impl Parser {
    fn peek(&self) -> Option<&TokenKind> {
        self.tokens.get(self.pos).map(|t| &t.kind)
    }

    /// Where the next token starts (the end of the program if there is none).
    fn here(&self) -> Pos {
        self.tokens.get(self.pos).map_or(self.end, |t| t.pos)
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError::new(self.here(), message)
    }

    fn is(&self, punct: Punct) -> bool {
        self.peek() == Some(&TokenKind::Punct(punct))
    }

    fn eat(&mut self, punct: Punct) -> bool {
        if self.is(punct) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, punct: Punct) -> Parsed<()> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(self.error(format!("syntax error: expected `{}'", punct.text())))
        }
    }

    fn is_name(&self, name: &str) -> bool {
        matches!(self.peek(), Some(TokenKind::Name(n)) if n == name)
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

    fn skip_terminators(&mut self) {
        while matches!(
            self.peek(),
            Some(TokenKind::Newline | TokenKind::Punct(Punct::Semicolon))
        ) {
            self.pos += 1;
        }
    }

    fn skip_newlines(&mut self) {
        while self.peek() == Some(&TokenKind::Newline) {
            self.pos += 1;
        }
    }

    fn program(&mut self) -> Parsed<Vec<Rule>> {
        let mut rules = Vec::new();
        loop {
            self.skip_terminators();
            let start = self.here();
            let pattern = match self.peek() {
                None => return Ok(rules),
                Some(TokenKind::Name(n)) if n == "BEGIN" => {
                    self.pos += 1;
                    Pattern::Begin
                }
                Some(TokenKind::Name(n)) if n == "END" => {
                    self.pos += 1;
                    Pattern::End
                }
                Some(TokenKind::Punct(Punct::LeftBrace)) => Pattern::All,
                _ => {
                    let first = self.expr()?;
                    if self.eat(Punct::Comma) {
                        self.skip_newlines();
                        Pattern::Range(first, self.expr()?)
                    } else {
                        Pattern::When(first)
                    }
                }
            };
            let action = if self.is(Punct::LeftBrace) {
                Some(self.block()?)
            } else {
                None
            };
            if action.is_none() && matches!(pattern, Pattern::Begin | Pattern::End) {
                return Err(SyntaxError::new(
                    start,
                    "syntax error: BEGIN and END need an action",
                ));
            }
            rules.push(Rule { pattern, action });
        }
    }

    fn block(&mut self) -> Parsed<Vec<Stmt>> {
        self.expect(Punct::LeftBrace)?;
        let mut statements = Vec::new();
        loop {
            self.skip_terminators();
            if self.eat(Punct::RightBrace) {
                return Ok(statements);
            }
            if self.peek().is_none() {
                return Err(self.error("syntax error: missing `}'"));
            }
            statements.push(self.statement()?);
        }
    }

    fn simple_or_block(&mut self) -> Parsed<Stmt> {
        self.skip_newlines();
        if self.is(Punct::LeftBrace) {
            Ok(Stmt::Block(self.block()?))
        } else {
            self.statement()
        }
    }

    fn statement(&mut self) -> Parsed<Stmt> {
        let keyword = match self.peek() {
            Some(TokenKind::Name(n)) => n.clone(),
            Some(TokenKind::Punct(Punct::LeftBrace)) => return Ok(Stmt::Block(self.block()?)),
            _ => String::new(),
        };
        match keyword.as_str() {
            "print" | "printf" => self.print(keyword == "printf"),
            "if" => {
                self.pos += 1;
                let condition = self.condition()?;
                let then = self.simple_or_block()?;
                let save = self.pos;
                self.skip_terminators();
                if self.is_name("else") {
                    self.pos += 1;
                    let otherwise = self.simple_or_block()?;
                    Ok(Stmt::If(
                        condition,
                        Box::new(then),
                        Some(Box::new(otherwise)),
                    ))
                } else {
                    self.pos = save;
                    Ok(Stmt::If(condition, Box::new(then), None))
                }
            }
            "while" => {
                self.pos += 1;
                let condition = self.condition()?;
                Ok(Stmt::While(condition, Box::new(self.simple_or_block()?)))
            }
            "for" => self.for_loop(),
            "next" => {
                self.pos += 1;
                Ok(Stmt::Next)
            }
            "exit" => {
                self.pos += 1;
                let code = if self.at_statement_end() {
                    None
                } else {
                    Some(self.expr()?)
                };
                Ok(Stmt::Exit(code))
            }
            _ => Ok(Stmt::Eval(self.expr()?)),
        }
    }

    /// `( expr )` after `if` or `while`.
    fn condition(&mut self) -> Parsed<Expr> {
        self.expect(Punct::LeftParen)?;
        let condition = self.expr()?;
        self.expect(Punct::RightParen)?;
        Ok(condition)
    }

    fn print(&mut self, formatted: bool) -> Parsed<Stmt> {
        let at = self.here();
        self.pos += 1;
        let parenthesised = self.is(Punct::LeftParen);
        let mut args = Vec::new();
        if !self.at_statement_end() {
            if parenthesised {
                self.pos += 1;
            }
            args.push(self.expr_no_gt(parenthesised)?);
            while self.eat(Punct::Comma) {
                self.skip_newlines();
                args.push(self.expr_no_gt(parenthesised)?);
            }
            if parenthesised {
                self.expect(Punct::RightParen)?;
            }
        }
        if self.is(Punct::Pipe) {
            return Err(self.error(
                "pipes from awk are not supported in the sandbox; pipe the awk command instead",
            ));
        }
        let redirect = if self.eat(Punct::AppendTo) || self.is(Punct::Gt) {
            let append = !self.eat(Punct::Gt);
            Some(Redirect {
                target: self.concat()?,
                append,
            })
        } else {
            None
        };
        if !formatted {
            return Ok(Stmt::Print(args, redirect));
        }
        if args.is_empty() {
            return Err(SyntaxError::new(at, "printf: no format"));
        }
        Ok(Stmt::Printf(args, redirect))
    }

    fn for_loop(&mut self) -> Parsed<Stmt> {
        self.pos += 1;
        self.expect(Punct::LeftParen)?;
        let init = if self.is(Punct::Semicolon) {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(Punct::Semicolon)?;
        let condition = if self.is(Punct::Semicolon) {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(Punct::Semicolon)?;
        let step = if self.is(Punct::RightParen) {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect(Punct::RightParen)?;
        Ok(Stmt::For(
            init,
            condition,
            step,
            Box::new(self.simple_or_block()?),
        ))
    }

    fn expr(&mut self) -> Parsed<Expr> {
        self.ternary(false)
    }

    /// In `print a > b` the `>` would be a redirection; inside parentheses it compares.
    fn expr_no_gt(&mut self, parenthesised: bool) -> Parsed<Expr> {
        self.ternary(!parenthesised)
    }

    fn ternary(&mut self, no_gt: bool) -> Parsed<Expr> {
        let condition = self.assignment(no_gt)?;
        if self.eat(Punct::Question) {
            let yes = self.ternary(no_gt)?;
            self.expect(Punct::Colon)?;
            let no = self.ternary(no_gt)?;
            return Ok(Expr::Cond(Box::new(condition), Box::new(yes), Box::new(no)));
        }
        Ok(condition)
    }

    fn assignment(&mut self, no_gt: bool) -> Parsed<Expr> {
        let left = self.or(no_gt)?;
        let op = match self.peek() {
            Some(TokenKind::Punct(Punct::Assign)) => None,
            Some(TokenKind::Punct(Punct::AddAssign)) => Some(Arith::Add),
            Some(TokenKind::Punct(Punct::SubAssign)) => Some(Arith::Sub),
            Some(TokenKind::Punct(Punct::MulAssign)) => Some(Arith::Mul),
            Some(TokenKind::Punct(Punct::DivAssign)) => Some(Arith::Div),
            Some(TokenKind::Punct(Punct::ModAssign)) => Some(Arith::Mod),
            _ => return Ok(left),
        };
        if !left.is_lvalue() {
            return Ok(left);
        }
        self.pos += 1;
        let value = self.ternary(no_gt)?;
        Ok(Expr::Assign {
            target: Box::new(left),
            op,
            value: Box::new(value),
        })
    }

    fn or(&mut self, no_gt: bool) -> Parsed<Expr> {
        let mut left = self.and(no_gt)?;
        while self.eat(Punct::Or) {
            self.skip_newlines();
            left = Expr::Or(Box::new(left), Box::new(self.and(no_gt)?));
        }
        Ok(left)
    }

    fn and(&mut self, no_gt: bool) -> Parsed<Expr> {
        let mut left = self.matching(no_gt)?;
        while self.eat(Punct::And) {
            self.skip_newlines();
            left = Expr::And(Box::new(left), Box::new(self.matching(no_gt)?));
        }
        Ok(left)
    }

    fn matching(&mut self, no_gt: bool) -> Parsed<Expr> {
        let mut left = self.comparison(no_gt)?;
        loop {
            let negate = if self.eat(Punct::Match) {
                false
            } else if self.eat(Punct::NoMatch) {
                true
            } else {
                return Ok(left);
            };
            left = Expr::Match {
                text: Box::new(left),
                pattern: Box::new(self.comparison(no_gt)?),
                negate,
            };
        }
    }

    fn comparison(&mut self, no_gt: bool) -> Parsed<Expr> {
        let left = self.concat()?;
        let cmp = match self.peek() {
            Some(TokenKind::Punct(Punct::Eq)) => Cmp::Eq,
            Some(TokenKind::Punct(Punct::Ne)) => Cmp::Ne,
            Some(TokenKind::Punct(Punct::Le)) => Cmp::Le,
            Some(TokenKind::Punct(Punct::Ge)) => Cmp::Ge,
            Some(TokenKind::Punct(Punct::Lt)) => Cmp::Lt,
            Some(TokenKind::Punct(Punct::Gt)) if !no_gt => Cmp::Gt,
            _ => return Ok(left),
        };
        self.pos += 1;
        let right = self.concat()?;
        Ok(Expr::Compare(cmp, Box::new(left), Box::new(right)))
    }

    fn concat(&mut self) -> Parsed<Expr> {
        let mut left = self.additive()?;
        while self.starts_operand() {
            let right = self.additive()?;
            left = Expr::Concat(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn starts_operand(&self) -> bool {
        match self.peek() {
            Some(TokenKind::Num(_) | TokenKind::Str(_) | TokenKind::Regex(_)) => true,
            Some(TokenKind::Name(n)) => !matches!(n.as_str(), "in" | "else"),
            Some(TokenKind::Punct(p)) => matches!(
                p,
                Punct::Dollar | Punct::LeftParen | Punct::Not | Punct::Increment | Punct::Decrement
            ),
            _ => false,
        }
    }

    fn additive(&mut self) -> Parsed<Expr> {
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                Some(TokenKind::Punct(Punct::Plus)) => Arith::Add,
                Some(TokenKind::Punct(Punct::Minus)) => Arith::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            left = Expr::Arith(op, Box::new(left), Box::new(self.multiplicative()?));
        }
    }

    fn multiplicative(&mut self) -> Parsed<Expr> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(TokenKind::Punct(Punct::Star)) => Arith::Mul,
                Some(TokenKind::Punct(Punct::Slash)) => Arith::Div,
                Some(TokenKind::Punct(Punct::Percent)) => Arith::Mod,
                _ => return Ok(left),
            };
            self.pos += 1;
            left = Expr::Arith(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Parsed<Expr> {
        if self.eat(Punct::Not) {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat(Punct::Minus) {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat(Punct::Plus) {
            return self.unary();
        }
        if let Some(delta) = self.step() {
            let target = self.postfix()?;
            return Ok(Expr::Step {
                target: Box::new(target),
                delta,
                prefix: true,
            });
        }
        self.power()
    }

    /// `++` or `--`, taken: the step it adds.
    fn step(&mut self) -> Option<f64> {
        if self.eat(Punct::Increment) {
            Some(1.0)
        } else if self.eat(Punct::Decrement) {
            Some(-1.0)
        } else {
            None
        }
    }

    fn power(&mut self) -> Parsed<Expr> {
        let base = self.postfix()?;
        if self.eat(Punct::Caret) {
            return Ok(Expr::Arith(
                Arith::Pow,
                Box::new(base),
                Box::new(self.unary()?),
            ));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Parsed<Expr> {
        let primary = self.primary()?;
        if primary.is_lvalue()
            && let Some(delta) = self.step()
        {
            return Ok(Expr::Step {
                target: Box::new(primary),
                delta,
                prefix: false,
            });
        }
        Ok(primary)
    }

    fn primary(&mut self) -> Parsed<Expr> {
        let Some(token) = self.tokens.get(self.pos).cloned() else {
            return Err(self.error("syntax error: unexpected end of program"));
        };
        self.pos += 1;
        Ok(match token.kind {
            TokenKind::Num(n) => Expr::Num(n),
            TokenKind::Str(s) => Expr::Str(s),
            TokenKind::Regex(r) => match compile(&r) {
                Ok(regex) => Expr::Regex(Rc::new(regex)),
                Err(message) => return Err(SyntaxError::new(token.pos, message)),
            },
            TokenKind::Punct(Punct::Dollar) => Expr::Field(Box::new(self.field_index()?)),
            TokenKind::Punct(Punct::LeftParen) => {
                let inner = self.expr()?;
                self.expect(Punct::RightParen)?;
                inner
            }
            TokenKind::Name(name) => {
                let called = self.is(Punct::LeftParen);
                if UNSUPPORTED.contains(&name.as_str()) {
                    return Err(SyntaxError::new(
                        token.pos,
                        format!("`{name}' is not supported in the sandbox's awk"),
                    ));
                }
                match Builtin::from_name(&name) {
                    Some(builtin) if called => self.call(builtin, token.pos)?,
                    Some(Builtin::Length) => Expr::Call(Builtin::Length, Vec::new()),
                    Some(builtin) => {
                        return Err(SyntaxError::new(
                            token.pos,
                            format!("syntax error: `{}' needs its arguments", builtin.name()),
                        ));
                    }
                    // `f(x)` with nothing between the name and `(` calls a function, which
                    // would have to be user-defined; `f (x)` concatenates a variable.
                    None if called && self.adjacent(token.pos, &name) => {
                        return Err(SyntaxError::new(
                            token.pos,
                            format!("function `{name}' is not defined"),
                        ));
                    }
                    None => Expr::Var(Var::from_name(&name)),
                }
            }
            other => {
                return Err(SyntaxError::new(
                    token.pos,
                    format!("syntax error at {}", describe(&other)),
                ));
            }
        })
    }

    /// Whether the token at the parser's position starts right where `name` (at `at`) ends.
    fn adjacent(&self, at: Pos, name: &str) -> bool {
        let end = Pos {
            column: at.column + name.chars().count(),
            ..at
        };
        self.here() == end
    }

    /// The arguments of a builtin call, from its `(`; their count is checked against its
    /// arity, and `sub`/`gsub`'s target must be assignable.
    fn call(&mut self, builtin: Builtin, at: Pos) -> Parsed<Expr> {
        self.expect(Punct::LeftParen)?;
        let mut args = Vec::new();
        if !self.is(Punct::RightParen) {
            args.push(self.expr()?);
            while self.eat(Punct::Comma) {
                args.push(self.expr()?);
            }
        }
        self.expect(Punct::RightParen)?;
        let (least, most) = builtin.arity();
        let name = builtin.name();
        if args.len() < least {
            return Err(SyntaxError::new(
                at,
                format!("{name}: not enough arguments ({} for {least})", args.len()),
            ));
        }
        if args.len() > most {
            return Err(SyntaxError::new(
                at,
                format!("{name}: too many arguments ({} for {most})", args.len()),
            ));
        }
        if matches!(builtin, Builtin::Sub | Builtin::Gsub)
            && args.get(2).is_some_and(|target| !target.is_lvalue())
        {
            return Err(SyntaxError::new(
                at,
                format!("{name}: the third argument must be a variable or a field"),
            ));
        }
        Ok(Expr::Call(builtin, args))
    }

    /// The operand of `$`: a number, a variable or a parenthesised expression.
    fn field_index(&mut self) -> Parsed<Expr> {
        if self.eat(Punct::Minus) {
            return Ok(Expr::Neg(Box::new(self.primary()?)));
        }
        self.primary()
    }
}

/// A token as an error message names it.
fn describe(token: &TokenKind) -> String {
    match token {
        TokenKind::Punct(punct) => format!("`{}'", punct.text()),
        TokenKind::Newline => "end of line".into(),
        TokenKind::Num(n) => format!("number {n}"),
        TokenKind::Str(s) => format!("string \"{s}\""),
        TokenKind::Regex(r) => format!("/{r}/"),
        TokenKind::Name(n) => format!("`{n}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn error(src: &str) -> String {
        match parse(src) {
            Ok(_) => panic!("{src} parsed"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn an_unknown_function_is_an_error_at_its_name() {
        assert_eq!(
            error("{ print foo($1) }"),
            "line 1, column 9: function `foo' is not defined"
        );
        // With a space between, it is the variable `foo` concatenated with `($1)`.
        assert!(parse("{ print foo ($1) }").is_ok());
    }

    #[test]
    fn builtins_awk_has_but_the_sandbox_lacks_are_refused_by_name() {
        assert_eq!(
            error("BEGIN {\n  n = split($0, parts)\n}"),
            "line 2, column 7: `split' is not supported in the sandbox's awk"
        );
        assert_eq!(
            error("BEGIN { x = sqrt(2) }"),
            "line 1, column 13: `sqrt' is not supported in the sandbox's awk"
        );
        assert_eq!(
            error("{ while (1) break }"),
            "line 1, column 13: `break' is not supported in the sandbox's awk"
        );
    }

    #[test]
    fn a_builtin_call_with_the_wrong_arity_is_an_error() {
        assert_eq!(
            error("{ print substr($0) }"),
            "line 1, column 9: substr: not enough arguments (1 for 2)"
        );
        assert_eq!(
            error("{ print index(\"a\", \"b\", \"c\") }"),
            "line 1, column 9: index: too many arguments (3 for 2)"
        );
        assert_eq!(
            error("{ gsub(/a/, \"b\", \"c\") }"),
            "line 1, column 3: gsub: the third argument must be a variable or a field"
        );
        assert_eq!(
            error("{ x = toupper }"),
            "line 1, column 7: syntax error: `toupper' needs its arguments"
        );
        assert!(parse("{ print length, length(), length($1), gsub(/a/, \"b\", $2) }").is_ok());
    }

    #[test]
    fn operators_out_of_place_are_errors_where_they_stand() {
        assert_eq!(
            error("{ x = 1 ** 2 }"),
            "line 1, column 10: syntax error at `*'"
        );
        assert_eq!(
            error("{ x = (1 + 2 }"),
            "line 1, column 14: syntax error: expected `)'"
        );
        assert_eq!(
            error("BEGIN { x = 1 @ 2 }"),
            "line 1, column 15: syntax error: unexpected character '@'"
        );
        assert_eq!(
            error("BEGIN { if (x"),
            "line 1, column 14: syntax error: expected `)'"
        );
        assert_eq!(
            error("BEGIN"),
            "line 1, column 1: syntax error: BEGIN and END need an action"
        );
        assert_eq!(
            error("/a[/ { print }"),
            "line 1, column 1: Unmatched [, [^, [:, [., or [="
        );
    }
}
