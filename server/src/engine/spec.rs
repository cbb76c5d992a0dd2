//! What an upstream engine is, as the operator describes it: from the command line (`--engine
//! URL`, `--engine-model NAME=URL` and the `--engine-*` settings they share) or from a JSON file
//! (`--engine-config`, one entry per engine with its own credentials and limits). Both become
//! the same [`EngineSpec`]s, checked here before anything is started.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// What is wrong with the engines an operator configured; each names the flag, file entry or
/// URL it comes from, and says what is expected.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "{url}: https is not supported — Tether speaks plain HTTP/1.1 to an engine (run it on \
         loopback or a private network, or put a TLS-terminating proxy in front of a hosted one)"
    )]
    Https { url: String },
    #[error("{url}: an engine URL starts with http:// (or is replay:DIR)")]
    NotHttp { url: String },
    #[error("{url}: the URL names no host")]
    NoHost { url: String },
    #[error(
        "{url}: credentials do not go in the URL — name the environment variable that holds the \
         key (--engine-api-key-env, or api_key_env in --engine-config)"
    )]
    CredentialsInUrl { url: String },
    #[error("{url}: an engine URL has no query or fragment")]
    QueryOrFragment { url: String },
    #[error("--engine-model {pair}: expected NAME=URL, e.g. qwen3=http://127.0.0.1:8000/v1")]
    NotNameUrl { pair: String },
    #[error("--engine-model {pair}: both NAME and URL are needed")]
    NameOrUrlMissing { pair: String },
    #[error("replay:{dir} replays one directory: it cannot be a replica among other URLs")]
    ReplayAmongUrls { dir: String },
    #[error("replay:{}: no such directory (record one with --record DIR)", dir.display())]
    NoReplayDirectory { dir: PathBuf },
    #[error("no URL given")]
    NoUrl,
    #[error("{url} is listed twice")]
    ListedTwice { url: BaseUrl },
    #[error("{origin}: {name} must be a positive number of seconds, got {seconds}")]
    NotPositiveSeconds {
        origin: String,
        name: &'static str,
        seconds: f64,
    },
    #[error("{}: {error} (docs/engines.md describes the format)", path.display())]
    File {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error("{}: \"engines\" is empty", path.display())]
    NoEngines { path: PathBuf },
    #[error("{origin}: max_concurrency must be at least 1")]
    NoConcurrency { origin: String },
    #[error("{origin}: spill_requests_per_minute must be a positive number")]
    SpillNotPositive { origin: String },
    #[error("{origin}: a model name is empty")]
    EmptyModelName { origin: String },
    #[error(
        "more than one engine serves every model ({}): give all but one of them models",
        engines.join(", ")
    )]
    SeveralDefaults { engines: Vec<String> },
    #[error("the model {model} is served by two engines ({first} and {second})")]
    ServedTwice {
        model: String,
        first: String,
        second: String,
    },
    #[error(
        "--record {}: there is no engine to record (--engine URL or --engine-model NAME=URL)",
        dir.display()
    )]
    NothingToRecord { dir: PathBuf },
    #[error("--record and --engine replay:DIR at once: a replay records nothing new")]
    RecordingAReplay,
    #[error("engine {engine}: the environment variable {variable} (its API key) is not set")]
    NoApiKey { engine: String, variable: String },
    /// A recording directory that cannot be made, or recorded exchanges that cannot be replayed
    /// (the fixtures' own message, naming the file).
    #[error("{0}")]
    Fixtures(String),
    /// `error`, in the flag or file entry `origin`.
    #[error("{origin}: {error}")]
    In {
        origin: String,
        error: Box<ConfigError>,
    },
}

impl ConfigError {
    /// This error, in the flag or file entry `origin`.
    fn within(self, origin: &str) -> Self {
        ConfigError::In {
            origin: origin.to_string(),
            error: Box::new(self),
        }
    }
}

