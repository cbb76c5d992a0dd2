//! Inputs the fuzz targets (`fuzz/`, `cargo xtask fuzz`) found to crash or to break a property,
//! each reduced to the smallest case that shows it, with the target that found it. A test here
//! fails on the code before its fix.

#![cfg(not(target_arch = "wasm32"))]

use std::sync::mpsc;
use std::time::Duration;

use tether_sandbox::native::block_on;
use tether_sandbox::patch::apply;
use tether_sandbox::{Limits, Sandbox, ShellOutput, Vfs};

/// Runs `line` in a fresh sandbox on another thread; fails the test if it has not ended after
/// `seconds` (the thread is left behind, which the test process's exit ends). The call's own
/// clock allows longer, so that the budget a test is about ends the run, in an unoptimised
/// build too (many times slower than a release one, where each ends within a second).
fn run_within(seconds: u64, line: &'static str) -> ShellOutput {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sandbox = Sandbox::new(Vfs::new()).with_limits(Limits {
            wall_clock_ms: 10 * 60_000,
            ..Limits::default()
        });
        let _ = send.send(block_on(sandbox.run_shell(line)));
    });
    receive
        .recv_timeout(Duration::from_secs(seconds))
        .unwrap_or_else(|_| panic!("`{line}` still runs after {seconds} s"))
}

fn tree(vfs: &Vfs) -> (Vec<(String, Vec<u8>)>, Vec<String>) {
    (
        vfs.files()
            .map(|(path, data)| (path.to_string(), data.to_vec()))
            .collect(),
        vfs.dirs().map(str::to_string).collect(),
    )
}

/// `apply_patch`: a failing patch left behind the directories it had created for the files it
/// wrote before the failure (the files were undone, their new parents were not).
#[test]
fn a_failed_patch_removes_the_directories_it_created() {
    let mut vfs = Vfs::from_files([("/keep.txt", &b"k\n"[..])]);
    let before = tree(&vfs);
    let patch = "*** Begin Patch\n\
                 *** Add File: new/dir/a\n+x\n\
                 *** Add File: new/dir/a/b\n+y\n\
                 *** End Patch";
    let error = apply(&mut vfs, "/", patch).unwrap_err();
    assert!(error.to_string().contains("Failed to write"), "{error}");
    assert_eq!(tree(&vfs), before);
}

/// `apply_patch`: the target's own check was wrong, not the sandbox. A patch deleting `r.txt` and
/// then adding `r.txt/r.txt` leaves `r.txt` a directory, as on a real file system; the target
/// expected every deleted path to be gone. This pins the sandbox's side: the delete, then the
/// directory the add needs, in one atomic patch.
#[test]
fn deleting_a_file_then_adding_beneath_its_path_makes_it_a_directory() {
    let mut vfs = Vfs::from_files([("/r.txt", &b"old\n"[..])]);
    let patch = "*** Begin Patch\n\
                 *** Delete File: r.txt\n\
                 *** Add File: r.txt/r.txt\n+new\n\
                 *** End Patch";
    apply(&mut vfs, "/", patch).unwrap();
    assert!(vfs.is_dir("/r.txt"));
    assert_eq!(vfs.read("/r.txt/r.txt").unwrap(), b"new\n");
}

/// `awk`: a string grown by appending to itself was copied whole at every step, so the step
/// limit still allowed about 10^12 bytes of copying — minutes of a sandbox call, past any
/// budget. An append now extends the variable in place.
#[test]
fn awk_appending_to_a_variable_is_linear() {
    let output = run_within(20, "awk 'BEGIN { while (1) x = x \"ab\" }'");
    assert_eq!(output.exit_code, 2);
    assert!(output.stderr.contains("sandbox limit"), "{}", output.stderr);
}

/// `awk`: commands awk ran (`system`, pipes, `getline`) were outside the call's limits, so a
/// loop running awk from awk gave every inner run a fresh budget — up to a million inner runs,
/// each of up to 2 million steps: hours (the `awk` target, CI of 2026-12-05). They are now
/// counted and timed as the shell's own commands, nested runs' included: here the inner awk
/// uses up the call's 10000 commands, its next one is refused, the outer stops when the inner
/// returns, and the call ends.
#[test]
fn commands_run_from_awk_count_against_the_call() {
    let output = run_within(
        60,
        "awk -v q=\"'\" 'BEGIN { while (1) system(\"awk \" q \"BEGIN { while (1) system(\\\"true\\\") }\" q) }'; echo never",
    );
    assert_eq!(output.exit_code, 124, "{}", output.stderr);
    assert_eq!(
        output.stderr,
        "tether-sandbox: limit exceeded: more than 10000 commands in one call\n"
    );
    assert!(!output.stdout.contains("never"));
}

