//! Whether an upstream answers: a probe asks each replica for `GET {base}/models` every few
//! seconds (the model ids it lists are what `GET /v1/models` shows for the default engine), and
//! every request's outcome updates it too — a connection refused marks the replica down at once,
//! any answer marks it up. `/readyz` is ready only while every engine has a replica up; routing
//! passes over a replica that is down while another one is up.

use std::sync::Weak;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;

use super::client::{HttpClient, Secret, get};
use super::failure::{UpstreamError, redact};

/// How often a replica is probed.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(5);

/// What is known of one replica.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    /// Not probed yet.
    Unknown,
    Up,
    /// Down, and why.
    Down(String),
}

/// One replica's health.
#[derive(Debug)]
pub struct Health {
    state: Mutex<(State, Vec<String>)>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            state: Mutex::new((State::Unknown, Vec::new())),
        }
    }
}

impl Health {
    pub fn state(&self) -> State {
        self.state.lock().0.clone()
    }

    /// Whether requests may be routed to it (not known to be down).
    pub fn usable(&self) -> bool {
        !matches!(self.state(), State::Down(_))
    }

    /// The model ids it listed last.
    pub fn models(&self) -> Vec<String> {
        self.state.lock().1.clone()
    }

    pub fn up(&self) {
        self.state.lock().0 = State::Up;
    }

    pub fn down(&self, why: String) {
        self.state.lock().0 = State::Down(why);
    }

    /// Records what a request found: a connection that could not be opened means down,
    /// anything else means the replica answers.
    pub fn observe(&self, outcome: Result<(), &UpstreamError>) {
        match outcome {
            Err(UpstreamError::Connect(reason)) => self.down(reason.clone()),
            Err(UpstreamError::Timeout { .. }) => {}
            _ => self.up(),
        }
    }

    fn probed(&self, outcome: Result<Vec<String>, String>) {
        let mut state = self.state.lock();
        match outcome {
            Ok(models) => *state = (State::Up, models),
            Err(why) => state.0 = State::Down(why),
        }
    }
}

/// Something probed: its health, where its `/models` is, and how to ask.
pub trait Probed: Send + Sync + 'static {
    fn health(&self) -> &Health;
    fn models_url(&self) -> String;
}

/// Probes `replica` every [`PROBE_INTERVAL`] until it is gone.
pub fn spawn_probe<P: Probed>(
    replica: Weak<P>,
    client: HttpClient,
    key: Option<Secret>,
    timeout: Duration,
) {
    tokio::spawn(async move {
        loop {
            let Some(target) = replica.upgrade() else {
                return;
            };
            let url = target.models_url();
            let outcome = match get(&client, &url, key.as_ref(), timeout).await {
                Ok(body) => Ok(model_ids(&body)),
                Err(UpstreamError::Status {
                    status, message, ..
                }) => Err(format!(
                    "GET {url} answered {status}: {}",
                    redact(&message, key.as_ref().map(Secret::expose))
                )),
                Err(error) => Err(match error {
                    UpstreamError::Connect(reason) => format!("unreachable: {reason}"),
                    UpstreamError::Timeout { waited, .. } => {
                        format!("GET {url} took more than {:.1} s", waited.as_secs_f64())
                    }
                    other => format!("GET {url} failed: {other:?}"),
                }),
            };
            target.health().probed(outcome);
            drop(target);
            tokio::time::sleep(PROBE_INTERVAL).await;
        }
    });
}

/// The ids of a `/models` list (`{"data": [{"id": …}, …]}`; Ollama's `/v1/models` too).
fn model_ids(body: &[u8]) -> Vec<String> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("data").and_then(Value::as_array).cloned())
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_marks_it_down_and_any_answer_up() {
        let health = Health::default();
        assert_eq!(health.state(), State::Unknown);
        assert!(health.usable());
        health.observe(Err(&UpstreamError::Connect("connection refused".into())));
        assert_eq!(health.state(), State::Down("connection refused".into()));
        assert!(!health.usable());
        health.observe(Err(&UpstreamError::Status {
            status: 500,
            message: String::new(),
            code: None,
            retry_after: None,
        }));
        assert_eq!(health.state(), State::Up);
        assert_eq!(
            model_ids(br#"{"object": "list", "data": [{"id": "a"}, {"id": "b"}]}"#),
            ["a", "b"]
        );
    }
}
