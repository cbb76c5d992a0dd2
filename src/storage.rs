//! The page's memory between visits, in `localStorage`: the settings, the sandbox's files and
//! the last run, each under its own key as versioned JSON. Reading never fails the page: a value
//! that cannot be used is reported and the defaults are used instead.
//!
//! The settings are read when the page loads. The files and the last run are only read when the
//! agent view first opens ([`Kept::read`]): only it uses them, and decoding them takes code —
//! the sandbox's file system, every part of a run's record — that then stays in the agent
//! view's module instead of weighing on the page's first load.

use tether_sandbox::Vfs;

use crate::agent::LastRun;
use crate::settings::{Inputs, Settings, UrlParams, UrlProfile};

pub const SETTINGS_KEY: &str = "tether.settings";
pub const FILES_KEY: &str = "tether.files";
pub const LAST_RUN_KEY: &str = "tether.last-run";
/// Where a run was when the page went away while it ran (plain text): the next load says so,
/// and `autorun=1` does not start another run over it.
pub const INTERRUPTED_KEY: &str = "tether.interrupted";

/// What the page starts from: stored state with the URL's parameters applied, and what went
/// wrong on the way (shown to the user).
#[derive(Debug, Clone, Default)]
pub struct Restored {
    pub settings: Settings,
    pub params: UrlParams,
    /// The last run and the files, as stored: read when the agent view opens.
    pub kept: Kept,
    pub notices: Vec<String>,
    /// The URL's values that did not parse: errors at their fields, and no run starts.
    pub inputs: Inputs,
    /// The profile the URL asked for, to check once the server's model list is known.
    pub url_profile: Option<UrlProfile>,
    /// Where the last run was when a reload (or leaving the page) cut it off.
    pub interrupted: Option<String>,
}

/// The last run and the files as `localStorage` holds them, not read yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    pub last_run: Option<String>,
    pub files: Option<String>,
}

/// The last run and the files, read; what was not usable is dropped and said.
#[derive(Debug, Clone, Default)]
pub struct KeptRuns {
    pub last_run: Option<LastRun>,
    pub files: Option<Vfs>,
    pub notices: Vec<String>,
}

impl Kept {
    /// Reads what was kept.
    pub fn read(&self) -> KeptRuns {
        let mut notices = Vec::new();
        let last_run = self
            .last_run
            .as_deref()
            .and_then(|json| match LastRun::from_json(json) {
                Ok(run) => Some(run),
                Err(why) => {
                    notices.push(format!(
                        "The stored last run was not usable ({why}); dropped."
                    ));
                    None
                }
            });
        let files = self
            .files
            .as_deref()
            .and_then(|json| match Vfs::from_json(json) {
                Ok(vfs) => Some(vfs),
                Err(why) => {
                    notices.push(format!(
                        "The stored files were not usable ({why}); using the sample project."
                    ));
                    None
                }
            });
        KeptRuns {
            last_run,
            files,
            notices,
        }
    }
}

impl Restored {
    /// Combines the stored values (`None`: nothing stored) and `location.search`.
    pub fn from_parts(
        settings: Option<&str>,
        last_run: Option<&str>,
        files: Option<&str>,
        search: &str,
    ) -> Restored {
        let mut notices = Vec::new();
        let mut stored_settings = Settings::default();
        if let Some(json) = settings {
            match Settings::from_json(json) {
                Ok(found) => stored_settings = found,
                Err(why) => notices.push(format!(
                    "The stored settings were not usable ({why}); using the defaults."
                )),
            }
        }
        let params = UrlParams::parse(search);
        let (inputs, url_profile) = stored_settings.apply_url(&params);
        Restored {
            settings: stored_settings,
            params,
            kept: Kept {
                last_run: last_run.map(str::to_string),
                files: files.map(str::to_string),
            },
            notices,
            inputs,
            url_profile,
            interrupted: None,
        }
    }

