//! awk's lexer: program text to [`Token`]s, each with the [`Pos`] it starts at. Operators are
//! [`Punct`] variants, decided here once; a character that starts no token is an error naming
//! where it is. Whether `/` opens a regular expression or divides depends on the token before
//! it, as in every awk: after an operand it divides.

use std::fmt;

/// Where a token starts: 1-based line and column, the column counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// A mistake in the program text, found before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub pos: Pos,
    pub message: String,
}

impl SyntaxError {
    pub fn new(pos: Pos, message: impl Into<String>) -> Self {
        SyntaxError {
            pos,
            message: message.into(),
        }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Pos { line, column } = self.pos;
        write!(f, "line {line}, column {column}: {}", self.message)
    }
}

/// An operator or a piece of punctuation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Punct {
    AppendTo,
    And,
    Or,
    Eq,
    Ne,
    Le,
    Ge,
    NoMatch,
    AddAssign,
    SubAssign,
    MulAssign,
    DivAssign,
    ModAssign,
    Increment,
    Decrement,
    LeftBrace,
    RightBrace,
    LeftParen,
    RightParen,
    Semicolon,
    Comma,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Not,
    Lt,
    Gt,
    Match,
    Assign,
    Question,
    Colon,
    Dollar,
    Caret,
    Pipe,
}

impl Punct {
    /// Every operator, the two-character ones first so the lexer takes the longest match.
    const ALL: [Punct; 36] = [
        Punct::AppendTo,
        Punct::And,
        Punct::Or,
        Punct::Eq,
        Punct::Ne,
        Punct::Le,
        Punct::Ge,
        Punct::NoMatch,
        Punct::AddAssign,
        Punct::SubAssign,
        Punct::MulAssign,
        Punct::DivAssign,
        Punct::ModAssign,
        Punct::Increment,
        Punct::Decrement,
        Punct::LeftBrace,
        Punct::RightBrace,
        Punct::LeftParen,
        Punct::RightParen,
        Punct::Semicolon,
        Punct::Comma,
        Punct::Plus,
        Punct::Minus,
        Punct::Star,
        Punct::Slash,
        Punct::Percent,
        Punct::Not,
        Punct::Lt,
        Punct::Gt,
        Punct::Match,
        Punct::Assign,
        Punct::Question,
        Punct::Colon,
        Punct::Dollar,
        Punct::Caret,
        Punct::Pipe,
    ];

