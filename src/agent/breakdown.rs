//! Where a run's end-to-end time went: the server's own account of each response (the API's
//! work and the engine's queue, prefill and decode), the tools the page ran, the page's own
//! handling of what it sent and received, and what is left — the network, and the browser's
//! delivery of each frame to the page.
//!
//! The parts add up to the end-to-end time:
//!
//! - **API** and **engine**: from each turn's timing summary (`api_us`, `engine`), less the
//!   waits the server modelled in them (`modelled`): measured work, and the simulated model.
//! - **modelled**: those waits — the hosted API's classifier (inside `api_us`) and its hop to
//!   the engine (inside the engine's time) under `--api-costs hosted`, with stated parameters;
//!   0 under local costs. The same formula on both transports, applied to the work each did.
//! - **tools**: the sandbox's time, measured by the page.
//! - **client**: the page's measured work — encoding each request, decoding and applying each
//!   event ([`TurnRecord::client_ms`]) — and its work between one terminal event and the next
//!   request besides the tools (building the request, keeping the files).
//! - **link**: the time the emulated network link added to each turn's round trip — the
//!   request's way up and its terminal message's way down — as the server that emulates it
//!   reports it (`link.up_us + link.down_us`); 0 on loopback.
//! - **network**: the rest, so never measured directly: for each turn, the page's time minus the
//!   server's, the link's and the page's own — the loopback wire, the server's socket, and the
//!   browser handing each frame to the page. Over WebSocket each event is a frame the browser
//!   hands to the page on its own; over HTTP a chunk of the body carries many, so this part holds
//!   the browser's per-frame cost, which no page code can see.
//!
//! A turn where a long-running response paused (`response.done`) has no summary of its own: the
//! one at the response's end covers every turn of it. A run that ended before that (stopped,
//! failed, out of turns) never got it: its server part is unknown, not zero.
//!
//! A turn without a summary (a server that does not send one) leaves the server's part unknown,
//! and so the network's: the breakdown then says so rather than guess.
//!
//! [`TurnRecord::client_ms`]: crate::agent::TurnRecord::client_ms

use crate::agent::AgentRun;
use crate::agent::stats::Spread;

/// The server's parts of a run, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerParts {
    /// The API's own time, measured: parsing, loading, rendering, validating, classifying,
    /// persisting (its modelled classifier is in [`ServerParts::modelled_ms`]).
    pub api_ms: f64,
    /// Waiting for a decoding slot.
    pub queue_ms: f64,
    /// Admission to the first token: prefill of the prompt tokens the engine had not cached.
    pub prefill_ms: f64,
    /// First to last token.
    pub decode_ms: f64,
    /// The rest of the engine's time: the call's edges (its modelled hop is in
    /// [`ServerParts::modelled_ms`]).
    pub engine_other_ms: f64,
    /// The waits the server modelled (`--api-costs`): the classifier and the engine hop.
    pub modelled_ms: f64,
}

impl ServerParts {
    /// The engine's whole part.
    pub fn engine_ms(&self) -> f64 {
        self.queue_ms + self.prefill_ms + self.decode_ms + self.engine_other_ms
    }
}

/// One run's end-to-end time, split.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Breakdown {
    pub end_to_end_ms: f64,
    /// `None` when a completed turn has no API/engine split from the server.
    pub server: Option<ServerParts>,
    pub tools_ms: f64,
    pub client_ms: f64,
    /// Events the page handled (the client part's per-event cost is `client_ms / events`).
    pub events: u64,
    /// What the emulated link added, as the server reported it; `None` when the server's part
    /// is unknown.
    pub link_ms: Option<f64>,
    /// What is left; `None` when the server's part is unknown.
    pub network_ms: Option<f64>,
}

/// One part of a [`Breakdown`], for tables and bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Api,
    Engine,
    Tools,
    Client,
    Link,
    Network,
    /// Not measured: the waits the server modelled for a hosted API's services.
    Modelled,
}

impl Part {
    /// Every part, the measured ones first.
    pub const ALL: [Part; 7] = [
        Part::Api,
        Part::Engine,
        Part::Tools,
        Part::Client,
        Part::Link,
        Part::Network,
        Part::Modelled,
    ];

    /// Whether the part is time this machine spent (the server's work, the simulated model's
    /// pacing, the emulated link, the page), as opposed to a wait the server modelled.
    pub fn is_measured(self) -> bool {
        self != Part::Modelled
    }

