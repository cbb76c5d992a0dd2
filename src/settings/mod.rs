//! The playground's settings: which server, with which key, which model profile and scenario,
//! over which transport, under which conditions. Plain Rust, tested natively; the browser parts
//! (localStorage, the page's URL, the form) only hand strings in and out.
//!
//! Where a setting comes from, last wins: the defaults ([`Settings::default`], the one source
//! the overview and the Agent tab both start from), then what `localStorage` kept from the last
//! visit ([`stored`]), then the page's URL parameters ([`url`]: for that page load only; an
//! embedded demo says what it shows in its URL). Every typed or linked value is parsed by its
//! field ([`fields`]); one that does not parse is an error at the field, and no run starts.

mod choices;
pub mod fields;
mod stored;
mod url;

use serde::{Deserialize, Serialize};

pub use choices::{TaskLength, TransportChoice};
pub use fields::{Field, InputError, Inputs};
pub use stored::{SETTINGS_VERSION, from_stored_json, to_stored_json};
pub use url::{UrlParams, UrlProfile, decode_component, encode_component};

use crate::agent::DEFAULT_REPETITIONS;
use crate::conditions::{ApiCosts, Conditions, Link, LinkPreset};

/// The task the agent view starts with.
pub const DEFAULT_TASK: &str =
    "The pagination tests in the sample project fail. Find the bug, fix it, and run the tests.";
/// The scenario the short task starts with: it fixes the sample project and runs its tests.
pub const DEFAULT_SCENARIO: &str = "fix-sample-project";
/// The model profile the page starts with: a fast model (1,000 tokens/s), as an agent like
/// Codex meets against a hosted API.
pub const DEFAULT_PROFILE: &str = "spark";
/// The scenarios the server ships (`server/scenarios/`); the field also takes any other name a
/// server loads with `--scenario-dir`, and empty for the echo generator.
pub const KNOWN_SCENARIOS: [&str; 1] = [DEFAULT_SCENARIO];

/// The scenario of `settings` checked against the ones the server plays (`known`, from its
/// model list): a name it does not play is an error at the field, said of the URL when the URL
/// gave it (`from_url`). Empty (the echo generator) is always one.
pub fn unknown_scenario(
    settings: &Settings,
    known: &[String],
    from_url: bool,
) -> Option<InputError> {
    let name = settings.scenario.trim();
    if name.is_empty() || known.iter().any(|k| k == name) {
        return None;
    }
    let error = InputError::taking(
        Field::Scenario,
        name,
        format!(
            "one this server plays ({}), or empty for the echo generator",
            known.join(", ")
        ),
    );
    Some(if from_url { error.in_url() } else { error })
}

/// The short task given the long task's scenario, which reads a file the short task's project
/// does not have ([`tether_sandbox::CI_LOG_PATH`]) over more turns than its limit: an error at
/// the field, not a run whose every read fails while the scripted model reports on them.
pub fn long_scenario_in_short_task(settings: &Settings, from_url: bool) -> Option<InputError> {
    let name = settings.scenario.trim();
    if settings.task_length != TaskLength::Short || name != LONG_SCENARIO {
        return None;
    }
    let error = InputError::taking(
        Field::Scenario,
        name,
        format!(
            "one the short task can play: {LONG_SCENARIO} is the long task's (it reads {}, \
             which the short task's project does not have, over {LONG_TURNS} turns), so choose \
             Task length: long for it",
            tether_sandbox::CI_LOG_PATH
        ),
    );
    Some(if from_url { error.in_url() } else { error })
}

/// Brings the scenario's error in `inputs` up to date with what the server said it plays
/// (`known`; `None` from a server that does not say, or before it answers): a name it does not
/// play is an error at the field ([`unknown_scenario`]), and so is the long task's scenario in
/// the short task ([`long_scenario_in_short_task`]); otherwise no error stands there (the
/// field's text always parses, so any error at it is this check's, perhaps against another
/// server's list). Whether `inputs` changed.
pub fn recheck_scenario(
    inputs: &mut Inputs,
    settings: &Settings,
    known: Option<&[String]>,
    from_url: bool,
) -> bool {
    let error = long_scenario_in_short_task(settings, from_url)
        .or_else(|| known.and_then(|known| unknown_scenario(settings, known, from_url)));
    match error {
        Some(error) if inputs.error(Field::Scenario) != Some(&error) => {
            inputs.refuse(error);
            true
        }
        Some(_) => false,
        None => inputs.forget_error(Field::Scenario),
    }
}

/// Turn limits the form accepts.
pub const MAX_TURNS: std::ops::RangeInclusive<usize> = 1..=100;

