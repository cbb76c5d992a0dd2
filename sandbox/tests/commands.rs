//! One table of cases per command, for behaviour the bash comparison cannot cover: tools that
//! Debian's base image lacks (`tree`, `rg`), sandbox-specific output (`ls -l`, `diff -u`
//! headers), error messages on stderr, and exit codes. Each case runs on a fresh small tree.

#![cfg(not(target_arch = "wasm32"))]

use tether_sandbox::native::block_on;
use tether_sandbox::{Sandbox, Vfs};

struct Case {
    line: &'static str,
    stdout: &'static str,
    stderr: &'static str,
    exit: i32,
}

const fn case(line: &'static str, stdout: &'static str, stderr: &'static str, exit: i32) -> Case {
    Case {
        line,
        stdout,
        stderr,
        exit,
    }
}

fn tree() -> Vfs {
    Vfs::from_files([
        (
            "src/main.rs",
            b"fn main() {\n    println!(\"hi\");\n}\n".as_slice(),
        ),
        (
            "src/lib.rs",
            b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
        ("notes.md", b"# Notes\nTODO: write\ndone\n"),
        (".env", b"SECRET=1\n"),
    ])
}

const CASES: &[Case] = &[
    // As tree 2.1 (Debian 12's) draws and counts: ASCII lines unless the locale is UTF-8, the
    // root counted as a directory.
    case(
        "tree",
        ".\n|-- notes.md\n`-- src\n    |-- lib.rs\n    `-- main.rs\n\n2 directories, 3 files\n",
        "",
        0,
    ),
    case(
        "mkdir -p t/a && touch t/a/f t/b && LANG=C.UTF-8 tree t",
        "t\n├── a\n│\u{a0}\u{a0} └── f\n└── b\n\n2 directories, 2 files\n",
        "",
        0,
    ),
    case(
        "LANG=C.UTF-8 tree -L 1 src",
        "src\n├── lib.rs\n└── main.rs\n\n1 directory, 2 files\n",
        "",
        0,
    ),
    case(
        "tree nope src/lib.rs; echo \"rc=$?\"",
        "nope  [error opening dir]\nsrc/lib.rs  [error opening dir]\n\n0 directories, 1 file\nrc=2\n",
        "",
        0,
    ),
    case("rg TODO", "notes.md:TODO: write\n", "", 0),
    case(
        "rg -n 'fn \\w+' src",
        "src/lib.rs:1:pub fn add(a: i32, b: i32) -> i32 {\nsrc/main.rs:1:fn main() {\n",
        "",
        0,
    ),
    case("rg --files", "notes.md\nsrc/lib.rs\nsrc/main.rs\n", "", 0),
    case("rg --hidden -l SECRET", ".env\n", "", 0),
    case("rg -c fn -g '*.rs'", "src/lib.rs:1\nsrc/main.rs:1\n", "", 0),
    case("rg nothing", "", "", 1),
    case(
        "awk 'BEGIN { while (1) {} }'",
        "",
        "awk: line 1: program stopped after 2000000 steps (sandbox limit)\n",
        2,
    ),
    // mawk's order (the keys hashed into a table of lists, each lookup moving its key first).
    case(
        "awk '{ a[$1]++ } END { for (k in a) print k, a[k] }' notes.md",
        "TODO: 1\n# 1\ndone 1\n",
        "",
        0,
    ),
    case(
        "awk 'BEGIN { print 1/0 }'",
        "",
        "awk: line 1: division by zero\n",
        2,
    ),
    case(
        "awk 'BEGIN { while ((getline line < \"notes.md\") > 0) n++; print n }'",
        "3\n",
        "",
        0,
    ),
    case(
        "awk '{ print $1 | \"sort -r\" }' notes.md",
        "done\nTODO:\n#\n",
        "",
        0,
    ),
    case(
        "awk '{ print $1 | \"sort | uniq\" }' notes.md",
        "",
        "awk: line 1: running `sort | uniq' from awk (pipes, lists and redirections): not supported in this sandbox\n",
        2,
    ),
    case(
        "yes | wc -l; echo after",
        "",
        "bash: `yes` into a command that reads all its input (a pipeline here runs one command \
         after another; `head -n N` takes what it needs): not supported in this sandbox\n",
        2,
    ),
    case("yes ok | head -n 2 | wc -l", "2\n", "", 0),
    case(
        "sort -R notes.md; echo after",
        "",
        "sort: -R: not supported in this sandbox\n",
        2,
    ),
    case("sed -n '1h;2{x;p;}' notes.md", "# Notes\n", "", 0),
    case("sed '1~2d' notes.md", "TODO: write\n", "", 0),
    case(
        "sed '1e echo hi' notes.md; echo after",
        "",
        "sed: e (run a command): not supported in this sandbox\n",
        2,
    ),
    case(
        "sed 'k' notes.md; echo after",
        "after\n",
        "sed: -e expression #1, char 1: unknown command: `k'\n",
        0,
    ),
    case("printf '%q\\n' 'a b'", "a\\ b\n", "", 0),
    case("grep -m 1 o notes.md", "# Notes\n", "", 0),
    case(
        "find . -size +1k; echo after",
        "",
        "find: -size: not supported in this sandbox\n",
        1,
    ),
    case(
        "diff -r src src; echo after",
        "",
        "diff: -r: not supported in this sandbox\n",
        2,
    ),
    case(
        "diff src notes.md; echo after",
        "",
        "diff: comparing directories: not supported in this sandbox\n",
        2,
    ),
    case(
        "du -a; du -sh src",
        "4\t./.env\n4\t./notes.md\n4\t./src/lib.rs\n4\t./src/main.rs\n12\t./src\n24\t.\n12K\tsrc\n",
        "",
        0,
    ),
    case(
        "rg -A 1 TODO; echo after",
        "",
        "rg: -A: not supported in this sandbox\n",
        2,
    ),
    case(
        "uniq -f 1 notes.md; echo after",
        "",
        "uniq: -f: not supported in this sandbox\n",
        1,
    ),
    case(
        "ls -S; echo after",
        "",
        "ls: -S: not supported in this sandbox\n",
        2,
    ),
    case(
        "awk '{ print foo($1) }' notes.md",
        "",
        "awk: line 1, column 9: function `foo' is not defined\n",
        2,
    ),
    case(
        "awk '{ print gensub(/o/, \"0\", \"g\") }' notes.md",
        "",
        "awk: line 1, column 9: gawk's function `gensub': not supported in this sandbox\n",
        2,
    ),
    case(
        "awk 'function f(a) { a[1] = 1 } BEGIN { x = 1; f(x) }'",
        "",
        "awk: line 1, column 45: `x' is used both as an array and as a scalar\n",
        2,
    ),
    case("rg -t rust -l fn", "src/lib.rs\nsrc/main.rs\n", "", 0),
    case(
        "rg -t cobol x",
        "",
        "rg: unrecognized file type: cobol\n",
        2,
    ),
    case(
        "ls -l src",
        "total 8\n-rw-r--r-- 1 user user 48 Jan  1 00:00 lib.rs\n-rw-r--r-- 1 user user 34 Jan  1 00:00 main.rs\n",
        "",
        0,
    ),
    case("ls -F", "notes.md\nsrc/\n", "", 0),
    case(
        "ls missing",
        "",
        "ls: cannot access 'missing': No such file or directory\n",
        2,
    ),
    case(
        "cat missing",
        "",
        "cat: missing: No such file or directory\n",
        1,
    ),
    case("cat src", "", "cat: src: Is a directory\n", 1),
    case(
        "frobnicate --now",
        "",
        "bash: frobnicate: command not found\n",
        127,
    ),
    case(
        "./notes.md",
        "",
        "bash: ./notes.md: Permission denied\n",
        126,
    ),
    case(
        "cd nowhere",
        "",
        "bash: cd: nowhere: No such file or directory\n",
        1,
    ),
    case(
        "cd notes.md",
        "",
        "bash: cd: notes.md: Not a directory\n",
        1,
    ),
    case("cd src && pwd && cd .. && pwd", "/src\n/\n", "", 0),
    case("cd ../../.. && pwd", "/\n", "", 0),
    case(
        "cat /../../etc/passwd",
        "",
        "cat: /../../etc/passwd: No such file or directory\n",
        1,
    ),
    case(
        "printf 'a\\nb\\n' > x; printf 'a\\nc\\n' > y; diff -u x y",
        "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
        "",
        1,
    ),
    case(
        "diff -q notes.md src/lib.rs",
        "Files notes.md and src/lib.rs differ\n",
        "",
        1,
    ),
    case(
        "diff notes.md missing",
        "",
        "diff: missing: No such file or directory\n",
        2,
    ),
    case(
        "mkdir src",
        "",
        "mkdir: cannot create directory 'src': File exists\n",
        1,
    ),
    case("rm src", "", "rm: cannot remove 'src': Is a directory\n", 1),
    case(
        "rm -rf / ; ls",
        "notes.md\nsrc\n",
        "rm: it is dangerous to operate recursively on '/'\n",
        0,
    ),
    case(
        "mv notes.md src && ls src",
        "lib.rs\nmain.rs\nnotes.md\n",
        "",
        0,
    ),
    case(
        "cp src dst",
        "",
        "cp: -r not specified; omitting directory 'src'\n",
        1,
    ),
    case(
        "cp -r src src/inner",
        "",
        "cp: cannot copy a directory, 'src', into itself, 'src/inner'\n",
        1,
    ),
    case("touch a b && ls", "a\nb\nnotes.md\nsrc\n", "", 0),
    case("grep -q TODO notes.md && echo found", "found\n", "", 0),
    case("grep -L TODO -r src", "src/lib.rs\nsrc/main.rs\n", "", 0),
    case(
        "grep '[' notes.md",
        "",
        "grep: Unmatched [, [^, [:, [., or [=\n",
        2,
    ),
    case(
        "grep -r add --include='*.rs'",
        "src/lib.rs:pub fn add(a: i32, b: i32) -> i32 {\n",
        "",
        0,
    ),
    case(
        "sed -n '2p;2p' notes.md",
        "TODO: write\nTODO: write\n",
        "",
        0,
    ),
    case(
        "sed '2i\\inserted' notes.md",
        "# Notes\ninserted\nTODO: write\ndone\n",
        "",
        0,
    ),
    case(
        "sed '1a added' notes.md | head -2",
        "# Notes\nadded\n",
        "",
        0,
    ),
    case(
        "sed '2c changed' notes.md",
        "# Notes\nchanged\ndone\n",
        "",
        0,
    ),
    case("sed 'y/abc/ABC/' <<< abcabc", "ABCABC\n", "", 0),
    case(
        "sed 's/x/y' notes.md",
        "",
        "sed: -e expression #1, char 5: unterminated `s' command\n",
        1,
    ),
    case("sed -n '/TODO/=' notes.md", "2\n", "", 0),
    case("echo hi | sed p", "hi\nhi\n", "", 0),
    case(
        "echo one two | { read a b; echo $b $a; }",
        "two one\n",
        "",
        0,
    ),
    case("export GREETING=hi; echo $GREETING", "hi\n", "", 0),
    case("X=1; unset X; echo \"[$X]\"", "[]\n", "", 0),
    case(
        "set -u; echo $NOPE",
        "",
        "bash: NOPE: unbound variable\n",
        127,
    ),
    case("set -o pipefail; false | true; echo $?", "1\n", "", 0),
    case(
        "echo $((1/0)); echo not reached",
        "",
        "bash: 1/0: division by 0 (error token is \"0\")\n",
        1,
    ),
    // What the sandbox does not do is an error naming it, exit 2, and nothing after it runs.
    case(
        "select x in a b; do echo $x; done",
        "",
        "bash: line 1: select: not supported in this sandbox\n",
        2,
    ),
    case(
        "shopt -s nullglob; echo after",
        "",
        "bash: shopt: nullglob: not supported in this sandbox\n",
        2,
    ),
    case(
        "declare -n ref=x; echo after",
        "",
        "bash: declare: -n (name references): not supported in this sandbox\n",
        2,
    ),
    case(
        "trap 'echo x' DEBUG; echo after",
        "",
        "bash: trap: DEBUG: not supported in this sandbox\n",
        2,
    ),
    case(
        "x=1; echo ${x@P}; echo after",
        "",
        "bash: ${x@P}: not supported in this sandbox\n",
        2,
    ),
    case(
        "set -f; echo after",
        "",
        "bash: set: -f: not supported in this sandbox\n",
        2,
    ),
    case(
        "echo hi > >(tr a-z A-Z); ls /dev 2>&1",
        "HI\nls: cannot access '/dev': No such file or directory\n",
        "",
        2,
    ),
    case("bash -c 'echo inner; exit 4'; echo $?", "inner\n4\n", "", 0),
    case("sh -c 'cd src; pwd'; pwd", "/src\n/\n", "", 0),
    case("eval 'echo evaluated'", "evaluated\n", "", 0),
    case(
        "echo 'echo sourced' > s.sh; source s.sh",
        "sourced\n",
        "",
        0,
    ),
    case(
        "which ls grep nosuch",
        "/usr/bin/ls\n/usr/bin/grep\n",
        "",
        1,
    ),
    case("echo hi >&2", "", "hi\n", 0),
    case(
        "{ echo out; echo err >&2; } 2>&1 > f; cat f",
        "err\nout\n",
        "",
        0,
    ),
    case("echo x &> both; cat both", "x\n", "", 0),
    case("cat <<< 'here string'", "here string\n", "", 0),
    case("cat <<-EOF\n\tindented\n\tEOF", "indented\n", "", 0),
    case(
        "echo 'unterminated",
        "",
        "bash: line 1: unexpected EOF while looking for matching `''\n",
        2,
    ),
    case(
        "echo a |",
        "",
        "bash: line 1: syntax error: unexpected end of file\n",
        2,
    ),
    case(
        "node app.js",
        "",
        "Error: Cannot find module '/app.js'\n",
        1,
    ),
    case(
        "node notes.md",
        "",
        "node: no JavaScript runtime is attached to this sandbox\n",
        127,
    ),
    case(
        "apply_patch 'not a patch'",
        "",
        "invalid patch: The first line of the patch must be '*** Begin Patch'\n",
        1,
    ),
    case(
        "printf '%d\\n' abc",
        "0\n",
        "printf: abc: invalid number\n",
        1,
    ),
    case("seq 1 0", "", "", 0),
    case(
        "seq -- 0 -1 -9223372036854775808",
        "",
        "seq: refusing to print more than 1000000 numbers in the sandbox\n",
        1,
    ),
    case(
        "printf '%99999999s' x",
        "",
        "printf: %99999999s: field width above 1000000 is refused in the sandbox\n",
        1,
    ),
    case(
        "[ 1 -lt 2 ] && [ abc = abc ] && [ -n x ] && echo ok",
        "ok\n",
        "",
        0,
    ),
    case("[ 1 -lt", "", "[: missing `]'\n", 2),
    case(
        "test a -eq 1",
        "",
        "test: a: integer expression expected\n",
        2,
    ),
    case("uniq -c <<< $'a\\na\\nb'", "      2 a\n      1 b\n", "", 0),
    case(
        "for x in a b; do for y in 1 2; do printf $x$y' '; done; done; echo",
        "a1 a2 b1 b2 \n",
        "",
        0,
    ),
    case(
        "until [ -f flag ]; do touch flag; echo made; done",
        "made\n",
        "",
        0,
    ),
    case("exit 300", "", "", 44),
    case(
        "f() { f; }; f",
        "",
        "tether-sandbox: limit exceeded: functions, subshells or nested scripts more than 50 deep\n",
        124,
    ),
    case(
        "echo 'source s.sh' > s.sh; source s.sh",
        "",
        "tether-sandbox: limit exceeded: functions, subshells or nested scripts more than 50 deep\n",
        124,
    ),
    case(
        "return 1",
        "",
        "bash: return: can only `return' from a function or sourced script\n",
        1,
    ),
];

#[test]
fn command_table() {
    let mut failures = Vec::new();
    for case in CASES {
        let mut sandbox = Sandbox::new(tree());
        let output = block_on(sandbox.run_shell(case.line));
        let got = (
            output.stdout.as_str(),
            output.stderr.as_str(),
            output.exit_code,
        );
        if got != (case.stdout, case.stderr, case.exit) {
            failures.push(format!(
                "{:?}\n  want {:?}\n  got  {:?}",
                case.line,
                (case.stdout, case.stderr, case.exit),
                got
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
