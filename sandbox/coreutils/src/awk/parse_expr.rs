//! awk's parser, expression level: recursive descent in awk's precedence order, lowest first —
//! `?:`, assignment, `||`, `&&`, `in`, `~ !~`, comparison (and `cmd | getline`),
//! concatenation, `+ -`, `* / %`, unary `! - +`, `^`, `++ --`, `$`, grouping. Operators become
//! [`Arith`]/[`Cmp`] variants, calls a [`Builtin`] with its arity checked or a user function's
//! index, names numbered slots.

use std::rc::Rc;

use super::ast::{Arith, Builtin, Cmp, Expr, Source, compile};
use super::error::{Pos, SyntaxError, SyntaxErrorKind as E};
use super::lex::{Punct, TokenKind};
use super::parse::{Parsed, Parser};

/// Words that cannot be variables.
const KEYWORDS: &[&str] = &[
    "BEGIN", "END", "function", "func", "if", "else", "while", "for", "do", "break", "continue",
    "next", "nextfile", "exit", "return", "delete", "print", "printf", "in", "getline",
];

impl Parser {
    pub(super) fn expr(&mut self) -> Parsed<Expr> {
        self.ternary(false)
    }

    /// An expression of `print`'s list, where an unparenthesised `>` redirects.
    pub(super) fn expr_no_gt(&mut self) -> Parsed<Expr> {
        self.ternary(true)
    }

    fn ternary(&mut self, no_gt: bool) -> Parsed<Expr> {
        let condition = self.assignment(no_gt)?;
        if self.eat(Punct::Question) {
            self.skip_newlines();
            self.nest()?;
            let yes = self.ternary(no_gt)?;
            self.skip_newlines();
            self.expect(Punct::Colon)?;
            self.skip_newlines();
            let no = self.ternary(no_gt)?;
            self.depth -= 1;
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
            Some(TokenKind::Punct(Punct::PowAssign)) => Some(Arith::Pow),
            _ => return Ok(left),
        };
        if !left.is_lvalue() {
            return Ok(left);
        }
        self.pos += 1;
        self.skip_newlines();
        self.nest()?;
        let value = self.ternary(no_gt)?;
        self.depth -= 1;
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
        let mut left = self.membership(no_gt)?;
        while self.eat(Punct::And) {
            self.skip_newlines();
            left = Expr::And(Box::new(left), Box::new(self.membership(no_gt)?));
        }
        Ok(left)
    }

