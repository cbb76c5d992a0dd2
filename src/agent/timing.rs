//! The server's own account of a response: the per-stage timing summary (`tether_timing`) it
//! attaches to the terminal event when the client opted in (`x-tether-timing: 1` on an HTTP
//! request, `?tether_timing=1` on the WebSocket upgrade). The playground always opts in and
//! shows it next to what it measured itself. Parsing is tolerant: a summary that is missing or
//! not in the expected shape means "no server timings", never a failed turn.

use serde_json::Value;

use crate::agent::duration::{Precision, format_duration};
use crate::conditions::{Applied, Link};

/// Pipeline stages in the order they run (server/src/timing.rs); stages the playground does not
/// know yet are shown after these.
const STAGE_ORDER: [&str; 8] = [
    "load", "resolve", "render", "validate", "classify", "generate", "persist", "bill",
];

/// The stage that is the model's work rather than the server's overhead.
pub const GENERATE: &str = "generate";

/// The modelled wait in the engine's time (the hop to it); every other one is in the API's.
const ENGINE_HOP: &str = "engine_hop";

/// The engine's part of a response as the API measured it, in milliseconds: `service_*` from
/// the engine call on, `iapi_*` from the API's engine request on (so they include the modelled
/// hop to the engine); `queue` waiting for a decoding slot, `prefill` admission to the first
/// token, `decode` first to last token.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineTimings {
    pub calls: u64,
    pub queue_ms: f64,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub service_total_ms: f64,
    pub service_ttft_ms: f64,
    pub iapi_ttft_ms: f64,
    pub iapi_total_ms: f64,
}

impl EngineTimings {
    /// What the engine's total holds beyond queue, prefill and decode: the hop to the engine
    /// (modelled with `--api-costs hosted`) and the engine call's own edges.
    pub fn other_ms(&self) -> f64 {
        (self.iapi_total_ms - self.queue_ms - self.prefill_ms - self.decode_ms).max(0.0)
    }
}

/// Where a prompt's tokens came from, as the server counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerTokens {
    /// The prompt's length.
    pub input: u64,
    /// Read from the engine's prompt cache (`usage.input_tokens_details.cached_tokens`): the
    /// same rule on every transport; prompts under 1,024 tokens are never cached.
    pub cached: u64,
    /// Written to the engine's prompt cache.
    pub cache_write: u64,
    /// Rendered tokens the WebSocket connection's cache supplied, so the API did not tokenize
    /// them again (always 0 over HTTP).
    pub reused_by_connection: u64,
}

/// What the emulated link did to one response (the summary's `link`): the bytes it carried
/// each way and how much later each end arrived than it would have without it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkTimings {
    /// Bytes of the request read through the link (HTTP: request line, headers and body; a
    /// WebSocket turn: its frame).
    pub up_bytes: u64,
    /// How much later the request's last byte reached the server.
    pub up_ms: f64,
    /// Bytes the response wrote through the link.
    pub down_bytes: u64,
    /// How much later its terminal message reached the page than the server wrote it.
    pub down_ms: f64,
    /// The link's time budget was spent: its bandwidth limit was lifted (the delay stays).
    pub budget_exhausted: bool,
}

/// What each stage of the server's pipeline cost on one response, and how the server splits
/// its time between itself (the API) and the engine. Kept between visits in the summary's own
/// form ([`ServerTimings::to_summary`]), so it needs no decoder of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTimings {
    /// Which way through the pipeline the request went: `http`, `ws_hit` or `ws_miss`.
    pub path: String,
    /// Stage name and milliseconds, in pipeline order.
    pub stages: Vec<(String, f64)>,
    /// Waits on modelled services (`--api-costs hosted`): name and milliseconds.
    pub modelled: Vec<(String, f64)>,
    /// The response's time in the API, from the request reaching the pipeline to its terminal
    /// event, less the engine's (`api_us`).
    pub api_ms: Option<f64>,
    pub engine: Option<EngineTimings>,
    pub tokens: Option<ServerTokens>,
    /// The conditions the server applied (`conditions`).
    pub conditions: Option<Applied>,
    /// What the emulated link did (`link`), when one applied.
    pub link: Option<LinkTimings>,
}

/// `summary[key]` in microseconds, as milliseconds.
fn ms_of(summary: &Value, key: &str) -> Option<f64> {
    Some(summary.get(key)?.as_u64()? as f64 / 1000.0)
}

