//! `cat` and its display options: `-n` `-b` number lines, `-s` squeezes blank ones, `-E` marks
//! line ends with `$`, `-T` shows tabs as `^I`, `-v` shows other control bytes as `^X` and
//! high bytes as `M-…`; `-A` is `-vET`, `-e` `-vE`, `-t` `-vT`. As GNU's, numbering and
//! squeezing run on across files.

use super::{Ctx, parse_opts, usage_error};

/// The display options and where the output stands.
#[derive(Default)]
struct Cat {
    number: bool,
    nonblank: bool,
    squeeze: bool,
    ends: bool,
    tabs: bool,
    nonprinting: bool,
    /// Lines numbered so far.
    count: usize,
    /// Whether the next byte begins a line, and how many blank lines just passed.
    at_start: bool,
    blanks: usize,
}

impl Cat {
    fn line(&mut self, out: &mut Vec<u8>, line: &[u8]) {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let starts = self.at_start;
        self.at_start = line.ends_with(b"\n");
        if starts && body.is_empty() && line.ends_with(b"\n") {
            self.blanks += 1;
            if self.squeeze && self.blanks > 1 {
                return;
            }
        } else {
            self.blanks = 0;
        }
        let blank = body.is_empty() && self.at_start;
        if starts && ((self.nonblank && !blank) || (self.number && !self.nonblank)) {
            self.count += 1;
            out.extend_from_slice(format!("{:>6}\t", self.count).as_bytes());
        }
        for &byte in body {
            self.byte(out, byte);
        }
        if self.at_start {
            if self.ends {
                out.push(b'$');
            }
            out.push(b'\n');
        }
    }

    fn byte(&self, out: &mut Vec<u8>, byte: u8) {
        let (high, low) = if self.nonprinting && byte >= 0x80 {
            out.extend_from_slice(b"M-");
            (true, byte - 0x80)
        } else {
            (false, byte)
        };
        match low {
            b'\t' if self.tabs => out.extend_from_slice(b"^I"),
            b'\t' => out.push(b'\t'),
            0..0x20 if self.nonprinting => out.extend_from_slice(&[b'^', low + 64]),
            0x7f if self.nonprinting => out.extend_from_slice(b"^?"),
            _ if high => out.push(low),
            _ => out.push(byte),
        }
    }
}

pub fn cat(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [
        ("number", 'n'),
        ("number-nonblank", 'b'),
        ("squeeze-blank", 's'),
        ("show-ends", 'E'),
        ("show-tabs", 'T'),
        ("show-nonprinting", 'v'),
        ("show-all", 'A'),
    ];
    let opts = match parse_opts("cat", args, "", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    // -u (unbuffered) changes nothing here.
    if let Err(refusal) = opts.refuse_unknown("cat", "nbsETvAetu") {
        return usage_error(ctx, &refusal, 1);
    }
    let has = |flags: &str| flags.chars().any(|f| opts.has(f));
    let mut cat = Cat {
        number: has("n"),
        nonblank: has("b"),
        squeeze: has("s"),
        ends: has("EAe"),
        tabs: has("TAt"),
        nonprinting: has("vAet"),
        at_start: true,
        ..Cat::default()
    };
    let plain =
        !(cat.number || cat.nonblank || cat.squeeze || cat.ends || cat.tabs || cat.nonprinting);
    let files = if opts.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        opts.operands.clone()
    };
    let mut status = 0;
    for name in files {
        match ctx.read_operand(&name) {
            Ok(data) if plain => ctx.write(&data),
            Ok(data) => {
                let mut out = Vec::with_capacity(data.len());
                for line in data.split_inclusive(|b| *b == b'\n') {
                    cat.line(&mut out, line);
                }
                ctx.write(&out);
            }
            Err(e) => {
                ctx.warn(&format!("cat: {name}: {e}"));
                status = 1;
            }
        }
    }
    status
}
