//! `diff` between two files: the normal format, `-u` unified (headers carry the file names
//! without timestamps — the VFS has none), `-q` brief. Exit 0 when equal, 1 when different,
//! 2 on trouble, as GNU diff. Other options (-w, -b, -r, -y, …) and directory operands are
//! refused by name.

use similar::DiffOp;

use super::{Ctx, parse_opts, usage_error};
use tether_vfs::changes::unified_diff;
use tether_vfs::line_diff::LineDiff;

fn range(start: usize, len: usize) -> String {
    match len {
        0 => start.to_string(),
        1 => (start + 1).to_string(),
        _ => format!("{},{}", start + 1, start + len),
    }
}

fn normal_format(old: &str, new: &str) -> String {
    let diff = LineDiff::new(old, new);
    let mut hunks: Vec<(usize, usize, usize, usize)> = Vec::new();
    for op in &diff.ops {
        let (o, ol, n, nl) = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index, old_len, new_index, 0),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, 0, new_index, new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (old_index, old_len, new_index, new_len),
        };
        match hunks.last_mut() {
            Some(last) if last.0 + last.1 == o && last.2 + last.3 == n => {
                last.1 += ol;
                last.3 += nl;
            }
            _ => hunks.push((o, ol, n, nl)),
        }
    }
    let line = |text: &str| {
        if text.ends_with('\n') {
            text.to_string()
        } else {
            format!("{text}\n\\ No newline at end of file\n")
        }
    };
    let mut out = String::new();
    for (o, ol, n, nl) in hunks {
        let header = match (ol, nl) {
            (_, 0) => format!("{}d{}\n", range(o, ol), n),
            (0, _) => format!("{}a{}\n", o, range(n, nl)),
            _ => format!("{}c{}\n", range(o, ol), range(n, nl)),
        };
        out.push_str(&header);
        for text in &diff.old[o..o + ol] {
            out.push_str("< ");
            out.push_str(&line(text));
        }
        if ol > 0 && nl > 0 {
            out.push_str("---\n");
        }
        for text in &diff.new[n..n + nl] {
            out.push_str("> ");
            out.push_str(&line(text));
        }
    }
    out
}

pub fn diff(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("diff", args, "U", &[("unified", 'u'), ("brief", 'q')], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 2),
    };
    if let Err(refusal) = opts.refuse_unknown("diff", "uqU") {
        return usage_error(ctx, &refusal, 2);
    }
    let [a, b] = opts.operands.as_slice() else {
        return usage_error(ctx, "diff: missing operand", 2);
    };
    if [a, b].iter().any(|name| ctx.vfs.is_dir(&ctx.resolve(name))) {
        let what = format!("diff: comparing directories{}", super::REFUSAL);
        return usage_error(ctx, &what, 2);
    }
    let mut texts = Vec::new();
    for name in [a, b] {
        match ctx.read_operand(name) {
            Ok(data) => texts.push(String::from_utf8_lossy(&data).into_owned()),
            Err(e) => return usage_error(ctx, &format!("diff: {name}: {e}"), 2),
        }
    }
    if texts[0] == texts[1] {
        return 0;
    }
    if opts.has('q') {
        ctx.print(&format!("Files {a} and {b} differ\n"));
    } else if opts.has('u') || opts.value('U').is_some() {
        ctx.print(&unified_diff(&texts[0], &texts[1], a, b));
    } else {
        ctx.print(&normal_format(&texts[0], &texts[1]));
    }
    1
}