/// The long task's scenario, built into the server: an agent reads a CI log window by window
/// (one `shell` call a turn, ~3,000 tokens of output each) and summarises the failures — about
/// 40 tool calls, the context past 100k tokens. `cargo xtask bench` plays the same task, with
/// the same prompt ([`tether_sandbox::LONG_TASK_PROMPT`]).
pub const LONG_SCENARIO: &str = "triage-ci-log";
/// The turns the long task takes: its 40 tool calls and the summary.
pub const LONG_TURNS: usize = 41;
/// The turns the short demo takes (`fix-sample-project`).
pub const SHORT_TURNS: usize = 6;

/// Everything a run is configured by. Stored as JSON; a missing field takes its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The server's base URL (`http://host:port`); empty: the page's own origin.
    pub server_url: String,
    /// Sent as `Authorization: Bearer` over HTTP; a WebSocket upgrade carries a short-lived
    /// client secret minted with it (`tether_client::secrets`). Empty: none.
    pub api_key: String,
    /// The model (simulator profile) every request names.
    pub profile: String,
    /// `metadata.scenario`; empty: the server's default generator.
    pub scenario: String,
    pub transport: TransportChoice,
    pub max_turns: usize,
    pub task: String,
    /// Start a single run from the files the last run left, not a fresh sample project.
    pub keep_files: bool,
    /// How many times a comparison runs each leg (alternating which goes first).
    pub repetitions: usize,
    /// Whether a comparison also runs the long-running design (`response.append`) as a leg.
    pub compare_long_running: bool,
    /// The network link the server emulates between it and this page.
    pub link: LinkPreset,
    /// The link when [`Settings::link`] is custom.
    pub custom_link: Link,
    /// The API costs the server applies.
    pub api_costs: ApiCosts,
    /// The short task (the settings' own) or the long rollout.
    pub task_length: TaskLength,
}

impl Default for Settings {
    /// What an agent like Codex meets against a hosted API — the long rollout, a fast model
    /// (`spark`, 1,000 tokens/s), over a home or office uplink, with a hosted API's costs — the
    /// conditions the overview's comparison states and the Agent tab starts from. The same
    /// comparison on this machine's loopback with local costs is a few choices away.
    fn default() -> Self {
        Settings {
            server_url: String::new(),
            api_key: String::new(),
            profile: DEFAULT_PROFILE.to_string(),
            scenario: DEFAULT_SCENARIO.to_string(),
            transport: TransportChoice::Ws,
            max_turns: 20,
            task: DEFAULT_TASK.to_string(),
            keep_files: false,
            repetitions: DEFAULT_REPETITIONS,
            compare_long_running: false,
            link: LinkPreset::HomeUplink,
            custom_link: LinkPreset::HomeUplink.link().expect("a preset has a link"),
            api_costs: ApiCosts::Hosted,
            task_length: TaskLength::Long,
        }
    }
}

impl Settings {
    /// What a run of these settings is, in one line (an embedded view shows no form):
    /// `transport · profile · scenario · link · API costs`.
    pub fn summary(&self) -> String {
        let scenario = match self.run_scenario() {
            None => "echo generator".to_string(),
            Some(scenario) => format!("scenario {scenario}"),
        };
        let transport = match self.transport {
            TransportChoice::Compare if self.compare_long_running => {
                "Compare: WebSocket, HTTP stateless and WebSocket long-running, in turn"
            }
            other => other.design(),
        };
        let costs = match self.api_costs {
            ApiCosts::Server => "the server's API costs".to_string(),
            costs => format!("{} API costs", costs.as_str()),
        };
        format!(
            "{transport} · {} · {scenario} · {} · {costs}",
            self.profile,
            self.link().describe()
        )
    }

    /// The link the server is asked to emulate.
    pub fn link(&self) -> Link {
        self.link.link().unwrap_or(self.custom_link)
    }

    /// Changes one of the link's numbers: the link becomes custom, from the values it had.
    pub fn edit_link(&mut self, change: impl FnOnce(&mut Link)) {
        let mut link = self.link();
        change(&mut link);
        self.link = LinkPreset::Custom;
        self.custom_link = link;
    }

    /// Whether a run of these settings asks the server for conditions (a link, API costs): a
    /// server started without `--allow-client-conditions` refuses it.
    pub fn asks_for_conditions(&self) -> bool {
        self.conditions().is_ok_and(|c| !c.pairs().is_empty())
    }

    /// The conditions a run asks the server for; the error says why they cannot be asked
    /// (a custom link outside the server's bounds, stored by an older page).
    pub fn conditions(&self) -> Result<Conditions, String> {
        let link = self.link();
        link.check()
            .map_err(|why| format!("The custom link cannot be used: {why}."))?;
        Ok(Conditions {
            link,
            api_costs: self.api_costs,
        })
    }

