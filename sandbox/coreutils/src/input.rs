//! A command's standard input.

/// A command's standard input: bytes and a read position, so `read` can take one line and
/// leave the rest for the next command.
#[derive(Debug, Clone, Default)]
pub struct Input {
    data: Vec<u8>,
    pos: usize,
}

impl Input {
    pub fn new(data: Vec<u8>) -> Self {
        Input { data, pos: 0 }
    }

    /// Everything not read yet.
    pub fn take_all(&mut self) -> Vec<u8> {
        let rest = self.data.get(self.pos..).unwrap_or_default().to_vec();
        self.pos = self.data.len();
        rest
    }

    /// The next line without its newline and whether it ended with one, or `None` at end of
    /// input.
    pub fn read_line(&mut self) -> Option<(String, bool)> {
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
        let rest = self.data.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        let mut end = 0;
        let mut chars = 0;
        while end < rest.len() && max_chars.is_none_or(|max| chars < max) {
            if Some(rest[end]) == delimiter {
                let text = String::from_utf8_lossy(&rest[..end]).into_owned();
                self.pos += end + 1;
                return Some((text, true));
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
        let text = String::from_utf8_lossy(&rest[..end]).into_owned();
        self.pos += end;
        Some((text, max_chars.is_some_and(|max| chars >= max)))
    }

    /// Whether everything has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
}
