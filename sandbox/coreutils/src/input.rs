//! A command's standard input.

/// A command's standard input: bytes and a read position, so `read` can take one line and
/// leave the rest for the next command — or, after `yes` in a pipeline, an endless repetition
/// handed out as it is read.
#[derive(Debug, Clone, Default)]
pub struct Input {
    data: Vec<u8>,
    pos: usize,
    endless: Option<Endless>,
}

/// What `yes` would write forever: its line, how many bytes were handed out, how many may be,
/// and whether a reader asked for the end (which never comes).
#[derive(Debug, Clone)]
struct Endless {
    unit: Vec<u8>,
    served: usize,
    budget: usize,
    drained: bool,
}

/// How much of an endless input is made ready at a time.
const ENDLESS_CHUNK: usize = 8 * 1024;

impl Input {
    pub fn new(data: Vec<u8>) -> Self {
        Input {
            data,
            pos: 0,
            endless: None,
        }
    }

    /// `unit` repeated without end, as read from `yes`: handed out a chunk at a time, up to
    /// `budget` bytes (a reader that goes past it, or asks for everything, drains it).
    pub fn endless(unit: Vec<u8>, budget: usize) -> Self {
        Input {
            data: Vec::new(),
            pos: 0,
            endless: Some(Endless {
                unit,
                served: 0,
                budget,
                drained: false,
            }),
        }
    }

    /// Whether this input never ends (`yes` feeds it).
    pub fn is_endless(&self) -> bool {
        self.endless.is_some()
    }

    /// Whether a reader asked for the end of an endless input — everything, or more than its
    /// budget: in bash that reader would never finish.
    pub fn drained_endless(&self) -> bool {
        self.endless.as_ref().is_some_and(|e| e.drained)
    }

    /// Makes more of an endless input ready once what is ready has been read; false when there
    /// is none (a finite input at its end, or an endless one past its budget).
    fn refill(&mut self) -> bool {
        if self.pos < self.data.len() {
            return true;
        }
        let Some(endless) = self.endless.as_mut() else {
            return false;
        };
        if endless.drained || endless.served >= endless.budget || endless.unit.is_empty() {
            endless.drained = true;
            return false;
        }
        let copies = (ENDLESS_CHUNK / endless.unit.len()).max(1);
        self.data = endless.unit.repeat(copies);
        self.pos = 0;
        endless.served += self.data.len();
        true
    }

    /// Everything not read yet. Of an endless input, nothing: it is marked drained, and the
    /// pipeline reports that its reader would never have finished.
    pub fn take_all(&mut self) -> Vec<u8> {
        if let Some(endless) = self.endless.as_mut() {
            endless.drained = true;
            return Vec::new();
        }
        let rest = self.data.get(self.pos..).unwrap_or_default().to_vec();
        self.pos = self.data.len();
        rest
    }

    /// Up to `count` lines, each with its newline, and nothing after them (`head -n` on an
    /// endless input).
    pub fn take_lines(&mut self, count: usize) -> Vec<u8> {
        let mut taken = Vec::new();
        let mut lines = 0;
        while lines < count && self.refill() {
            let rest = &self.data[self.pos..];
            let end = match rest.iter().position(|b| *b == b'\n') {
                Some(newline) => {
                    lines += 1;
                    newline + 1
                }
                None => rest.len(),
            };
            taken.extend_from_slice(&rest[..end]);
            self.pos += end;
        }
        taken
    }

    /// Up to `count` bytes (`head -c` on an endless input).
    pub fn take_bytes(&mut self, count: usize) -> Vec<u8> {
        let mut taken = Vec::new();
        while taken.len() < count && self.refill() {
            let rest = &self.data[self.pos..];
            let end = rest.len().min(count - taken.len());
            taken.extend_from_slice(&rest[..end]);
            self.pos += end;
        }
        taken
    }

    /// The next line without its newline and whether it ended with one, or `None` at end of
    /// input.
    pub fn read_line(&mut self) -> Option<(String, bool)> {
        self.refill();
        let rest = self.data.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let end = rest.iter().position(|b| *b == b'\n');
        let line = &rest[..end.unwrap_or(rest.len())];
        let text = String::from_utf8_lossy(line).into_owned();
        self.pos += end.map_or(rest.len(), |e| e + 1);
        Some((text, end.is_some()))
    }

    /// The next record for the shell's `read`: up to `delimiter` (consumed, not returned) or
    /// after `max_chars` characters, whichever comes first, and whether the delimiter ended
    /// it; `None` at end of input.
    pub fn read_record(
        &mut self,
        delimiter: Option<u8>,
        max_chars: Option<usize>,
    ) -> Option<(String, bool)> {
        self.refill();
        if self.pos >= self.data.len() {
            return None;
        }
        let mut record = Vec::new();
        let mut chars = 0;
        // One pass a ready chunk: an endless input's record may run on into the next.
        loop {
            let rest = &self.data[self.pos..];
            let mut end = 0;
            while end < rest.len() && max_chars.is_none_or(|max| chars < max) {
                if Some(rest[end]) == delimiter {
                    record.extend_from_slice(&rest[..end]);
                    self.pos += end + 1;
                    return Some((String::from_utf8_lossy(&record).into_owned(), true));
                }
                let width = match rest[end] {
                    b if b < 0x80 => 1,
                    b if b >= 0xf0 => 4,
                    b if b >= 0xe0 => 3,
                    b if b >= 0xc0 => 2,
                    _ => 1,
                };
                end = (end + width).min(rest.len());
                chars += 1;
            }
            record.extend_from_slice(&rest[..end]);
            self.pos += end;
            let full = max_chars.is_some_and(|max| chars >= max);
            if full || !self.is_endless() || !self.refill() {
                return Some((String::from_utf8_lossy(&record).into_owned(), full));
            }
        }
    }

    /// Whether everything has been read.
    pub fn is_empty(&self) -> bool {
        self.endless.is_none() && self.pos >= self.data.len()
    }
}
