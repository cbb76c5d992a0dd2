//! The settings in `localStorage`: versioned JSON, a missing field taking its default. A value
//! that cannot be used is refused with the reason, and the caller falls back to the defaults.
//! The last run uses the same envelope ([`to_stored_json`], [`from_stored_json`]).

use serde::{Deserialize, Serialize};

use super::{MAX_TURNS, Settings};
use crate::agent::REPETITIONS;

/// The storage format of [`Settings`]; a stored value of another version is not read.
pub const SETTINGS_VERSION: u32 = 1;

/// The stored form: the value and its format version.
#[derive(Serialize)]
struct Stored<T> {
    version: u32,
    #[serde(flatten)]
    value: T,
}

/// Serializes `value` with its format `version`.
pub fn to_stored_json<T: Serialize>(version: u32, value: &T) -> String {
    serde_json::to_string(&Stored { version, value }).expect("stored values always serialize")
}

/// Reads what [`to_stored_json`] wrote; an error says why the value cannot be used. The value is
/// read from the text itself, its `version` one more field it does not know: the envelope's
/// `flatten` would make serde buffer the whole value first, kilobytes of the page's first load.
pub fn from_stored_json<T: serde::de::DeserializeOwned>(
    version: u32,
    json: &str,
) -> Result<T, String> {
    #[derive(Deserialize)]
    struct Version {
        version: Option<u32>,
    }
    let found = serde_json::from_str::<Version>(json)
        .map_err(|e| format!("not valid JSON ({e})"))?
        .version;
    if found != Some(version) {
        let found = found.map_or_else(|| "none".to_string(), |v| v.to_string());
        return Err(format!(
            "an old or unknown format (version {found}, expected {version})"
        ));
    }
    serde_json::from_str::<T>(json).map_err(|e| format!("unreadable ({e})"))
}

impl Settings {
    pub fn to_json(&self) -> String {
        to_stored_json(SETTINGS_VERSION, self)
    }

    /// Settings from storage; `Err` names the problem (the caller falls back to defaults).
    pub fn from_json(json: &str) -> Result<Settings, String> {
        let mut settings: Settings = from_stored_json(SETTINGS_VERSION, json)?;
        settings.max_turns = settings
            .max_turns
            .clamp(*MAX_TURNS.start(), *MAX_TURNS.end());
        settings.repetitions = settings
            .repetitions
            .clamp(*REPETITIONS.start(), *REPETITIONS.end());
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::{ApiCosts, Link, LinkPreset};
    use crate::settings::{TaskLength, TransportChoice};

    #[test]
    fn settings_round_trip_through_storage() {
        let settings = Settings {
            server_url: "http://127.0.0.1:9000".into(),
            api_key: "k1".into(),
            profile: "spark".into(),
            scenario: String::new(),
            transport: TransportChoice::Compare,
            max_turns: 9,
            task: "do it".into(),
            keep_files: true,
            repetitions: 5,
            compare_long_running: true,
            link: LinkPreset::Custom,
            custom_link: Link {
                rtt_ms: 25.0,
                up_mbit: Some(8.0),
                down_mbit: None,
            },
            api_costs: ApiCosts::Hosted,
            task_length: TaskLength::Short,
        };
        let json = settings.to_json();
        assert!(json.contains("\"version\":1"), "{json}");
        assert!(json.contains("\"transport\":\"compare\""), "{json}");
        assert_eq!(Settings::from_json(&json), Ok(settings));
    }

    #[test]
    fn corrupt_or_old_storage_is_refused_with_a_reason() {
        let not_json = Settings::from_json("{not json").unwrap_err();
        assert!(not_json.contains("not valid JSON"), "{not_json}");
        let old = Settings::from_json(r#"{"transport":"ws"}"#).unwrap_err();
        assert!(old.contains("version none"), "{old}");
        let future = Settings::from_json(r#"{"version":2}"#).unwrap_err();
        assert!(future.contains("version 2"), "{future}");
        let bad = Settings::from_json(r#"{"version":1,"transport":"smoke"}"#).unwrap_err();
        assert!(bad.contains("unreadable"), "{bad}");
        // Missing fields take their defaults; out-of-range values are clamped.
        let partial = Settings::from_json(r#"{"version":1,"profile":"burst","max_turns":0}"#);
        assert_eq!(
            partial,
            Ok(Settings {
                profile: "burst".into(),
                max_turns: 1,
                ..Settings::default()
            })
        );
    }
}