    /// Reads `localStorage` and the page's URL.
    pub fn load() -> Restored {
        let search = web_sys::window()
            .and_then(|w| w.location().search().ok())
            .unwrap_or_default();
        let mut restored = Restored::from_parts(
            load(SETTINGS_KEY).as_deref(),
            load(LAST_RUN_KEY).as_deref(),
            load(FILES_KEY).as_deref(),
            &search,
        );
        if storage().is_none() {
            restored
                .notices
                .push("localStorage is not available: nothing is kept between visits.".into());
        }
        restored.interrupted = load(INTERRUPTED_KEY);
        restored
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The value under `key`, if any.
pub fn load(key: &str) -> Option<String> {
    storage()?.get_item(key).ok()?
}

/// Stores `value` under `key`; the error says why it could not (quota, storage off).
pub fn save(key: &str, value: &str) -> Result<(), String> {
    let storage = storage().ok_or("localStorage is not available")?;
    storage
        .set_item(key, value)
        .map_err(|e| format!("cannot store {key}: {e:?}"))
}

/// Forgets what is under `key`.
pub fn remove(key: &str) {
    if let Some(storage) = storage() {
        // Removing a key that cannot be removed leaves nothing better to do.
        let _ = storage.remove_item(key);
    }
}

/// Forgets everything the page stored.
pub fn clear() {
    if let Some(storage) = storage() {
        for key in [SETTINGS_KEY, FILES_KEY, LAST_RUN_KEY, INTERRUPTED_KEY] {
            // Removing a key that cannot be removed leaves nothing better to do.
            let _ = storage.remove_item(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AgentRun, RunSnapshot};
    use crate::settings::TransportChoice;
    use tether_sandbox::sample_project;

    #[test]
    fn nothing_stored_gives_the_defaults() {
        let restored = Restored::from_parts(None, None, None, "");
        assert_eq!(restored.settings, Settings::default());
        let kept = restored.kept.read();
        assert!(kept.last_run.is_none() && kept.files.is_none());
        assert!(restored.notices.is_empty() && kept.notices.is_empty());
    }

    #[test]
    fn stored_values_come_back_and_the_url_wins_for_this_load() {
        let stored = Settings {
            profile: "flagship".into(),
            transport: TransportChoice::HttpChained,
            ..Settings::default()
        };
        let run = LastRun::Single {
            run: RunSnapshot::of(&AgentRun::default()),
        };
        let files = sample_project().to_json();
        let restored = Restored::from_parts(
            Some(&stored.to_json()),
            Some(&run.to_json()),
            Some(&files),
            "?profile=spark&embed=1",
        );
        assert_eq!(restored.settings.profile, "spark");
        assert_eq!(
            restored
                .url_profile
                .as_ref()
                .map(|p| (p.asked.as_str(), p.kept.as_str())),
            Some(("spark", "flagship"))
        );
        assert_eq!(restored.settings.transport, TransportChoice::HttpChained);
        assert!(restored.params.embed);
        let kept = restored.kept.read();
        assert_eq!(kept.last_run, Some(run));
        assert_eq!(kept.files.unwrap().to_json(), files);
        assert!(restored.notices.is_empty() && kept.notices.is_empty());
        assert!(restored.inputs.runnable(&restored.settings));
    }

    #[test]
    fn corrupt_storage_falls_back_to_defaults_and_says_so() {
        let restored = Restored::from_parts(
            Some("{\"version\":1,\"max_turns\":\"many\"}"),
            Some("garbage"),
            Some("{\"files\":3}"),
            "transport=nope",
        );
        assert_eq!(restored.settings, Settings::default());
        assert_eq!(restored.notices.len(), 1, "{:?}", restored.notices);
        assert!(restored.notices[0].contains("stored settings"));
        // A URL value that does not parse is an error at its field, not a notice.
        let error = restored.inputs.error(crate::settings::Field::Transport);
        assert_eq!(error.map(|e| e.given.as_str()), Some("nope"));
        // The runs are read when the agent view opens.
        let kept = restored.kept.read();
        assert!(kept.last_run.is_none() && kept.files.is_none());
        assert_eq!(kept.notices.len(), 2, "{:?}", kept.notices);
        assert!(kept.notices[0].contains("last run"));
        assert!(kept.notices[1].contains("files"));
    }
}
