//! `du`: disk usage as a file system of 4 KiB blocks counts it (ext4's default, the same model
//! as `ls -l`'s `total`): a file takes its size rounded up to whole blocks, a directory one block
//! and its contents. Options: -a -s -c -h -k -d N/`--max-depth=N`; others refused by name.
//! Entries are listed in byte order (a real file system's order is unspecified).

use super::files::human_size;
use super::{Ctx, parse_opts, usage_error};
use tether_vfs::{self as vfs, EntryKind};

const BLOCK: usize = 4096;

struct Report {
    all: bool,
    human: bool,
    max_depth: usize,
}

/// Prints the entries of `path` (shown as `shown`) at or above the depth limit, deepest first,
/// and returns its usage in bytes.
fn walk(ctx: &mut Ctx, path: &str, shown: &str, depth: usize, report: &Report) -> usize {
    let (usage, is_dir) = match ctx.vfs.kind(path) {
        Some(EntryKind::Dir) => {
            let mut usage = BLOCK;
            for (name, _) in ctx.vfs.list(path).unwrap_or_default() {
                let sep = if shown.ends_with('/') { "" } else { "/" };
                let child = format!("{shown}{sep}{name}");
                usage += walk(ctx, &vfs::join(path, &name), &child, depth + 1, report);
            }
            (usage, true)
        }
        _ => (
            ctx.vfs
                .read(path)
                .map_or(0, |d| d.len().div_ceil(BLOCK) * BLOCK),
            false,
        ),
    };
    if depth <= report.max_depth && (is_dir || report.all || depth == 0) {
        print_usage(ctx, usage, shown, report.human);
    }
    usage
}

fn print_usage(ctx: &mut Ctx, bytes: usize, shown: &str, human: bool) {
    let size = if human {
        human_size(bytes as u64)
    } else {
        (bytes / 1024).to_string()
    };
    ctx.print(&format!("{size}\t{shown}\n"));
}

pub fn du(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [
        ("all", 'a'),
        ("summarize", 's'),
        ("total", 'c'),
        ("human-readable", 'h'),
        ("max-depth", 'd'),
    ];
    let opts = match parse_opts("du", args, "d", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("du", "aschkd") {
        return usage_error(ctx, &refusal, 1);
    }
    let max_depth = match opts.value('d').map(str::parse::<usize>) {
        _ if opts.has('s') => 0,
        None => usize::MAX,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            let raw = opts.value('d').unwrap_or_default();
            return usage_error(ctx, &format!("du: invalid maximum depth '{raw}'"), 1);
        }
    };
    let report = Report {
        all: opts.has('a'),
        human: opts.has('h'),
        max_depth,
    };
    let roots = if opts.operands.is_empty() {
        vec![".".to_string()]
    } else {
        opts.operands.clone()
    };
    let (mut status, mut total) = (0, 0);
    for root in &roots {
        let path = ctx.resolve(root);
        if !ctx.vfs.exists(&path) {
            ctx.warn(&format!(
                "du: cannot access '{root}': No such file or directory"
            ));
            status = 1;
            continue;
        }
        total += walk(ctx, &path, root, 0, &report);
    }
    if opts.has('c') {
        print_usage(ctx, total, "total", report.human);
    }
    status
}
