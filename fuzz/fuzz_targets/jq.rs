//! `jq`: filter and input. The input is split at NUL bytes: every piece but the last is an
//! argument (the filter, or options such as `-r`, `-c`, `-s`, `--arg x 1` before it), the last is
//! standard input (JSON, or any text) and also the file `/in.json`.
//!
//! Checks: jq never panics, on any filter and any input; it stays within its output cap; and
//! its value budget ends every filter (a hang is a libFuzzer timeout).

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use tether_sandbox::Vfs;
use tether_sandbox::commands::{Ctx, lookup};
use tether_sandbox::shell::Input;

const MAX_OUTPUT: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let mut pieces: Vec<&[u8]> = data.split(|b| *b == 0).collect();
    let stdin = pieces.pop().unwrap_or_default();
    let args: Vec<String> = pieces
        .iter()
        .map(|piece| String::from_utf8_lossy(piece).into_owned())
        .collect();
    let mut vfs = Vfs::from_files([("/in.json", stdin)]);
    let env = BTreeMap::from([("HOME".to_string(), "/".to_string())]);
    let mut input = Input::new(stdin.to_vec());
    let mut ctx = Ctx {
        vfs: &mut vfs,
        cwd: "/",
        env: &env,
        stdin: &mut input,
        out: Vec::new(),
        err: Vec::new(),
        max_output: MAX_OUTPUT,
        overflowed: false,
        limits: &mut tether_sandbox::commands::Unlimited,
    };
    let jq = lookup("jq").expect("jq is a command");
    let _status = jq(&mut ctx, &args);
    assert!(ctx.out.len() <= MAX_OUTPUT);
});
