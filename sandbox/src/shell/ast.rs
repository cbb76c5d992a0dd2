//! The syntax tree of a command line: lists of and-or chains of pipelines of commands.

/// A sequence of and-or chains separated by `;`, `&` or newlines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    pub items: Vec<AndOr>,
}

/// `a && b || c`.
#[derive(Debug, Clone, PartialEq)]
pub struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    And,
    Or,
}

/// `! a | b | c`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    pub negated: bool,
    pub commands: Vec<Command>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Simple {
        assigns: Vec<Assign>,
        words: Vec<Word>,
        redirects: Vec<Redirect>,
    },
    Compound {
        body: Compound,
        redirects: Vec<Redirect>,
    },
    /// `name() { …; }` or `function name { …; }`.
    Function { name: String, body: Box<Command> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Compound {
    For {
        var: String,
        items: Vec<Word>,
        body: Script,
    },
    While {
        until: bool,
        condition: Script,
        body: Script,
    },
    If {
        branches: Vec<(Script, Script)>,
        otherwise: Option<Script>,
    },
    /// `[[ … ]]`: words and the operators `&&`, `||`, `(`, `)`, `<`, `>` between them.
    Conditional(Vec<ConditionalPart>),
    /// `case WORD in PATTERN|PATTERN) BODY ;; … esac`.
    Case {
        word: Word,
        arms: Vec<(Vec<Word>, Script, CaseEnd)>,
    },
    /// `{ …; }` and `( … )`; a subshell restores the working directory and variables afterwards.
    Group { subshell: bool, body: Script },
    /// `(( EXPR ))`: the raw expression, expanded like `$(( ))` before it is evaluated.
    Arith(String),
    /// `for (( INIT; CONDITION; STEP )); do BODY; done`, each part raw as in [`Compound::Arith`].
    ArithFor {
        init: String,
        condition: String,
        step: String,
        body: Script,
    },
}

/// How a `case` arm ends: `;;` (done), `;&` (run the next arm's body too), `;;&` (go on
/// testing the next patterns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseEnd {
    Break,
    FallThrough,
    TestNext,
}

/// `NAME=VALUE`, `NAME+=VALUE`, `NAME[SUBSCRIPT]=VALUE`, `NAME=(…)`, `NAME+=(…)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Assign {
    pub name: String,
    pub subscript: Option<Word>,
    pub append: bool,
    pub value: AssignValue,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AssignValue {
    Scalar(Word),
    /// The items of `(…)`, each with its `[KEY]=` if it had one.
    Array(Vec<(Option<Word>, Word)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    pub fd: u32,
    pub op: RedirectOp,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RedirectOp {
    /// `< file`
    Read(Word),
    /// `> file` (or `>|`)
    Write(Word),
    /// `>> file`
    Append(Word),
    /// `&> file` / `&>> file`: both streams.
    WriteBoth { target: Word, append: bool },
    /// `2>&1`, `>&2`: make `fd` a copy of another descriptor.
    Duplicate(Word),
    /// `<<EOF` (expand = true) or `<<'EOF'` (expand = false).
    HereDoc { body: String, expand: bool },
    /// `<<< word`
    HereString(Word),
}

/// One shell word before expansion.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Word {
    pub parts: Vec<WordPart>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum WordPart {
    /// Unquoted text: subject to globbing.
    Literal(String),
    /// Single-quoted or backslash-escaped text: taken as is.
    Quoted(String),
    /// `"…"`: its parts are expanded but neither split nor globbed.
    DoubleQuoted(Vec<WordPart>),
    /// `$name`, `${…}` (the text between the braces), `$?`.
    Parameter(String),
    /// `$(…)` or backquotes: the raw command text.
    CommandSubstitution(String),
    /// `$((…))`: the raw expression.
    Arithmetic(String),
    /// `~` at the start of a word.
    Tilde,
    /// `<(…)` (`output` false) or `>(…)`: the raw command text.
    ProcessSubstitution { text: String, output: bool },
    /// The `(…)` of `NAME=(…)` given to `declare`, `local` and the like: its items' words.
    ArrayLiteral(Vec<Word>),
}

impl Word {
    /// The word's text if it is a single unquoted literal (how keywords are recognised).
    pub fn as_literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [WordPart::Literal(text)] => Some(text),
            _ => None,
        }
    }

    pub fn literal(text: &str) -> Self {
        Word {
            parts: vec![WordPart::Quoted(text.to_string())],
        }
    }
}

/// One element of `[[ … ]]` before expansion.
#[derive(Debug, Clone, PartialEq)]
pub enum ConditionalPart {
    Word(Word),
    Op(&'static str),
}
