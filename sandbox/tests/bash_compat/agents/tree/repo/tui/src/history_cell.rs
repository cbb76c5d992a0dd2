//! One cell of the chat history: a user message, an agent message or a command.

pub enum HistoryCell {
    User { text: String },
    Agent { text: String },
    Command { command: String, output: String, exit_code: i32 },
}

impl HistoryCell {
    /// The lines the cell occupies at `width` columns.
    pub fn lines(&self, width: usize) -> Vec<String> {
        match self {
            HistoryCell::User { text } => prefixed("user", text, width),
            HistoryCell::Agent { text } => prefixed("agent", text, width),
            HistoryCell::Command { command, output, exit_code } => {
                let mut lines = vec![format!("$ {command}")];
                // TODO: wrap long output lines instead of cutting them
                lines.extend(output.lines().map(|l| l.chars().take(width).collect()));
                if *exit_code != 0 {
                    lines.push(format!("exit {exit_code}"));
                }
                lines
            }
        }
    }
}

fn prefixed(who: &str, text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![format!("{who}:")];
    for line in text.lines() {
        lines.push(format!("  {}", line.chars().take(width.saturating_sub(2)).collect::<String>()));
    }
    lines
}
