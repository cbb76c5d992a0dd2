//! Commands over files and directories: `ls`, `mkdir`, `rm`, `mv`, `cp`, `touch`,
//! `tee`, `tree`, `pwd`, `basename`, `dirname`. Messages follow GNU coreutils under `LC_ALL=C`.

use super::{Ctx, parse_opts, usage_error};
use tether_vfs::glob;
use tether_vfs::{self as vfs, EntryKind, VfsError};

pub fn pwd(ctx: &mut Ctx, _args: &[String]) -> i32 {
    let cwd = ctx.cwd.to_string();
    ctx.print(&format!("{cwd}\n"));
    0
}

pub fn basename(ctx: &mut Ctx, args: &[String]) -> i32 {
    let Some(name) = args.first() else {
        return usage_error(ctx, "basename: missing operand", 1);
    };
    let trimmed = name.trim_end_matches('/');
    let mut base = trimmed.rsplit('/').next().unwrap_or("").to_string();
    if trimmed.is_empty() && !name.is_empty() {
        base = "/".into();
    }
    if let Some(suffix) = args.get(1)
        && base != *suffix
        && let Some(stripped) = base.strip_suffix(suffix.as_str())
    {
        base = stripped.to_string();
    }
    ctx.print(&format!("{base}\n"));
    0
}

pub fn dirname(ctx: &mut Ctx, args: &[String]) -> i32 {
    let Some(name) = args.first() else {
        return usage_error(ctx, "dirname: missing operand", 1);
    };
    let trimmed = name.trim_end_matches('/');
    let dir = match trimmed.rfind('/') {
        None if name.starts_with('/') => "/",
        None => ".",
        Some(0) => "/",
        Some(i) => trimmed[..i].trim_end_matches('/'),
    };
    let dir = if dir.is_empty() { "/" } else { dir };
    ctx.print(&format!("{dir}\n"));
    0
}

