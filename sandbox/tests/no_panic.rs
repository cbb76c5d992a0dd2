//! A seeded random search for inputs that panic, hang past their budget, or leave the root:
//! command lines stitched from shell fragments (commands, flags, hostile paths, quotes,
//! operators, heredocs, loops), raw random strings, random patches and random tool arguments.
//! The generator is rand's Xoshiro256PlusPlus from a fixed seed, so a failure reproduces exactly.

#![cfg(not(target_arch = "wasm32"))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use tether_sandbox::native::block_on;
use tether_sandbox::{Limits, Sandbox, Vfs};

struct Rng(Xoshiro256PlusPlus);

impl Rng {
    fn seeded(seed: u64) -> Self {
        Rng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const FRAGMENTS: &[&str] = &[
    "ls",
    "ls -laR",
    "cat",
    "head -n",
    "tail -n +",
    "wc -l",
    "grep -rn",
    "grep -E",
    "grep -c",
    "rg",
    "find . -name",
    "find / -type f",
    "sed -n",
    "sed -i",
    "sed 's/a/b/g'",
    "echo",
    "printf",
    "mkdir -p",
    "rm -rf",
    "mv",
    "cp -r",
    "touch",
    "pwd",
    "tree",
    "sort -nru",
    "uniq -c",
    "cut -d, -f2",
    "tr a-z A-Z",
    "nl",
    "diff -u",
    "true",
    "false",
    "apply_patch",
    "node",
    "cd",
    "export X=",
    "read v",
    "seq 5",
    "test -f",
    "[ -d",
    "]",
    "bash -c",
    "eval",
    "exit",
    "set -e",
    "set -o pipefail",
    "..",
    "../..",
    "/",
    "/etc/passwd",
    "../../../../tmp",
    "a\\b\\..\\..\\c",
    "src/*.js",
    "*",
    "?",
    "[a-",
    "'",
    "\"",
    "`",
    "$",
    "${",
    "}",
    "$(",
    ")",
    "(",
    "$((",
    "))",
    "$?",
    "$X",
    "${X:-y}",
    "${#X}",
    "~",
    "|",
    "||",
    "&&",
    ";",
    "&",
    ">",
    ">>",
    "2>",
    "2>&1",
    "<",
    "<<EOF",
    "<<'EOF'",
    "<<<",
    "\nEOF\n",
    "\n",
    "for i in 1 2 3; do",
    "while true; do",
    "until false; do",
    "if true; then",
    "fi",
    "done",
    "else",
    "{",
    "}",
    "!",
    "#",
    "\\",
    "x",
    "out.txt",
    "-n",
    "--",
    "-",
    "1",
    "0",
    "-5",
    "999999999999",
    "%s%d%b",
    "*** Begin Patch\n*** Add File: p.txt\n+x\n*** End Patch",
    "xargs",
    "xargs -I{} echo {}",
    "xargs -n",
    "find . -exec echo {} ;",
    "find src -exec cat {} +",
    "-exec",
    "break",
    "continue 2",
    "{a,b}",
    "{1..3}",
    "{z..a}",
    "env",
    "env A=1",
    "grep -C 2",
    "sort -k2,1nr",
    "sed -i.bak",
    "f() {",
    "f",
    "function g",
    "return",
    "local y=1",
    "shift",
    "\"$@\"",
    "$1",
    "case x in",
    "x)",
    ";;",
    "esac",
    "((((((((((((((((((((",
    "awk",
    "awk '{print $1}'",
    "awk -F,",
    "'BEGIN {x=1} END {print x/0}'",
    "'/re/,/x/'",
    "'{ $3 = \"y\"; print NF }'",
    "'{ printf \"%d %s\", $1 }'",
    "'{ gsub(/a*/, \"&&\") } 1'",
    "'{ print > \"o\" }'",
    "é",
    "\u{2014}",
    "\0",
];

fn assert_inside_root(vfs: &Vfs, input: &str) {
    for (path, _) in vfs.files() {
        assert!(
            path.starts_with('/')
                && !path
                    .split('/')
                    .skip(1)
                    .any(|c| c.is_empty() || c == "." || c == ".."),
            "non-normalised path {path:?} after {input:?}"
        );
    }
}

fn limits() -> Limits {
    Limits {
        max_commands: 500,
        max_loop_iterations: 200,
        max_fs_bytes: 1 << 20,
        max_stream_bytes: 64 * 1024,
        wall_clock_ms: 500,
        ..Limits::default()
    }
}

fn check_shell(input: &str) {
    let mut sandbox = Sandbox::new(Vfs::from_files([
        ("src/a.js", b"a\n".as_slice()),
        ("b.txt", b"b\n"),
    ]))
    .with_limits(limits());
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| block_on(sandbox.run_shell(input))));
    assert!(result.is_ok(), "panic on {input:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{input:?} ran {:?}",
        started.elapsed()
    );
    assert_inside_root(sandbox.vfs(), input);
}

