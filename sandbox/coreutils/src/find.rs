//! `find ROOT… EXPR`: the expression of tests (`-name`, `-iname`, `-path`, `-ipath`, `-type`,
//! `-empty`, `-true`, `-false`), operators (`!`, `-not`, `-a`, `-o`, `( )`) and actions
//! (`-print`, `-print0`, `-prune`, `-delete`, `-quit`), with `-maxdepth`/`-mindepth`; with no
//! action, what is true is printed. GNU's predicates it lacks are refused by name. The shell
//! runs `-exec` itself around this command.

use super::{Ctx, REFUSAL, usage_error};
use tether_vfs::{EntryKind, glob};

enum Node {
    Name(String, bool),
    Path(String, bool),
    Type(EntryKind),
    Empty,
    Const(bool),
    Print(&'static str),
    Prune,
    Delete,
    Quit,
    Not(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
}

/// One entry as the expression sees it, and what its actions did.
struct Visit<'a> {
    shown: &'a str,
    kind: EntryKind,
    empty: bool,
    out: String,
    prune: bool,
    delete: bool,
    quit: bool,
}

impl Node {
    fn eval(&self, v: &mut Visit) -> bool {
        let fold = |text: &str, on: bool| {
            if on {
                text.to_lowercase()
            } else {
                text.to_string()
            }
        };
        match self {
            Node::Name(pattern, i) => {
                let name = v.shown.rsplit('/').next().unwrap_or(v.shown);
                glob::matches(&fold(pattern, *i), &fold(name, *i))
            }
            Node::Path(pattern, i) => glob::matches(&fold(pattern, *i), &fold(v.shown, *i)),
            Node::Type(kind) => v.kind == *kind,
            Node::Empty => v.empty,
            Node::Const(value) => *value,
            Node::Print(end) => {
                v.out.push_str(v.shown);
                v.out.push_str(end);
                true
            }
            Node::Prune => {
                v.prune = true;
                true
            }
            Node::Delete => {
                v.delete = true;
                true
            }
            Node::Quit => {
                v.quit = true;
                true
            }
            Node::Not(inner) => !inner.eval(v),
            Node::And(a, b) => a.eval(v) && !v.quit && b.eval(v),
            Node::Or(a, b) => a.eval(v) || (!v.quit && b.eval(v)),
        }
    }

