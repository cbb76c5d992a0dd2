//! The playground's settings: which server, with which key, which model profile and scenario,
//! over which transport. Plain Rust, tested natively; the browser parts (localStorage, the
//! page's URL) only hand strings in and out.
//!
//! Where a setting comes from, last wins: the defaults, then what `localStorage` kept from the
//! last visit, then the page's URL parameters (for that page load only; an embedded demo says
//! what it shows in its URL). The API key and the server URL never come from a URL: a crafted
//! link must not be able to send a stored key to another server.

use serde::{Deserialize, Serialize};

use crate::agent::{ContinuationMode, DEFAULT_REPETITIONS, REPETITIONS};
use crate::conditions::{ApiCosts, Conditions, Link, LinkPreset, number};

/// The task the agent view starts with.
pub const DEFAULT_TASK: &str =
    "The pagination tests in the sample project fail. Find the bug, fix it, and run the tests.";
/// The scenario the agent view starts with: it fixes the sample project and runs its tests.
pub const DEFAULT_SCENARIO: &str = "fix-sample-project";
/// The model profile the playground asks for when none is chosen (the server's default).
pub const DEFAULT_PROFILE: &str = "tether-sim";
/// The scenarios the server ships (`server/scenarios/`); the field also takes any other name a
/// server loads with `--scenario-dir`, and empty for the echo generator.
pub const KNOWN_SCENARIOS: [&str; 1] = [DEFAULT_SCENARIO];
/// The conditions the overview's comparison starts from, stated on the page and changed
/// there with one click: what an agent like Codex meets against a hosted API — the long
/// rollout, a fast model (`spark`, 1,000 tokens/s), over a home or office uplink, with a hosted
/// API's costs. The same comparison on this machine's loopback with local costs is a choice
/// away, and the sweep shows how the saving depends on the model's speed.
pub fn overview_conditions(settings: &Settings) -> Settings {
    Settings {
        transport: TransportChoice::Compare,
        task_length: TaskLength::Long,
        profile: "spark".to_string(),
        link: LinkPreset::HomeUplink,
        api_costs: ApiCosts::Hosted,
        ..settings.clone()
    }
}
/// Turn limits the form accepts.
pub const MAX_TURNS: std::ops::RangeInclusive<usize> = 1..=100;

/// The long task's scenario, built into the server: an agent reads a CI log window by window
/// (one `shell` call a turn, ~3,000 tokens of output each) and summarises the failures — about
/// 40 tool calls, the context past 100k tokens. `cargo xtask bench` plays the same task.
pub const LONG_SCENARIO: &str = "triage-ci-log";
/// The long task's prompt.
pub const LONG_TASK: &str = "CI failed on main. Read logs/ci.log one window at a time, find which     tests fail and why, and summarise the failures.";
/// The turns the long task takes: its 40 tool calls and the summary.
pub const LONG_TURNS: usize = 41;
/// The turns the short demo takes (`fix-sample-project`).
pub const SHORT_TURNS: usize = 6;

/// How long a task the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskLength {
    /// The task and scenario of the settings (by default the short demo, `fix-sample-project`:
    /// about six turns and a few thousand tokens).
    #[default]
    Short,
    /// The long rollout ([`LONG_SCENARIO`]): about 40 tool calls, the context past 100k tokens.
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

/// The storage format of [`Settings`]; a stored value of another version is not read.
pub const SETTINGS_VERSION: u32 = 1;

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

    pub fn label(self) -> &'static str {
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
            link: LinkPreset::Loopback,
            custom_link: LinkPreset::HomeUplink.link().expect("a preset has a link"),
            api_costs: ApiCosts::Server,
            task_length: TaskLength::Short,
        }
    }
}

/// The stored form: the settings and their format version.
#[derive(Serialize, Deserialize)]
struct Stored<T> {
    version: u32,
    #[serde(flatten)]
    value: T,
}

