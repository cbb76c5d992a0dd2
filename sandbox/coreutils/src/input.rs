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
}
