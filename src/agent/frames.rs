//! Every frame the agent loop sent and received, for the event inspector: kept in an append-only
//! log that clones of a run share (a copy of the run per animation frame must not copy thousands
//! of frames), and a filter that only looks at the frames added since it last looked.

use std::sync::{Arc, Mutex, MutexGuard};

/// A list that only grows, shared by every clone. Two logs are equal when they hold equal items.
#[derive(Debug)]
pub struct AppendLog<T>(Arc<Mutex<Vec<T>>>);

impl<T> Default for AppendLog<T> {
    fn default() -> Self {
        AppendLog(Arc::default())
    }
}

impl<T> Clone for AppendLog<T> {
    fn clone(&self) -> Self {
        AppendLog(self.0.clone())
    }
}

impl<T: PartialEq> PartialEq for AppendLog<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.items() == *other.items()
    }
}

impl<T> AppendLog<T> {
    // Single-threaded (wasm) or one thread per test: the lock is never contended, and a panic
    // while holding it cannot leave a half-pushed item, so a poisoned lock is still good.
    fn items(&self) -> MutexGuard<'_, Vec<T>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn push(&self, item: T) {
        self.items().push(item);
    }

    pub fn len(&self) -> usize {
        self.items().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the items without copying them.
    pub fn with<R>(&self, read: impl FnOnce(&[T]) -> R) -> R {
        read(&self.items())
    }

    /// Whether `other` is this very log (not just an equal one).
    pub fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T: Clone> AppendLog<T> {
    pub fn get(&self, index: usize) -> Option<T> {
        self.items().get(index).cloned()
    }

    pub fn to_vec(&self) -> Vec<T> {
        self.items().clone()
    }
}

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    #[default]
    Sent,
    Received,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Sent => "sent",
            Direction::Received => "received",
        }
    }
}

/// One frame as it crossed the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub direction: Direction,
    /// Milliseconds on the run's clock.
    pub at_ms: f64,
    /// The turn it belongs to, 1-based.
    pub turn: usize,
    /// `response.create` for a request, the event's `type` for an event (every one of them is
    /// a name the protocol knows, so no frame allocates its own).
    pub kind: &'static str,
    /// The JSON exactly as sent or received.
    pub json: String,
}

impl Frame {
    /// The JSON indented for reading.
    pub fn pretty_json(&self) -> String {
        pretty_json(&self.json)
    }
}

/// `json` indented for reading; the text as it was if it does not parse.
pub fn pretty_json(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| json.to_string())
}

/// The frames of a run.
pub type FrameLog = AppendLog<Frame>;

/// Which directions the inspector shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirectionFilter {
    #[default]
    Both,
    Only(Direction),
}

impl DirectionFilter {
    pub const ALL: [DirectionFilter; 3] = [
        DirectionFilter::Both,
        DirectionFilter::Only(Direction::Sent),
        DirectionFilter::Only(Direction::Received),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DirectionFilter::Both => "both",
            DirectionFilter::Only(direction) => direction.as_str(),
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == name)
    }

    fn admits(self, direction: Direction) -> bool {
        match self {
            DirectionFilter::Both => true,
            DirectionFilter::Only(only) => only == direction,
        }
    }
}

/// The frames matching a text and a direction, kept up to date incrementally: each refresh
/// looks only at frames added since the last one, unless the filter or the log changed.
#[derive(Debug, Default)]
pub struct FrameFilter {
    log: Option<FrameLog>,
    text: String,
    direction: DirectionFilter,
    /// Leave out the deltas (`*.delta`), the bulk of a stream, so the requests and the events
    /// that end each turn stand out.
    hide_deltas: bool,
    /// Frames looked at so far.
    seen: usize,
    /// Indices of the matching frames, in order.
    matching: Vec<usize>,
}