    /// Whether the transport changes the part's work: not the engine's decoding or the tools'
    /// runs, the same work on both legs (what they differ by is their run-to-run spread).
    pub fn depends_on_transport(self) -> bool {
        !matches!(self, Part::Engine | Part::Tools)
    }

    /// A stable name for CSS classes and tests.
    pub fn id(self) -> &'static str {
        match self {
            Part::Api => "api",
            Part::Engine => "engine",
            Part::Tools => "tools",
            Part::Client => "client",
            Part::Link => "link",
            Part::Network => "network",
            Part::Modelled => "modelled",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Part::Api => "API overhead (measured)",
            Part::Engine => "Engine (simulated model: queue, prefill, decode)",
            Part::Tools => "Tools (sandbox in the page)",
            Part::Client => "Client-side handling",
            Part::Link => "Link (emulated wire)",
            Part::Network => "Frame delivery and loopback (the rest)",
            Part::Modelled => "Modelled hosted services (not measured)",
        }
    }

    /// What a part that took no time in a run shows: why it did not happen, not "0.00 ms".
    /// `None` for a part that always happens.
    pub fn absent(self) -> Option<&'static str> {
        match self {
            Part::Modelled => Some("– (none: local costs)"),
            Part::Link => Some("– (none: no link emulated)"),
            _ => None,
        }
    }

    /// The part in a sentence: `API overhead`, `engine`, `network and frame delivery`.
    pub fn noun(self) -> &'static str {
        match self {
            Part::Api => "API overhead",
            Part::Engine => "engine",
            Part::Tools => "tools",
            Part::Client => "client-side handling",
            Part::Link => "link",
            Part::Network => "frame delivery",
            Part::Modelled => "modelled hosted services",
        }
    }

    /// What the part is made of, in a sentence (a tooltip, the docs).
    pub fn explanation(self) -> &'static str {
        match self {
            Part::Api => {
                "the server's own work per request, as it measured it (api_us, less any \
                 modelled wait): parsing, loading a stored response, rendering the conversation \
                 into tokens, validating, classifying"
            }
            Part::Engine => {
                "the simulated model (engine), paced by its profile: waiting for a slot, \
                 prefill of the prompt tokens its prompt cache did not hold, and decoding"
            }
            Part::Tools => "the tool calls, run by the sandbox in this page",
            Part::Client => {
                "this page's measured work: encoding each request, decoding and applying each \
                 event, and its work between turns"
            }
            Part::Link => {
                "what the emulated network link added to each turn, as the server reports it \
                 (link.up_us + link.down_us): the request's way up, serialised at the link's \
                 bandwidth, and the reply's way down; 0 on loopback"
            }
            Part::Network => {
                "what is left: the loopback wire, the server's socket, and the browser handing \
                 each frame to the page (one task per WebSocket frame; an HTTP chunk carries \
                 many events)"
            }
            Part::Modelled => {
                "waits the server modelled, not measured: with hosted API costs, a safety \
                 classifier at 5.7 µs per token it scans (the whole conversation over HTTP, the \
                 new input over WebSocket) and a 1 ms hop to the engine per call; 0 with local \
                 costs"
            }
        }
    }
}