/// Serializes `value` with its format `version`.
pub fn to_stored_json<T: Serialize>(version: u32, value: &T) -> String {
    serde_json::to_string(&Stored { version, value }).expect("stored values always serialize")
}

/// Reads what [`to_stored_json`] wrote; an error says why the value cannot be used.
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
    serde_json::from_str::<Stored<T>>(json)
        .map(|stored| stored.value)
        .map_err(|e| format!("unreadable ({e})"))
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

    /// Applies the page's URL parameters; returns what was wrong with them.
    pub fn apply(&mut self, params: &UrlParams) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(name) = &params.transport {
            match TransportChoice::parse(name) {
                Some(choice) => self.transport = choice,
                None => problems.push(format!(
                    "unknown transport {name:?} in the URL (use ws, ws-append, http, \
                     http-chained, http-stateless or compare); kept {}",
                    self.transport.as_str()
                )),
            }
        }
        if let Some(profile) = &params.profile {
            if profile.trim().is_empty() {
                problems.push("an empty profile in the URL; ignored".into());
            } else {
                self.profile = profile.trim().to_string();
            }
        }
        if let Some(scenario) = &params.scenario {
            self.scenario = scenario.trim().to_string();
        }
        if let Some(task) = &params.task {
            self.task = task.clone();
        }
        if let Some(turns) = &params.max_turns {
            match turns.parse::<usize>() {
                Ok(n) if MAX_TURNS.contains(&n) => self.max_turns = n,
                _ => problems.push(format!(
                    "max_turns {turns:?} in the URL is not a number from 1 to 100; kept {}",
                    self.max_turns
                )),
            }
        }
        if let Some(repetitions) = &params.repetitions {
            match repetitions.parse::<usize>() {
                Ok(n) if REPETITIONS.contains(&n) => self.repetitions = n,
                _ => problems.push(format!(
                    "repetitions {repetitions:?} in the URL is not a number from {} to {}; kept {}",
                    REPETITIONS.start(),
                    REPETITIONS.end(),
                    self.repetitions
                )),
            }
        }
        if params.long_running {
            self.compare_long_running = true;
        }
        if let Some(name) = &params.task_length {
            match TaskLength::parse(name) {
                Some(length) => self.task_length = length,
                None => problems.push(format!(
                    "unknown task_length {name:?} in the URL (use short or long); kept {}",
                    self.task_length.as_str()
                )),
            }
        }
        if let Some(name) = &params.link {
            match LinkPreset::parse(name) {
                Some(preset) => self.link = preset,
                None => problems.push(format!(
                    "unknown link {name:?} in the URL (use loopback, same-region, home-uplink, \
                     other-continent or custom); kept {}",
                    self.link.as_str()
                )),
            }
        }
        // Any of the link's numbers makes it a custom link; they are checked together.
        if params.rtt_ms.is_some() || params.up_mbit.is_some() || params.down_mbit.is_some() {
            let mut custom = self.link();
            let mut read = |value: &Option<String>, name: &str| -> Option<Option<f64>> {
                let value = value.as_ref()?.trim();
                match value.parse::<f64>() {
                    Ok(n) if n.is_finite() && n >= 0.0 => Some(Some(n)),
                    _ => {
                        problems.push(format!(
                            "{name} {value:?} in the URL is not a non-negative number; ignored"
                        ));
                        None
                    }
                }
            };
            if let Some(Some(rtt)) = read(&params.rtt_ms, "rtt_ms") {
                custom.rtt_ms = rtt;
            }
            // 0 is unlimited, as the server reads it.
            if let Some(up) = read(&params.up_mbit, "up_mbit") {
                custom.up_mbit = up.filter(|m| *m > 0.0);
            }
            if let Some(down) = read(&params.down_mbit, "down_mbit") {
                custom.down_mbit = down.filter(|m| *m > 0.0);
            }
            match custom.check() {
                Ok(()) => {
                    self.link = LinkPreset::Custom;
                    self.custom_link = custom;
                }
                Err(why) => problems.push(format!(
                    "the link in the URL cannot be used: {why}; kept {}",
                    self.link().describe()
                )),
            }
        }
        if let Some(name) = &params.api_costs {
            match ApiCosts::parse(name) {
                Some(costs) => self.api_costs = costs,
                None => problems.push(format!(
                    "unknown api_costs {name:?} in the URL (use server, local or hosted); kept {}",
                    self.api_costs.as_str()
                )),
            }
        }
        problems
    }

    /// [`Settings::apply`], and the profile the URL asked for, to check once the server's model
    /// list is known ([`UrlProfile::check`]): a profile no server lists would silently run as
    /// the default one.
    pub fn apply_url(&mut self, params: &UrlParams) -> (Vec<String>, Option<UrlProfile>) {
        let kept = self.profile.clone();
        let problems = self.apply(params);
        let asked = params
            .profile
            .as_ref()
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty() && *p == self.profile)
            .map(|asked| UrlProfile { asked, kept });
        (problems, asked)
    }

    /// The query string of a link that reproduces these settings and starts the run: never the
    /// API key or the server URL.
    pub fn share_query(&self) -> String {
        format!("{}&autorun=1", self.settings_query())
    }

    /// The query string of these settings alone (an embedded demo's "open in the playground":
    /// the visitor starts the run).
    pub fn settings_query(&self) -> String {
        let mut pairs = vec![
            ("transport", self.transport.as_str().to_string()),
            ("profile", self.profile.clone()),
            ("scenario", self.scenario.clone()),
        ];
        if self.max_turns != Settings::default().max_turns {
            pairs.push(("max_turns", self.max_turns.to_string()));
        }
        if self.transport == TransportChoice::Compare
            && self.repetitions != Settings::default().repetitions
        {
            pairs.push(("repetitions", self.repetitions.to_string()));
        }
        if self.transport == TransportChoice::Compare && self.compare_long_running {
            pairs.push(("long_running", "1".to_string()));
        }
        if self.task != DEFAULT_TASK {
            pairs.push(("task", self.task.clone()));
        }
        if self.task_length != TaskLength::Short {
            pairs.push(("task_length", self.task_length.as_str().to_string()));
        }
        match self.link {
            LinkPreset::Loopback => {}
            LinkPreset::Custom => {
                let link = self.custom_link;
                let mbit = |m: Option<f64>| m.map_or_else(|| "0".to_string(), number);
                pairs.push(("rtt_ms", number(link.rtt_ms)));
                pairs.push(("up_mbit", mbit(link.up_mbit)));
                pairs.push(("down_mbit", mbit(link.down_mbit)));
            }
            preset => pairs.push(("link", preset.as_str().to_string())),
        }
        if self.api_costs != ApiCosts::Server {
            pairs.push(("api_costs", self.api_costs.as_str().to_string()));
        }
        pairs
            .iter()
            .map(|(name, value)| format!("{name}={}", encode_component(value)))
            .collect::<Vec<_>>()
            .join("&")
    }

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
            other => other.label(),
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

    /// The conditions a run asks the server for; the error says why they cannot be asked
    /// (a custom link outside the server's bounds).
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

    /// The prompt a run starts with.
    pub fn run_task(&self) -> &str {
        match self.task_length {
            TaskLength::Long => LONG_TASK,
            TaskLength::Short => &self.task,
        }
    }

    /// The turn limit of a run: the long task needs room for all of its turns.
    pub fn run_max_turns(&self) -> usize {
        match self.task_length {
            TaskLength::Long => self.max_turns.max(LONG_TURNS + 5),
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

/// The profile a page's URL asked for, and the one the settings had before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlProfile {
    pub asked: String,
    pub kept: String,
}

impl UrlProfile {
    /// Once the server's models are known: if it does not offer the profile the URL asked for
    /// (and the settings still hold it), the settings go back to the profile they had, and the
    /// notice says so, as for any other bad URL value.
    pub fn check(&self, settings: &mut Settings, offered: &[String]) -> Option<String> {
        if settings.profile != self.asked || offered.contains(&self.asked) {
            return None;
        }
        settings.profile = self.kept.clone();
        Some(format!(
            "unknown profile {:?} in the URL (this server offers {}); kept {}",
            self.asked,
            offered.join(", "),
            self.kept
        ))
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

/// The page's URL parameters the playground reads. `None`: not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlParams {
    pub scenario: Option<String>,
    pub transport: Option<String>,
    pub profile: Option<String>,
    pub task: Option<String>,
    pub max_turns: Option<String>,
    pub repetitions: Option<String>,
    /// `long_running=1`: a comparison also runs the long-running design.
    pub long_running: bool,
    /// `task_length`: `short` or `long`.
    pub task_length: Option<String>,
    /// `link`: a preset's name.
    pub link: Option<String>,
    /// `rtt_ms`, `up_mbit`, `down_mbit`: a custom link.
    pub rtt_ms: Option<String>,
    pub up_mbit: Option<String>,
    pub down_mbit: Option<String>,
    /// `api_costs`: `server`, `local` or `hosted`.
    pub api_costs: Option<String>,
    /// `autorun=1`: start the agent run on load.
    pub autorun: bool,
    /// `embed=1`: the compact layout for an iframe.
    pub embed: bool,
}

impl UrlParams {
    /// Parses `location.search` (with or without the leading `?`); unknown names are ignored.
    pub fn parse(search: &str) -> UrlParams {
        let mut params = UrlParams::default();
        for pair in search.trim_start_matches('?').split('&') {
            if pair.is_empty() {
                continue;
            }
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode_component(value);
            match decode_component(name).as_str() {
                "scenario" => params.scenario = Some(value),
                "transport" => params.transport = Some(value),
                "profile" => params.profile = Some(value),
                "task" => params.task = Some(value),
                "max_turns" => params.max_turns = Some(value),
                "repetitions" => params.repetitions = Some(value),
                "long_running" => params.long_running = flag(&value),
                "task_length" => params.task_length = Some(value),
                "link" => params.link = Some(value),
                "rtt_ms" => params.rtt_ms = Some(value),
                "up_mbit" => params.up_mbit = Some(value),
                "down_mbit" => params.down_mbit = Some(value),
                "api_costs" => params.api_costs = Some(value),
                "autorun" => params.autorun = flag(&value),
                "embed" => params.embed = flag(&value),
                _ => {}
            }
        }
        params
    }
}

fn flag(value: &str) -> bool {
    matches!(value, "1" | "true" | "yes" | "")
}

/// Percent-encodes everything but the unreserved characters of RFC 3986.
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes and `+` (a space in query strings); a broken escape stays as written.
pub fn decode_component(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("ASCII hex digits");
                out.push(u8::from_str_radix(hex, 16).expect("two hex digits"));
                i += 2;
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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
    fn url_parameters_parse_and_decode() {
        let params = UrlParams::parse(
            "?scenario=fix-sample-project&transport=compare&profile=spark&autorun=1&embed=1\
             &task=Fix+it%3A%20now&max_turns=7&repetitions=5&other=x",
        );
        assert_eq!(
            params,
            UrlParams {
                scenario: Some("fix-sample-project".into()),
                transport: Some("compare".into()),
                profile: Some("spark".into()),
                task: Some("Fix it: now".into()),
                max_turns: Some("7".into()),
                repetitions: Some("5".into()),
                long_running: false,
                autorun: true,
                embed: true,
                ..UrlParams::default()
            }
        );
        assert_eq!(UrlParams::parse(""), UrlParams::default());
        let off = UrlParams::parse("autorun=0&embed=no");
        assert!(!off.autorun && !off.embed);
        assert_eq!(decode_component("100%"), "100%");
        assert_eq!(decode_component("%zz%4%g1"), "%zz%4%g1");
        assert_eq!(decode_component("caf%C3%A9"), "café");
    }

    #[test]
    fn url_parameters_override_stored_settings_and_report_bad_values() {
        let mut settings = Settings {
            profile: "flagship".into(),
            transport: TransportChoice::HttpChained,
            api_key: "sk-stored".into(),
            ..Settings::default()
        };
        let problems = settings.apply(&UrlParams::parse("transport=http&profile=spark&scenario="));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(settings.transport, TransportChoice::HttpStateless);
        assert_eq!(settings.profile, "spark");
        assert_eq!(settings.scenario, "");
        assert_eq!(settings.api_key, "sk-stored", "the URL never sets the key");

        let problems = settings.apply(&UrlParams::parse(
            "transport=carrier-pigeon&max_turns=0&repetitions=12",
        ));
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("carrier-pigeon"));
        assert!(problems[2].contains("repetitions \"12\""), "{problems:?}");
        assert_eq!(settings.transport, TransportChoice::HttpStateless);
        assert_eq!(settings.max_turns, 20);
        assert_eq!(settings.repetitions, DEFAULT_REPETITIONS);
    }

    #[test]
    fn a_profile_the_server_does_not_offer_is_reported_like_any_bad_url_value() {
        let offered: Vec<String> = ["tether-sim", "flagship", "instant"]
            .map(String::from)
            .into();
        let mut settings = Settings {
            profile: "flagship".into(),
            ..Settings::default()
        };
        let (problems, asked) = settings.apply_url(&UrlParams::parse("profile=turbo"));
        assert!(problems.is_empty());
        assert_eq!(settings.profile, "turbo", "until the model list is known");
        let asked = asked.expect("a profile to check");
        let notice = asked.check(&mut settings, &offered).unwrap();
        assert_eq!(
            notice,
            "unknown profile \"turbo\" in the URL (this server offers tether-sim, flagship, \
             instant); kept flagship"
        );
        assert_eq!(settings.profile, "flagship");

        // A profile the server offers is kept; one the user changed since is not touched.
        let mut settings = Settings::default();
        let (_, asked) = settings.apply_url(&UrlParams::parse("profile=instant"));
        assert_eq!(asked.unwrap().check(&mut settings, &offered), None);
        assert_eq!(settings.profile, "instant");
        let (_, asked) = settings.apply_url(&UrlParams::parse("profile=turbo"));
        settings.profile = "flagship".into();
        assert_eq!(asked.unwrap().check(&mut settings, &offered), None);
        let (_, none) = Settings::default().apply_url(&UrlParams::parse("transport=ws"));
        assert_eq!(none, None);
    }

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
            task_length: TaskLength::Long,
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

    #[test]
    fn the_share_link_reproduces_the_run_without_the_key() {
        let settings = Settings {
            api_key: "sk-secret".into(),
            server_url: "http://elsewhere:1".into(),
            profile: "spark".into(),
            transport: TransportChoice::Compare,
            task: "a b&c".into(),
            repetitions: 5,
            ..Settings::default()
        };
        let query = settings.share_query();
        assert_eq!(
            query,
            "transport=compare&profile=spark&scenario=fix-sample-project&repetitions=5\
             &task=a%20b%26c&autorun=1"
        );
        assert!(!query.contains("secret") && !query.contains("elsewhere"));
        let mut restored = Settings {
            api_key: "sk-secret".into(),
            ..Settings::default()
        };
        assert!(restored.apply(&UrlParams::parse(&query)).is_empty());
        assert_eq!(
            restored,
            Settings {
                server_url: String::new(),
                ..settings
            }
        );
        assert!(UrlParams::parse(&query).autorun);
    }

    #[test]
    fn a_comparison_with_the_long_running_leg_is_shared_as_such() {
        let settings = Settings {
            transport: TransportChoice::Compare,
            compare_long_running: true,
            ..Settings::default()
        };
        let query = settings.share_query();
        assert!(query.contains("&long_running=1&"), "{query}");
        let mut restored = Settings::default();
        assert!(restored.apply(&UrlParams::parse(&query)).is_empty());
        assert!(restored.compare_long_running);
        let single = Settings {
            transport: TransportChoice::WsAppend,
            ..Settings::default()
        };
        assert!(single.share_query().starts_with("transport=ws-append&"));
    }

    #[test]
    fn the_summary_names_the_transport_the_profile_and_the_scenario() {
        let mut settings = Settings {
            profile: "spark".into(),
            transport: TransportChoice::Compare,
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
        settings.task_length = TaskLength::Long;
        assert!(settings.summary().contains("scenario triage-ci-log"));
    }

    #[test]
    fn the_conditions_come_from_the_url_and_go_into_the_share_link() {
        let mut settings = Settings::default();
        let problems = settings.apply(&UrlParams::parse(
            "link=home-uplink&api_costs=hosted&task_length=long",
        ));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(settings.link, LinkPreset::HomeUplink);
        let conditions = settings.conditions().unwrap();
        assert_eq!(
            conditions.query(),
            "tether_rtt_ms=40&tether_up_mbit=20&tether_down_mbit=100&tether_api_costs=hosted"
        );
        assert_eq!(settings.run_scenario().as_deref(), Some(LONG_SCENARIO));
        assert_eq!(settings.run_task(), LONG_TASK);
        assert_eq!(settings.run_max_turns(), LONG_TURNS + 5);
        assert_eq!(settings.expected_turns(), Some(LONG_TURNS));
        let query = settings.share_query();
        assert!(
            query.ends_with("&task_length=long&link=home-uplink&api_costs=hosted&autorun=1"),
            "{query}"
        );
        let mut shared = Settings::default();
        assert!(shared.apply(&UrlParams::parse(&query)).is_empty());
        assert_eq!(shared, settings);

        // The link's numbers make a custom link; 0 is unlimited, as the server reads it.
        let mut custom = Settings::default();
        let problems = custom.apply(&UrlParams::parse("rtt_ms=150&up_mbit=5&down_mbit=0"));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(custom.link, LinkPreset::Custom);
        assert_eq!(
            custom.link().describe(),
            "150 ms RTT, 5 Mbit/s up, unlimited down"
        );
        let query = custom.share_query();
        assert!(
            query.contains("&rtt_ms=150&up_mbit=5&down_mbit=0&"),
            "{query}"
        );

        // Bad values are reported, and what was there is kept.
        let problems = custom.apply(&UrlParams::parse(
            "link=moon&rtt_ms=5000&api_costs=free&task_length=huge&up_mbit=x",
        ));
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(problems[0].contains("task_length \"huge\""), "{problems:?}");
        assert!(problems[1].contains("link \"moon\""), "{problems:?}");
        assert!(problems[2].contains("up_mbit \"x\""), "{problems:?}");
        assert!(
            problems[3].contains("round-trip time must be from 0 to 1000 ms; got 5000"),
            "{problems:?}"
        );
        assert!(problems[4].contains("api_costs \"free\""), "{problems:?}");
        assert_eq!(custom.link().rtt_ms, 150.0);

        // A custom link out of bounds (typed in the form) is refused when a run starts.
        custom.custom_link.up_mbit = Some(0.01);
        assert!(custom.conditions().unwrap_err().contains("bandwidth up"));
        assert_eq!(Settings::default().expected_turns(), Some(SHORT_TURNS));
        let echo = Settings {
            scenario: String::new(),
            ..Settings::default()
        };
        assert_eq!((echo.run_scenario(), echo.expected_turns()), (None, None));
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