/// `awk`: the same growth through a copy (which in-place appending cannot help) is ended by the
/// budget on the text a program may move around.
#[test]
fn awk_copying_a_growing_string_is_bounded() {
    let output = run_within(20, "awk 'BEGIN { while (1) { y = x; x = y \"ab\" } }'");
    assert_eq!(output.exit_code, 2);
    assert!(output.stderr.contains("sandbox limit"), "{}", output.stderr);
}

/// `awk`: `gsub` multiplying the record every step grew it without bound (exponentially: out
/// of memory within seconds, or minutes of work first). Its result is held to the string cap;
/// with a 4096-fold replacement the second step would pass it.
#[test]
fn awk_gsub_cannot_grow_a_string_past_the_cap() {
    let output = run_within(
        20,
        "echo a | awk '{ r = \"a\"; while (length(r) < 4096) r = r r; while (1) gsub(/a/, r) }'",
    );
    assert_eq!(output.exit_code, 2);
    assert!(output.stderr.contains("16 MiB"), "{}", output.stderr);
}

/// `awk`: rebuilding `$0` from 100000 fields joined by a 1 MB `OFS` asked for a 100 GB string
/// and aborted the process. The record is now held to the string cap before it is built.
#[test]
fn awk_rebuilding_a_record_cannot_exceed_the_cap() {
    let output = run_within(
        20,
        "echo a | awk 'BEGIN { s = \"x\"; while (length(s) < 1000000) s = s s; OFS = s } \
         { NF = 100000; print length($0) }'",
    );
    assert_eq!(output.exit_code, 2);
    assert!(output.stderr.contains("16 MiB"), "{}", output.stderr);
}

/// `awk` (a `timeout-…` artifact of the awk target): a regular expression computed at run time
/// (`"x" ~ y`) was compiled again at every step, so a loop the step limit ends took 2 million
/// compiles — seconds natively, more in the browser. It is compiled once now.
#[test]
fn awk_compiles_a_run_time_regex_once() {
    let output = run_within(20, "awk 'BEGIN { while (1) if (\"x\" ~ y) n++ }'");
    assert_eq!(output.exit_code, 2);
    assert!(output.stderr.contains("2000000 steps"), "{}", output.stderr);
}

/// `awk`: a loop compiling a different regular expression at every step is ended by the work
/// budget, each compile counting as 64 KiB of text.
#[test]
fn awk_compiling_ever_new_regexes_is_bounded() {
    let output = run_within(20, "awk 'BEGIN { while (1) if (\"x\" ~ i++) n++ }'");
    assert_eq!(output.exit_code, 2);
    assert!(output.stderr.contains("MiB of text"), "{}", output.stderr);
}

/// `awk` (a `timeout-…` artifact of the awk target in CI): a loop whose condition wrote a huge
/// integral number as text (`getline l < 1e89 "/in.txt"`) ran the step limit out at ~1 µs a
/// step natively and past libFuzzer's 10 s in CI — writing 1e300 exactly takes ~15 µs, a
/// thousand decimals of 1.2e-300 ~40 µs, each counted as its few bytes. A conversion now counts
/// its digits times its exponent against the text budget, which ends these loops first.
#[test]
fn awk_writing_numbers_the_long_way_is_bounded() {
    for line in [
        "awk 'BEGIN { while (1) x = 1e300 \"\" }'",
        "awk 'BEGIN { while (1) x = sprintf(\"%.1000f\", 1.2e-300) }'",
        "awk 'BEGIN { CONVFMT = \"%.1000f\"; while (1) x = 1.2e-300 \"\" }'",
        "awk 'BEGIN { while (1) print 1e300 > \"/dev/null\" }'",
    ] {
        stopped_by_the_text_budget(line);
    }
}

/// Runs `line`, an awk program that ends on its text budget; what it printed last, as a
/// number (0 if nothing).
fn stopped_by_the_text_budget(line: &'static str) -> u64 {
    let output = run_within(20, line);
    assert_eq!(output.exit_code, 2, "{line}");
    assert!(
        output.stderr.contains("MiB of text"),
        "{line}: {}",
        output.stderr
    );
    let last = output.stdout.lines().last().unwrap_or("0");
    last.parse()
        .unwrap_or_else(|_| panic!("{line}: printed {last:?}"))
}

