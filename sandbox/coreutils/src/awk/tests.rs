//! awk as a whole: errors matched by variant (where and what, not wording), the limits, and
//! what the bash comparison cannot check (the machine's awk differs, or the case needs a
//! small stack).

use std::collections::BTreeMap;

use super::error::{AwkErrorKind, SyntaxErrorKind as E};
use super::parse::parse;
use crate::{Ctx, Input};
use tether_vfs::Vfs;

fn syntax_error(src: &str) -> (usize, usize, E) {
    match parse(src) {
        Ok(_) => panic!("{src} parsed"),
        Err(e) => (e.pos.line, e.pos.column, e.kind),
    }
}

/// Runs `awk ARGS` with `stdin`: stdout, stderr, exit status.
fn awk(args: &[&str], stdin: &str) -> (String, String, i32) {
    awk_with(&[], args, stdin)
}

/// [`awk`] with `files` beside `/data.txt`.
fn awk_with(files: &[(&str, &str)], args: &[&str], stdin: &str) -> (String, String, i32) {
    let mut vfs = Vfs::from_files([("/data.txt", &b"a 1\nb 2\na 3\n"[..])]);
    for (path, text) in files {
        vfs.write(path, text.as_bytes().to_vec()).unwrap();
    }
    let env = BTreeMap::from([("HOME".to_string(), "/home/agent".to_string())]);
    let mut input = Input::new(stdin.as_bytes().to_vec());
    let mut ctx = Ctx {
        vfs: &mut vfs,
        cwd: "/",
        env: &env,
        stdin: &mut input,
        out: Vec::new(),
        err: Vec::new(),
        max_output: 1 << 20,
        overflowed: false,
        limits: &mut crate::Unlimited,
    };
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let status = super::awk(&mut ctx, &args);
    (
        String::from_utf8(ctx.out).unwrap(),
        String::from_utf8(ctx.err).unwrap(),
        status,
    )
}

#[test]
fn syntax_errors_name_their_place_and_kind() {
    assert_eq!(
        syntax_error("{ print foo($1) }"),
        (1, 9, E::UndefinedFunction("foo".into()))
    );
    assert_eq!(
        syntax_error("BEGIN {\n  x = gensub(/a/, \"b\", \"g\", $0)\n}"),
        (2, 7, E::NotSupported("gawk's function `gensub'".into()))
    );
    assert_eq!(
        syntax_error("{ print substr($0) }"),
        (
            1,
            9,
            E::Arity {
                function: "substr".into(),
                given: 1,
                least: 2,
                most: 3
            }
        )
    );
    assert_eq!(syntax_error("{ x = (1 + 2 }"), (1, 14, E::Expected(")")));
    assert_eq!(syntax_error("BEGIN"), (1, 1, E::NeedsAction));
    assert_eq!(
        syntax_error("BEGIN { x = 1 @ 2 }"),
        (1, 15, E::UnexpectedChar('@'))
    );
    assert_eq!(
        syntax_error("{ a[1] = 1; a = 2 }"),
        (1, 13, E::ArrayScalarClash("a".into()))
    );
    assert_eq!(
        syntax_error("BEGIN { break }"),
        (1, 9, E::OutOfPlace("break"))
    );
    assert_eq!(
        syntax_error("BEGIN { return 1 }"),
        (1, 9, E::OutOfPlace("return"))
    );
    assert_eq!(
        syntax_error("BEGIN { next }"),
        (1, 9, E::OutOfPlace("next"))
    );
    assert_eq!(
        syntax_error("function f(a) {}\nfunction f(b) {}"),
        (2, 10, E::FunctionRedefined("f".into()))
    );
    assert_eq!(
        syntax_error("function f(a, a) {}"),
        (1, 15, E::BadParameter("a".into()))
    );
    assert_eq!(
        syntax_error("function f(a) {} BEGIN { f(1, 2) }"),
        (
            1,
            26,
            E::Arity {
                function: "f".into(),
                given: 2,
                least: 0,
                most: 1
            }
        )
    );
    assert_eq!(
        syntax_error("{ sub(/a/, \"b\", \"c\") }"),
        (1, 17, E::NotAssignable("sub's third argument".into()))
    );
    assert_eq!(
        syntax_error("{ print 1 2 ( }"),
        (1, 15, E::Unexpected("`}'".into()))
    );
    assert_eq!(syntax_error("{ print (1"), (1, 11, E::Expected(")")));
}

