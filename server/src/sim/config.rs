//! Changing the simulator's settings: the configuration file (`--sim-config`) at start and the
//! admin endpoint at run time share one format and one validation.
//!
//! ```json
//! {"aliases": {"gpt-5": "flagship", "gpt-5-codex": "flagship"},
//!  "profiles": {"spark": {"tokens_per_second": 1500, "jitter": 0.02}},
//!  "failure_rates": {"server_error": 0.01}}
//! ```
//!
//! Every given field of a profile or of the failure rates replaces that field. A change is
//! validated whole before any of it applies, so an invalid value changes nothing. `aliases`
//! (model id → profile) are only read from the file at start.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{FailureRates, Profile, Simulator};

/// Model aliases from a configuration file: model id → profile name.
pub type Aliases = BTreeMap<String, String>;

/// Reads a configuration file's aliases (checked against the profile names) and its other
/// settings, which [`Simulator::reconfigure`] then applies.
pub fn parse_file(text: &str, profiles: &[&str]) -> Result<(Aliases, Value), String> {
    let mut value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Some(object) = value.as_object_mut() else {
        return Err("the configuration must be a JSON object".into());
    };
    let aliases: Aliases = match object.remove("aliases") {
        Some(aliases) => serde_json::from_value(aliases)
            .map_err(|e| format!("aliases: {e} (expected model id → profile name)"))?,
        None => Aliases::new(),
    };
    for (alias, target) in &aliases {
        if !profiles.contains(&target.as_str()) {
            return Err(format!("alias {alias}: unknown profile '{target}'"));
        }
    }
    Ok((aliases, value))
}

impl Simulator {
    /// Applies `change` (`profiles` and/or `failure_rates`), all of it or — when any value is
    /// invalid — none of it.
    pub fn reconfigure(&self, change: &Value) -> Result<(), String> {
        let Some(change) = change.as_object() else {
            return Err("the change must be a JSON object".into());
        };
        if let Some(key) = change
            .keys()
            .find(|k| *k != "profiles" && *k != "failure_rates")
        {
            return Err(format!(
                "unknown field '{key}' (expected profiles, failure_rates)"
            ));
        }
        let _serialised = self.reconfiguring.lock();
        let mut profiles = Vec::new();
        if let Some(changes) = change.get("profiles") {
            let Some(changes) = changes.as_object() else {
                return Err("profiles must be an object by model id".into());
            };
            for (name, fields) in changes {
                let Some(entry) = self.profiles().find(|entry| entry.name == *name) else {
                    return Err(format!("unknown profile '{name}'"));
                };
                let profile: Profile = merged(json!(*entry.slot.profile()), fields)
                    .map_err(|e| format!("profiles.{name}: {e}"))?;
                profile
                    .validate()
                    .map_err(|e| format!("profiles.{name}: {e}"))?;
                profiles.push((entry, profile));
            }
        }
        let rates = match change.get("failure_rates") {
            Some(fields) => {
                let rates: FailureRates = merged(json!(self.failure_rates()), fields)
                    .map_err(|e| format!("failure_rates: {e}"))?;
                rates
                    .validate()
                    .map_err(|e| format!("failure_rates: {e}"))?;
                Some(rates)
            }
            None => None,
        };
        for (entry, profile) in profiles {
            entry.replace(profile);
        }
        if let Some(rates) = rates {
            self.set_failure_rates(rates);
        }
        Ok(())
    }

    /// The settings as the admin endpoint shows them.
    pub fn settings(&self) -> Value {
        let profiles: Map<String, Value> = self
            .profiles()
            .map(|entry| (entry.name.clone(), json!(*entry.slot.profile())))
            .collect();
        json!({
            "seed": self.seed(),
            "profiles": profiles,
            "aliases": self.aliases(),
            "failure_rates": self.failure_rates(),
        })
    }
}

/// `current` with the fields of `change` replaced, read back as `T` (unknown fields refused).
fn merged<T: serde::de::DeserializeOwned>(mut current: Value, change: &Value) -> Result<T, String> {
    let (Some(target), Some(fields)) = (current.as_object_mut(), change.as_object()) else {
        return Err("must be an object".into());
    };
    for (key, value) in fields {
        target.insert(key.clone(), value.clone());
    }
    serde_json::from_value(current).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_must_name_profiles() {
        let (aliases, rest) = parse_file(
            r#"{"aliases": {"gpt-5": "flagship"}, "failure_rates": {"server_error": 0.1}}"#,
            &["tether-sim", "flagship"],
        )
        .unwrap();
        assert_eq!(aliases["gpt-5"], "flagship");
        assert_eq!(rest, json!({"failure_rates": {"server_error": 0.1}}));
        assert!(parse_file(r#"{"aliases": {"x": "nope"}}"#, &["flagship"]).is_err());
        assert!(parse_file(r#"[1]"#, &["flagship"]).is_err());
    }
}