/// `awk` (found looking for more of the above): work done per piece rather than per byte was
/// counted by the bytes alone — a `gsub` of a 1 MB string by an empty regex finds a million
/// matches (~80 ns each), rebuilding `$0` joins each of its fields, `for (k in a)` lists every
/// key — so the text budget allowed minutes of it. Each match, field and key now also counts
/// 128 bytes; these loops stop after a handful of rounds, not hundreds.
#[test]
fn awk_counts_matches_fields_and_keys_against_its_budget() {
    let grow = "s = \"ab\"; while (length(s) < 1000000) s = s s";
    let cases = [
        format!("awk 'BEGIN {{ {grow}; while (1) {{ n += gsub(//, \"\", s); print ++i }} }}'"),
        format!("awk 'BEGIN {{ {grow}; FS = \"b\"; $0 = s; while (1) {{ $1 = $1; print ++i }} }}'"),
        "awk 'BEGIN { for (i = 0; i < 200000; i++) a[i]; while (1) { for (k in a) break; \
         print ++j } }'"
            .to_string(),
    ];
    for line in cases {
        let line: &'static str = Box::leak(line.into_boxed_str());
        let rounds = stopped_by_the_text_budget(line);
        assert!((1..=64).contains(&rounds), "{line}: {rounds} rounds");
    }
}

/// `awk`: a command run from awk reads the files it names, which awk did not count, so
/// `while (1) system("grep -q x /big")` on an 8 MB file ran for hours. A command's operands
/// (a directory: every file beneath it) now count against the text budget before it runs.
#[test]
fn awk_counts_what_its_commands_read() {
    let rounds = stopped_by_the_text_budget(
        "awk 'BEGIN { s = \"ab\"; while (length(s) < 1000000) s = s s; printf \"%s\", s > \"/big\"; \
         close(\"/big\"); while (1) { system(\"grep -q x /big\"); system(\"grep -rq x /\"); \
         print ++n } }'",
    );
    assert!((100..=600).contains(&rounds), "{rounds} rounds");
}

/// The same search: the file system's append copied the whole file to add to it, so awk
/// closing a file it appends to in a loop (`print >> f; close(f)`), or the shell's `>>` in a
/// loop, was quadratic — 2,000,000 steps of it never ended. A file now grows in place.
#[test]
fn appending_to_a_file_is_linear() {
    let output = run_within(
        20,
        "awk 'BEGIN { while (1) { print \"xxxxxxxxxxxxxxxx\" >> \"/f\"; close(\"/f\") } }'",
    );
    assert_eq!(output.exit_code, 2);
    assert!(output.stderr.contains("steps"), "{}", output.stderr);
    let mut vfs = Vfs::new();
    vfs.write("/f", b"a".to_vec()).unwrap();
    vfs.append("/f", b"b").unwrap();
    vfs.append("/g", b"c").unwrap();
    assert_eq!(vfs.read("/f").unwrap(), b"ab");
    assert_eq!(vfs.read("/g").unwrap(), b"c");
    vfs.mkdir("/d").unwrap();
    assert!(vfs.append("/d", b"x").is_err());
    assert!(vfs.append("/f/x", b"x").is_err());
}

/// The in-place append of the fix above gives what copying gave: numbers turn into text, the
/// appended operands may read the variable itself, and an operand that assigns the variable
/// takes the ordinary path.
#[test]
fn awk_in_place_append_keeps_awk_semantics() {
    let output = run_within(
        20,
        "awk 'BEGIN { x = 5; x = x \"a\" x; y = \"q\"; y = y y y; z = z; \
         w = \"a\"; w = w (w = \"b\"); print x, y, \"[\" z \"]\", w }'",
    );
    assert_eq!(output.stdout, "5a5 qqq [] ab\n", "{}", output.stderr);
    assert_eq!(output.exit_code, 0);
}

