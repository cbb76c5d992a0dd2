//! Finding a chunk's old lines in a file, from strict to lenient: exact, then ignoring trailing
//! whitespace, then ignoring surrounding whitespace, then with Unicode dashes, quotes and spaces
//! folded to ASCII (models often type typographic punctuation the file does not contain).

/// The first index at or after `start` where `pattern` occurs in `lines`; with `end_of_file`,
/// the search begins where the pattern would end the file.
pub fn seek(
    lines: &[String],
    pattern: &[String],
    start: usize,
    end_of_file: bool,
) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let from = if end_of_file {
        lines.len() - pattern.len()
    } else {
        start
    };
    let last = lines.len() - pattern.len();
    let passes: [fn(&str) -> std::borrow::Cow<'_, str>; 4] = [
        |s| s.into(),
        |s| s.trim_end().into(),
        |s| s.trim().into(),
        |s| normalise(s).into(),
    ];
    for pass in passes {
        for i in from..=last {
            if lines[i..i + pattern.len()]
                .iter()
                .zip(pattern)
                .all(|(l, p)| pass(l) == pass(p))
            {
                return Some(i);
            }
        }
    }
    None
}

fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
            | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
            | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}
