//! `apply_patch` (and `applypatch`) as a shell command, over tether-apply-patch: the patch
//! comes from the first argument or from stdin, as Codex's model writes it (a heredoc).

use crate::Ctx;

/// Applies the patch and prints Codex's summary, or the error on stderr (exit 1).
pub fn apply_patch(ctx: &mut Ctx, args: &[String]) -> i32 {
    let patch = match args.first() {
        Some(text) => text.clone(),
        None => String::from_utf8_lossy(&ctx.stdin.take_all()).into_owned(),
    };
    match tether_apply_patch::apply(ctx.vfs, ctx.cwd, &patch) {
        Ok(summary) => {
            ctx.print(&summary.report());
            0
        }
        Err(e) => {
            ctx.warn(&e.to_string());
            1
        }
    }
}