/// Found by the `apply_patch` target: a patch deleted `)\0txt` and added a file under
/// `.\0\0/)txt\0/…`. Paths dropped their NULs only after `.` and `..` were resolved, so the added
/// path normalised to `/./)txt/…` — which the tree, normalising it once more, stored under
/// `/)txt`, the path just deleted. Normalising was not idempotent; NULs now go first.
#[test]
fn a_path_normalises_to_itself_when_nuls_hide_a_dot() {
    use tether_sandbox::vfs::normalize;
    for path in [".\0/)txt\0/a", "a/.\0./b", "\0/x", "a/\0/b", "x/..\0/y"] {
        let once = normalize("/", path);
        assert_eq!(normalize("/", &once), once, "{path:?}");
    }
    assert_eq!(normalize("/", ".\0/)txt\0/a"), "/)txt/a");
    assert_eq!(normalize("/", "x/..\0/y"), "/y");

    let mut vfs = Vfs::new();
    vfs.write("/)txt", b"gone\n".to_vec()).unwrap();
    let patch = "*** Begin Patch\n*** Delete File: )\0txt\n*** Add File: .\0\0/)txt\0/src.\n+new\n*** End Patch\n";
    apply(&mut vfs, "/", patch).unwrap();
    assert!(vfs.is_dir("/)txt"));
    assert!(vfs.is_file("/)txt/src."));
}

/// Found by the `apply_patch` target: a patch that deleted `r.txt`, added `r.txt/a` and then
/// `r.txt/a/b` (beneath a file: refused) was rolled back in the wrong order — restoring the file
/// `r.txt` failed while the directory made for `r.txt/a` still stood there, and then that
/// directory was removed, so the failed patch had deleted `r.txt`. A failed patch leaves the tree
/// exactly as it was.
#[test]
fn a_failed_patch_restores_a_file_where_it_had_made_a_directory() {
    let mut vfs = Vfs::new();
    vfs.write("/r.txt", b"kept\n".to_vec()).unwrap();
    let before = tree(&vfs);
    let patch = "*** Begin Patch\n*** Delete File: r.txt\n*** Add File: r.txt/a\n+x\n\
                 *** Add File: r.txt/a/b\n+y\n*** End Patch\n";
    assert!(apply(&mut vfs, "/", patch).is_err());
    assert_eq!(tree(&vfs), before);
    assert_eq!(vfs.read("/r.txt").unwrap(), b"kept\n");
}

/// `arith` (through `shell::param::parse`): a multi-byte character right after `${!` or `${#`
/// was sliced in the middle and panicked; it is a bad substitution, as in bash.
#[test]
fn a_multibyte_character_after_bang_or_hash_is_a_bad_substitution() {
    for line in [
        "echo ${!é}; echo not reached",
        "echo ${#é}; echo not reached",
    ] {
        let out = run_within(5, line);
        assert_eq!((out.stdout.as_str(), out.exit_code), ("", 1), "{line}");
        assert!(
            out.stderr.contains("bad substitution"),
            "{line}: {}",
            out.stderr
        );
    }
}

/// Found by the `jq` target within a minute of its first run: input JSON with a backslash
/// before a multi-byte character (`"a\é"`) left the parser's position inside the character, and
/// reporting the invalid escape sliced the text there and panicked.
#[test]
fn jq_reports_an_escape_before_a_multibyte_character() {
    let output = run_within(20, r#"printf '"a\é"' | jq ."#);
    assert_eq!(output.exit_code, 4, "{}", output.stderr);
    assert!(
        output.stderr.contains("parse error: Invalid escape"),
        "{}",
        output.stderr
    );
}

/// `arith`: a subscript whose variable names the same subscript (`b='a[b]'; $((a[b]))`) recursed
/// until the stack overflowed and the process aborted: a subscript is evaluated afresh, so the
/// depth of variable recursion started again at 0 each time. Bash says "expression recursion
/// level exceeded" and exits 1; so does the sandbox now.
#[test]
fn a_subscript_that_names_itself_ends_with_an_error() {
    let output = run_within(20, r#"b="a[b]"; echo $((a[b])); echo after"#);
    assert_eq!(
        (output.stdout.as_str(), output.exit_code),
        ("", 1),
        "{output:?}"
    );
    assert!(
        output
            .stderr
            .contains("expression recursion level exceeded")
    );
    // In `(( ))` the sandbox reports it and goes on with status 1, as for `x=y; y=x; (( x ))`
    // (bash ends the script here; either way nothing overflows).
    let output = run_within(20, "b='a[b]+1'; (( a[b] )); echo \"after $?\"");
    assert_eq!(output.stdout, "after 1\n", "{output:?}");
    assert!(
        output
            .stderr
            .contains("expression recursion level exceeded")
    );
}