#[test]
fn random_command_lines_never_panic_hang_or_escape() {
    let mut rng = Rng::seeded(0x5EED_CAFE_F00D_1234);
    for _ in 0..3000 {
        let words = 1 + rng.below(12);
        let mut line = String::new();
        for _ in 0..words {
            line.push_str(rng.pick(FRAGMENTS));
            if rng.below(4) > 0 {
                line.push(' ');
            }
        }
        check_shell(&line);
    }
}

#[test]
fn random_strings_never_panic() {
    let mut rng = Rng::seeded(0xDEAD_BEEF_0BAD_F00D);
    let alphabet: Vec<char> = "ab$'\"`\\|&;<>(){}[]*?~!#=-+/. \n\t0123456789é\u{2014}"
        .chars()
        .collect();
    for _ in 0..3000 {
        let len = rng.below(40);
        let line: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        check_shell(&line);
    }
}

#[test]
fn random_patches_and_tool_arguments_never_panic() {
    let mut rng = Rng::seeded(0x0123_4567_89AB_CDEF);
    let patch_lines = [
        "*** Begin Patch",
        "*** End Patch",
        "*** Add File: a.txt",
        "*** Add File: ../../x",
        "*** Add File: /abs",
        "*** Delete File: b.txt",
        "*** Update File: b.txt",
        "*** Update File: src/a.js",
        "*** Move to: c/d.txt",
        "@@",
        "@@ b",
        "@@ nothing",
        "+new",
        "-b",
        "-a",
        " b",
        " a",
        "",
        "*** End of File",
        "garbage",
        "<<'EOF'",
        "EOF",
    ];
    let tools = [
        "shell",
        "exec_command",
        "apply_patch",
        "read_file",
        "list_dir",
        "grep_files",
        "update_plan",
        "nope",
    ];
    let values = [
        "{}",
        "[]",
        "null",
        "1",
        "\"s\"",
        "{\"command\": [\"ls\"]}",
        "{\"command\": [\"bash\", \"-lc\", \"ls ../..\"]}",
        "{\"cmd\": \"cat /etc/passwd\"}",
        "{\"file_path\": \"../../../etc/passwd\", \"offset\": 0}",
        "{\"dir_path\": \"/\", \"depth\": 100000, \"limit\": 0}",
        "{\"pattern\": \"(\"}",
        "{\"pattern\": \"a\", \"include\": \"{\"}",
        "{\"plan\": []}",
        "{\"input\": 5}",
        "{\"file_path\": \"b.txt\", \"offset\": 18446744073709551615}",
        "{",
    ];
    for _ in 0..2000 {
        let mut sandbox = Sandbox::new(Vfs::from_files([
            ("src/a.js", b"a\n".as_slice()),
            ("b.txt", b"b\n"),
        ]))
        .with_limits(limits());
        let patch: Vec<&str> = (0..rng.below(10))
            .map(|_| patch_lines[rng.below(patch_lines.len())])
            .collect();
        let patch = patch.join("\n");
        let tool = tools[rng.below(tools.len())];
        let args = values[rng.below(values.len())];
        let result = catch_unwind(AssertUnwindSafe(|| {
            block_on(sandbox.call_custom_tool("apply_patch", &patch));
            block_on(sandbox.call_tool(tool, args));
        }));
        assert!(result.is_ok(), "panic on patch {patch:?} or {tool} {args}");
        assert_inside_root(sandbox.vfs(), &patch);
    }
}
