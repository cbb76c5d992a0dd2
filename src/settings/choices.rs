//! The settings' closed choices — the task's length and the transport — each with the stable
//! name the selector, the URL and the storage use, and the words the page shows.

use serde::{Deserialize, Serialize};

use crate::agent::ContinuationMode;

/// How long a task the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskLength {
    /// The task and scenario of the settings (by default the short demo, `fix-sample-project`:
    /// about six turns and a few thousand tokens).
    #[default]
    Short,
    /// The long rollout ([`super::LONG_SCENARIO`]): about 40 tool calls, the context past 100k
    /// tokens.
    Long,
}

impl TaskLength {
    pub const ALL: [TaskLength; 2] = [TaskLength::Short, TaskLength::Long];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskLength::Short => "short",
            TaskLength::Long => "long",
        }
    }

    pub fn parse(name: &str) -> Option<TaskLength> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    pub fn label(self) -> &'static str {
        match self {
            TaskLength::Short => "Short demo (about 6 turns)",
            TaskLength::Long => "Long rollout (40 tool calls)",
        }
    }

    /// What the task is, in a sentence (shown under the choice).
    pub fn note(self) -> &'static str {
        match self {
            TaskLength::Short => {
                "The task and scenario of the settings: by default fix-sample-project — list, \
                 read, test, patch, test again — about six turns and a few thousand tokens."
            }
            TaskLength::Long => {
                "triage-ci-log: 40 shell calls, each reading the next ~3,000-token window of a CI \
                 log, then a summary — 41 turns, the context growing past 100k tokens. The \
                 benchmark (cargo xtask bench) plays the same task."
            }
        }
    }
}

/// What the agent view runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TransportChoice {
    /// WebSocket mode: one connection, new items + `previous_response_id`.
    #[default]
    Ws,
    /// WebSocket, one long-running response per run (v1 beta: `response.append`).
    WsAppend,
    /// HTTP, chained through the store (`store:true` + `previous_response_id`).
    HttpChained,
    /// HTTP without server state: the full conversation every turn (what Codex does over HTTP).
    HttpStateless,
    /// The same task over WebSocket, then over HTTP stateless, and the speedup.
    Compare,
}

impl TransportChoice {
    pub const ALL: [TransportChoice; 5] = [
        TransportChoice::Ws,
        TransportChoice::WsAppend,
        TransportChoice::HttpChained,
        TransportChoice::HttpStateless,
        TransportChoice::Compare,
    ];

    /// The stable name of the selector, the URL and the storage.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportChoice::Ws => "ws",
            TransportChoice::WsAppend => "ws-append",
            TransportChoice::HttpChained => "http-chained",
            TransportChoice::HttpStateless => "http-stateless",
            TransportChoice::Compare => "compare",
        }
    }

    /// A name from the selector or a URL; `http` is HTTP stateless, as Codex speaks HTTP.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "http" => Some(TransportChoice::HttpStateless),
            _ => Self::ALL.into_iter().find(|c| c.as_str() == name),
        }
    }

    /// Its option in the selector: short enough to be read whole in the settings' column (the
    /// overview's list of designs says what each does; [`TransportChoice::design`] in full).
    pub fn label(self) -> &'static str {
        match self {
            TransportChoice::Ws => "WebSocket",
            TransportChoice::WsAppend => "WebSocket long-running",
            TransportChoice::HttpChained => "HTTP chained",
            TransportChoice::HttpStateless => "HTTP stateless",
            TransportChoice::Compare => "WebSocket vs HTTP",
        }
    }

    /// What the choice runs, in full (an embedded run's summary line).
    pub fn design(self) -> &'static str {
        match self {
            TransportChoice::Compare => "Compare: WebSocket and HTTP stateless, alternated",
            other => other.mode().map_or("", ContinuationMode::label),
        }
    }

    /// The single mode this choice runs, `None` for a comparison.
    pub fn mode(self) -> Option<ContinuationMode> {
        match self {
            TransportChoice::Ws => Some(ContinuationMode::WebSocket),
            TransportChoice::WsAppend => Some(ContinuationMode::LongRunning),
            TransportChoice::HttpChained => Some(ContinuationMode::HttpChained),
            TransportChoice::HttpStateless => Some(ContinuationMode::HttpStateless),
            TransportChoice::Compare => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports_parse_by_name_and_http_means_stateless() {
        for choice in TransportChoice::ALL {
            assert_eq!(TransportChoice::parse(choice.as_str()), Some(choice));
        }
        assert_eq!(
            TransportChoice::parse("http"),
            Some(TransportChoice::HttpStateless)
        );
        assert_eq!(TransportChoice::parse("WS"), None);
        assert_eq!(
            TransportChoice::parse("ws-append").and_then(TransportChoice::mode),
            Some(ContinuationMode::LongRunning)
        );
        assert_eq!(TransportChoice::Compare.mode(), None);
        assert_eq!(
            TransportChoice::HttpChained.mode(),
            Some(ContinuationMode::HttpChained)
        );
    }

    #[test]
    fn task_lengths_parse_by_name() {
        for length in TaskLength::ALL {
            assert_eq!(TaskLength::parse(length.as_str()), Some(length));
        }
        assert_eq!(TaskLength::parse("huge"), None);
    }
}