/// An object of `<name>_us` non-negative integers as (name, milliseconds); `None` unless it is
/// exactly that.
fn micros_map(value: &Value) -> Option<Vec<(String, f64)>> {
    value
        .as_object()?
        .iter()
        .map(|(key, micros)| {
            let name = key.strip_suffix("_us")?;
            Some((name.to_string(), micros.as_u64()? as f64 / 1000.0))
        })
        .collect()
}

impl ServerTimings {
    /// Reads the summary (docs/pipeline.md, "Timing"); `None` unless its core is exactly the
    /// expected shape (a string path, an object of `<stage>_us` non-negative integers). The
    /// newer parts — `api_us`, `engine`, `tokens`, `modelled` — are read when they are there
    /// and well formed, and otherwise left out: an older server's summary still shows.
    pub fn parse(summary: &Value) -> Option<ServerTimings> {
        let path = summary.get("path")?.as_str()?.to_string();
        let mut stages = micros_map(summary.get("stages")?)?;
        let rank = |name: &str| {
            STAGE_ORDER
                .iter()
                .position(|known| *known == name)
                .unwrap_or(STAGE_ORDER.len())
        };
        crate::agent::stats::sort_small(&mut stages, |a, b| rank(&a.0) < rank(&b.0));
        let modelled = summary
            .get("modelled")
            .and_then(micros_map)
            .unwrap_or_default();
        let engine = summary.get("engine").and_then(|engine| {
            Some(EngineTimings {
                calls: engine.get("calls").and_then(Value::as_u64).unwrap_or(1),
                queue_ms: ms_of(engine, "queue_us")?,
                prefill_ms: ms_of(engine, "prefill_us")?,
                decode_ms: ms_of(engine, "decode_us")?,
                service_total_ms: ms_of(engine, "service_total_us")?,
                service_ttft_ms: ms_of(engine, "service_ttft_us")?,
                iapi_ttft_ms: ms_of(engine, "iapi_ttft_us")?,
                iapi_total_ms: ms_of(engine, "iapi_total_us")?,
            })
        });
        let tokens = summary.get("tokens").and_then(|tokens| {
            let count = |key: &str| tokens.get(key).and_then(Value::as_u64);
            Some(ServerTokens {
                input: count("input")?,
                cached: count("cached")?,
                cache_write: count("cache_write").unwrap_or(0),
                reused_by_connection: count("reused_by_connection").unwrap_or(0),
            })
        });
        let conditions = summary.get("conditions").and_then(|c| {
            let mbit = |key: &str| c.get(key).and_then(Value::as_f64).filter(|m| *m > 0.0);
            Some(Applied {
                link: Link {
                    rtt_ms: c.get("rtt_ms")?.as_f64()?,
                    up_mbit: mbit("up_mbit"),
                    down_mbit: mbit("down_mbit"),
                },
                api_costs: c.get("api_costs")?.as_str()?.to_string(),
                chosen_by: c
                    .get("chosen_by")
                    .and_then(Value::as_str)
                    .unwrap_or("server")
                    .to_string(),
                model: c.get("model").and_then(Value::as_str).map(str::to_string),
                tokens_per_second: c.get("tokens_per_second").and_then(Value::as_f64),
            })
        });
        let link = summary.get("link").and_then(|l| {
            Some(LinkTimings {
                up_bytes: l.get("up_bytes")?.as_u64()?,
                up_ms: ms_of(l, "up_us")?,
                down_bytes: l.get("down_bytes")?.as_u64()?,
                down_ms: ms_of(l, "down_us")?,
                budget_exhausted: l
                    .get("budget_exhausted")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            })
        });
        Some(ServerTimings {
            path,
            stages,
            modelled,
            api_ms: ms_of(summary, "api_us"),
            engine,
            tokens,
            conditions,
            link,
        })
    }

    /// The modelled waits (`modelled`), split by where the server spent them: in the API's time
    /// (the classifier, and any other service but the hop) and in the engine's (the hop to it).
    pub fn modelled_split(&self) -> (f64, f64) {
        self.modelled
            .iter()
            .fold((0.0, 0.0), |(api, engine), (name, ms)| {
                match name.as_str() {
                    ENGINE_HOP => (api, engine + ms),
                    _ => (api + ms, engine),
                }
            })
    }

