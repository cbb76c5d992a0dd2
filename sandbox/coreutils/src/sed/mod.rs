//! `sed`, GNU's stream editor: `-n`, `-e`, `-f`, `-E`/`-r`, `-i[SUFFIX]`, `-s`, `-z`, `-l N`;
//! addresses (`N`, `$`, `/re/` with `I` and `M`, `first~step`, `0,/re/`, ranges ending in an
//! address, `+N` or `~N`, `!`); blocks `{ }`; the commands `s` (flags `g p N i m w`), `y`, `p`,
//! `P`, `d`, `D`, `n`, `N`, `g`, `G`, `h`, `H`, `x`, `b`, `t`, `T`, `:label`, `=`, `l`, `q`,
//! `Q`, `a`, `i`, `c`, `r`, `R`, `w`, `W`, `z`, `F`. Regular expressions are POSIX basic (or
//! extended with `-E`), translated like `grep`'s, where `.` matches a newline as in GNU sed.
//! `e` and `s///e` (running commands) are refused.

mod parse;
mod run;

use parse::{Parser, Script, refused};
use run::{Line, Run};

use super::{Ctx, parse_opts, usage_error};

/// Splits text into sed's input lines, each with whether its delimiter ended it.
fn split_lines(text: &str, delimiter: char) -> Vec<Line> {
    let mut lines: Vec<Line> = text
        .split_inclusive(delimiter)
        .map(|l| match l.strip_suffix(delimiter) {
            Some(body) => (body.to_string(), true),
            None => (l.to_string(), false),
        })
        .collect();
    lines.shrink_to_fit();
    lines
}

pub fn sed(ctx: &mut Ctx, args: &[String]) -> i32 {
    let mut args = args.to_vec();
    let mut in_place = None;
    args.retain(|a| {
        let suffix = match a.as_str() {
            "-i" | "--in-place" => Some(""),
            _ => a
                .strip_prefix("--in-place=")
                .or_else(|| a.strip_prefix("-i").filter(|s| !s.starts_with('-'))),
        };
        if let Some(suffix) = suffix {
            in_place = Some(suffix.to_string());
        }
        suffix.is_none()
    });
    let long = [
        ("quiet", 'n'),
        ("silent", 'n'),
        ("expression", 'e'),
        ("file", 'f'),
        ("regexp-extended", 'E'),
        ("separate", 's'),
        ("null-data", 'z'),
        ("line-length", 'l'),
        ("unbuffered", 'u'),
        ("posix", '\u{1}'),
        ("sandbox", '\u{2}'),
        ("debug", '\u{3}'),
        ("follow-symlinks", '\u{4}'),
    ];
    let opts = match parse_opts("sed", &args, "efl", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if opts.has('\u{3}') {
        let e = refused("--debug");
        return usage_error(ctx, &e.message, e.status);
    }
    let mut operands = opts.operands.clone();
    let mut pieces: Vec<String> = Vec::new();
    for (flag, value) in &opts.values {
        match flag {
            'e' => pieces.push(value.clone()),
            'f' => match ctx.read_operand(value) {
                Ok(data) => {
                    let text = String::from_utf8_lossy(&data);
                    pieces.push(text.strip_suffix('\n').unwrap_or(&text).to_string());
                }
                Err(e) => {
                    return usage_error(ctx, &format!("sed: couldn't open file {value}: {e}"), 1);
                }
            },
            _ => {}
        }
    }
    if pieces.is_empty() {
        if operands.is_empty() {
            return usage_error(
                ctx,
                "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...",
                1,
            );
        }
        pieces.push(operands.remove(0));
    }
    let mut script = Script::default();
    let extended = opts.has('E') || opts.has('r');
    if let Err(e) = Parser::new(&pieces.join("\n"), extended, &mut script).parse() {
        return usage_error(ctx, &e.message, e.status);
    }
    let wrap = match opts.value('l').map(str::parse::<usize>) {
        None => 70,
        Some(Ok(n)) => n,
        Some(Err(_)) => return usage_error(ctx, "sed: invalid line length", 1),
    };
    let delimiter = if opts.has('z') { '\0' } else { '\n' };
    let separate = opts.has('s') || in_place.is_some();
    if in_place.is_some() && operands.is_empty() {
        return usage_error(ctx, "sed: no input files", 1);
    }
    if operands.is_empty() {
        operands.push("-".into());
    }
    let mut status = 0;
    let mut inputs: Vec<(String, String)> = Vec::new();
    for name in &operands {
        match ctx.read_operand(name) {
            Ok(data) => inputs.push((name.clone(), String::from_utf8_lossy(&data).into_owned())),
            Err(e) => {
                ctx.warn(&format!("sed: can't read {name}: {e}"));
                status = 2;
            }
        }
    }
    let vfs = &*ctx.vfs;
    let cwd = ctx.cwd;
    let read_file = |name: &str| {
        vfs.read(&tether_vfs::normalize(cwd, name))
            .ok()
            .map(|d| String::from_utf8_lossy(d).into_owned())
    };
    let mut run = Run::new(&script, opts.has('n'), delimiter, wrap, &read_file);
    let mut edits: Vec<(String, Vec<u8>)> = Vec::new();
    if separate {
        for (name, text) in &inputs {
            run.run(&split_lines(text, delimiter), name, true);
            if in_place.is_some() {
                edits.push((name.clone(), run.take_out()));
            }
        }
    } else {
        let all: Vec<Line> = inputs
            .iter()
            .flat_map(|(_, text)| split_lines(text, delimiter))
            .collect();
        let name = inputs.first().map_or("-", |(n, _)| n.as_str()).to_string();
        run.run(&all, &name, false);
    }
    let outcome = run.finish();
    ctx.write(&outcome.out);
    ctx.err.extend_from_slice(&outcome.err);
    let suffix = in_place.unwrap_or_default();
    for (name, data) in edits {
        let path = ctx.resolve(&name);
        let backup = if suffix.is_empty() {
            Ok(())
        } else {
            let original = ctx.vfs.read(&path).map(<[u8]>::to_vec).unwrap_or_default();
            let backup_name = if suffix.contains('*') {
                suffix.replace('*', tether_vfs::file_name(&path))
            } else {
                format!("{}{suffix}", tether_vfs::file_name(&path))
            };
            let backup_path = tether_vfs::join(tether_vfs::parent(&path), &backup_name);
            ctx.vfs.write(&backup_path, original)
        };
        if let Err(e) = backup.and_then(|()| ctx.vfs.write(&path, data)) {
            ctx.warn(&format!("sed: couldn't edit {name}: {e}"));
            status = 4;
        }
    }
    for (file, data) in outcome.files {
        let path = ctx.resolve(&file);
        if let Err(e) = ctx.vfs.write(&path, data) {
            ctx.warn(&format!("sed: couldn't open file {file}: {e}"));
            status = 4;
        }
    }
    outcome.exit.unwrap_or(status)
}