/// How Tether speaks to an upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// `POST {base}/chat/completions` with `stream: true` and `stream_options.include_usage`.
    Chat,
    /// `POST {base}/responses` with `stream: true` (an engine that has HTTP Responses already).
    Responses,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Chat => "chat",
            Dialect::Responses => "responses",
        }
    }

    /// The path under the base URL a generation is posted to.
    pub fn path(self) -> &'static str {
        match self {
            Dialect::Chat => "/chat/completions",
            Dialect::Responses => "/responses",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "chat" => Some(Dialect::Chat),
            "responses" => Some(Dialect::Responses),
            _ => None,
        }
    }
}

/// An upstream's base URL, as OpenAI's SDKs take it: `http://HOST:PORT/v1` (a URL without a
/// path gets `/v1`). Plain HTTP only: no TLS stack is built in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    /// `host:port`.
    pub authority: String,
    /// The path before the dialect's (`/v1`, `/openai/v1`), without a trailing `/`.
    pub path: String,
}

impl BaseUrl {
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let text = text.trim();
        let url = || text.to_string();
        let rest = if let Some(rest) = text.strip_prefix("http://") {
            rest
        } else if text.starts_with("https://") {
            return Err(ConfigError::Https { url: url() });
        } else {
            return Err(ConfigError::NotHttp { url: url() });
        };
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(ConfigError::NoHost { url: url() });
        }
        if authority.contains('@') {
            return Err(ConfigError::CredentialsInUrl { url: url() });
        }
        if path.contains(['?', '#']) {
            return Err(ConfigError::QueryOrFragment { url: url() });
        }
        let authority = if authority.contains(':') && !authority.ends_with(']') {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        let path = match path.trim_end_matches('/') {
            "" => "/v1".to_string(),
            path => path.to_string(),
        };
        Ok(BaseUrl { authority, path })
    }

    /// The URL of `path` under this base, e.g. `http://127.0.0.1:8000/v1/chat/completions`.
    pub fn join(&self, path: &str) -> String {
        format!("http://{}{}{}", self.authority, self.path, path)
    }
}

impl std::fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "http://{}{}", self.authority, self.path)
    }
}

/// Where one engine's answers come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Live upstreams: one base URL per replica.
    Upstream(Vec<BaseUrl>),
    /// Recorded exchanges (`replay:DIR`).
    Replay(PathBuf),
}

/// How long an upstream may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    /// To open the TCP connection.
    pub connect: Duration,
    /// The longest the upstream may stay silent: before its response's headers, before its first
    /// chunk and between two chunks.
    pub idle: Duration,
}

/// One engine: the models it serves and how to reach it.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineSpec {
    /// A label for logs and metrics (the first URL when not given).
    pub name: String,
    /// The model names it serves; empty: every model no other engine names (the default engine).
    pub models: Vec<String>,
    /// The model name sent upstream; `None`: the request's own.
    pub upstream_model: Option<String>,
    pub source: Source,
    pub dialect: Dialect,
    /// The environment variable holding its API key (a bearer token), if it wants one.
    pub api_key_env: Option<String>,
    /// Requests one replica runs at once.
    pub max_concurrency: usize,
    /// Requests that may wait for one replica beyond those; more are refused with 429.
    pub max_queue: usize,
    pub timeouts: Timeouts,
    /// Attempts after the first, made only while nothing has streamed yet.
    pub retries: u32,
    /// Requests a minute one prompt prefix and `prompt_cache_key` send one replica before they
    /// spill to the next (`crate::model::routing`).
    pub spill_requests_per_minute: f64,
}

/// The defaults of an engine's settings (the flags' defaults too).
pub const DEFAULT_MAX_CONCURRENCY: usize = 64;
pub const DEFAULT_MAX_QUEUE: usize = 256;
pub const DEFAULT_CONNECT_TIMEOUT_SECONDS: f64 = 5.0;
pub const DEFAULT_IDLE_TIMEOUT_SECONDS: f64 = 300.0;
pub const DEFAULT_RETRIES: u32 = 2;
pub const DEFAULT_SPILL_PER_MINUTE: f64 = 15.0;