impl Breakdown {
    /// The breakdown of `run` so far; `None` before anything came back.
    pub fn of(run: &AgentRun) -> Option<Breakdown> {
        let totals = crate::agent::RunTotals::of(run);
        let end_to_end_ms = totals.end_to_end_ms?;
        let mut server = Some(ServerParts::default());
        let mut link_ms = 0.0;
        let mut client_ms = 0.0;
        let mut events = 0;
        // Paused turns whose response's summary, which covers them, has not come.
        let mut uncovered = false;
        // A turn that did not complete, at the end of a stopped or failed run, is after the
        // run's counted time (which ends where it was sent).
        let counted = run.turns.len() - usize::from(totals.unfinished_turn.is_some());
        for (i, turn) in run.turns[..counted].iter().enumerate() {
            client_ms += turn.client_ms;
            events += turn.events;
            if let Some(completed) = turn.completed_at {
                match turn
                    .server
                    .as_ref()
                    .and_then(|s| Some((s.api_ms?, s.engine.as_ref()?)))
                {
                    Some((api, engine)) => {
                        uncovered = false;
                        link_ms += turn
                            .server
                            .as_ref()
                            .and_then(|s| s.link_ms())
                            .unwrap_or(0.0);
                        if let Some(parts) = server.as_mut() {
                            let (classify, hop) = turn
                                .server
                                .as_ref()
                                .map_or((0.0, 0.0), |s| s.modelled_split());
                            parts.api_ms += (api - classify).max(0.0);
                            parts.queue_ms += engine.queue_ms;
                            parts.prefill_ms += engine.prefill_ms;
                            parts.decode_ms += engine.decode_ms;
                            parts.engine_other_ms += (engine.other_ms() - hop).max(0.0);
                            parts.modelled_ms += classify.min(api) + hop.min(engine.other_ms());
                        }
                    }
                    // A long-running response reports its stages once, at its end, for all of
                    // its turns.
                    None if turn.paused => uncovered = true,
                    None => server = None,
                }
                // Between this turn's terminal event and the next request (first sent: an
                // attempt a lost connection cut short is the next turn's, in the rest): the
                // tools and the page's own work.
                if let Some(next) = run.turns.get(i + 1) {
                    client_ms += (next.first_sent_at() - completed - turn.tool_ms).max(0.0);
                }
            }
        }
        if uncovered {
            server = None;
        }
        let rest = server.map(|parts| {
            end_to_end_ms
                - parts.api_ms
                - parts.engine_ms()
                - parts.modelled_ms
                - totals.tool_ms
                - client_ms
        });
        // The link's time is part of the rest (a timer firing late shows as more of the rest).
        let link_ms = rest.map(|rest| link_ms.min(rest.max(0.0)));
        let network_ms = rest.zip(link_ms).map(|(rest, link)| (rest - link).max(0.0));
        Some(Breakdown {
            end_to_end_ms,
            server,
            tools_ms: totals.tool_ms,
            client_ms,
            events,
            link_ms,
            network_ms,
        })
    }

    /// The milliseconds of `part`; `None` when unknown.
    pub fn part(&self, part: Part) -> Option<f64> {
        match part {
            Part::Api => self.server.map(|s| s.api_ms),
            Part::Engine => self.server.map(|s| s.engine_ms()),
            Part::Tools => Some(self.tools_ms),
            Part::Client => Some(self.client_ms),
            Part::Link => self.link_ms,
            Part::Network => self.network_ms,
            Part::Modelled => self.server.map(|s| s.modelled_ms),
        }
    }

    /// The run's time this machine spent, everything but the modelled waits; `None` when the
    /// server's part is unknown.
    pub fn measured_ms(&self) -> Option<f64> {
        Some(self.end_to_end_ms - self.server?.modelled_ms)
    }

    /// The page's measured handling per event received, in microseconds.
    pub fn client_us_per_event(&self) -> Option<f64> {
        (self.events > 0).then(|| self.client_ms * 1000.0 / self.events as f64)
    }
}