    /// The scenario a run plays: the long task's, or the settings' own.
    pub fn run_scenario(&self) -> Option<String> {
        match self.task_length {
            TaskLength::Long => Some(LONG_SCENARIO.to_string()),
            TaskLength::Short => Some(self.scenario.trim().to_string()).filter(|s| !s.is_empty()),
        }
    }

    /// The prompt a run starts with: the long task's is the bench's own.
    pub fn run_task(&self) -> &str {
        match self.task_length {
            TaskLength::Long => tether_sandbox::LONG_TASK_PROMPT,
            TaskLength::Short => &self.task,
        }
    }

    /// The turn limit of a run: the long task takes its own turns (the form locks Max turns
    /// and says so), with room to spare.
    pub fn run_max_turns(&self) -> usize {
        match self.task_length {
            TaskLength::Long => LONG_TURNS + 5,
            TaskLength::Short => self.max_turns,
        }
    }

    /// The turns a run is expected to take, for its progress: the shipped tasks' own count,
    /// `None` for a scenario the page does not know.
    pub fn expected_turns(&self) -> Option<usize> {
        match (self.task_length, self.run_scenario().as_deref()) {
            (TaskLength::Long, _) => Some(LONG_TURNS),
            (TaskLength::Short, Some(DEFAULT_SCENARIO)) => Some(SHORT_TURNS),
            _ => None,
        }
    }

    /// The server's base URL: the setting, else the page's origin.
    pub fn base_url(&self, page_origin: &str) -> Result<String, String> {
        let raw = self.server_url.trim();
        let url = if raw.is_empty() { page_origin } else { raw };
        server_base(url)
    }
}

/// Where the profile choices stand.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelChoices {
    Loading,
    Loaded(Vec<String>),
    /// The list could not be loaded: the profile is typed in, the reason shown.
    Failed(String),
}