    /// `x in a`.
    fn membership(&mut self, no_gt: bool) -> Parsed<Expr> {
        let mut left = self.matching(no_gt)?;
        while self.is_name("in") {
            self.pos += 1;
            let array = self.array_name()?;
            left = Expr::In(vec![left], array);
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
        let mut left = self.concat()?;
        // `cmd | getline [var]`: the command is everything before, concatenation included.
        while self.is(Punct::Pipe)
            && matches!(self.peek_at(1), Some(TokenKind::Name(n)) if n == "getline")
        {
            self.pos += 2;
            let target = self.getline_target()?;
            left = Expr::Getline {
                source: Source::Command(Box::new(left)),
                target,
            };
        }
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

    /// Concatenation: operands side by side. An operand cannot start with `+` or `-`
    /// (`a -1` subtracts).
    pub(super) fn concat(&mut self) -> Parsed<Expr> {
        let mut left = self.additive()?;
        while self.starts_operand() {
            let right = self.additive()?;
            left = Expr::Concat(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn starts_operand(&self) -> bool {
        match self.peek() {
            Some(
                TokenKind::Num(_)
                | TokenKind::Str(_)
                | TokenKind::Regex(_)
                | TokenKind::FuncName(_),
            ) => true,
            Some(TokenKind::Name(n)) => !KEYWORDS.contains(&n.as_str()),
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
        let wrap: fn(Box<Expr>) -> Expr = if self.eat(Punct::Not) {
            Expr::Not
        } else if self.eat(Punct::Minus) {
            Expr::Neg
        } else if self.eat(Punct::Plus) {
            Expr::Plus
        } else {
            return self.power();
        };
        self.nest()?;
        let operand = self.unary()?;
        self.depth -= 1;
        Ok(wrap(Box::new(operand)))
    }

    fn power(&mut self) -> Parsed<Expr> {
        let base = self.postfix()?;
        if self.eat(Punct::Caret) {
            self.nest()?;
            // Right-associative, and the exponent may carry a sign: `2^-1`, `2^3^2`.
            let exponent = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Arith(Arith::Pow, Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    /// `++x`, `x++`, and the primaries they apply to.
    fn postfix(&mut self) -> Parsed<Expr> {
        if let Some(delta) = self.step() {
            let at = self.here();
            let target = self.postfix()?;
            if !target.is_lvalue() {
                return Err(SyntaxError::new(
                    at,
                    E::NotAssignable("the operand of ++ or --".into()),
                ));
            }
            return Ok(Expr::Step {
                target: Box::new(target),
                delta,
                prefix: true,
            });
        }
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

    fn primary(&mut self) -> Parsed<Expr> {
        let Some(token) = self.tokens.get(self.pos).cloned() else {
            return Err(self.error(E::UnexpectedEnd));
        };
        self.pos += 1;
        Ok(match token.kind {
            TokenKind::Num(n) => Expr::Num(n),
            TokenKind::Str(s) => Expr::Str(s),
            TokenKind::Regex(r) => match compile(&r) {
                Ok(regex) => Expr::Regex(Rc::new(regex)),
                Err(message) => return Err(SyntaxError::new(token.pos, E::Regex(message))),
            },
            TokenKind::Punct(Punct::Dollar) => {
                self.nest()?;
                let index = self.field_index()?;
                self.depth -= 1;
                Expr::Field(Box::new(index))
            }
            TokenKind::Punct(Punct::LeftParen) => {
                self.nest()?;
                let list = self.expr_list(Punct::RightParen)?;
                self.depth -= 1;
                match <[Expr; 1]>::try_from(list) {
                    Ok([inner]) => inner,
                    Err(list) if list.len() > 1 && self.is_name("in") => {
                        self.pos += 1;
                        let array = self.array_name()?;
                        Expr::In(list, array)
                    }
                    Err(_) => return Err(SyntaxError::new(token.pos, E::Unexpected("`('".into()))),
                }
            }
            TokenKind::FuncName(name) => self.call(&name, token.pos)?,
            TokenKind::Name(name) if name == "getline" => {
                let target = self.getline_target()?;
                let source = if self.eat(Punct::Lt) {
                    Source::File(Box::new(self.postfix()?))
                } else {
                    Source::Main
                };
                Expr::Getline { source, target }
            }
            TokenKind::Name(name) if Builtin::from_name(&name).is_some() => {
                if self.is(Punct::LeftParen) {
                    self.call(&name, token.pos)?
                } else if name == "length" {
                    Expr::Call(Builtin::Length, Vec::new())
                } else {
                    return Err(SyntaxError::new(
                        token.pos,
                        E::Unexpected(format!("`{name}' without its arguments")),
                    ));
                }
            }
            TokenKind::Name(name) if KEYWORDS.contains(&name.as_str()) => {
                return Err(SyntaxError::new(
                    token.pos,
                    E::Unexpected(format!("`{name}'")),
                ));
            }
            TokenKind::Name(name) => {
                if self.eat(Punct::LeftBracket) {
                    let array = self.symbols.array(&name, token.pos)?;
                    self.nest()?;
                    let subscripts = self.subscripts()?;
                    self.depth -= 1;
                    Expr::Index(array, subscripts)
                } else {
                    Expr::Var(self.scalar(&name, token.pos)?)
                }
            }
            other => {
                self.pos -= 1;
                return Err(SyntaxError::new(
                    token.pos,
                    E::Unexpected(super::parse::describe(&other)),
                ));
            }
        })
    }

    /// The variable `getline` reads into, if one follows: a name, an element or a field.
    fn getline_target(&mut self) -> Parsed<Option<Box<Expr>>> {
        let starts = match self.peek() {
            Some(TokenKind::Punct(Punct::Dollar)) => true,
            Some(TokenKind::Name(n)) => !KEYWORDS.contains(&n.as_str()),
            _ => false,
        };
        if !starts {
            return Ok(None);
        }
        let at = self.here();
        let target = self.primary()?;
        if !target.is_lvalue() {
            return Err(SyntaxError::new(
                at,
                E::NotAssignable("getline's variable".into()),
            ));
        }
        Ok(Some(Box::new(target)))
    }

    /// A call: a builtin, with its arity checked and its array and variable arguments
    /// resolved, or a user function.
    fn call(&mut self, name: &str, at: Pos) -> Parsed<Expr> {
        let Some(builtin) = Builtin::from_name(name) else {
            return self.user_call(name, at);
        };
        self.expect(Punct::LeftParen)?;
        self.nest()?;
        let mut args = Vec::new();
        self.skip_newlines();
        if !self.eat(Punct::RightParen) {
            loop {
                let at_arg = self.here();
                let arg = if builtin == Builtin::Split && args.len() == 1 {
                    let array = self.array_name()?;
                    Expr::Index(array, Vec::new())
                } else if builtin == Builtin::Length && self.bare_name_arg() {
                    self.length_of_name()?
                } else {
                    self.expr()?
                };
                let needs_lvalue =
                    matches!(builtin, Builtin::Sub | Builtin::Gsub) && args.len() == 2;
                if needs_lvalue && !arg.is_lvalue() {
                    return Err(SyntaxError::new(
                        at_arg,
                        E::NotAssignable(format!("{name}'s third argument")),
                    ));
                }
                args.push(arg);
                self.skip_newlines();
                if self.eat(Punct::RightParen) {
                    break;
                }
                self.expect(Punct::Comma)?;
                self.skip_newlines();
            }
        }
        self.depth -= 1;
        let (least, most) = builtin.arity();
        if args.len() < least || args.len() > most {
            return Err(SyntaxError::new(
                at,
                E::Arity {
                    function: name.to_string(),
                    given: args.len(),
                    least,
                    most,
                },
            ));
        }
        Ok(Expr::Call(builtin, args))
    }

    /// Whether the next argument is a lone name (`f(x)` or `f(x, …)`).
    fn bare_name_arg(&self) -> bool {
        matches!(self.peek(), Some(TokenKind::Name(n)) if !KEYWORDS.contains(&n.as_str()))
            && matches!(
                self.peek_at(1),
                Some(TokenKind::Punct(Punct::RightParen | Punct::Comma))
            )
    }

    /// `length(x)` of a lone name: the name's kind is settled later, so it is passed the way
    /// a user function's argument is (as the variable, array or scalar).
    fn length_of_name(&mut self) -> Parsed<Expr> {
        let at = self.here();
        let Some(TokenKind::Name(name)) = self.peek().cloned() else {
            return Err(self.unexpected());
        };
        self.pos += 1;
        Ok(Expr::Var(self.symbols.length_arg(&name, at)?))
    }

    fn user_call(&mut self, name: &str, at: Pos) -> Parsed<Expr> {
        let index = self.symbols.callee(name, at)?;
        self.expect(Punct::LeftParen)?;
        self.nest()?;
        let mut args = Vec::new();
        self.skip_newlines();
        if !self.eat(Punct::RightParen) {
            loop {
                let arg = if self.bare_name_arg() {
                    let at_arg = self.here();
                    let Some(TokenKind::Name(arg_name)) = self.peek().cloned() else {
                        return Err(self.unexpected());
                    };
                    self.pos += 1;
                    Expr::Var(
                        self.symbols
                            .bare_arg(&arg_name, index, args.len(), at_arg)?,
                    )
                } else {
                    self.expr()?
                };
                args.push(arg);
                self.skip_newlines();
                if self.eat(Punct::RightParen) {
                    break;
                }
                self.expect(Punct::Comma)?;
                self.skip_newlines();
            }
        }
        self.depth -= 1;
        self.symbols.called(index, args.len(), at);
        Ok(Expr::User(index, args))
    }

    /// The operand of `$`: a primary, possibly after `-`, `++` or `--` (`$NF-1` is `($NF)-1`).
    fn field_index(&mut self) -> Parsed<Expr> {
        if self.eat(Punct::Minus) {
            return Ok(Expr::Neg(Box::new(self.primary()?)));
        }
        if let Some(delta) = self.step() {
            let target = self.primary()?;
            return Ok(Expr::Step {
                target: Box::new(target),
                delta,
                prefix: true,
            });
        }
        self.primary()
    }
}
