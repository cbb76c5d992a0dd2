//! Recorded engine exchanges (`--record DIR`, `--engine replay:DIR`): one JSONL file an
//! exchange, named by the hash of its normalised request, written so that a re-recorded session
//! diffs line by line against the last one.
//!
//! ```text
//! {"fixture":"tether-engine-exchange","version":1,"dialect":"chat","key":"…","request":{…}}
//! {"message":{…}}                       one line per messages[] (chat) or input[] ("item") entry
//! {"at_ms":1.9,"status":200}            the upstream's status, milliseconds after the request
//! {"at_ms":4.2,"data":{…}}              each SSE message's data (and "event" when it had one)
//! {"at_ms":9.8,"data":"[DONE]"}
//! {"at_ms":9.9,"end":"done"}            or "cut" (with "reason"), or after an error status,
//!                                       {"at_ms":…,"status":429,"retry_after_ms":…,"body":"…"}
//!                                       then {"end":"error"}
//! ```
//!
//! The request is normalised before it is hashed or written: keys sorted, and the tool call ids
//! an upstream minted (or Tether did, when it gave none) renumbered `call_1`, `call_2`, … in
//! order of appearance, so a replayed session that sends back the ids of its replayed calls
//! matches what was recorded. A fixture `KEY.jsonl` is the first exchange with that request,
//! `KEY.2.jsonl` the second, and so on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::spec::Dialect;

const FORMAT: &str = "tether-engine-exchange";
const VERSION: u64 = 1;

/// The request's conversation field and its lines' key, by dialect.
fn conversation_keys(dialect: Dialect) -> (&'static str, &'static str) {
    match dialect {
        Dialect::Chat => ("messages", "message"),
        Dialect::Responses => ("input", "item"),
    }
}

/// `body` normalised: call ids renumbered in order of appearance, keys sorted.
pub fn normalise(dialect: Dialect, body: &Value) -> Value {
    let mut body = sorted(body);
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut renumber = |value: &mut Value| {
        if let Value::String(id) = value {
            let next = format!("call_{}", ids.len() + 1);
            *id = ids.entry(id.clone()).or_insert(next).clone();
        }
    };
    let (field, _) = conversation_keys(dialect);
    if let Some(Value::Array(entries)) = body.get_mut(field) {
        for entry in entries {
            match dialect {
                Dialect::Chat => {
                    if let Some(Value::Array(calls)) = entry.get_mut("tool_calls") {
                        for call in calls {
                            if let Some(id) = call.get_mut("id") {
                                renumber(id);
                            }
                        }
                    }
                    if let Some(id) = entry.get_mut("tool_call_id") {
                        renumber(id);
                    }
                }
                Dialect::Responses => {
                    if let Some(id) = entry.get_mut("call_id") {
                        renumber(id);
                    }
                }
            }
        }
    }
    body
}

/// `value` with every object's keys in order (serde_json's maps are sorted already unless its
/// `preserve_order` feature is on; this does not depend on it).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                out.insert(key.clone(), sorted(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The key of a normalised request: 16 hex digits of its SHA-256.
pub fn key(normalised: &Value) -> String {
    let digest = Sha256::digest(normalised.to_string().as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// One recorded SSE message.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub at: Duration,
    pub event: Option<String>,
    pub data: String,
}

/// How a recorded exchange ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Done,
    Cut(String),
    /// The upstream answered an error status.
    Error {
        status: u16,
        retry_after: Option<Duration>,
        body: String,
    },
}

/// One recorded exchange.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub file: PathBuf,
    pub dialect: Dialect,
    pub key: String,
    /// The normalised request.
    pub request: Value,
    /// When the upstream's status arrived.
    pub answered_at: Duration,
    pub chunks: Vec<Chunk>,
    pub ending: Ending,
}

fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

/// Writes the exchanges of a run to a directory.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    /// Exchanges recorded by key in this run.
    seen: Mutex<HashMap<String, usize>>,
}