    /// The time the emulated link added to the turn's round trip: the request's way up and the
    /// terminal message's way down. `None` when no link applied.
    pub fn link_ms(&self) -> Option<f64> {
        self.link.map(|l| l.up_ms + l.down_ms)
    }

    /// The summary these timings were read from, in the server's shape: what
    /// [`ServerTimings::parse`] reads back.
    pub fn to_summary(&self) -> Value {
        let us = |ms: f64| (ms * 1000.0).round() as u64;
        let micros = |parts: &[(String, f64)]| {
            Value::Object(
                parts
                    .iter()
                    .map(|(name, ms)| (format!("{name}_us"), Value::from(us(*ms))))
                    .collect(),
            )
        };
        let mut summary = serde_json::json!({
            "path": self.path,
            "stages": micros(&self.stages),
            "modelled": micros(&self.modelled),
        });
        if let Some(api) = self.api_ms {
            summary["api_us"] = us(api).into();
        }
        if let Some(e) = &self.engine {
            summary["engine"] = serde_json::json!({
                "calls": e.calls, "queue_us": us(e.queue_ms), "prefill_us": us(e.prefill_ms),
                "decode_us": us(e.decode_ms), "service_total_us": us(e.service_total_ms),
                "service_ttft_us": us(e.service_ttft_ms), "iapi_ttft_us": us(e.iapi_ttft_ms),
                "iapi_total_us": us(e.iapi_total_ms),
            });
        }
        if let Some(c) = &self.conditions {
            summary["conditions"] = serde_json::json!({
                "rtt_ms": c.link.rtt_ms, "up_mbit": c.link.up_mbit, "down_mbit": c.link.down_mbit,
                "api_costs": c.api_costs, "chosen_by": c.chosen_by, "model": c.model,
                "tokens_per_second": c.tokens_per_second,
            });
        }
        if let Some(l) = &self.link {
            summary["link"] = serde_json::json!({
                "up_bytes": l.up_bytes, "up_us": us(l.up_ms), "down_bytes": l.down_bytes,
                "down_us": us(l.down_ms), "budget_exhausted": l.budget_exhausted,
            });
        }
        if let Some(t) = &self.tokens {
            summary["tokens"] = serde_json::json!({
                "input": t.input, "cached": t.cached, "cache_write": t.cache_write,
                "reused_by_connection": t.reused_by_connection,
            });
        }
        summary
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

    /// The whole response as the server saw it — the API's time plus the engine's — when the
    /// summary says both.
    pub fn server_ms(&self) -> Option<f64> {
        Some(self.api_ms? + self.engine.as_ref()?.iapi_total_ms)
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

    /// The API/engine split in one line: `API 0.42 ms · engine 812 ms (queue 0.00 ms, prefill
    /// 30.2 ms, decode 780 ms)`, each side saying how much of it was a modelled wait (`API 18.4
    /// ms, 17.0 ms of it modelled`): what this machine did and what was assumed stay apart on
    /// every turn, as in the totals. `None` from a server that does not report it.
    pub fn split(&self) -> Option<String> {
        let api = self.api_ms?;
        let engine = self.engine.as_ref()?;
        let d = |ms: f64| format_duration(ms, Precision::BySize);
        let (classify, hop) = self.modelled_split();
        let modelled = |part: f64, of: f64| {
            let part = part.min(of);
            if part > 0.0 {
                format!(", {} of it modelled", d(part))
            } else {
                String::new()
            }
        };
        Some(format!(
            "API {}{} · engine {} (queue {}, prefill {}, decode {}){}",
            d(api),
            modelled(classify, api),
            d(engine.iapi_total_ms),
            d(engine.queue_ms),
            d(engine.prefill_ms),
            d(engine.decode_ms),
            modelled(hop, engine.other_ms()),
        ))
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
    fn the_api_engine_split_and_the_tokens_are_read_when_present() {
        let summary = json!({"path": "ws_hit", "stages": {"render_us": 210, "generate_us": 30_500},
            "modelled": {"engine_hop_us": 1000},
            "api_us": 420,
            "engine": {"calls": 1, "replica": 0, "queue_us": 0, "prefill_us": 30_000,
                       "decode_us": 400, "service_total_us": 30_450, "service_ttft_us": 30_020,
                       "iapi_ttft_us": 31_020, "iapi_total_us": 31_450},
            "tokens": {"input": 2048, "cached": 1920, "cache_write": 128,
                       "reused_by_connection": 1990}});
        let timings = ServerTimings::parse(&summary).unwrap();
        assert_eq!(timings.api_ms, Some(0.42));
        assert_eq!(timings.modelled, [("engine_hop".to_string(), 1.0)]);
        assert_eq!(timings.modelled_split(), (0.0, 1.0));
        let engine = timings.engine.as_ref().unwrap();
        assert_eq!((engine.prefill_ms, engine.decode_ms), (30.0, 0.4));
        assert!((engine.other_ms() - 1.05).abs() < 1e-9);
        assert_eq!(timings.server_ms(), Some(31.87));
        assert_eq!(
            timings.tokens,
            Some(ServerTokens {
                input: 2048,
                cached: 1920,
                cache_write: 128,
                reused_by_connection: 1990
            })
        );
        assert_eq!(
            timings.split().unwrap(),
            "API 0.42 ms · engine 31.4 ms (queue 0.00 ms, prefill 30.0 ms, decode 0.40 ms), \
             1.0 ms of it modelled"
        );
        // Kept in the summary's own shape, read back the same.
        assert_eq!(
            ServerTimings::parse(&timings.to_summary()),
            Some(timings.clone())
        );
        assert_eq!((&timings.conditions, timings.link_ms()), (&None, None));
        // Hosted costs: the classifier's modelled wait is named within the API's time.
        let mut hosted = summary.clone();
        hosted["modelled"] = json!({"classify_us": 17_000, "engine_hop_us": 1000});
        hosted["api_us"] = json!(18_400);
        assert_eq!(
            ServerTimings::parse(&hosted).unwrap().split().unwrap(),
            "API 18.4 ms, 17.0 ms of it modelled · engine 31.4 ms (queue 0.00 ms, prefill 30.0 \
             ms, decode 0.40 ms), 1.0 ms of it modelled"
        );

        // An older server's summary: stages only, nothing else.
        let old =
            ServerTimings::parse(&json!({"path": "http", "stages": {"render_us": 1}})).unwrap();
        assert_eq!((old.api_ms, &old.engine, old.tokens), (None, &None, None));
        assert_eq!((old.server_ms(), old.split()), (None, None));
        // A malformed part is left out; the rest stays.
        let odd = ServerTimings::parse(&json!({"path": "http", "stages": {"render_us": 1},
            "api_us": -3, "engine": {"queue_us": 1}, "tokens": {"input": "many"}}))
        .unwrap();
        assert_eq!((odd.api_ms, &odd.engine, odd.tokens), (None, &None, None));
        assert_eq!(odd.stages, [("render".to_string(), 0.001)]);
    }

    #[test]
    fn the_conditions_and_the_link_are_read_when_present() {
        let summary = json!({"path": "http", "stages": {"render_us": 1}, "api_us": 10,
            "conditions": {"rtt_ms": 40.0, "up_mbit": 20.0, "down_mbit": null,
                           "api_costs": "hosted", "chosen_by": "client", "model": "spark",
                           "tokens_per_second": 1000.0},
            "link": {"up_bytes": 412_345, "up_us": 185_000, "down_bytes": 23_456,
                     "down_us": 20_250, "budget_exhausted": false}});
        let timings = ServerTimings::parse(&summary).unwrap();
        let applied = timings.conditions.as_ref().unwrap();
        assert_eq!(
            applied.describe(),
            "40 ms RTT, 20 Mbit/s up, unlimited down · hosted API costs · spark at 1,000 tokens/s"
        );
        assert_eq!(applied.chosen_by, "client");
        let link = timings.link.unwrap();
        assert_eq!((link.up_bytes, link.down_bytes), (412_345, 23_456));
        assert_eq!(timings.link_ms(), Some(205.25));
        assert!(!link.budget_exhausted);
        assert_eq!(
            ServerTimings::parse(&timings.to_summary()),
            Some(timings.clone())
        );
        // No link: the conditions still say what applied.
        let plain = ServerTimings::parse(&json!({"path": "ws_hit", "stages": {},
            "conditions": {"rtt_ms": 0, "up_mbit": null, "down_mbit": null,
                           "api_costs": "local", "chosen_by": "server", "model": "instant",
                           "tokens_per_second": null}}))
        .unwrap();
        let applied = plain.conditions.unwrap();
        assert!(applied.link.is_loopback());
        assert_eq!(
            applied.describe(),
            "loopback (no delay, no limit) · local API costs · instant, no model time"
        );
        assert_eq!(plain.link, None);
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