/// The settings `--engine` and `--engine-model` share (each also a flag).
#[derive(Debug, Clone)]
pub struct Shared {
    pub dialect: Dialect,
    pub api_key_env: Option<String>,
    pub max_concurrency: usize,
    pub max_queue: usize,
    pub connect_timeout_seconds: f64,
    pub idle_timeout_seconds: f64,
    pub retries: u32,
}

/// The engines the flags describe: `--engine URL…` is the default engine (its URLs its
/// replicas), each `--engine-model NAME=URL` adds a replica to the engine serving `NAME`.
pub fn from_flags(
    engines: &[String],
    engine_models: &[String],
    shared: &Shared,
) -> Result<Vec<EngineSpec>, ConfigError> {
    let mut specs = Vec::new();
    let urls: Vec<&str> = engines
        .iter()
        .map(|u| u.trim())
        .filter(|u| !u.is_empty())
        .collect();
    if !urls.is_empty() {
        specs.push(spec_of(None, Vec::new(), &urls, shared, "--engine")?);
    }
    let mut by_model: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut order = Vec::new();
    for pair in engine_models
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
    {
        let Some((name, url)) = pair.split_once('=') else {
            return Err(ConfigError::NotNameUrl {
                pair: pair.to_string(),
            });
        };
        let (name, url) = (name.trim(), url.trim());
        if name.is_empty() || url.is_empty() {
            return Err(ConfigError::NameOrUrlMissing {
                pair: pair.to_string(),
            });
        }
        if !by_model.contains_key(name) {
            order.push(name);
        }
        by_model.entry(name).or_default().push(url);
    }
    for name in order {
        specs.push(spec_of(
            Some(name),
            vec![name.to_string()],
            &by_model[name],
            shared,
            "--engine-model",
        )?);
    }
    check(&specs)?;
    Ok(specs)
}

fn spec_of(
    label: Option<&str>,
    models: Vec<String>,
    urls: &[&str],
    shared: &Shared,
    flag: &str,
) -> Result<EngineSpec, ConfigError> {
    let source = source_of(urls).map_err(|e| e.within(flag))?;
    Ok(EngineSpec {
        name: label.map_or_else(|| first_url(urls), str::to_string),
        models,
        upstream_model: None,
        source,
        dialect: shared.dialect,
        api_key_env: shared.api_key_env.clone().filter(|v| !v.trim().is_empty()),
        max_concurrency: shared.max_concurrency,
        max_queue: shared.max_queue,
        timeouts: timeouts(
            shared.connect_timeout_seconds,
            shared.idle_timeout_seconds,
            flag,
        )?,
        retries: shared.retries,
        spill_requests_per_minute: DEFAULT_SPILL_PER_MINUTE,
    })
}

fn first_url(urls: &[&str]) -> String {
    urls.first().copied().unwrap_or_default().to_string()
}

/// The replicas `urls` name: all `http://` base URLs, or one `replay:DIR`.
fn source_of(urls: &[&str]) -> Result<Source, ConfigError> {
    if let Some(dir) = urls.iter().find_map(|u| u.strip_prefix("replay:")) {
        if urls.len() > 1 {
            return Err(ConfigError::ReplayAmongUrls {
                dir: dir.to_string(),
            });
        }
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            return Err(ConfigError::NoReplayDirectory { dir });
        }
        return Ok(Source::Replay(dir));
    }
    if urls.is_empty() {
        return Err(ConfigError::NoUrl);
    }
    let mut bases = Vec::new();
    for url in urls {
        let base = BaseUrl::parse(url)?;
        if bases.contains(&base) {
            return Err(ConfigError::ListedTwice { url: base });
        }
        bases.push(base);
    }
    Ok(Source::Upstream(bases))
}

