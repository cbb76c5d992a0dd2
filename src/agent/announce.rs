//! What a screen reader is told about a run: its status as it changes, the answer or the result
//! at the end — never the stream itself (the agent view puts it in a `role="status"` region).

use crate::agent::{AgentRun, Comparison, RunStatus, describe_sweep};

/// The announcement of a single run.
pub fn announce_run(run: &AgentRun) -> String {
    match run.status {
        RunStatus::Idle => String::new(),
        RunStatus::Running => "Running.".to_string(),
        RunStatus::Done => format!(
            "Done in {} turns. {}",
            run.turns.len(),
            run.answer().unwrap_or_default()
        ),
        RunStatus::Failed => format!("Failed: {}", run.error.clone().unwrap_or_default()),
        RunStatus::Stopped => "Stopped.".to_string(),
    }
}

/// The announcement of a comparison (or a sweep): its result once done.
pub fn announce_comparison(comparison: &Comparison) -> String {
    match (comparison.status(), comparison.speedup()) {
        (RunStatus::Done, _) if comparison.is_sweep() => format!(
            "Sweep done. {}",
            describe_sweep(comparison).unwrap_or_default()
        ),
        (RunStatus::Done, Some(speedup)) => format!(
            "Comparison done. {} {}",
            speedup.describe(),
            comparison.explain().unwrap_or_default()
        ),
        (RunStatus::Idle, _) => String::new(),
        (RunStatus::Failed, _) => format!("Failed: {}", comparison.error().unwrap_or_default()),
        (status, _) => format!("Comparison {}.", status.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_announced_by_its_status_and_at_the_end_its_outcome() {
        let mut run = AgentRun::default();
        assert_eq!(announce_run(&run), "");
        run.status = RunStatus::Running;
        assert_eq!(announce_run(&run), "Running.");
        run.status = RunStatus::Failed;
        run.error = Some("HTTP 401: wrong API key".into());
        assert_eq!(announce_run(&run), "Failed: HTTP 401: wrong API key");
        run.status = RunStatus::Stopped;
        assert_eq!(announce_run(&run), "Stopped.");
        run.status = RunStatus::Done;
        assert!(announce_run(&run).starts_with("Done in 0 turns."));
    }

    #[test]
    fn a_comparison_is_announced_until_it_has_a_result() {
        let comparison = Comparison::default();
        assert_eq!(announce_comparison(&comparison), "");
    }
}
