//! A run in a few numbers: how long it took end to end, how many turns, how many tokens went in
//! (how many of those the engine's prompt cache held, and how many the WebSocket connection's
//! cache saved the API from tokenizing again) and came out, and the decoding rate.

use crate::agent::{AgentRun, RunStatus};

/// The totals of one run, over the turns it has so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunTotals {
    /// First request sent → the last event of the last turn (its terminal event once done), in
    /// milliseconds; tool time in between included. `None` before anything came back. For a
    /// run that ended on a turn that did not complete, until that turn was sent
    /// ([`RunTotals::unfinished_turn`]).
    pub end_to_end_ms: Option<f64>,
    /// The turn a failed or stopped run ended on before it completed (stopped mid-stream, its
    /// connection lost, its server gone): the run's time is counted until it was sent, so that
    /// a turn cut short — whose time the server never split — is not counted as a whole one,
    /// nor as part of another.
    pub unfinished_turn: Option<usize>,
    /// Whether nothing at all came back for that turn.
    pub nothing_back: bool,
    pub turns: usize,
    pub input_tokens: u64,
    /// Read from the engine's prompt cache (`cached_tokens`): the same on every transport.
    pub cached_tokens: u64,
    /// Rendered tokens the connection cache supplied (the timing summary's
    /// `reused_by_connection`); `None` when no turn reported it.
    pub reused_by_connection: Option<u64>,
    pub output_tokens: u64,
    /// Time the sandbox spent running tool calls.
    pub tool_ms: f64,
    /// Bytes of JSON the page sent and received.
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// The server said the model decodes without pacing (`instant`): a rate measured in the
    /// page would be the page's own speed at reading frames, not the model's.
    pub unpaced: bool,
    /// Output tokens decoded after each turn's first, and the milliseconds from each turn's
    /// first token to its last: the decoding rate's numerator and denominator.
    decoded_tokens: u64,
    decoding_ms: f64,
}

/// Tokens per second between the first and the last of `tokens` tokens, `span_ms` apart: `n`
/// tokens span `n − 1` intervals, so with a single token (or no time) there is no rate. The
/// chat view's decoding speed and a run's use the same rule.
pub fn decoding_rate(tokens: u64, span_ms: f64) -> Option<f64> {
    (span_ms > 0.0 && tokens > 1).then(|| (tokens - 1) as f64 * 1000.0 / span_ms)
}