fn timeouts(connect: f64, idle: f64, origin: &str) -> Result<Timeouts, ConfigError> {
    let positive = |name: &'static str, seconds: f64| {
        Duration::try_from_secs_f64(seconds)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| ConfigError::NotPositiveSeconds {
                origin: origin.to_string(),
                name,
                seconds,
            })
    };
    Ok(Timeouts {
        connect: positive("the connect timeout", connect)?,
        idle: positive("the idle timeout", idle)?,
    })
}

/// One entry of `--engine-config`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEngine {
    name: Option<String>,
    #[serde(default)]
    models: Vec<String>,
    upstream_model: Option<String>,
    urls: Vec<String>,
    #[serde(default = "default_dialect")]
    dialect: Dialect,
    api_key_env: Option<String>,
    #[serde(default = "default_concurrency")]
    max_concurrency: usize,
    #[serde(default = "default_queue")]
    max_queue: usize,
    #[serde(default = "default_connect")]
    connect_timeout_seconds: f64,
    #[serde(default = "default_idle")]
    idle_timeout_seconds: f64,
    #[serde(default = "default_retries")]
    retries: u32,
    #[serde(default = "default_spill")]
    spill_requests_per_minute: f64,
}

fn default_dialect() -> Dialect {
    Dialect::Chat
}
fn default_concurrency() -> usize {
    DEFAULT_MAX_CONCURRENCY
}
fn default_queue() -> usize {
    DEFAULT_MAX_QUEUE
}
fn default_connect() -> f64 {
    DEFAULT_CONNECT_TIMEOUT_SECONDS
}
fn default_idle() -> f64 {
    DEFAULT_IDLE_TIMEOUT_SECONDS
}
fn default_retries() -> u32 {
    DEFAULT_RETRIES
}
fn default_spill() -> f64 {
    DEFAULT_SPILL_PER_MINUTE
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    engines: Vec<FileEngine>,
}

/// The engines of an `--engine-config` file (its `text`, read from `path`).
pub fn from_file(path: &Path, text: &str) -> Result<Vec<EngineSpec>, ConfigError> {
    let file: FileConfig = serde_json::from_str(text).map_err(|error| ConfigError::File {
        path: path.to_path_buf(),
        error,
    })?;
    if file.engines.is_empty() {
        return Err(ConfigError::NoEngines {
            path: path.to_path_buf(),
        });
    }
    let mut specs = Vec::new();
    for (index, engine) in file.engines.into_iter().enumerate() {
        let origin = format!("{} engines[{index}]", path.display());
        let urls: Vec<&str> = engine.urls.iter().map(|u| u.trim()).collect();
        let source = source_of(&urls).map_err(|e| e.within(&origin))?;
        if engine.max_concurrency == 0 {
            return Err(ConfigError::NoConcurrency { origin });
        }
        if !(engine.spill_requests_per_minute.is_finite() && engine.spill_requests_per_minute > 0.0)
        {
            return Err(ConfigError::SpillNotPositive { origin });
        }
        if engine.models.iter().any(|m| m.trim().is_empty()) {
            return Err(ConfigError::EmptyModelName { origin });
        }
        specs.push(EngineSpec {
            name: engine.name.unwrap_or_else(|| first_url(&urls)),
            models: engine.models,
            upstream_model: engine.upstream_model.filter(|m| !m.trim().is_empty()),
            source,
            dialect: engine.dialect,
            api_key_env: engine.api_key_env.filter(|v| !v.trim().is_empty()),
            max_concurrency: engine.max_concurrency,
            max_queue: engine.max_queue,
            timeouts: timeouts(
                engine.connect_timeout_seconds,
                engine.idle_timeout_seconds,
                &origin,
            )?,
            retries: engine.retries,
            spill_requests_per_minute: engine.spill_requests_per_minute,
        });
    }
    check(&specs)?;
    Ok(specs)
}