impl FrameFilter {
    /// Brings the matches up to date with `log` for `text` (case-insensitive, against the type
    /// and the JSON), `direction` and, with `hide_deltas`, no deltas.
    pub fn refresh(
        &mut self,
        log: &FrameLog,
        text: &str,
        direction: DirectionFilter,
        hide_deltas: bool,
    ) {
        let needle = text.trim().to_lowercase();
        let same_log = self.log.as_ref().is_some_and(|l| l.same_as(log));
        if !same_log
            || needle != self.text
            || direction != self.direction
            || hide_deltas != self.hide_deltas
        {
            *self = FrameFilter {
                log: Some(log.clone()),
                text: needle,
                direction,
                hide_deltas,
                ..FrameFilter::default()
            };
        }
        log.with(|frames| {
            for (index, frame) in frames.iter().enumerate().skip(self.seen) {
                if self.hide_deltas && frame.kind.ends_with(".delta") {
                    continue;
                }
                if self.direction.admits(frame.direction)
                    && (self.text.is_empty()
                        || frame.kind.to_lowercase().contains(&self.text)
                        || frame.json.to_lowercase().contains(&self.text))
                {
                    self.matching.push(index);
                }
            }
            self.seen = frames.len();
        });
    }

    /// How many frames match.
    pub fn matches(&self) -> usize {
        self.matching.len()
    }

    /// The newest `limit` matching frames' indices, oldest first.
    pub fn newest(&self, limit: usize) -> &[usize] {
        &self.matching[self.matching.len().saturating_sub(limit)..]
    }

    /// Every matching frame's index.
    pub fn all(&self) -> &[usize] {
        &self.matching
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(direction: Direction, kind: &'static str, json: &str) -> Frame {
        Frame {
            direction,
            at_ms: 0.0,
            turn: 1,
            kind,
            json: json.into(),
        }
    }

    #[test]
    fn clones_share_one_log() {
        let log = FrameLog::default();
        let copy = log.clone();
        log.push(frame(Direction::Sent, "response.create", "{}"));
        assert_eq!(copy.len(), 1);
        assert!(copy.same_as(&log));
        assert_eq!(copy, log);
        let other = FrameLog::default();
        assert_ne!(other, log);
        other.push(frame(Direction::Sent, "response.create", "{}"));
        assert_eq!(other, log, "equal items, equal logs");
    }

    #[test]
    fn the_filter_matches_type_or_json_and_only_scans_new_frames() {
        let log = FrameLog::default();
        log.push(frame(
            Direction::Sent,
            "response.create",
            r#"{"model":"m"}"#,
        ));
        log.push(frame(
            Direction::Received,
            "response.created",
            r#"{"id":"R"}"#,
        ));
        log.push(frame(
            Direction::Received,
            "response.output_text.delta",
            r#"{"delta":"Hello"}"#,
        ));
        let mut filter = FrameFilter::default();
        filter.refresh(&log, "", DirectionFilter::Both, false);
        assert_eq!(filter.all(), [0, 1, 2]);
        filter.refresh(&log, "CREATE", DirectionFilter::Both, false);
        assert_eq!(filter.all(), [0, 1], "by type, any case");
        filter.refresh(&log, "hello", DirectionFilter::Both, false);
        assert_eq!(filter.all(), [2], "by JSON");
        filter.refresh(
            &log,
            "create",
            DirectionFilter::Only(Direction::Received),
            false,
        );
        assert_eq!(filter.all(), [1]);

        // New frames are added to the matches as they arrive.
        log.push(frame(Direction::Received, "response.completed", "{}"));
        log.push(frame(Direction::Sent, "response.create", "{}"));
        filter.refresh(
            &log,
            "create",
            DirectionFilter::Only(Direction::Received),
            false,
        );
        assert_eq!(filter.all(), [1]);
        filter.refresh(&log, "", DirectionFilter::Both, false);
        assert_eq!(filter.matches(), 5);
        assert_eq!(filter.newest(2), [3, 4]);
        assert_eq!(filter.newest(10), [0, 1, 2, 3, 4]);

        // Without the deltas, the requests and the turn's ends stand out.
        filter.refresh(&log, "", DirectionFilter::Both, true);
        assert_eq!(filter.all(), [0, 1, 3, 4]);

        // Another run's log starts over.
        let next = FrameLog::default();
        filter.refresh(&next, "", DirectionFilter::Both, false);
        assert_eq!(filter.matches(), 0);
    }

    #[test]
    fn json_is_pretty_printed_when_it_parses() {
        let f = frame(Direction::Received, "x", r#"{"a":[1,2]}"#);
        assert_eq!(f.pretty_json(), "{\n  \"a\": [\n    1,\n    2\n  ]\n}");
        assert_eq!(
            frame(Direction::Received, "x", "nope").pretty_json(),
            "nope"
        );
    }
}
