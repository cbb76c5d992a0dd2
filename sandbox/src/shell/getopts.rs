//! `getopts OPTSTRING NAME [ARG…]`: one option per call from the positional parameters (or
//! ARGs), with `OPTIND` and `OPTARG` as bash keeps them, grouped flags (`-ab`), attached and
//! separate arguments (`-bVAL`, `-b VAL`), `--`, and the silent mode of a leading `:`.

use super::exec::{Shell, Streams, report};
use super::variables::Mode;

impl Shell<'_> {
    pub(super) fn getopts(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let [optstring, name, rest @ ..] = args else {
            report(
                &mut io.err,
                "getopts: usage: getopts optstring name [arg ...]",
            );
            return 2;
        };
        let params = if rest.is_empty() {
            self.positional.clone()
        } else {
            rest.to_vec()
        };
        let silent = optstring.starts_with(':');
        let optind = self
            .var("OPTIND")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1);
        // Where in a group of flags (`-abc`) the last call stopped, valid while OPTIND is
        // where that call left it.
        let offset = match self.getopts_place {
            Some((index, offset)) if index == optind => offset,
            _ => 1,
        };
        let Some(arg) = params.get(optind - 1) else {
            return self.getopts_end(name, optind);
        };
        if arg == "--" {
            return self.getopts_end(name, optind + 1);
        }
        let chars: Vec<char> = arg.chars().collect();
        if chars.len() < 2 || chars[0] != '-' || offset >= chars.len() {
            return self.getopts_end(name, optind);
        }
        let flag = chars[offset];
        let at_end = offset + 1 >= chars.len();
        let (mut next_index, mut next_offset) = if at_end {
            (optind + 1, 1)
        } else {
            (optind, offset + 1)
        };
        let spec = optstring.find(flag).filter(|_| flag != ':');
        let (value, optarg) = match spec {
            Some(at) if optstring[at + flag.len_utf8()..].starts_with(':') => {
                if !at_end {
                    next_index = optind + 1;
                    next_offset = 1;
                    (flag.to_string(), Some(chars[offset + 1..].iter().collect()))
                } else if let Some(value) = params.get(optind) {
                    next_index = optind + 2;
                    (flag.to_string(), Some(value.clone()))
                } else if silent {
                    (":".to_string(), Some(flag.to_string()))
                } else {
                    report(
                        &mut io.err,
                        format!("option requires an argument -- {flag}"),
                    );
                    ("?".to_string(), None)
                }
            }
            Some(_) => (flag.to_string(), None),
            None if silent => ("?".to_string(), Some(flag.to_string())),
            None => {
                report(&mut io.err, format!("illegal option -- {flag}"));
                ("?".to_string(), None)
            }
        };
        self.getopts_place = Some((next_index, next_offset));
        let result = self
            .assign("OPTIND", next_index.to_string(), Mode::Set)
            .and_then(|()| self.assign(name, value, Mode::Set))
            .and_then(|()| match optarg {
                Some(optarg) => self.assign("OPTARG", optarg, Mode::Set),
                None => self.unset_var("OPTARG"),
            });
        match result {
            Ok(()) => 0,
            Err(e) => {
                report(&mut io.err, format!("getopts: {e}"));
                2
            }
        }
    }

    /// No more options: NAME is `?`, OPTIND points at the first operand, status 1.
    fn getopts_end(&mut self, name: &str, optind: usize) -> i32 {
        self.getopts_place = None;
        let _ = self.assign("OPTIND", optind.to_string(), Mode::Set);
        let _ = self.assign(name, "?".into(), Mode::Set);
        1
    }
}
