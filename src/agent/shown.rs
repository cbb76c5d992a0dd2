//! What the agent view shows: a single run, or a comparison of two whose status line,
//! conversation and timeline follow one leg — the WebSocket one, then the HTTP one once it has
//! started. A view opens on the last run the page kept.

use crate::agent::{AgentRun, Comparison, ContinuationMode, LastRun, RunStatus};

/// Which kind of run the view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Single,
    Compare,
}

impl Shown {
    /// What a view opens on: the last run the page kept (`None`: none yet), the run its
    /// conversation and timeline follow, and the comparison.
    pub fn restore(last: Option<&LastRun>) -> (Shown, AgentRun, Comparison) {
        match last {
            Some(LastRun::Single { run }) => (Shown::Single, run.restore(), Comparison::default()),
            Some(LastRun::Compare { ws, http }) => {
                let comparison = Comparison {
                    ws: ws.restore(),
                    http: http.restore(),
                };
                let followed = comparison.leg(followed_leg(&comparison)).clone();
                (Shown::Compare, followed, comparison)
            }
            None => (Shown::Single, AgentRun::default(), Comparison::default()),
        }
    }

    /// The timeline's heading: for a comparison, which leg it shows.
    pub fn timeline_heading(self, comparison: &Comparison) -> &'static str {
        match self {
            Shown::Single => "Timeline",
            Shown::Compare => match followed_leg(comparison) {
                ContinuationMode::WebSocket => "Timeline (WebSocket leg)",
                _ => "Timeline (HTTP stateless leg)",
            },
        }
    }
}

/// The leg a comparison's conversation and timeline follow: HTTP's once it has started.
fn followed_leg(comparison: &Comparison) -> ContinuationMode {
    let [ws, http] = Comparison::LEGS;
    if comparison.http.status == RunStatus::Idle {
        ws
    } else {
        http
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
        assert_eq!(
            Shown::restore(None),
            (Shown::Single, AgentRun::default(), Comparison::default())
        );
        let single = LastRun::Single {
            run: RunSnapshot::of(&with_status(RunStatus::Done)),
        };
        let (shown, run, comparison) = Shown::restore(Some(&single));
        assert_eq!((shown, run.status), (Shown::Single, RunStatus::Done));
        assert_eq!(comparison, Comparison::default());
    }

    #[test]
    fn a_comparison_follows_the_http_leg_once_it_started() {
        let compare = |ws: RunStatus, http: RunStatus| LastRun::Compare {
            ws: RunSnapshot::of(&with_status(ws)),
            http: RunSnapshot::of(&with_status(http)),
        };
        let (shown, run, comparison) =
            Shown::restore(Some(&compare(RunStatus::Failed, RunStatus::Idle)));
        assert_eq!(shown, Shown::Compare);
        assert_eq!(run, comparison.ws, "HTTP never started");
        assert_eq!(
            shown.timeline_heading(&comparison),
            "Timeline (WebSocket leg)"
        );

        let (shown, run, comparison) =
            Shown::restore(Some(&compare(RunStatus::Done, RunStatus::Done)));
        assert_eq!(run, comparison.http);
        assert_eq!(run.error.as_deref(), Some("done leg"));
        assert_eq!(
            shown.timeline_heading(&comparison),
            "Timeline (HTTP stateless leg)"
        );
        assert_eq!(Shown::Single.timeline_heading(&comparison), "Timeline");
    }
}
