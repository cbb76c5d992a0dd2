//! What the agent view shows: a single run, or a comparison — its legs' results and, side by
//! side, the latest run of each leg. A view opens on the last run the page kept.

use crate::agent::compare::{LegSummary, WARM_UP};
use crate::agent::{AgentRun, Comparison, ContinuationMode, LastRun, RunStatus, StoredLeg};

/// Which kind of run the view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Single,
    Compare,
}

/// What a view opens on.
#[derive(Debug, Clone, PartialEq)]
pub struct Opening {
    pub shown: Shown,
    /// The single run.
    pub run: AgentRun,
    pub comparison: Comparison,
    /// The latest run of each leg of the comparison.
    pub ws: AgentRun,
    pub http: AgentRun,
    /// The long-running leg's, when the comparison had one.
    pub long_running: AgentRun,
}

impl Shown {
    /// What a view opens on: the last run the page kept (`None`: none yet).
    pub fn restore(last: Option<&LastRun>) -> Opening {
        let mut opening = Opening {
            shown: Shown::Single,
            run: AgentRun::default(),
            comparison: Comparison::default(),
            ws: AgentRun::default(),
            http: AgentRun::default(),
            long_running: AgentRun::default(),
        };
        match last {
            None => {}
            Some(LastRun::Single { run }) => opening.run = run.restore(),
            Some(LastRun::Compare {
                ws,
                http,
                long_running,
                repetitions,
                legs,
                sweep,
            }) => {
                opening.shown = Shown::Compare;
                opening.ws = ws.restore();
                opening.http = http.restore();
                if let Some(long_running) = long_running {
                    opening.long_running = long_running.restore();
                }
                opening.comparison = match repetitions {
                    Some(repetitions) => {
                        let mut comparison = if sweep.is_empty() {
                            Comparison::with_long_running(*repetitions, long_running.is_some())
                        } else {
                            let profiles: Vec<&str> = sweep.iter().map(String::as_str).collect();
                            Comparison::sweep(&profiles)
                        };
                        for (mode, repetition, run) in legs.iter().filter_map(StoredLeg::restore) {
                            comparison.update(LegSummary::of(mode, repetition, &run));
                        }
                        // A comparison kept before there was a warm-up started at repetition 1.
                        comparison.warm_up = comparison.legs.is_empty()
                            || comparison.legs.iter().any(|l| l.repetition == WARM_UP);
                        comparison.restored()
                    }
                    // Stored before repetitions: the two runs are the comparison's one.
                    None => {
                        let mut one = Comparison {
                            warm_up: false,
                            ..Comparison::new(1)
                        };
                        let [ws_mode, http_mode] = Comparison::MODES;
                        for (mode, run) in [(ws_mode, &opening.ws), (http_mode, &opening.http)] {
                            if run.status != RunStatus::Idle {
                                one.update(LegSummary::of(mode, 1, run));
                            }
                        }
                        one
                    }
                };
            }
        }
        opening
    }
}

impl Opening {
    /// The run shown for `mode` in a comparison.
    pub fn leg(&self, mode: ContinuationMode) -> &AgentRun {
        match mode {
            ContinuationMode::WebSocket => &self.ws,
            ContinuationMode::LongRunning => &self.long_running,
            _ => &self.http,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::RunSnapshot;

    fn with_status(status: RunStatus) -> AgentRun {
        AgentRun {
            status,
            error: Some(format!("{} leg", status.as_str())),
            ..AgentRun::default()
        }
    }

    #[test]
    fn a_view_opens_on_the_last_run() {
        let none = Shown::restore(None);
        assert_eq!(none.shown, Shown::Single);
        assert_eq!(none.run, AgentRun::default());
        let single = LastRun::Single {
            run: RunSnapshot::of(&with_status(RunStatus::Done)),
        };
        let opening = Shown::restore(Some(&single));
        assert_eq!(
            (opening.shown, opening.run.status),
            (Shown::Single, RunStatus::Done)
        );
    }

    #[test]
    fn a_comparison_opens_with_both_legs_and_their_results() {
        let ws = ContinuationMode::WebSocket;
        let http = ContinuationMode::HttpStateless;
        let done = with_status(RunStatus::Done);
        let cut = with_status(RunStatus::Running);
        let last = LastRun::Compare {
            ws: RunSnapshot::of(&done),
            http: RunSnapshot::of(&cut),
            long_running: None,
            repetitions: Some(2),
            legs: vec![StoredLeg::of(ws, 1, &done), StoredLeg::of(http, 1, &cut)],
            sweep: Vec::new(),
        };
        let opening = Shown::restore(Some(&last));
        assert_eq!(opening.shown, Shown::Compare);
        assert_eq!(opening.leg(ws).status, RunStatus::Done);
        assert_eq!(
            opening.leg(http).status,
            RunStatus::Stopped,
            "cut off by the reload"
        );
        assert_eq!(opening.comparison.repetitions, 2);
        assert_eq!(opening.comparison.legs.len(), 2);
        assert_eq!(opening.comparison.status(), RunStatus::Stopped);

        // With the long-running leg: three legs, and that leg's run.
        let long = ContinuationMode::LongRunning;
        let last = LastRun::Compare {
            ws: RunSnapshot::of(&done),
            http: RunSnapshot::of(&done),
            long_running: Some(Box::new(RunSnapshot::of(&done))),
            repetitions: Some(1),
            legs: vec![
                StoredLeg::of(ws, 1, &done),
                StoredLeg::of(http, 1, &done),
                StoredLeg::of(long, 1, &done),
            ],
            sweep: Vec::new(),
        };
        let back = LastRun::from_json(&last.to_json()).unwrap();
        let opening = Shown::restore(Some(&back));
        assert!(opening.comparison.has_long_running());
        assert_eq!(opening.leg(long).status, RunStatus::Done);
        assert_eq!(opening.comparison.status(), RunStatus::Done);

        // Stored before repetitions: one repetition of the two runs.
        let old = LastRun::Compare {
            ws: RunSnapshot::of(&with_status(RunStatus::Failed)),
            http: RunSnapshot::of(&AgentRun::default()),
            long_running: None,
            repetitions: None,
            legs: Vec::new(),
            sweep: Vec::new(),
        };
        let opening = Shown::restore(Some(&old));
        assert_eq!(opening.comparison.repetitions, 1);
        assert_eq!(opening.comparison.legs.len(), 1, "HTTP never started");
        assert_eq!(opening.comparison.status(), RunStatus::Failed);
    }
}