    fn has_action(&self) -> bool {
        match self {
            Node::Print(_) | Node::Delete | Node::Quit => true,
            Node::Not(inner) => inner.has_action(),
            Node::And(a, b) | Node::Or(a, b) => a.has_action() || b.has_action(),
            _ => false,
        }
    }
}

/// GNU find's predicates this one lacks: refused by name, not called unknown.
const LACKING: &[&str] = &[
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-regex",
    "-iregex",
    "-ls",
    "-fls",
    "-printf",
    "-fprint",
    "-ok",
    "-okdir",
    "-execdir",
    "-samefile",
    "-inum",
    "-lname",
    "-ilname",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-xtype",
    "-depth",
    "-follow",
    "-xdev",
    "-mount",
    "-newermt",
    "-used",
    "-fstype",
    "-context",
];

struct Parser<'a> {
    args: &'a [String],
    at: usize,
    min_depth: usize,
    max_depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.args.get(self.at).map(String::as_str)
    }

    fn value(&mut self, name: &str) -> Result<String, String> {
        self.at += 1;
        self.args
            .get(self.at - 1)
            .cloned()
            .ok_or_else(|| format!("find: missing argument to `{name}'"))
    }

    fn or(&mut self) -> Result<Node, String> {
        let mut left = self.and()?;
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.at += 1;
            left = Node::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node, String> {
        let mut left = self.unary()?;
        loop {
            match self.peek() {
                None | Some("-o" | "-or" | ")") => return Ok(left),
                Some("-a" | "-and") => self.at += 1,
                Some(_) => {}
            }
            left = Node::And(Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Node, String> {
        let arg = self.value("!")?;
        Ok(match arg.as_str() {
            "!" | "-not" => Node::Not(Box::new(self.unary()?)),
            "(" => {
                let inner = self.or()?;
                if self.value("(")? != ")" {
                    return Err("find: invalid expression; I was expecting to find a ')' somewhere but did not see one.".into());
                }
                inner
            }
            "-name" | "-iname" => Node::Name(self.value(&arg)?, arg == "-iname"),
            "-path" | "-wholename" | "-ipath" | "-iwholename" => {
                Node::Path(self.value(&arg)?, arg.starts_with("-i"))
            }
            "-type" => match self.value("-type")?.as_str() {
                "f" => Node::Type(EntryKind::File),
                "d" => Node::Type(EntryKind::Dir),
                other => return Err(format!("find: Unknown argument to -type: {other}")),
            },
            "-empty" => Node::Empty,
            "-true" => Node::Const(true),
            "-false" => Node::Const(false),
            "-print" => Node::Print("\n"),
            "-print0" => Node::Print("\0"),
            "-prune" => Node::Prune,
            "-delete" => Node::Delete,
            "-quit" => Node::Quit,
            "-maxdepth" | "-mindepth" => {
                let raw = self.value(&arg)?;
                let n: usize = raw.parse().map_err(|_| {
                    format!("find: Expected a positive decimal integer argument to {arg}, but got `{raw}'")
                })?;
                if arg == "-maxdepth" {
                    self.max_depth = n;
                } else {
                    self.min_depth = n;
                }
                Node::Const(true)
            }
            other if LACKING.contains(&other) => return Err(format!("find: {other}{REFUSAL}")),
            other => return Err(format!("find: unknown predicate `{other}'")),
        })
    }
}

pub fn find(ctx: &mut Ctx, args: &[String]) -> i32 {
    let split = args
        .iter()
        .position(|a| a.starts_with('-') || a == "!" || a == "(")
        .unwrap_or(args.len());
    let (roots, expr) = args.split_at(split);
    let roots = if roots.is_empty() {
        vec![".".to_string()]
    } else {
        roots.to_vec()
    };
    let mut parser = Parser {
        args: expr,
        at: 0,
        min_depth: 0,
        max_depth: usize::MAX,
    };
    let parsed = if expr.is_empty() {
        Ok(Node::Const(true))
    } else {
        parser.or()
    };
    let mut node = match parsed {
        Ok(_) if parser.at < expr.len() => {
            let extra = &expr[parser.at];
            return usage_error(
                ctx,
                &format!("find: paths must precede expression: `{extra}'"),
                1,
            );
        }
        Ok(node) => node,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if !node.has_action() {
        node = Node::And(Box::new(node), Box::new(Node::Print("\n")));
    }
    let mut status = 0;
    let mut deletions = Vec::new();
    'roots: for root in roots {
        let path = ctx.resolve(&root);
        let Some(kind) = ctx.vfs.kind(&path) else {
            ctx.warn(&format!("find: '{root}': No such file or directory"));
            status = 1;
            continue;
        };
        let mut found = vec![(root.clone(), kind, 0usize, path.clone())];
        if kind == EntryKind::Dir {
            for (descendant, kind) in ctx.vfs.descendants(&path) {
                let rel = descendant[path.len()..].trim_start_matches('/').to_string();
                let depth = rel.split('/').count();
                let sep = if root.ends_with('/') { "" } else { "/" };
                found.push((format!("{root}{sep}{rel}"), kind, depth, descendant));
            }
        }
        let mut pruned: Vec<String> = Vec::new();
        for (shown, kind, depth, real) in found {
            if pruned.iter().any(|p| real.starts_with(p.as_str())) || depth > parser.max_depth {
                continue;
            }
            let empty = match kind {
                EntryKind::Dir => ctx.vfs.list(&real).map(|l| l.is_empty()).unwrap_or(true),
                EntryKind::File => ctx.vfs.read(&real).map(|d| d.is_empty()).unwrap_or(true),
            };
            let mut visit = Visit {
                shown: &shown,
                kind,
                empty,
                out: String::new(),
                prune: false,
                delete: false,
                quit: false,
            };
            if depth >= parser.min_depth {
                node.eval(&mut visit);
            }
            ctx.print(&visit.out);
            if visit.prune && kind == EntryKind::Dir {
                pruned.push(format!("{real}/"));
            }
            if visit.delete {
                deletions.push((shown.clone(), real));
            }
            if visit.quit {
                break 'roots;
            }
        }
    }
    // -delete works from the leaves up, as GNU's (which implies -depth).
    for (shown, real) in deletions.into_iter().rev() {
        if let Err(e) = ctx.vfs.remove(&real) {
            ctx.warn(&format!("find: cannot delete '{shown}': {e}"));
            status = 1;
        }
    }
    status
}
