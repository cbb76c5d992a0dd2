//! Compare mode: the same task over WebSocket mode and then over HTTP, one after the other so
//! they do not compete for the server, each from a fresh sandbox; the speedup is HTTP's
//! end-to-end time over WebSocket's.

use crate::agent::{AgentRun, ContinuationMode, RunStatus, RunTotals};

/// The HTTP mode compare runs against by default: stateless, as Codex speaks HTTP.
pub const COMPARE_HTTP_MODE: ContinuationMode = ContinuationMode::HttpStateless;

/// Both legs of a comparison; a leg not started yet is idle.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    pub ws: AgentRun,
    pub http: AgentRun,
}

impl Comparison {
    /// The modes of the two legs, in the order they run.
    pub const LEGS: [ContinuationMode; 2] = [ContinuationMode::WebSocket, COMPARE_HTTP_MODE];

    /// The leg of `mode`.
    pub fn leg(&self, mode: ContinuationMode) -> &AgentRun {
        if mode == ContinuationMode::WebSocket {
            &self.ws
        } else {
            &self.http
        }
    }

    /// The leg of `mode`, to change.
    pub fn leg_mut(&mut self, mode: ContinuationMode) -> &mut AgentRun {
        if mode == ContinuationMode::WebSocket {
            &mut self.ws
        } else {
            &mut self.http
        }
    }

    /// The state of the whole comparison: failed (or stopped) as soon as a leg is, done when
    /// both are, running in between.
    pub fn status(&self) -> RunStatus {
        let legs = [self.ws.status, self.http.status];
        if legs.contains(&RunStatus::Failed) {
            RunStatus::Failed
        } else if legs.contains(&RunStatus::Stopped) {
            RunStatus::Stopped
        } else if legs == [RunStatus::Done, RunStatus::Done] {
            RunStatus::Done
        } else if legs == [RunStatus::Idle, RunStatus::Idle] {
            RunStatus::Idle
        } else {
            RunStatus::Running
        }
    }

    /// The first error of either leg, naming the leg.
    pub fn error(&self) -> Option<String> {
        let named = |name: &str, run: &AgentRun| {
            run.error
                .as_ref()
                .map(|error| format!("{name} run: {error}"))
        };
        named("WebSocket", &self.ws).or_else(|| named("HTTP", &self.http))
    }

    /// HTTP end-to-end time ÷ WebSocket end-to-end time, once both legs are done.
    pub fn speedup(&self) -> Option<f64> {
        if self.status() != RunStatus::Done {
            return None;
        }
        let ws = RunTotals::of(&self.ws)
            .end_to_end_ms
            .filter(|ms| *ms > 0.0)?;
        let http = RunTotals::of(&self.http).end_to_end_ms?;
        Some(http / ws)
    }
}

/// How the page shows a speedup: `1.42×`.
pub fn format_speedup(speedup: f64) -> String {
    format!("{speedup:.2}×")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::TurnRecord;
    use tether_protocol::ResponseCreate;

    fn finished(status: RunStatus, end_to_end: f64) -> AgentRun {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(end_to_end);
        AgentRun {
            status,
            turns: vec![turn],
            ..AgentRun::default()
        }
    }

    #[test]
    fn the_status_covers_both_legs() {
        let mut c = Comparison::default();
        assert_eq!(c.status(), RunStatus::Idle);
        c.ws.status = RunStatus::Running;
        assert_eq!(c.status(), RunStatus::Running);
        c.ws.status = RunStatus::Done;
        assert_eq!(c.status(), RunStatus::Running, "HTTP has not run yet");
        c.http.status = RunStatus::Running;
        assert_eq!(c.status(), RunStatus::Running);
        assert_eq!(c.speedup(), None);
        c.http.status = RunStatus::Failed;
        c.http.error = Some("HTTP 500: boom".into());
        assert_eq!(c.status(), RunStatus::Failed);
        assert_eq!(c.error().as_deref(), Some("HTTP run: HTTP 500: boom"));
        c.leg_mut(ContinuationMode::WebSocket).status = RunStatus::Stopped;
        assert_eq!(c.status(), RunStatus::Failed, "a failure outranks a stop");
    }

    #[test]
    fn the_speedup_is_http_over_websocket() {
        let c = Comparison {
            ws: finished(RunStatus::Done, 1000.0),
            http: finished(RunStatus::Done, 1420.0),
        };
        assert_eq!(c.status(), RunStatus::Done);
        let speedup = c.speedup().unwrap();
        assert!((speedup - 1.42).abs() < 1e-9);
        assert_eq!(format_speedup(speedup), "1.42×");
    }
}
