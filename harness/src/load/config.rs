//! The load generator's options: the `tether-load` command line, and the library's input.

use std::time::Duration;

use clap::{Parser, ValueEnum};
use serde::Serialize;

/// How the clients talk to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// WebSocket mode: one connection per client, `store:false` (unless `--store`) and
    /// `previous_response_id`, so each turn sends only the new items.
    Ws,
    /// Stateless HTTP: `POST /v1/responses` with `stream:true` and `store:false`, re-sending
    /// the whole conversation every turn.
    Http,
    /// Chained HTTP: `store:true` and `previous_response_id` (the server loads the context
    /// from its store).
    HttpChained,
    /// Client i uses ws, http, http-chained for i mod 3 = 0, 1, 2.
    Mixed,
}

impl Transport {
    /// The transport of client `index` (`mixed` deals them out in turn).
    pub fn of_client(self, index: usize) -> Transport {
        match self {
            Transport::Mixed => [Transport::Ws, Transport::Http, Transport::HttpChained][index % 3],
            other => other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Transport::Ws => "ws",
            Transport::Http => "http",
            Transport::HttpChained => "http-chained",
            Transport::Mixed => "mixed",
        }
    }
}

/// How open-loop arrivals are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process) with mean 1/rate.
    Poisson,
    /// Every 1/rate exactly.
    Fixed,
}

/// Load generator for Tether: N clients, each a chained agent loop of M turns.
///
/// Each conversation: turn 1 sends a task with one function tool (`shell`); the simulator
/// answers with a call of it; the client answers with a `function_call_output` of
/// --tool-output-tokens tokens (after --tool-time-ms), chained with previous_response_id (or,
/// over stateless HTTP, by re-sending the conversation). Turns before the last ask for a call
/// (`tool_choice: required`); the last one (`auto`) gets the model's text answer, whose length
/// --output-tokens sets. Then a new conversation begins.
#[derive(Debug, Clone, Parser)]
#[command(name = "tether-load", version)]
pub struct LoadArgs {
    /// Base URL of the server (http://host:port, optionally ending in /v1).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// ws | http | http-chained | mixed.
    #[arg(long, value_enum, default_value = "ws")]
    pub transport: Transport,
    /// Concurrent agents (each with its own connection). Default 10, or 0 with --idle.
    #[arg(long)]
    pub clients: Option<usize>,
    /// Turns per conversation (M).
    #[arg(long, default_value_t = 10)]
    pub turns: usize,
    /// Conversations per client, one after another (without --duration).
    #[arg(long, default_value_t = 1)]
    pub conversations: usize,
    /// Model (a server profile: tether-sim, flagship, spark, burst, instant).
    #[arg(long, default_value = "instant")]
    pub model: String,
    /// `metadata.sim_output_tokens`: length of the text answer (the last turn of each
    /// conversation; tool-call turns stream only the call's arguments).
    #[arg(long)]
    pub output_tokens: Option<usize>,
    /// `metadata.sim_reasoning_tokens`: a reasoning item of this many tokens every turn.
    #[arg(long)]
    pub reasoning_tokens: Option<usize>,
    /// Size of each tool output, in tokens (approximate: see the README).
    #[arg(long, default_value_t = 1000)]
    pub tool_output_tokens: usize,
    /// Instructions of this many tokens sent with every request (0: none).
    #[arg(long, default_value_t = 0)]
    pub instructions_tokens: usize,
    /// Client-side tool time between a tool call and its output, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub tool_time_ms: u64,
    /// Reconnect each WebSocket client every K turns: the next turn continues with
    /// previous_response_id if --store, else re-sends the full context.
    #[arg(long, value_name = "K")]
    pub churn: Option<usize>,
    /// WebSocket mode with `store:true` (responses also persisted).
    #[arg(long)]
    pub store: bool,
    /// Run for this long (e.g. 30s, 10m) instead of a fixed number of turns; conversations
    /// repeat until then.
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Open loop: start turns at this aggregate rate (turns/s) on agents whose previous turn
    /// (and tool time) has finished; an arrival finding no agent free counts as missed.
    #[arg(long, value_name = "TURNS_PER_SECOND")]
    pub rate: Option<f64>,
    /// Spacing of open-loop arrivals.
    #[arg(long, value_enum, default_value = "poisson")]
    pub arrivals: Arrivals,
    /// Open N WebSocket connections, complete the upgrades and hold them idle (for --duration,
    /// default 10 s, or for the whole run alongside --clients agents), then report.
    #[arg(long, value_name = "N")]
    pub idle: Option<usize>,
    /// Connections being opened at once.
    #[arg(long, default_value_t = 256)]
    pub connect_concurrency: usize,
    /// API key, sent as `Authorization: Bearer KEY`.
    #[arg(long, env = "TETHER_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// PID of the server, for its RSS and CPU (default: the local process listening on the
    /// URL's port, if it can be found).
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Do not ask for the server's stage timings (`x-tether-timing: 1`).
    #[arg(long)]
    pub no_timing: bool,
    /// A turn taking longer than this fails with `timeout`.
    #[arg(long, value_parser = parse_duration, default_value = "60s")]
    pub turn_timeout: Duration,
    /// Seed of the open-loop arrival times.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads of the load generator's runtime (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

impl LoadArgs {
    /// Active agents: `--clients`, else 10 (0 with --idle).
    pub fn client_count(&self) -> usize {
        self.clients
            .unwrap_or(if self.idle.is_some() { 0 } else { 10 })
    }

    /// Checks option combinations that cannot work.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.turns >= 1, "--turns must be at least 1");
        anyhow::ensure!(
            self.conversations >= 1,
            "--conversations must be at least 1"
        );
        if let Some(rate) = self.rate {
            anyhow::ensure!(
                rate.is_finite() && rate > 0.0,
                "--rate must be a positive number"
            );
            anyhow::ensure!(self.client_count() > 0, "--rate needs --clients");
        }
        if let Some(k) = self.churn {
            anyhow::ensure!(k >= 1, "--churn must be at least 1");
        }
        anyhow::ensure!(
            self.connect_concurrency >= 1,
            "--connect-concurrency must be at least 1"
        );
        anyhow::ensure!(
            self.client_count() > 0 || self.idle.is_some_and(|n| n > 0),
            "nothing to do: --clients 0 and no --idle"
        );
        Ok(())
    }
}

/// `250ms`, `30s`, `10m`, `2h`, or a number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("not a duration: '{text}' (try 30s, 500ms, 10m)"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("unknown unit '{unit}' in '{text}' (ms, s, m, h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("not a duration: '{text}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn mixed_deals_transports_out_in_turn() {
        let all: Vec<_> = (0..4).map(|i| Transport::Mixed.of_client(i)).collect();
        assert_eq!(
            all,
            [
                Transport::Ws,
                Transport::Http,
                Transport::HttpChained,
                Transport::Ws
            ]
        );
    }

    #[test]
    fn idle_alone_means_no_agents() {
        let args = LoadArgs::parse_from(["tether-load", "--idle", "5"]);
        assert_eq!(args.client_count(), 0);
        args.validate().unwrap();
        let args = LoadArgs::parse_from(["tether-load"]);
        assert_eq!(args.client_count(), 10);
    }
}