/// `http(s)://host[:port]` from what a user may type: a trailing `/`, `/v1` or `/v1/responses`
/// is dropped.
pub fn server_base(url: &str) -> Result<String, String> {
    let url = url.trim();
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| format!("the server URL {url:?} must start with http:// or https://"))?;
    let mut base = url.trim_end_matches('/');
    for suffix in ["/v1/responses", "/v1"] {
        base = base.strip_suffix(suffix).unwrap_or(base);
    }
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() {
        return Err(format!("the server URL {url:?} has no host"));
    }
    Ok(base.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_conditions_the_overview_states() {
        let defaults = Settings::default();
        assert_eq!(defaults.task_length, TaskLength::Long);
        assert_eq!(defaults.profile, "spark");
        assert_eq!(defaults.link, LinkPreset::HomeUplink);
        assert_eq!(defaults.api_costs, ApiCosts::Hosted);
        assert_eq!(
            defaults.conditions().unwrap().query(),
            "tether_rtt_ms=40&tether_up_mbit=20&tether_down_mbit=100&tether_api_costs=hosted"
        );
    }

    #[test]
    fn the_long_task_is_the_benchs_own_prompt_and_turns() {
        let long = Settings::default();
        assert_eq!(long.run_task(), tether_sandbox::LONG_TASK_PROMPT);
        assert!(
            !long.run_task().contains("  "),
            "no run of spaces: {:?}",
            long.run_task()
        );
        assert_eq!(long.run_scenario().as_deref(), Some(LONG_SCENARIO));
        // Max turns is the short task's: the long one takes its own.
        for max_turns in [3, 100] {
            let settings = Settings {
                max_turns,
                ..Settings::default()
            };
            assert_eq!(settings.run_max_turns(), LONG_TURNS + 5);
            let short = Settings {
                task_length: TaskLength::Short,
                ..settings
            };
            assert_eq!(short.run_max_turns(), max_turns);
        }
    }

    #[test]
    fn a_scenario_the_server_does_not_play_is_an_error_at_its_field() {
        let known = [
            "fix-sample-project".to_string(),
            "triage-ci-log".to_string(),
        ];
        let mut settings = Settings::default();
        assert_eq!(unknown_scenario(&settings, &known, false), None);
        settings.scenario = String::new();
        assert_eq!(
            unknown_scenario(&settings, &known, false),
            None,
            "the echo generator"
        );
        settings.scenario = "nope".into();
        let error = unknown_scenario(&settings, &known, true).unwrap();
        assert_eq!(
            error.to_string(),
            "The URL's scenario: Scenario must be one this server plays (fix-sample-project, \
             triage-ci-log), or empty for the echo generator; got \"nope\""
        );
    }

    #[test]
    fn a_scenario_error_follows_the_list_of_the_server_asked() {
        let known = ["fix-sample-project".to_string()];
        let settings = Settings {
            scenario: "triage-ci-log".into(),
            ..Settings::default()
        };
        let mut inputs = Inputs::default();
        assert!(recheck_scenario(
            &mut inputs,
            &settings,
            Some(&known),
            false
        ));
        assert!(inputs.error(Field::Scenario).is_some());
        assert!(
            !recheck_scenario(&mut inputs, &settings, Some(&known), false),
            "unchanged"
        );
        // Another server, which plays it, or says nothing: the error goes, the name stays.
        let more = [
            "fix-sample-project".to_string(),
            "triage-ci-log".to_string(),
        ];
        assert!(recheck_scenario(&mut inputs, &settings, Some(&more), false));
        assert!(inputs.runnable(&settings));
        assert!(recheck_scenario(
            &mut inputs,
            &settings,
            Some(&known),
            false
        ));
        assert!(recheck_scenario(&mut inputs, &settings, None, false));
        assert_eq!(inputs.shown(Field::Scenario, &settings), "triage-ci-log");
    }

    #[test]
    fn the_long_tasks_scenario_is_an_error_in_the_short_task_whatever_the_server_plays() {
        let both = [
            "fix-sample-project".to_string(),
            "triage-ci-log".to_string(),
        ];
        let mut settings = Settings {
            task_length: TaskLength::Short,
            scenario: "triage-ci-log".into(),
            ..Settings::default()
        };
        for known in [Some(&both[..]), None] {
            let mut inputs = Inputs::default();
            recheck_scenario(&mut inputs, &settings, known, false);
            assert_eq!(
                inputs.error(Field::Scenario).unwrap().to_string(),
                "Scenario must be one the short task can play: triage-ci-log is the long \
                 task's (it reads logs/ci.log, which the short task's project does not have, \
                 over 41 turns), so choose Task length: long for it; got \"triage-ci-log\""
            );
            assert!(!inputs.runnable(&settings));
        }
        // The long task plays it: no error.
        settings.task_length = TaskLength::Long;
        let mut inputs = Inputs::default();
        recheck_scenario(&mut inputs, &settings, Some(&both), false);
        assert!(inputs.runnable(&settings));
    }

    #[test]
    fn the_summary_names_the_transport_the_profile_and_the_scenario() {
        let mut settings = Settings {
            profile: "spark".into(),
            transport: TransportChoice::Compare,
            task_length: TaskLength::Short,
            link: LinkPreset::Loopback,
            api_costs: ApiCosts::Server,
            ..Settings::default()
        };
        assert_eq!(
            settings.summary(),
            "Compare: WebSocket and HTTP stateless, alternated · spark · scenario \
             fix-sample-project · loopback (no delay, no limit) · the server's API costs"
        );
        settings.scenario.clear();
        settings.transport = TransportChoice::Ws;
        settings.link = LinkPreset::HomeUplink;
        settings.api_costs = ApiCosts::Hosted;
        assert_eq!(
            settings.summary(),
            "WebSocket (previous_response_id, store:false) · spark · echo generator · 40 ms RTT, \
             20 Mbit/s up, 100 Mbit/s down · hosted API costs"
        );
        assert_eq!(settings.expected_turns(), None);
        settings.task_length = TaskLength::Long;
        assert!(settings.summary().contains("scenario triage-ci-log"));
    }

    #[test]
    fn a_stored_custom_link_out_of_bounds_is_refused_when_a_run_starts() {
        let mut settings = Settings::default();
        settings.edit_link(|link| link.up_mbit = Some(0.01));
        assert_eq!(settings.link, LinkPreset::Custom);
        assert!(settings.conditions().unwrap_err().contains("bandwidth up"));
    }

    #[test]
    fn urls_derive_from_the_server_base() {
        let page = "http://127.0.0.1:8080";
        let defaults = Settings::default();
        assert_eq!(defaults.base_url(page).unwrap(), page);
        let base = Settings {
            server_url: " https://t.example/v1/ ".into(),
            ..Settings::default()
        }
        .base_url(page)
        .unwrap();
        assert_eq!(base, "https://t.example");
        // What the requests' URLs are made of it: `tether-client`'s `Endpoint`.
        let endpoint = tether_client::Endpoint::new(&base).unwrap();
        assert_eq!(endpoint.responses_url(), "https://t.example/v1/responses");
        assert_eq!(endpoint.websocket_url(), "wss://t.example/v1/responses");
        assert_eq!(
            server_base("http://h:1/v1/responses").unwrap(),
            "http://h:1"
        );
        assert!(server_base("ftp://h").unwrap_err().contains("http://"));
        assert!(server_base("http:///v1").unwrap_err().contains("no host"));
    }
}