/// The parser's nesting limit is sized for release builds; unoptimised frames need more stack.
#[test]
fn nesting_past_the_limit_is_a_syntax_error() {
    let stack = if cfg!(debug_assertions) {
        64 << 20
    } else {
        1 << 20
    };
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(|| {
            let deep = format!("BEGIN {{ x = {}1{} }}", "(".repeat(200), ")".repeat(200));
            assert_eq!(syntax_error(&deep).2, E::TooDeep);
            let unary = format!("BEGIN {{ x = {}1 }}", "!".repeat(500));
            assert_eq!(syntax_error(&unary).2, E::TooDeep);
            let blocks = format!("BEGIN {}{}", "{".repeat(200), "}".repeat(200));
            assert_eq!(syntax_error(&blocks).2, E::TooDeep);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn arrays_pass_by_reference_and_kinds_flow_through_calls() {
    let program = "function fill(a, n,   i) { for (i = 1; i <= n; i++) a[i] = i * i }
        function total(a,   k, s) { for (k in a) s += a[k]; return s }
        BEGIN { fill(sq, 4); print total(sq), length(sq) }";
    assert_eq!(awk(&[program], ""), ("30 4\n".into(), String::new(), 0));
}

#[test]
fn run_time_errors_name_their_line() {
    let (_, err, status) = awk(&["BEGIN {\n  x = 0\n  print 1 / x\n}"], "");
    assert_eq!(
        (err.as_str(), status),
        ("awk: line 3: division by zero\n", 2)
    );
    let (out, err, status) = awk(&["{ printf \"%s %s\\n\", $1 }", "/data.txt"], "");
    assert_eq!(out, "a ");
    assert!(
        err.starts_with("awk: line 1: not enough arguments"),
        "{err}"
    );
    assert_eq!(status, 2);
}

#[test]
fn the_two_file_idiom_and_environ_work() {
    let (out, _, status) = awk(
        &[
            "NR == FNR { seen[$1]; next } $1 in seen { n++ } END { print n, FILENAME, ENVIRON[\"HOME\"] }",
            "/data.txt",
            "/data.txt",
        ],
        "",
    );
    assert_eq!((out.as_str(), status), ("3 /data.txt /home/agent\n", 0));
}

/// The nesting budget is sized for release builds (about 300 bytes of stack a level; the
/// browser's stack is 1 MiB): that is checked there, while an unoptimised build, whose frames
/// are many times larger, only checks the errors, on a larger stack.
#[test]
fn recursion_deeper_than_the_limit_is_an_error_not_a_crash() {
    let stack = if cfg!(debug_assertions) {
        64 << 20
    } else {
        1 << 20
    };
    let run = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(|| {
            let ok = awk(
                &["function f(n) { return n == 0 ? 0 : 1 + f(n - 1) } BEGIN { print f(190) }"],
                "",
            );
            let deep = awk(
                &["function f(n) { return 1 + f(n + 1) } BEGIN { print f(0) }"],
                "",
            );
            (ok, deep)
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(run.0, ("190\n".into(), String::new(), 0));
    let message = super::error::AwkError {
        kind: AwkErrorKind::CallDepth(super::eval::MAX_CALL_DEPTH),
        line: 1,
    };
    assert_eq!(run.1, (String::new(), format!("awk: {message}\n"), 2));
}

#[test]
fn nesting_within_calls_is_bounded_too() {
    let stack = if cfg!(debug_assertions) {
        64 << 20
    } else {
        1 << 20
    };
    let nested = format!("{}f(n + 1){}", "(1 + ".repeat(90), ")".repeat(90));
    let program = format!("function f(n) {{ return {nested} }} BEGIN {{ print f(0) }}");
    let (out, err, status) = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || awk(&[&program], ""))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!((out.as_str(), status), ("", 2));
    assert!(err.contains("nested deeper than"), "{err}");
}

#[test]
fn limits_hold() {
    let (_, err, status) = awk(&["BEGIN { while (1) a[i++] = i }"], "");
    assert_eq!(status, 2);
    assert!(
        err.contains("sandbox limit"),
        "an endless loop filling an array stops at a limit: {err}"
    );
    let (_, err, _) = awk(&["BEGIN { while (1) print \"y\" }"], "");
    assert!(err.contains("limit"), "{err}");
}

#[test]
fn commands_run_from_the_table_or_are_refused_by_name() {
    let (out, _, _) = awk(
        &["BEGIN { \"sort -r /data.txt\" | getline x; print x }"],
        "",
    );
    assert_eq!(out, "b 2\n");
    let (_, err, status) = awk(&["BEGIN { system(\"bash -c true\") }"], "");
    assert_eq!(
        (err.as_str(), status),
        (
            "awk: line 1: running `bash' from awk: not supported in this sandbox\n",
            2
        )
    );
    let (out, err, _) = awk(&["BEGIN { print system(\"frob\") }"], "");
    assert_eq!(
        (out.as_str(), err.as_str()),
        ("127\n", "sh: 1: frob: not found\n")
    );
}

/// An awk run from awk evaluates on top of its caller's stack, so a chain of them shares the
/// one nesting bound (each run counting `NESTED_RUN` on top of where its caller stood) rather
/// than each taking a whole one: an awk running itself ends, however deep each level first
/// recurses, with the deepest refused — not with the stack overflowed (checked on the
/// browser's 1 MiB stack in a release build).
#[test]
fn awk_run_from_awk_shares_the_nesting_bound() {
    let stack = if cfg!(debug_assertions) {
        64 << 20
    } else {
        1 << 20
    };
    let runs = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(|| {
            let flat = "BEGIN { print \"level\"; system(\"awk -f /p.awk\") }";
            let deep = "function f(n) { if (n == 150) { print \"level\"; system(\"awk -f /p.awk\"); \
                        return 0 } return 1 + f(n + 1) } BEGIN { f(0) }";
            [flat, deep].map(|program| awk_with(&[("/p.awk", program)], &["-f", "/p.awk"], ""))
        })
        .unwrap()
        .join()
        .unwrap();
    let limit = super::eval::MAX_NESTING / super::eval::NESTED_RUN;
    let mut levels = Vec::new();
    for (out, err, status) in runs {
        levels.push(out.lines().filter(|line| *line == "level").count());
        assert!(err.contains("nested deeper than 1500"), "{err}");
        assert_eq!(status, 0);
    }
    // Ten levels that nest little; fewer that each recurse first, but more than one.
    assert!(levels[0] == limit || levels[0] == limit - 1, "{levels:?}");
    assert!(levels[1] >= 2 && levels[1] < levels[0], "{levels:?}");
}