impl Recorder {
    /// A recorder writing to `dir` (created if missing).
    pub fn new(dir: &Path) -> Result<Self, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("--record {}: cannot create it: {e}", dir.display()))?;
        Ok(Recorder {
            dir: dir.to_path_buf(),
            seen: Mutex::new(HashMap::new()),
        })
    }

    /// Starts recording the exchange of `request` (its normalised body), sent now.
    pub fn start(self: &Arc<Self>, dialect: Dialect, request: Value) -> Recording {
        Recording {
            recorder: self.clone(),
            dialect,
            key: key(&request),
            request,
            started: Instant::now(),
            lines: Vec::new(),
        }
    }

    fn file_for(&self, key: &str) -> PathBuf {
        let mut seen = self.seen.lock();
        let count = seen.entry(key.to_string()).or_insert(0);
        *count += 1;
        match *count {
            1 => self.dir.join(format!("{key}.jsonl")),
            n => self.dir.join(format!("{key}.{n}.jsonl")),
        }
    }
}

/// An exchange being recorded.
pub struct Recording {
    recorder: Arc<Recorder>,
    dialect: Dialect,
    key: String,
    request: Value,
    started: Instant,
    lines: Vec<Value>,
}

impl Recording {
    fn at(&self) -> f64 {
        millis(self.started.elapsed())
    }

    /// The upstream answered 2xx.
    pub fn answered(&mut self, status: u16) {
        let at = self.at();
        self.lines.push(json!({"at_ms": at, "status": status}));
    }

    /// One SSE message.
    pub fn chunk(&mut self, event: Option<&str>, data: &str) {
        let at = self.at();
        let data = serde_json::from_str::<Value>(data)
            .ok()
            .filter(|v| v.is_object() || v.is_array())
            .unwrap_or_else(|| Value::String(data.to_string()));
        let mut line = json!({"at_ms": at, "data": data});
        if let Some(event) = event {
            line["event"] = event.into();
        }
        self.lines.push(line);
    }

    /// The upstream answered an error status; the exchange is written (by the task returned).
    pub fn error(
        mut self,
        status: u16,
        retry_after: Option<Duration>,
        body: &str,
    ) -> tokio::task::JoinHandle<()> {
        let at = self.at();
        let mut line = json!({"at_ms": at, "status": status, "body": body});
        if let Some(wait) = retry_after {
            line["retry_after_ms"] = millis(wait).into();
        }
        self.lines.push(line);
        self.finish("error", None)
    }

    /// The stream is over (`done`) or was cut (`cut`, with why); the exchange is written (by
    /// the task returned).
    pub fn finish(mut self, end: &str, reason: Option<&str>) -> tokio::task::JoinHandle<()> {
        let at = self.at();
        let mut line = json!({"at_ms": at, "end": end});
        if let Some(reason) = reason {
            line["reason"] = reason.into();
        }
        self.lines.push(line);
        let (field, line_key) = conversation_keys(self.dialect);
        let mut request = self.request;
        let entries = match request.as_object_mut().and_then(|r| r.remove(field)) {
            Some(Value::Array(entries)) => entries,
            _ => Vec::new(),
        };
        let mut text = json!({
            "fixture": FORMAT, "version": VERSION, "dialect": self.dialect.name(),
            "key": self.key, "request": request,
        })
        .to_string();
        text.push('\n');
        for entry in entries {
            text.push_str(&json!({ line_key: entry }).to_string());
            text.push('\n');
        }
        for line in &self.lines {
            text.push_str(&line.to_string());
            text.push('\n');
        }
        let path = self.recorder.file_for(&self.key);
        tokio::task::spawn_blocking(move || {
            let temporary = path.with_extension("jsonl.partial");
            let written =
                std::fs::write(&temporary, text).and_then(|()| std::fs::rename(&temporary, &path));
            if let Err(error) = written {
                tracing::warn!("cannot write the fixture {}: {error}", path.display());
            }
        })
    }
}

/// Every fixture of `dir`, in file-name order.
pub fn load_dir(dir: &Path) -> Result<Vec<Fixture>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("replay:{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!(
            "replay:{}: no fixtures (*.jsonl) in it — record some with --record {}",
            dir.display(),
            dir.display()
        ));
    }
    paths.iter().map(|p| load(p)).collect()
}

