//! The server's own account of a response: the per-stage timing summary (`tether_timing`) it
//! attaches to the terminal event when the client opted in (`x-tether-timing: 1` on an HTTP
//! request, `?tether_timing=1` on the WebSocket upgrade). The playground always opts in and
//! shows it next to what it measured itself. Parsing is tolerant: a summary that is missing or
//! not in the expected shape means "no server timings", never a failed turn.

use serde_json::Value;

use crate::agent::duration::{Precision, format_duration};

/// Pipeline stages in the order they run (server/src/timing.rs); stages the playground does not
/// know yet are shown after these.
const STAGE_ORDER: [&str; 8] = [
    "load", "resolve", "render", "validate", "classify", "generate", "persist", "bill",
];

/// The stage that is the model's work rather than the server's overhead.
pub const GENERATE: &str = "generate";

/// What each stage of the server's pipeline cost on one response.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTimings {
    /// Which way through the pipeline the request went: `http`, `ws_hit` or `ws_miss`.
    pub path: String,
    /// Stage name and milliseconds, in pipeline order.
    pub stages: Vec<(String, f64)>,
}

impl ServerTimings {
    /// Reads `{"path": "...", "stages": {"render_us": 210, ...}}`; `None` unless it is exactly
    /// that shape (a string path, an object of `<stage>_us` non-negative integers).
    pub fn parse(summary: &Value) -> Option<ServerTimings> {
        let path = summary.get("path")?.as_str()?.to_string();
        let mut stages = summary
            .get("stages")?
            .as_object()?
            .iter()
            .map(|(key, micros)| {
                let name = key.strip_suffix("_us")?;
                Some((name.to_string(), micros.as_u64()? as f64 / 1000.0))
            })
            .collect::<Option<Vec<_>>>()?;
        let rank = |name: &str| {
            STAGE_ORDER
                .iter()
                .position(|known| *known == name)
                .unwrap_or(STAGE_ORDER.len())
        };
        stages.sort_by_key(|(name, _)| rank(name));
        Some(ServerTimings { path, stages })
    }

    /// The stages other than generation: the server's own overhead on this request.
    pub fn overhead(&self) -> impl Iterator<Item = (&str, f64)> {
        self.stages
            .iter()
            .filter(|(name, _)| name != GENERATE)
            .map(|(name, ms)| (name.as_str(), *ms))
    }

    /// The total of [`ServerTimings::overhead`], in milliseconds.
    pub fn overhead_ms(&self) -> f64 {
        self.overhead().map(|(_, ms)| ms).sum()
    }

    /// One line: `resolve 0.01 ms · render 0.21 ms · … · path ws_hit`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = self
            .stages
            .iter()
            .map(|(name, ms)| format!("{name} {}", format_duration(*ms, Precision::BySize)))
            .collect();
        parts.push(format!("path {}", self.path));
        parts.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_summary_parses_into_stages_in_pipeline_order() {
        let summary = json!({"path": "ws_hit", "stages": {
            "classify_us": 20, "generate_us": 812_000, "render_us": 210, "resolve_us": 8,
            "validate_us": 1500, "zz_new_us": 1
        }});
        let timings = ServerTimings::parse(&summary).unwrap();
        assert_eq!(timings.path, "ws_hit");
        let names: Vec<_> = timings.stages.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "resolve", "render", "validate", "classify", "generate", "zz_new"
            ]
        );
        assert_eq!(
            timings.summary(),
            "resolve 0.01 ms · render 0.21 ms · validate 1.5 ms · classify 0.02 ms · \
             generate 812 ms · zz_new 0.00 ms · path ws_hit"
        );
        assert!((timings.overhead_ms() - 1.739).abs() < 1e-9);
        assert!(timings.overhead().all(|(name, _)| name != GENERATE));
    }

    #[test]
    fn anything_else_is_no_timings() {
        for malformed in [
            json!(null),
            json!("ws_hit"),
            json!({"stages": {"render_us": 1}}),
            json!({"path": 3, "stages": {"render_us": 1}}),
            json!({"path": "http"}),
            json!({"path": "http", "stages": [1, 2]}),
            json!({"path": "http", "stages": {"render": 1}}),
            json!({"path": "http", "stages": {"render_us": -1}}),
            json!({"path": "http", "stages": {"render_us": "1"}}),
        ] {
            assert_eq!(ServerTimings::parse(&malformed), None, "{malformed}");
        }
    }
}