/// The median (and range) of `part` over `runs`; `None` when any run lacks it.
pub fn part_spread(runs: &[Breakdown], part: Part) -> Option<Spread> {
    let values: Option<Vec<f64>> = runs.iter().map(|b| b.part(part)).collect();
    Spread::of(values?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{ServerTimings, TurnRecord};
    use serde_json::json;
    use tether_protocol::ResponseCreate;

    /// A turn sent at `sent` that completed `response` ms later, the server reporting `api` ms
    /// of its own and `engine` ms (prefill, decode) of the engine's.
    fn turn(sent: f64, response: f64, api: u64, engine: (u64, u64)) -> TurnRecord {
        let mut t = TurnRecord::new(1, &ResponseCreate::new("m", "x"), sent);
        t.first_event_at = Some(sent + 1.0);
        t.completed_at = Some(sent + response);
        let (prefill, decode) = engine;
        t.server = ServerTimings::parse(&json!({"path": "http", "stages": {},
            "api_us": api * 1000,
            "engine": {"queue_us": 0, "prefill_us": prefill * 1000, "decode_us": decode * 1000,
                       "service_total_us": (prefill + decode) * 1000, "service_ttft_us": 0,
                       "iapi_ttft_us": 0, "iapi_total_us": (prefill + decode + 1) * 1000}}));
        t
    }

    /// A run that failed on a turn nothing came back for (its server gone, the resend lost
    /// too): its time is counted until that turn was first sent, the turns before whole and
    /// split, the page's handling after the last of them until then.
    #[test]
    fn a_run_failed_on_an_unanswered_turn_is_split_until_that_turn() {
        use crate::agent::{Resume, RunStatus};
        let request = ResponseCreate::new("m", "x");
        let mut first = turn(0.0, 100.0, 10, (30, 50));
        first.tool_ms = 40.0;
        first.client_ms = 3.0;
        let mut second = turn(150.0, 60.0, 5, (20, 25));
        second.tool_ms = 5.0;
        let mut gone = TurnRecord::new(3, &request, 230.0);
        gone.client_ms = 0.5;
        gone.restart(&request, 1_900.0, Resume::FullContext);
        gone.resumed = Some(Resume::Failed);
        let run = AgentRun {
            status: RunStatus::Failed,
            turns: vec![first, second, gone],
            ..AgentRun::default()
        };
        let totals = crate::agent::RunTotals::of(&run);
        assert_eq!(totals.unfinished_turn, Some(3));
        assert_eq!(
            totals.end_to_end_ms,
            Some(230.0),
            "until turn 3 was first sent"
        );
        let b = Breakdown::of(&run).unwrap();
        assert_eq!(b.end_to_end_ms, 230.0);
        assert_eq!(b.part(Part::Tools), Some(45.0));
        // 3 ms measured, 10 ms after turn 1's tools, 15 ms after turn 2's.
        assert_eq!(b.client_ms, 3.0 + 10.0 + 15.0);
        assert!(b.server.is_some(), "both turns were split by the server");
        // While it runs, or with one turn only, nothing is cut.
        let running = AgentRun {
            status: RunStatus::Running,
            ..run.clone()
        };
        assert_eq!(crate::agent::RunTotals::of(&running).unfinished_turn, None);
    }

    /// A run stopped while a turn streamed: that turn's time (its first token, its streaming)
    /// was the model's, which the server never split; it is not counted as the rest (frame
    /// delivery) but left out, the run's time counted until it was sent.
    #[test]
    fn a_run_stopped_mid_turn_is_split_until_that_turn() {
        use crate::agent::RunStatus;
        let first = turn(0.0, 100.0, 10, (30, 50));
        let second = turn(150.0, 60.0, 5, (20, 25));
        let mut cut = TurnRecord::new(3, &ResponseCreate::new("m", "x"), 230.0);
        cut.first_event_at = Some(234.0);
        cut.last_token_at = Some(1_800.0);
        let run = AgentRun {
            status: RunStatus::Stopped,
            turns: vec![first, second, cut],
            ..AgentRun::default()
        };
        let totals = crate::agent::RunTotals::of(&run);
        assert_eq!(totals.unfinished_turn, Some(3));
        assert!(!totals.nothing_back, "its first events came");
        assert_eq!(totals.end_to_end_ms, Some(230.0));
        let b = Breakdown::of(&run).unwrap();
        // The two whole turns' parts and the gaps between them; no 1.5 s of "rest".
        assert!(b.part(Part::Network).unwrap() < 100.0, "{b:?}");
    }

    /// A long-running response's paused turns are covered by the summary at its end; a run
    /// that ended before it came has its server's part unknown, not 0 ms.
    #[test]
    fn paused_turns_without_their_responses_summary_leave_the_server_unknown() {
        let paused = |sent: f64| {
            let mut t = turn(sent, 100.0, 0, (0, 0));
            t.server = None;
            t.paused = true;
            t
        };
        let cut = AgentRun {
            turns: vec![paused(0.0), paused(150.0)],
            ..AgentRun::default()
        };
        let b = Breakdown::of(&cut).unwrap();
        assert_eq!((b.server, b.link_ms, b.network_ms), (None, None, None));
        assert_eq!(b.part(Part::Api), None);
        // With the summary at the response's end, the parts are known.
        let mut whole = cut.clone();
        whole.turns.push(turn(300.0, 100.0, 10, (30, 50)));
        let b = Breakdown::of(&whole).unwrap();
        assert_eq!(b.server.unwrap().api_ms, 10.0);
    }

    #[test]
    fn the_parts_add_up_to_the_end_to_end_time() {
        let mut first = turn(0.0, 100.0, 10, (30, 50));
        first.tool_ms = 40.0;
        first.client_ms = 3.0;
        first.events = 30;
        // The next request leaves 45 ms after the first completed: 40 ms of tools, 5 of the page.
        let mut second = turn(145.0, 60.0, 5, (20, 25));
        second.client_ms = 1.0;
        second.events = 10;
        let run = AgentRun {
            turns: vec![first, second],
            ..AgentRun::default()
        };
        let b = Breakdown::of(&run).unwrap();
        assert_eq!(b.end_to_end_ms, 205.0);
        let server = b.server.unwrap();
        assert_eq!(
            (server.api_ms, server.prefill_ms, server.decode_ms),
            (15.0, 50.0, 75.0)
        );
        assert_eq!(server.engine_other_ms, 2.0);
        assert_eq!(server.modelled_ms, 0.0, "local costs: nothing modelled");
        assert_eq!((b.tools_ms, b.client_ms, b.events), (40.0, 9.0, 40));
        // 205 − 15 (API) − 127 (engine) − 40 (tools) − 9 (client).
        assert_eq!(b.network_ms, Some(14.0));
        assert_eq!(b.link_ms, Some(0.0), "no link");
        let sum: f64 = Part::ALL.iter().map(|p| b.part(*p).unwrap()).sum();
        assert!((sum - b.end_to_end_ms).abs() < 1e-9);
        assert_eq!(b.client_us_per_event(), Some(225.0));
    }

    #[test]
    fn the_modelled_waits_are_a_part_of_their_own() {
        // 10 ms of API time of which 6 ms the modelled classifier; the engine's 1 ms beyond
        // prefill and decode is its modelled hop.
        let mut t = turn(0.0, 100.0, 10, (30, 50));
        t.server.as_mut().unwrap().modelled =
            vec![("classify".into(), 6.0), ("engine_hop".into(), 1.0)];
        let run = AgentRun {
            turns: vec![t],
            ..AgentRun::default()
        };
        let b = Breakdown::of(&run).unwrap();
        let server = b.server.unwrap();
        assert_eq!((server.api_ms, server.engine_other_ms), (4.0, 0.0));
        assert_eq!(b.part(Part::Modelled), Some(7.0));
        assert_eq!(b.part(Part::Engine), Some(80.0));
        assert_eq!(b.measured_ms(), Some(93.0));
        let sum: f64 = Part::ALL.iter().map(|p| b.part(*p).unwrap()).sum();
        assert!((sum - b.end_to_end_ms).abs() < 1e-9);
        assert_eq!(
            Part::ALL.iter().filter(|p| !p.is_measured()).count(),
            1,
            "only the modelled part"
        );
    }

    #[test]
    fn the_links_time_is_split_from_the_rest() {
        let mut t = turn(0.0, 300.0, 10, (30, 50));
        t.server.as_mut().unwrap().link = Some(crate::agent::LinkTimings {
            up_bytes: 400_000,
            up_ms: 180.0,
            down_bytes: 2_000,
            down_ms: 20.0,
            budget_exhausted: false,
        });
        let run = AgentRun {
            turns: vec![t],
            ..AgentRun::default()
        };
        let b = Breakdown::of(&run).unwrap();
        // 300 − 10 − 81 = 209 on the way: 200 the link's, 9 the rest.
        assert_eq!((b.link_ms, b.network_ms), (Some(200.0), Some(9.0)));
        let sum: f64 = Part::ALL.iter().map(|p| b.part(*p).unwrap()).sum();
        assert!((sum - b.end_to_end_ms).abs() < 1e-9);
    }

    #[test]
    fn without_the_servers_split_the_network_is_not_guessed() {
        let mut t = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        t.first_event_at = Some(1.0);
        t.completed_at = Some(50.0);
        let run = AgentRun {
            turns: vec![t],
            ..AgentRun::default()
        };
        let b = Breakdown::of(&run).unwrap();
        assert_eq!((b.server, b.network_ms, b.link_ms), (None, None, None));
        assert_eq!(b.part(Part::Api), None);
        assert_eq!(b.part(Part::Tools), Some(0.0));
        assert_eq!(Breakdown::of(&AgentRun::default()), None);
    }

    #[test]
    fn a_part_spreads_over_runs_that_all_have_it() {
        let run = |api: u64| AgentRun {
            turns: vec![turn(0.0, 100.0, api, (10, 10))],
            ..AgentRun::default()
        };
        let runs: Vec<Breakdown> = [4, 8, 6]
            .into_iter()
            .map(|api| Breakdown::of(&run(api)).unwrap())
            .collect();
        let api = part_spread(&runs, Part::Api).unwrap();
        assert_eq!((api.median, api.min, api.max), (6.0, 4.0, 8.0));
        let mut unknown = runs.clone();
        unknown[1].server = None;
        assert_eq!(part_spread(&unknown, Part::Api), None);
    }
}