/// One fixture file.
pub fn load(path: &Path) -> Result<Fixture, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = |line: usize, what: &str| format!("{}:{line}: {what}", path.display());
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next().ok_or_else(|| bad(1, "empty fixture"))?;
    let header: Value = serde_json::from_str(first).map_err(|e| bad(1, &e.to_string()))?;
    if header.get("fixture").and_then(Value::as_str) != Some(FORMAT) {
        return Err(bad(
            1,
            &format!("not a Tether fixture (\"fixture\": \"{FORMAT}\")"),
        ));
    }
    if header.get("version").and_then(Value::as_u64) != Some(VERSION) {
        return Err(bad(1, &format!("only version {VERSION} is read")));
    }
    let dialect = header
        .get("dialect")
        .and_then(Value::as_str)
        .and_then(Dialect::parse)
        .ok_or_else(|| bad(1, "\"dialect\" must be \"chat\" or \"responses\""))?;
    let (field, line_key) = conversation_keys(dialect);
    let mut request = header
        .get("request")
        .filter(|r| r.is_object())
        .cloned()
        .ok_or_else(|| bad(1, "no \"request\" object"))?;
    let mut entries = Vec::new();
    let mut answered_at = Duration::ZERO;
    let mut chunks = Vec::new();
    let mut ending = None;
    for (index, line) in lines {
        let number = index + 1;
        let value: Value = serde_json::from_str(line).map_err(|e| bad(number, &e.to_string()))?;
        let at = Duration::from_secs_f64(
            value
                .get("at_ms")
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
                .max(0.0)
                / 1e3,
        );
        if let Some(entry) = value.get(line_key) {
            entries.push(entry.clone());
        } else if let Some(end) = value.get("end").and_then(Value::as_str) {
            ending = Some(match (end, ending.take()) {
                ("error", Some(error @ Ending::Error { .. })) => error,
                ("done", None) => Ending::Done,
                ("cut", None) => Ending::Cut(
                    value
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("cut")
                        .to_string(),
                ),
                _ => return Err(bad(number, &format!("an \"end\": \"{end}\" out of place"))),
            });
        } else if let Some(status) = value.get("status").and_then(Value::as_u64) {
            let status = status as u16;
            if (200..300).contains(&status) {
                answered_at = at;
            } else {
                ending = Some(Ending::Error {
                    status,
                    retry_after: value
                        .get("retry_after_ms")
                        .and_then(Value::as_f64)
                        .map(|ms| Duration::from_secs_f64(ms.max(0.0) / 1e3)),
                    body: value
                        .get("body")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                });
            }
        } else if let Some(data) = value.get("data") {
            chunks.push(Chunk {
                at,
                event: value
                    .get("event")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                data: match data {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
            });
        } else {
            return Err(bad(
                number,
                "a line that is no message, status, data or end",
            ));
        }
    }
    let ending = ending.ok_or_else(|| bad(text.lines().count(), "no \"end\" line"))?;
    request[field] = Value::Array(entries);
    let request = sorted(&request);
    let key = key(&request);
    Ok(Fixture {
        file: path.to_path_buf(),
        dialect,
        key,
        request,
        answered_at,
        chunks,
        ending,
    })
}

/// Where `recorded` and `sent` first differ: the path and both values, shortened.
pub fn first_difference(recorded: &Value, sent: &Value) -> Option<(String, String, String)> {
    fn walk(a: &Value, b: &Value, path: &mut String) -> Option<(String, String, String)> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                for key in keys {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                    let found = match (x.get(key), y.get(key)) {
                        (Some(a), Some(b)) => walk(a, b, path),
                        (a, b) => Some((path.clone(), show(a), show(b))),
                    };
                    if found.is_some() {
                        return found;
                    }
                    path.truncate(len);
                }
                None
            }
            (Value::Array(x), Value::Array(y)) => {
                for index in 0..x.len().max(y.len()) {
                    let len = path.len();
                    path.push_str(&format!("[{index}]"));
                    let found = match (x.get(index), y.get(index)) {
                        (Some(a), Some(b)) => walk(a, b, path),
                        (a, b) => Some((path.clone(), show(a), show(b))),
                    };
                    if found.is_some() {
                        return found;
                    }
                    path.truncate(len);
                }
                None
            }
            (a, b) if a == b => None,
            (a, b) => Some((path.clone(), show(Some(a)), show(Some(b)))),
        }
    }
    fn show(value: Option<&Value>) -> String {
        match value {
            None => "nothing".into(),
            Some(value) => {
                let text = value.to_string();
                if text.chars().count() > 80 {
                    format!("{}…", text.chars().take(80).collect::<String>())
                } else {
                    text
                }
            }
        }
    }
    walk(recorded, sent, &mut String::new())
}