impl RunTotals {
    pub fn of(run: &AgentRun) -> RunTotals {
        let start = run.turns.first().map(|t| t.first_sent_at());
        // A run that ended on a turn that did not complete: what it measured ends where that
        // turn was (first) sent; the turns before are whole.
        let unfinished = run.turns.last().filter(|t| {
            run.status != RunStatus::Running && run.turns.len() > 1 && t.completed_at.is_none()
        });
        let end = match unfinished {
            Some(t) => Some(t.first_sent_at()),
            None => run.turns.last().and_then(|t| {
                t.completed_at
                    .or(t.last_token_at)
                    .or(t.first_event_at)
                    .map(|at| at + t.tool_ms)
            }),
        };
        let reused: Vec<u64> = run
            .turns
            .iter()
            .filter_map(|t| t.reused_by_connection())
            .collect();
        let (mut decoded_tokens, mut decoding_ms) = (0, 0.0);
        for turn in &run.turns {
            let tokens = if turn.output_tokens > 0 {
                turn.output_tokens
            } else {
                turn.deltas
            };
            if let Some(span) = turn.streaming_ms().filter(|ms| *ms > 0.0)
                && tokens > 1
            {
                decoded_tokens += tokens - 1;
                decoding_ms += span;
            }
        }
        RunTotals {
            end_to_end_ms: start.zip(end).map(|(start, end)| end - start),
            unfinished_turn: unfinished.map(|t| t.number),
            nothing_back: unfinished.is_some_and(|t| t.first_event_at.is_none()),
            turns: run.turns.len(),
            input_tokens: run.turns.iter().map(|t| t.input_tokens).sum(),
            cached_tokens: run.turns.iter().map(|t| t.cached_tokens).sum(),
            reused_by_connection: (!reused.is_empty()).then(|| reused.iter().sum()),
            output_tokens: run.turns.iter().map(|t| t.output_tokens).sum(),
            tool_ms: run.turns.iter().map(|t| t.tool_ms).sum(),
            sent_bytes: run.turns.iter().map(|t| t.sent_bytes).sum(),
            received_bytes: run.turns.iter().map(|t| t.received_bytes).sum(),
            unpaced: run.turns.iter().any(|t| {
                t.server
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| c.tokens_per_second.is_none())
            }),
            decoded_tokens,
            decoding_ms,
        }
    }

    /// Output tokens per second while decoding: over each turn's first to last token, summed
    /// (the chat view's decoding speed, over every turn). Not output ÷ end-to-end time, which
    /// would count the tools, the network and the prefill as slow decoding.
    pub fn decoding_rate(&self) -> Option<f64> {
        if self.unpaced {
            return None;
        }
        decoding_rate(self.decoded_tokens + 1, self.decoding_ms)
    }

    /// The tokens the API tokenized itself: the prompt less what the connection cache supplied.
    pub fn api_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_sub(self.reused_by_connection.unwrap_or(0))
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
        t.first_token_at = Some(sent + 10.0);
        t.last_token_at = Some(done - 10.0);
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
        // Each turn streamed from 10 ms after it was sent to 10 ms before it completed: 180 ms
        // for 39 intervals, then 130 ms for 59.
        assert!((totals.decoding_rate().unwrap() - 98.0 * 1000.0 / 310.0).abs() < 1e-9);
        assert_eq!(totals.reused_by_connection, None, "no summaries");
        assert!((totals.cached_share().unwrap() - 1000.0 / 2100.0).abs() < 1e-9);
        assert_eq!(turn_durations(&run), vec![Some(250.0), Some(150.0)]);
    }

    #[test]
    fn the_decoding_rate_is_the_chat_views_rule() {
        assert_eq!(decoding_rate(4, 3.0), Some(1000.0));
        assert_eq!(decoding_rate(1, 3.0), None);
        assert_eq!(decoding_rate(5, 0.0), None);
        // 65 tokens/s over one turn of 66 tokens: 1 s from the first to the last.
        let mut t = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        (t.first_token_at, t.last_token_at, t.output_tokens) = (Some(400.0), Some(1400.0), 66);
        let run = AgentRun {
            turns: vec![t],
            ..AgentRun::default()
        };
        assert_eq!(RunTotals::of(&run).decoding_rate(), Some(65.0));
    }

    #[test]
    fn an_unpaced_model_has_no_decoding_rate() {
        let mut t = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        (t.first_token_at, t.last_token_at, t.output_tokens) = (Some(4.0), Some(4.02), 66);
        t.sent_bytes = 300;
        t.server = crate::agent::ServerTimings::parse(&serde_json::json!({"path": "ws_hit",
            "stages": {}, "tokens": {"input": 900, "cached": 0, "reused_by_connection": 600},
            "conditions": {"rtt_ms": 0, "up_mbit": null, "down_mbit": null, "api_costs": "local",
                           "model": "instant", "tokens_per_second": null}}));
        t.input_tokens = 900;
        let mut run = AgentRun {
            turns: vec![t],
            ..AgentRun::default()
        };
        let totals = RunTotals::of(&run);
        assert!(totals.unpaced);
        assert_eq!(
            totals.decoding_rate(),
            None,
            "65 tokens in 0.02 ms is not a model's rate"
        );
        assert_eq!((totals.sent_bytes, totals.api_tokens()), (300, 300));
        run.turns[0].server = None;
        let measured = RunTotals::of(&run).decoding_rate().unwrap();
        assert!((measured - 3_250_000.0).abs() < 1e-3, "{measured}");
    }

    #[test]
    fn an_empty_run_has_no_times() {
        let totals = RunTotals::of(&AgentRun::default());
        assert_eq!(totals.end_to_end_ms, None);
        assert_eq!(totals.decoding_rate(), None);
        assert_eq!(totals.cached_share(), None);
    }
}