pub fn mkdir(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("mkdir", args, "m", &[("parents", 'p')], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if opts.operands.is_empty() {
        return usage_error(ctx, "mkdir: missing operand", 1);
    }
    let mut status = 0;
    for name in &opts.operands {
        let path = ctx.resolve(name);
        let result = if opts.has('p') {
            ctx.vfs.mkdir_all(&path)
        } else {
            ctx.vfs.mkdir(&path)
        };
        if let Err(e) = result {
            ctx.warn(&format!("mkdir: cannot create directory '{name}': {e}"));
            status = 1;
        }
    }
    status
}

pub fn touch(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("touch", args, "dtr", &[], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if opts.operands.is_empty() {
        return usage_error(ctx, "touch: missing file operand", 1);
    }
    let mut status = 0;
    for name in &opts.operands {
        let path = ctx.resolve(name);
        if ctx.vfs.exists(&path) || opts.has('c') {
            continue;
        }
        if let Err(e) = ctx.vfs.write(&path, Vec::new()) {
            ctx.warn(&format!("touch: cannot touch '{name}': {e}"));
            status = 1;
        }
    }
    status
}

/// `tee [-a] FILE…`: stdin to stdout and to each file (appended with `-a`); `/dev/null`
/// and `/dev/stderr` are the devices. `-i` and `-p` concern signals and pipes, which the
/// sandbox's commands do not meet, and change nothing.
pub fn tee(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [("append", 'a'), ("ignore-interrupts", 'i')];
    let opts = match parse_opts("tee", args, "", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("tee", "aip") {
        return usage_error(ctx, &refusal, 1);
    }
    let data = ctx.stdin.take_all();
    let mut status = 0;
    for name in &opts.operands {
        let path = ctx.resolve(name);
        let written = match path.as_str() {
            "/dev/null" => Ok(()),
            "/dev/stderr" => {
                ctx.err.extend_from_slice(&data);
                Ok(())
            }
            _ if opts.has('a') => ctx.vfs.append(&path, &data),
            _ => ctx.vfs.write(&path, data.clone()),
        };
        if let Err(e) = written {
            ctx.warn(&format!("tee: {name}: {e}"));
            status = 1;
        }
    }
    ctx.write(&data);
    status
}

pub fn rm(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("rm", args, "", &[("recursive", 'r'), ("force", 'f')], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let recursive = opts.has('r') || opts.has('R');
    let force = opts.has('f');
    if opts.operands.is_empty() && !force {
        return usage_error(ctx, "rm: missing operand", 1);
    }
    let mut status = 0;
    for name in &opts.operands {
        let path = ctx.resolve(name);
        if path == "/" {
            ctx.warn("rm: it is dangerous to operate recursively on '/'");
            status = 1;
            continue;
        }
        let result = match ctx.vfs.kind(&path) {
            None if force => Ok(()),
            None => Err(VfsError::NotFound),
            Some(EntryKind::Dir) if !recursive && !opts.has('d') => Err(VfsError::IsADirectory),
            Some(EntryKind::Dir) if !recursive => ctx.vfs.remove(&path),
            Some(_) => ctx.vfs.remove_all(&path),
        };
        if let Err(e) = result {
            ctx.warn(&format!("rm: cannot remove '{name}': {e}"));
            status = 1;
        }
    }
    status
}

/// The destination of `src` given the last operand `dest`: inside it when it is a directory.
fn destination(ctx: &Ctx, src: &str, dest: &str) -> String {
    let dest_path = ctx.resolve(dest);
    if ctx.vfs.is_dir(&dest_path) {
        vfs::join(&dest_path, vfs::file_name(&ctx.resolve(src)))
    } else {
        dest_path
    }
}

pub fn mv(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("mv", args, "t", &[("force", 'f')], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let Some((dest, sources)) = opts.operands.split_last().filter(|(_, s)| !s.is_empty()) else {
        return usage_error(ctx, "mv: missing destination file operand", 1);
    };
    if sources.len() > 1 && !ctx.vfs.is_dir(&ctx.resolve(dest)) {
        return usage_error(ctx, &format!("mv: target '{dest}': Not a directory"), 1);
    }
    let mut status = 0;
    for src in sources {
        let from = ctx.resolve(src);
        if !ctx.vfs.exists(&from) {
            ctx.warn(&format!(
                "mv: cannot stat '{src}': No such file or directory"
            ));
            status = 1;
            continue;
        }
        let to = destination(ctx, src, dest);
        if let Err(e) = ctx.vfs.rename(&from, &to) {
            ctx.warn(&format!("mv: cannot move '{src}' to '{dest}': {e}"));
            status = 1;
        }
    }
    status
}

pub fn cp(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("cp", args, "t", &[("recursive", 'r')], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let recursive = opts.has('r') || opts.has('R') || opts.has('a');
    let Some((dest, sources)) = opts.operands.split_last().filter(|(_, s)| !s.is_empty()) else {
        return usage_error(ctx, "cp: missing destination file operand", 1);
    };
    if sources.len() > 1 && !ctx.vfs.is_dir(&ctx.resolve(dest)) {
        return usage_error(ctx, &format!("cp: target '{dest}': Not a directory"), 1);
    }
    let mut status = 0;
    for src in sources {
        let from = ctx.resolve(src);
        let to = destination(ctx, src, dest);
        let result = match ctx.vfs.kind(&from) {
            None => {
                ctx.warn(&format!(
                    "cp: cannot stat '{src}': No such file or directory"
                ));
                status = 1;
                continue;
            }
            Some(EntryKind::Dir) if !recursive => {
                ctx.warn(&format!("cp: -r not specified; omitting directory '{src}'"));
                status = 1;
                continue;
            }
            Some(EntryKind::Dir) if to == from || to.starts_with(&format!("{from}/")) => {
                ctx.warn(&format!(
                    "cp: cannot copy a directory, '{src}', into itself, '{dest}'"
                ));
                status = 1;
                continue;
            }
            Some(EntryKind::Dir) => copy_tree(ctx, &from, &to),
            Some(EntryKind::File) => ctx
                .vfs
                .read(&from)
                .map(<[u8]>::to_vec)
                .and_then(|data| ctx.vfs.write(&to, data)),
        };
        if let Err(e) = result {
            ctx.warn(&format!("cp: cannot create '{dest}': {e}"));
            status = 1;
        }
    }
    status
}

fn copy_tree(ctx: &mut Ctx, from: &str, to: &str) -> Result<(), VfsError> {
    ctx.vfs.mkdir_all(to)?;
    for (path, kind) in ctx.vfs.descendants(from) {
        let target = format!("{to}{}", &path[from.len()..]);
        match kind {
            EntryKind::Dir => ctx.vfs.mkdir_all(&target)?,
            EntryKind::File => {
                let data = ctx.vfs.read(&path)?.to_vec();
                ctx.vfs.write(&target, data)?;
            }
        }
    }
    Ok(())
}

pub fn ls(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [
        ("all", 'a'),
        ("almost-all", 'A'),
        ("recursive", 'R'),
        ("directory", 'd'),
        ("reverse", 'r'),
        ("ignore", 'I'),
        ("classify", 'F'),
    ];
    let opts = match parse_opts("ls", args, "I", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 2),
    };
    // -t and -U: every entry has the same time here, so name order is GNU's order too.
    if let Err(refusal) = opts.refuse_unknown("ls", "aARdrIlhFp1tU") {
        return usage_error(ctx, &refusal, 2);
    }
    let ignored = |name: &str| opts.all('I').any(|pattern| glob::matches(pattern, name));
    let operands = if opts.operands.is_empty() {
        vec![".".to_string()]
    } else {
        opts.operands.clone()
    };
    let mut status = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for name in &operands {
        match ctx.vfs.kind(&ctx.resolve(name)) {
            None => {
                ctx.warn(&format!(
                    "ls: cannot access '{name}': No such file or directory"
                ));
                status = 2;
            }
            Some(EntryKind::Dir) if !opts.has('d') => dirs.push(name.clone()),
            Some(_) => files.push(name.clone()),
        }
    }
    files.sort();
    dirs.sort();
    if opts.has('r') {
        files.reverse();
        dirs.reverse();
    }
    let rows: Vec<(String, String)> = files.iter().map(|f| (f.clone(), ctx.resolve(f))).collect();
    let style = Style {
        long: opts.has('l'),
        human: opts.has('h'),
        classify: opts.has('F') || opts.has('p'),
    };
    print_entries(ctx, &rows, &style, false);
    let headers = operands.len() > 1 || opts.has('R');
    let mut first = files.is_empty();
    let mut queue: Vec<String> = dirs;
    queue.reverse();
    while let Some(dir) = queue.pop() {
        if !first {
            ctx.print("\n");
        }
        first = false;
        if headers {
            ctx.print(&format!("{dir}:\n"));
        }
        let path = ctx.resolve(&dir);
        let mut rows = Vec::new();
        if opts.has('a') && !opts.has('r') {
            rows.push((".".to_string(), path.clone()));
            rows.push(("..".to_string(), vfs::parent(&path).to_string()));
        }
        let mut entries = ctx.vfs.list(&path).unwrap_or_default();
        if opts.has('r') {
            entries.reverse();
        }
        let mut subdirs = Vec::new();
        for (name, kind) in entries {
            if (name.starts_with('.') && !opts.has('a') && !opts.has('A')) || ignored(&name) {
                continue;
            }
            if kind == EntryKind::Dir {
                let shown = if dir.ends_with('/') {
                    format!("{dir}{name}")
                } else {
                    format!("{dir}/{name}")
                };
                subdirs.push(shown);
            }
            rows.push((name.clone(), vfs::join(&path, &name)));
        }
        if opts.has('a') && opts.has('r') {
            rows.push(("..".to_string(), vfs::parent(&path).to_string()));
            rows.push((".".to_string(), path.clone()));
        }
        print_entries(ctx, &rows, &style, true);
        if opts.has('R') {
            for sub in subdirs.into_iter().rev() {
                queue.push(sub);
            }
        }
    }
    status
}

/// How `ls` prints entries: `-l`, `-h` and `-F`/`-p`.
struct Style {
    long: bool,
    human: bool,
    classify: bool,
}

/// A size as `ls -h` and `du -h` print it: bytes below 1024, else one decimal below 10 and
/// none above, rounded up, with the unit (`4.0K`, `16K`, `1.5M`).
pub(crate) fn human_size(bytes: u64) -> String {
    let mut value = bytes as f64;
    let mut unit = "";
    for next in ["K", "M", "G", "T"] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    if unit.is_empty() {
        bytes.to_string()
    } else if value < 10.0 {
        let tenths = (value * 10.0).ceil() / 10.0;
        if tenths >= 10.0 {
            format!("10{unit}")
        } else {
            format!("{tenths:.1}{unit}")
        }
    } else {
        format!("{}{unit}", value.ceil())
    }
}

fn print_entries(ctx: &mut Ctx, rows: &[(String, String)], style: &Style, total: bool) {
    let Style {
        long,
        human,
        classify,
    } = *style;
    if long {
        let sizes: Vec<usize> = rows
            .iter()
            .map(|(_, path)| match ctx.vfs.read(path) {
                Ok(data) => data.len(),
                Err(_) => 4096,
            })
            .collect();
        if total {
            let blocks: usize = sizes.iter().map(|s| s.div_ceil(4096) * 4).sum();
            let blocks = if human {
                human_size(blocks as u64 * 1024)
            } else {
                blocks.to_string()
            };
            ctx.print(&format!("total {blocks}\n"));
        }
        let sizes: Vec<String> = sizes
            .iter()
            .map(|s| {
                if human {
                    human_size(*s as u64)
                } else {
                    s.to_string()
                }
            })
            .collect();
        let width = sizes.iter().map(String::len).max().unwrap_or(1);
        for ((name, path), size) in rows.iter().zip(sizes) {
            let (mode, links) = if ctx.vfs.is_dir(path) {
                // A directory's links: its name, its `.`, and each subdirectory's `..`.
                let list = ctx.vfs.list(path).unwrap_or_default();
                let subdirs = list.iter().filter(|(_, k)| *k == EntryKind::Dir).count();
                ("drwxr-xr-x", 2 + subdirs)
            } else {
                ("-rw-r--r--", 1)
            };
            ctx.print(&format!(
                "{mode} {links} user user {size:>width$} Jan  1 00:00 {name}\n"
            ));
        }
    } else {
        for (name, path) in rows {
            let suffix = if classify && ctx.vfs.is_dir(path) && name != "." && name != ".." {
                "/"
            } else {
                ""
            };
            ctx.print(&format!("{name}{suffix}\n"));
        }
    }
}

pub fn tree(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("tree", args, "L", &[], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let max_depth = opts
        .value('L')
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let roots = if opts.operands.is_empty() {
        vec![".".to_string()]
    } else {
        opts.operands.clone()
    };
    let lines = if utf8_locale(ctx.env) {
        &UTF8_LINES
    } else {
        &ASCII_LINES
    };
    let (mut dirs, mut files, mut failed) = (0, 0, false);
    for root in roots {
        let path = ctx.resolve(&root);
        if !ctx.vfs.is_dir(&path) {
            ctx.print(&format!("{root}  [error opening dir]\n"));
            // A file operand is still counted among the files.
            files += usize::from(ctx.vfs.exists(&path));
            failed = true;
            continue;
        }
        // tree 2 counts each root it lists among the directories.
        dirs += 1;
        ctx.print(&format!("{root}\n"));
        tree_level(
            ctx,
            &path,
            "",
            1,
            (max_depth, opts.has('a'), lines),
            &mut (&mut dirs, &mut files),
        );
    }
    let d = if dirs == 1 {
        "directory"
    } else {
        "directories"
    };
    let f = if files == 1 { "file" } else { "files" };
    ctx.print(&format!("\n{dirs} {d}, {files} {f}\n"));
    if failed { 2 } else { 0 }
}

/// The lines `tree` draws: a middle entry, the last one, and the indents under each.
struct TreeLines {
    middle: &'static str,
    last: &'static str,
    under_middle: &'static str,
    under_last: &'static str,
}

const UTF8_LINES: TreeLines = TreeLines {
    middle: "├── ",
    last: "└── ",
    // tree 2.1 pads the line with two no-break spaces.
    under_middle: "│\u{a0}\u{a0} ",
    under_last: "    ",
};

const ASCII_LINES: TreeLines = TreeLines {
    middle: "|-- ",
    last: "`-- ",
    under_middle: "|   ",
    under_last: "    ",
};

/// Whether the locale (`LC_ALL`, else `LC_CTYPE`, else `LANG`, as the C library reads them)
/// is a UTF-8 one; without any, the sandbox is in the C locale, as its sorting is.
fn utf8_locale(env: &std::collections::BTreeMap<String, String>) -> bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(|name| env.get(*name))
        .find(|value| !value.is_empty());
    locale.is_some_and(|value| {
        let value = value.to_ascii_lowercase();
        value.contains("utf-8") || value.contains("utf8")
    })
}

fn tree_level(
    ctx: &mut Ctx,
    dir: &str,
    prefix: &str,
    depth: usize,
    (max_depth, all, lines): (usize, bool, &TreeLines),
    counts: &mut (&mut usize, &mut usize),
) {
    if depth > max_depth {
        return;
    }
    let entries: Vec<_> = ctx
        .vfs
        .list(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, _)| all || !name.starts_with('.'))
        .collect();
    let count = entries.len();
    for (index, (name, kind)) in entries.into_iter().enumerate() {
        let last = index + 1 == count;
        let branch = if last { lines.last } else { lines.middle };
        ctx.print(&format!("{prefix}{branch}{name}\n"));
        if kind == EntryKind::Dir {
            *counts.0 += 1;
            let under = if last {
                lines.under_last
            } else {
                lines.under_middle
            };
            tree_level(
                ctx,
                &vfs::join(dir, &name),
                &format!("{prefix}{under}"),
                depth + 1,
                (max_depth, all, lines),
                counts,
            );
        } else {
            *counts.1 += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::lines;

    #[test]
    fn lines_keep_an_unterminated_last_line() {
        assert_eq!(lines(b"a\nb"), [b"a".as_slice(), b"b"]);
        assert_eq!(lines(b"a\n"), [b"a".as_slice()]);
        assert!(lines(b"").is_empty());
    }
}
