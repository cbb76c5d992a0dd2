//! A run in a few numbers: how long it took end to end, how many turns, how many tokens went in
//! (and how many of those the server had cached) and came out, and the output rate.

use crate::agent::AgentRun;

/// The totals of one run, over the turns it has so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunTotals {
    /// First request sent → the last event of the last turn (its terminal event once done), in
    /// milliseconds; tool time in between included. `None` before anything came back.
    pub end_to_end_ms: Option<f64>,
    pub turns: usize,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    /// Time the sandbox spent running tool calls.
    pub tool_ms: f64,
}

impl RunTotals {
    pub fn of(run: &AgentRun) -> RunTotals {
        let start = run.turns.first().map(|t| t.sent_at);
        let end = run.turns.last().and_then(|t| {
            t.completed_at
                .or(t.last_token_at)
                .or(t.first_event_at)
                .map(|at| at + t.tool_ms)
        });
        RunTotals {
            end_to_end_ms: start.zip(end).map(|(start, end)| end - start),
            turns: run.turns.len(),
            input_tokens: run.turns.iter().map(|t| t.input_tokens).sum(),
            cached_tokens: run.turns.iter().map(|t| t.cached_tokens).sum(),
            output_tokens: run.turns.iter().map(|t| t.output_tokens).sum(),
            tool_ms: run.turns.iter().map(|t| t.tool_ms).sum(),
        }
    }

    /// Output tokens per second of end-to-end time.
    pub fn tokens_per_second(&self) -> Option<f64> {
        let ms = self.end_to_end_ms.filter(|ms| *ms > 0.0)?;
        Some(self.output_tokens as f64 * 1000.0 / ms)
    }

    /// The share of input tokens the server reused from its cache, 0 to 1.
    pub fn cached_share(&self) -> Option<f64> {
        (self.input_tokens > 0).then(|| self.cached_tokens as f64 / self.input_tokens as f64)
    }
}

/// Per-turn wall time: request sent → terminal event, plus the tools that ran after it.
pub fn turn_durations(run: &AgentRun) -> Vec<Option<f64>> {
    run.turns
        .iter()
        .map(|t| t.response_ms().map(|ms| ms + t.tool_ms))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::TurnRecord;
    use tether_protocol::ResponseCreate;

    fn turn(number: usize, sent: f64, done: f64, tool: f64, tokens: (u64, u64, u64)) -> TurnRecord {
        let mut t = TurnRecord::new(number, &ResponseCreate::new("m", "x"), sent);
        t.first_event_at = Some(sent + 1.0);
        t.completed_at = Some(done);
        t.tool_ms = tool;
        (t.input_tokens, t.cached_tokens, t.output_tokens) = tokens;
        t
    }

    #[test]
    fn totals_add_up_the_turns() {
        let run = AgentRun {
            turns: vec![
                turn(1, 100.0, 300.0, 50.0, (1000, 0, 40)),
                turn(2, 350.0, 500.0, 0.0, (1100, 1000, 60)),
            ],
            ..AgentRun::default()
        };
        let totals = RunTotals::of(&run);
        assert_eq!(totals.end_to_end_ms, Some(400.0));
        assert_eq!(totals.turns, 2);
        assert_eq!(
            (
                totals.input_tokens,
                totals.cached_tokens,
                totals.output_tokens
            ),
            (2100, 1000, 100)
        );
        assert_eq!(totals.tool_ms, 50.0);
        assert_eq!(totals.tokens_per_second(), Some(250.0));
        assert!((totals.cached_share().unwrap() - 1000.0 / 2100.0).abs() < 1e-9);
        assert_eq!(turn_durations(&run), vec![Some(250.0), Some(150.0)]);
    }

    #[test]
    fn an_empty_run_has_no_times() {
        let totals = RunTotals::of(&AgentRun::default());
        assert_eq!(totals.end_to_end_ms, None);
        assert_eq!(totals.tokens_per_second(), None);
        assert_eq!(totals.cached_share(), None);
    }
}