/// How many leading conversation entries `a` and `b` share: the closest recording shares most.
pub fn shared_prefix(dialect: Dialect, a: &Value, b: &Value) -> usize {
    let (field, _) = conversation_keys(dialect);
    let entries = |v: &Value| {
        v.get(field)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    entries(a)
        .iter()
        .zip(entries(b).iter())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_renumbered_and_keys_sorted() {
        let body = json!({
            "model": "m",
            "messages": [
                {"role": "assistant", "tool_calls": [{"id": "call_xyz", "type": "function"}, {"id": "call_abc"}]},
                {"role": "tool", "tool_call_id": "call_abc", "content": "b"},
                {"role": "tool", "tool_call_id": "call_xyz", "content": "a"}
            ]
        });
        let normalised = normalise(Dialect::Chat, &body);
        assert_eq!(normalised["messages"][0]["tool_calls"][0]["id"], "call_1");
        assert_eq!(normalised["messages"][1]["tool_call_id"], "call_2");
        assert_eq!(normalised["messages"][2]["tool_call_id"], "call_1");
        let other = json!({"messages": normalised["messages"], "model": "m"});
        assert_eq!(key(&normalised), key(&normalise(Dialect::Chat, &other)));
        assert_eq!(key(&normalised).len(), 16);
    }

    #[test]
    fn differences_name_their_path() {
        let a = json!({"messages": [{"content": "hi"}, {"content": "ls"}], "model": "m"});
        let b = json!({"messages": [{"content": "hi"}, {"content": "pwd"}], "model": "m"});
        assert_eq!(
            first_difference(&a, &b),
            Some((
                "messages[1].content".into(),
                "\"ls\"".into(),
                "\"pwd\"".into()
            ))
        );
        let c = json!({"messages": [{"content": "hi"}], "model": "m"});
        assert_eq!(first_difference(&a, &c).unwrap().0, "messages[1]");
        assert_eq!(shared_prefix(Dialect::Chat, &a, &b), 1);
        assert_eq!(first_difference(&a, &a), None);
    }

    #[tokio::test]
    async fn a_recording_reads_back_as_it_was() {
        let dir = std::env::temp_dir().join(format!("tether-fixture-{}", rand::random::<u64>()));
        let recorder = Arc::new(Recorder::new(&dir).unwrap());
        let request = normalise(
            Dialect::Chat,
            &json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
        );
        let mut recording = recorder.start(Dialect::Chat, request.clone());
        recording.answered(200);
        recording.chunk(None, r#"{"choices":[{"delta":{"content":"Hello"}}]}"#);
        recording.chunk(None, "[DONE]");
        recording.finish("done", None).await.unwrap();
        let again = recorder.start(Dialect::Chat, request.clone());
        again
            .error(429, Some(Duration::from_secs(2)), "slow down")
            .await
            .unwrap();
        let first = dir.join(format!("{}.jsonl", key(&request)));
        let second = dir.join(format!("{}.2.jsonl", key(&request)));
        let text = std::fs::read_to_string(&first).unwrap();
        assert_eq!(text.lines().count(), 6, "{text}");
        assert!(text.lines().nth(1).unwrap().starts_with(r#"{"message":"#));
        let fixture = load(&first).unwrap();
        assert_eq!(fixture.key, key(&request));
        assert_eq!(fixture.request, request);
        assert_eq!(fixture.chunks.len(), 2);
        assert_eq!(fixture.chunks[1].data, "[DONE]");
        assert_eq!(fixture.ending, Ending::Done);
        let error = load(&second).unwrap();
        assert_eq!(
            error.ending,
            Ending::Error {
                status: 429,
                retry_after: Some(Duration::from_secs(2)),
                body: "slow down".into()
            }
        );
        assert_eq!(load_dir(&dir).unwrap().len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