    /// How the operator is spelled.
    pub fn text(self) -> &'static str {
        match self {
            Punct::AppendTo => ">>",
            Punct::And => "&&",
            Punct::Or => "||",
            Punct::Eq => "==",
            Punct::Ne => "!=",
            Punct::Le => "<=",
            Punct::Ge => ">=",
            Punct::NoMatch => "!~",
            Punct::AddAssign => "+=",
            Punct::SubAssign => "-=",
            Punct::MulAssign => "*=",
            Punct::DivAssign => "/=",
            Punct::ModAssign => "%=",
            Punct::Increment => "++",
            Punct::Decrement => "--",
            Punct::LeftBrace => "{",
            Punct::RightBrace => "}",
            Punct::LeftParen => "(",
            Punct::RightParen => ")",
            Punct::Semicolon => ";",
            Punct::Comma => ",",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::Star => "*",
            Punct::Slash => "/",
            Punct::Percent => "%",
            Punct::Not => "!",
            Punct::Lt => "<",
            Punct::Gt => ">",
            Punct::Match => "~",
            Punct::Assign => "=",
            Punct::Question => "?",
            Punct::Colon => ":",
            Punct::Dollar => "$",
            Punct::Caret => "^",
            Punct::Pipe => "|",
        }
    }

    /// The operator `text` starts with, longest first.
    fn at_start_of(text: &[char]) -> Option<Punct> {
        Punct::ALL.into_iter().find(|p| {
            let spelled: Vec<char> = p.text().chars().collect();
            text.starts_with(&spelled)
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    Num(f64),
    Str(String),
    Regex(String),
    Name(String),
    Punct(Punct),
    Newline,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub pos: Pos,
}

/// Cuts `src` into tokens; the position after the last character comes back too, for errors
/// at the end of the program.
pub fn lex(src: &str) -> Result<(Vec<Token>, Pos), SyntaxError> {
    let chars: Vec<char> = src.chars().collect();
    let mut tokens: Vec<Token> = Vec::new();
    // The position of every character, and of the end.
    let mut positions = Vec::with_capacity(chars.len() + 1);
    let mut here = Pos { line: 1, column: 1 };
    for c in &chars {
        positions.push(here);
        here = if *c == '\n' {
            Pos {
                line: here.line + 1,
                column: 1,
            }
        } else {
            Pos {
                column: here.column + 1,
                ..here
            }
        };
    }
    positions.push(here);
    let error = |at: usize, message: &str| SyntaxError::new(positions[at], message);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let operand_before = matches!(
            tokens.last().map(|t| &t.kind),
            Some(
                TokenKind::Num(_)
                    | TokenKind::Str(_)
                    | TokenKind::Name(_)
                    | TokenKind::Punct(
                        Punct::RightParen | Punct::Dollar | Punct::Increment | Punct::Decrement
                    )
            )
        );
        let kind = match c {
            ' ' | '\t' | '\r' => {
                i += 1;
                continue;
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                i += 2;
                continue;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\n' => {
                i += 1;
                TokenKind::Newline
            }
            '"' => {
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(error(start, "runaway string constant")),
                        Some('"') => break,
                        Some('\\') => {
                            i += 1;
                            match chars.get(i) {
                                Some('n') => text.push('\n'),
                                Some('t') => text.push('\t'),
                                Some('\\') => text.push('\\'),
                                Some('"') => text.push('"'),
                                Some('/') => text.push('/'),
                                Some(other) => {
                                    text.push('\\');
                                    text.push(*other);
                                }
                                None => return Err(error(start, "runaway string constant")),
                            }
                        }
                        Some(other) => text.push(*other),
                    }
                    i += 1;
                }
                i += 1;
                TokenKind::Str(text)
            }
            '/' if !operand_before => {
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => {
                            return Err(error(start, "runaway regular expression"));
                        }
                        Some('/') => break,
                        Some('\\') if chars.get(i + 1) == Some(&'/') => {
                            text.push('/');
                            i += 1;
                        }
                        Some(other) => text.push(*other),
                    }
                    i += 1;
                }
                i += 1;
                TokenKind::Regex(text)
            }
            _ if c.is_ascii_digit()
                || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                match text.parse() {
                    Ok(n) => TokenKind::Num(n),
                    Err(_) => return Err(error(start, &format!("bad number {text}"))),
                }
            }
            _ if c.is_ascii_alphabetic() || c == '_' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                TokenKind::Name(chars[start..i].iter().collect())
            }
            _ => match Punct::at_start_of(&chars[i..]) {
                Some(punct) => {
                    i += punct.text().len();
                    TokenKind::Punct(punct)
                }
                None if c == '[' => {
                    return Err(error(
                        start,
                        "arrays are not supported in the sandbox's awk",
                    ));
                }
                None => {
                    return Err(error(
                        start,
                        &format!("syntax error: unexpected character '{c}'"),
                    ));
                }
            },
        };
        tokens.push(Token {
            kind,
            pos: positions[start],
        });
    }
    Ok((tokens, here))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        lex(src).unwrap().0.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn every_operator_lexes_as_itself() {
        // After an operand, so that `/` and `/=` divide rather than open a regular expression.
        for punct in Punct::ALL {
            let lexed = kinds(&format!("x {}", punct.text()));
            assert_eq!(lexed[1..], [TokenKind::Punct(punct)], "{punct:?}");
        }
    }

    #[test]
    fn a_slash_after_an_operand_divides() {
        assert_eq!(
            kinds("a / 2 / 3"),
            [
                TokenKind::Name("a".into()),
                TokenKind::Punct(Punct::Slash),
                TokenKind::Num(2.0),
                TokenKind::Punct(Punct::Slash),
                TokenKind::Num(3.0),
            ]
        );
        assert_eq!(
            kinds("~ /a b/"),
            [
                TokenKind::Punct(Punct::Match),
                TokenKind::Regex("a b".into())
            ]
        );
    }

    #[test]
    fn tokens_know_their_line_and_column() {
        let (tokens, end) = lex("BEGIN {\n  x = \"é\" + 1 }").unwrap();
        let at: Vec<(usize, usize)> = tokens.iter().map(|t| (t.pos.line, t.pos.column)).collect();
        assert_eq!(
            at,
            [
                (1, 1),
                (1, 7),
                (1, 8),
                (2, 3),
                (2, 5),
                (2, 7),
                (2, 11),
                (2, 13),
                (2, 15)
            ]
        );
        assert_eq!(
            end,
            Pos {
                line: 2,
                column: 16
            }
        );
    }

    #[test]
    fn an_unknown_character_is_an_error_where_it_stands() {
        let error = lex("{ x = 1\n  y = 2 @ 3 }").unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 2, column 9: syntax error: unexpected character '@'"
        );
        let error = lex("BEGIN { print \"abc }").unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 1, column 15: runaway string constant"
        );
    }
}
