//! awk's lexer: program text to [`Token`]s, each with the [`Pos`] it starts at. Operators are
//! [`Punct`] variants, decided here once; a character that starts no token is an error naming
//! where it is. Whether `/` opens a regular expression or divides depends on the token before
//! it, as in every awk: after an operand it divides. A name written right against `(` is a
//! [`TokenKind::FuncName`]: a call, where `f (x)` would concatenate a variable.

use super::error::{Pos, SyntaxError, SyntaxErrorKind as E};

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
    PowAssign,
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
    LeftBracket,
    RightBracket,
}

impl Punct {
    /// Every operator, the two-character ones first so the lexer takes the longest match.
    const ALL: [Punct; 39] = [
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
        Punct::PowAssign,
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
        Punct::LeftBracket,
        Punct::RightBracket,
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
            Punct::PowAssign => "^=",
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
            Punct::LeftBracket => "[",
            Punct::RightBracket => "]",
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
    /// A name written right against `(`: a function call.
    FuncName(String),
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
    let error = |at: usize, kind: E| SyntaxError::new(positions[at], kind);
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
                        Punct::RightParen
                            | Punct::RightBracket
                            | Punct::Dollar
                            | Punct::Increment
                            | Punct::Decrement
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
            '\\' if chars.get(i + 1) == Some(&'\r') && chars.get(i + 2) == Some(&'\n') => {
                i += 3;
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
                let (text, end) =
                    string(&chars, i + 1).ok_or_else(|| error(start, E::RunawayString))?;
                i = end;
                TokenKind::Str(text)
            }
            '/' if !operand_before => {
                let (text, end) =
                    regex(&chars, i + 1).ok_or_else(|| error(start, E::RunawayRegex))?;
                i = end;
                TokenKind::Regex(text)
            }
            _ if c.is_ascii_digit()
                || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                i = number_end(&chars, i);
                let text: String = chars[start..i].iter().collect();
                match text.parse() {
                    Ok(n) => TokenKind::Num(n),
                    Err(_) => return Err(error(start, E::BadNumber(text))),
                }
            }
            _ if c.is_ascii_alphabetic() || c == '_' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let name = chars[start..i].iter().collect();
                if chars.get(i) == Some(&'(') {
                    TokenKind::FuncName(name)
                } else {
                    TokenKind::Name(name)
                }
            }
            _ => match Punct::at_start_of(&chars[i..]) {
                Some(punct) => {
                    i += punct.text().len();
                    TokenKind::Punct(punct)
                }
                None => return Err(error(start, E::UnexpectedChar(c))),
            },
        };
        tokens.push(Token {
            kind,
            pos: positions[start],
        });
    }
    Ok((tokens, here))
}

/// A string constant from just after its `"`: its text with escapes resolved, and the index
/// after the closing `"`; `None` if it never closes.
fn string(chars: &[char], mut i: usize) -> Option<(String, usize)> {
    let mut text = String::new();
    loop {
        match *chars.get(i)? {
            '"' => return Some((text, i + 1)),
            '\n' => return None,
            '\\' => {
                i += 1;
                let c = *chars.get(i)?;
                match c {
                    'n' => text.push('\n'),
                    't' => text.push('\t'),
                    'r' => text.push('\r'),
                    'a' => text.push('\x07'),
                    'b' => text.push('\x08'),
                    'f' => text.push('\x0c'),
                    'v' => text.push('\x0b'),
                    '\\' | '"' | '/' => text.push(c),
                    '\n' => {}
                    '0'..='7' => {
                        let mut value = 0;
                        let mut digits = 0;
                        while digits < 3 {
                            match chars.get(i).and_then(|c| c.to_digit(8)) {
                                Some(d) => value = value * 8 + d,
                                None => break,
                            }
                            i += 1;
                            digits += 1;
                        }
                        i -= 1;
                        text.extend(char::from_u32(value));
                    }
                    'x' if chars.get(i + 1).is_some_and(char::is_ascii_hexdigit) => {
                        let mut value = 0;
                        let mut digits = 0;
                        while digits < 2 {
                            match chars.get(i + 1).and_then(|c| c.to_digit(16)) {
                                Some(d) => value = value * 16 + d,
                                None => break,
                            }
                            i += 1;
                            digits += 1;
                        }
                        text.extend(char::from_u32(value));
                    }
                    other => {
                        text.push('\\');
                        text.push(other);
                    }
                }
            }
            other => text.push(other),
        }
        i += 1;
    }
}

/// A regular-expression literal from just after its `/`: its text (`\/` becomes `/`; a `/`
/// inside a bracket expression does not end it) and the index after the closing `/`.
fn regex(chars: &[char], mut i: usize) -> Option<(String, usize)> {
    let mut text = String::new();
    let mut in_bracket = false;
    loop {
        let c = *chars.get(i)?;
        match c {
            '\n' => return None,
            '/' if !in_bracket => return Some((text, i + 1)),
            '\\' if chars.get(i + 1) == Some(&'/') => {
                text.push('/');
                i += 1;
            }
            '\\' => {
                text.push('\\');
                i += 1;
                text.push(*chars.get(i)?);
            }
            '[' if !in_bracket => {
                in_bracket = true;
                text.push(c);
                // `]` right after `[` or `[^` is a member, not the end.
                if chars.get(i + 1) == Some(&'^') {
                    i += 1;
                    text.push('^');
                }
                if chars.get(i + 1) == Some(&']') {
                    i += 1;
                    text.push(']');
                }
            }
            '[' if chars.get(i + 1) == Some(&':') => {
                // A class such as `[:alpha:]` inside the bracket.
                let close = (i + 2..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == ':' && chars[j + 1] == ']')?;
                text.extend(&chars[i..close + 2]);
                i = close + 1;
            }
            ']' if in_bracket => {
                in_bracket = false;
                text.push(c);
            }
            _ => text.push(c),
        }
        i += 1;
    }
}

/// The end of the number starting at `i`: digits, a point, digits, and an exponent only when
/// digits follow it (`1e` is the number 1 and the name `e`).
fn number_end(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && chars[i].is_ascii_digit() {
        i += 1;
    }
    if chars.get(i) == Some(&'.') {
        i += 1;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
    }
    if matches!(chars.get(i), Some('e' | 'E')) {
        let mut e = i + 1;
        if matches!(chars.get(e), Some('+' | '-')) {
            e += 1;
        }
        if chars.get(e).is_some_and(char::is_ascii_digit) {
            while e < chars.len() && chars[e].is_ascii_digit() {
                e += 1;
            }
            i = e;
        }
    }
    i
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