/// At most one default engine, and no model served by two.
fn check(specs: &[EngineSpec]) -> Result<(), ConfigError> {
    let defaults: Vec<String> = specs
        .iter()
        .filter(|s| s.models.is_empty())
        .map(|s| s.name.clone())
        .collect();
    if defaults.len() > 1 {
        return Err(ConfigError::SeveralDefaults { engines: defaults });
    }
    let mut seen = BTreeMap::new();
    for spec in specs {
        for model in &spec.models {
            if let Some(other) = seen.insert(model.as_str(), spec.name.as_str()) {
                return Err(ConfigError::ServedTwice {
                    model: model.clone(),
                    first: other.to_string(),
                    second: spec.name.clone(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Shared {
        Shared {
            dialect: Dialect::Chat,
            api_key_env: None,
            max_concurrency: 4,
            max_queue: 8,
            connect_timeout_seconds: 1.0,
            idle_timeout_seconds: 2.0,
            retries: 1,
        }
    }

    #[test]
    fn base_urls_are_the_sdks_base() {
        let url = BaseUrl::parse("http://127.0.0.1:8000/v1/").unwrap();
        assert_eq!(
            url.join("/chat/completions"),
            "http://127.0.0.1:8000/v1/chat/completions"
        );
        assert_eq!(
            BaseUrl::parse("http://localhost:11434")
                .unwrap()
                .to_string(),
            "http://localhost:11434/v1"
        );
        assert_eq!(
            BaseUrl::parse("http://gpu-box/openai/v1")
                .unwrap()
                .authority,
            "gpu-box:80"
        );
        let https = BaseUrl::parse("https://api.example.com/v1").unwrap_err();
        assert!(
            matches!(&https, ConfigError::Https { url } if url == "https://api.example.com/v1")
        );
        assert!(
            https.to_string().contains("https is not supported"),
            "{https}"
        );
        let creds = BaseUrl::parse("http://user:sk-secret@host/v1").unwrap_err();
        assert!(matches!(creds, ConfigError::CredentialsInUrl { .. }));
        assert!(
            creds
                .to_string()
                .contains("credentials do not go in the URL"),
            "{creds}"
        );
        let ftp = BaseUrl::parse("ftp://x").unwrap_err();
        assert!(matches!(ftp, ConfigError::NotHttp { .. }));
        assert!(ftp.to_string().contains("http://"), "{ftp}");
        assert!(matches!(
            BaseUrl::parse("http:///v1").unwrap_err(),
            ConfigError::NoHost { .. }
        ));
        assert!(matches!(
            BaseUrl::parse("http://host/v1?x=1").unwrap_err(),
            ConfigError::QueryOrFragment { .. }
        ));
    }

    #[test]
    fn flags_make_a_default_engine_and_one_per_model() {
        let specs = from_flags(
            &["http://a:1/v1".into(), "http://b:2/v1".into()],
            &[
                "qwen=http://c:3/v1".into(),
                "qwen=http://d:4/v1".into(),
                "llama=http://e:5".into(),
            ],
            &shared(),
        )
        .unwrap();
        assert_eq!(specs.len(), 3);
        assert!(specs[0].models.is_empty());
        assert!(matches!(&specs[0].source, Source::Upstream(urls) if urls.len() == 2));
        assert_eq!(specs[1].models, ["qwen"]);
        assert!(matches!(&specs[1].source, Source::Upstream(urls) if urls.len() == 2));
        assert_eq!(specs[2].name, "llama");
        assert_eq!(specs[2].max_queue, 8);
        let error = from_flags(&[], &["qwen".into()], &shared()).unwrap_err();
        assert!(matches!(&error, ConfigError::NotNameUrl { pair } if pair == "qwen"));
        assert!(error.to_string().contains("NAME=URL"), "{error}");
        assert!(matches!(
            from_flags(&[], &["qwen=".into()], &shared()).unwrap_err(),
            ConfigError::NameOrUrlMissing { .. }
        ));
        let error = from_flags(
            &["http://a/v1".into(), "http://a/v1".into()],
            &[],
            &shared(),
        )
        .unwrap_err();
        let ConfigError::In {
            origin,
            error: inner,
        } = &error
        else {
            panic!("{error:?}");
        };
        assert_eq!(origin, "--engine");
        assert!(matches!(**inner, ConfigError::ListedTwice { .. }));
        assert_eq!(
            error.to_string(),
            "--engine: http://a:80/v1 is listed twice"
        );
        let error = from_flags(&["replay:/no/such/dir".into()], &[], &shared()).unwrap_err();
        assert!(
            matches!(&error, ConfigError::In { error, .. }
                if matches!(**error, ConfigError::NoReplayDirectory { .. })),
            "{error:?}"
        );
        assert!(error.to_string().contains("no such directory"), "{error}");
        let mut slow = shared();
        slow.connect_timeout_seconds = -1.0;
        let error = from_flags(&["http://a/v1".into()], &[], &slow).unwrap_err();
        assert!(matches!(
            error,
            ConfigError::NotPositiveSeconds {
                name: "the connect timeout",
                ..
            }
        ));
    }

    #[test]
    fn the_file_has_every_setting_and_refuses_unknown_ones() {
        let path = Path::new("engines.json");
        let specs = from_file(
            path,
            r#"{"engines": [
                {"urls": ["http://a:1/v1"], "api_key_env": "A_KEY", "dialect": "responses"},
                {"name": "small", "models": ["m"], "upstream_model": "org/m-8b",
                 "urls": ["http://b:2/v1"], "max_concurrency": 2, "max_queue": 0,
                 "connect_timeout_seconds": 0.5, "idle_timeout_seconds": 30, "retries": 0,
                 "spill_requests_per_minute": 60}
            ]}"#,
        )
        .unwrap();
        assert_eq!(specs[0].dialect, Dialect::Responses);
        assert_eq!(specs[0].api_key_env.as_deref(), Some("A_KEY"));
        assert_eq!(specs[0].max_concurrency, DEFAULT_MAX_CONCURRENCY);
        assert_eq!(specs[1].upstream_model.as_deref(), Some("org/m-8b"));
        assert_eq!(specs[1].timeouts.idle, Duration::from_secs(30));
        let error = from_file(
            path,
            r#"{"engines": [{"urls": ["http://a/v1"], "key": "x"}]}"#,
        )
        .unwrap_err();
        assert!(matches!(error, ConfigError::File { .. }));
        assert!(error.to_string().contains("unknown field `key`"), "{error}");
        assert!(matches!(
            from_file(path, r#"{"engines": []}"#).unwrap_err(),
            ConfigError::NoEngines { .. }
        ));
        let error = from_file(
            path,
            r#"{"engines": [{"urls": ["http://a/v1"]}, {"urls": ["http://b/v1"]}]}"#,
        )
        .unwrap_err();
        assert!(
            matches!(&error, ConfigError::SeveralDefaults { engines } if engines.len() == 2),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .contains("more than one engine serves every model"),
            "{error}"
        );
        let error = from_file(
            path,
            r#"{"engines": [{"models": ["m"], "urls": ["http://a/v1"]},
                            {"models": ["m"], "urls": ["http://b/v1"]}]}"#,
        )
        .unwrap_err();
        assert!(matches!(&error, ConfigError::ServedTwice { model, .. } if model == "m"));
        assert!(
            error.to_string().contains("served by two engines"),
            "{error}"
        );
        let error = from_file(
            path,
            r#"{"engines": [{"urls": ["http://a/v1"], "idle_timeout_seconds": 0}]}"#,
        )
        .unwrap_err();
        assert!(
            matches!(&error, ConfigError::NotPositiveSeconds { origin, name: "the idle timeout", .. }
                if origin == "engines.json engines[0]"),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .contains("idle timeout must be a positive"),
            "{error}"
        );
        assert!(matches!(
            from_file(
                path,
                r#"{"engines": [{"urls": ["http://a/v1"], "max_concurrency": 0}]}"#
            )
            .unwrap_err(),
            ConfigError::NoConcurrency { .. }
        ));
    }
}
