//! The per-turn chart: every turn of a run as a bar of its parts — the API's work, the engine's
//! wait, prefill and decode, the tools, the link, the rest of the way, the page's own handling —
//! with the context the turn sent the model as a line, for each leg of a comparison on the same
//! scales, so that a reader sees HTTP's turns grow with the conversation while WebSocket's stay
//! flat. What each bar is made of comes from [`turn_bars`]; where it goes on the page from
//! [`Chart::layout`]. The component only draws the rectangles and lines it is given.
//!
//! The waits the server modelled (a hosted API's classifier and hop to the engine) are a segment
//! of their own, on top of each bar's measured ones, so that what was not measured is drawn apart.
//!
//! A turn's parts add up to its share of the run's end-to-end time, the same split as the run's
//! [`Breakdown`](crate::agent::Breakdown) but turn by turn: the response's time (request sent to
//! terminal event) is the server's (API and engine), the page's measured handling and the rest;
//! after it, the tools and the page's own work until the next request.

use crate::agent::duration::{Precision, format_duration};
use crate::agent::{AgentRun, Part};

/// One segment of a turn's bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// The server's own work (`api_us`), as it measured it.
    Api,
    /// The engine's wait for a slot and its call's edges.
    Wait,
    Prefill,
    Decode,
    Tools,
    /// The time the emulated link held the turn's bytes, as the server reports it.
    Link,
    /// The rest of the way: the wire (loopback here), the server's socket, and the browser
    /// handing each frame to the page.
    Delivery,
    /// The page's measured work: encoding, decoding and applying, between turns.
    Client,
    /// Not measured: the waits the server modelled (the hosted classifier, the engine hop).
    Modelled,
    /// A response the server did not split (no timing summary), or a turn of a long-running
    /// response (whose one summary covers all its turns): its time, undivided.
    Unsplit,
}

impl Segment {
    /// Bottom to top.
    pub const ALL: [Segment; 10] = [
        Segment::Api,
        Segment::Wait,
        Segment::Prefill,
        Segment::Decode,
        Segment::Tools,
        Segment::Link,
        Segment::Delivery,
        Segment::Client,
        Segment::Modelled,
        Segment::Unsplit,
    ];

    /// A stable name for CSS classes and tests.
    pub fn id(self) -> &'static str {
        match self {
            Segment::Api => "api",
            Segment::Wait => "wait",
            Segment::Prefill => "prefill",
            Segment::Decode => "decode",
            Segment::Tools => "tools",
            Segment::Link => "link",
            Segment::Delivery => "delivery",
            Segment::Client => "client",
            Segment::Modelled => "modelled",
            Segment::Unsplit => "unsplit",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Segment::Api => "API work (measured)",
            Segment::Wait => "engine: queue and the call's edges",
            Segment::Prefill => "engine: prefill",
            Segment::Decode => "engine: decode",
            Segment::Tools => "tools",
            Segment::Link => "link (emulated)",
            Segment::Delivery => "frame delivery and loopback",
            Segment::Client => "client handling",
            Segment::Modelled => "modelled, not measured: hosted classifier and engine hop",
            Segment::Unsplit => {
                "response, not split per turn (no summary, a long-running one's, or an attempt \
                 a lost connection cut short)"
            }
        }
    }

    /// The part of the run's breakdown this segment belongs to (its colour family).
    pub fn part(self) -> Option<Part> {
        match self {
            Segment::Api => Some(Part::Api),
            Segment::Wait | Segment::Prefill | Segment::Decode => Some(Part::Engine),
            Segment::Tools => Some(Part::Tools),
            Segment::Link | Segment::Delivery => Some(Part::Network),
            Segment::Client => Some(Part::Client),
            Segment::Modelled => Some(Part::Modelled),
            Segment::Unsplit => None,
        }
    }

    fn index(self) -> usize {
        Segment::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// One turn of a run, split.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnBar {
    /// 1-based.
    pub turn: usize,
    /// Milliseconds per segment, in [`Segment::ALL`]'s order.
    pub ms: [f64; Segment::ALL.len()],
    /// The prompt the model read this turn (`usage.input_tokens`).
    pub context_tokens: u64,
    /// Bytes the page sent for the turn.
    pub sent_bytes: u64,
}

impl TurnBar {
    /// The milliseconds of `segment`.
    pub fn get(&self, segment: Segment) -> f64 {
        self.ms[segment.index()]
    }

    /// The turn's whole time.
    pub fn total_ms(&self) -> f64 {
        self.ms.iter().sum()
    }

    fn add(&mut self, segment: Segment, ms: f64) {
        self.ms[segment.index()] += ms.max(0.0);
    }
}

/// The completed turns of `run`, each split into its segments.
pub fn turn_bars(run: &AgentRun) -> Vec<TurnBar> {
    let mut bars = Vec::new();
    for (i, turn) in run.turns.iter().enumerate() {
        let Some(completed) = turn.completed_at else {
            continue;
        };
        let mut bar = TurnBar {
            turn: turn.number,
            ms: [0.0; Segment::ALL.len()],
            context_tokens: turn.input_tokens,
            sent_bytes: turn.sent_bytes,
        };
        let response = completed - turn.sent_at;
        // A long-running response's summary comes on its last turn and covers every turn of
        // it: split into this turn's bar, it would draw all of their engine time in one (the
        // totals split it for the run); after paused turns the bar is left undivided too.
        let covers_others = i > 0 && run.turns[i - 1].paused;
        let split = turn
            .server
            .as_ref()
            .filter(|_| !covers_others)
            .and_then(|s| Some((s.api_ms?, s.engine.as_ref()?, s.link_ms())));
        match split {
            Some((api, engine, link)) => {
                // The modelled waits come out of the parts they were spent in: the classifier
                // out of the API's time, the hop out of the engine's.
                let (classify, hop) = turn
                    .server
                    .as_ref()
                    .map_or((0.0, 0.0), |s| s.modelled_split());
                let (classify, hop) = (classify.min(api), hop.min(engine.other_ms()));
                let wait = engine.queue_ms + engine.other_ms() - hop;
                bar.add(Segment::Api, api - classify);
                bar.add(Segment::Modelled, classify + hop);
                bar.add(Segment::Wait, wait);
                bar.add(Segment::Prefill, engine.prefill_ms);
                bar.add(Segment::Decode, engine.decode_ms);
                let engine_ms = wait + hop + engine.prefill_ms + engine.decode_ms;
                let rest = response - api - engine_ms - turn.client_ms;
                let link = link.unwrap_or(0.0).min(rest.max(0.0));
                bar.add(Segment::Link, link);
                bar.add(Segment::Delivery, rest - link);
                bar.add(Segment::Client, turn.client_ms);
            }
            None => {
                bar.add(Segment::Unsplit, response - turn.client_ms);
                bar.add(Segment::Client, turn.client_ms);
            }
        }
        // Attempts a lost connection cut short, before the turn was sent again: its own time,
        // undivided.
        bar.add(Segment::Unsplit, turn.lost_ms);
        bar.add(Segment::Tools, turn.tool_ms);
        // Until the next turn was first sent: what came after is that turn's.
        if let Some(next) = run.turns.get(i + 1) {
            bar.add(
                Segment::Client,
                next.first_sent_at() - completed - turn.tool_ms,
            );
        }
        bars.push(bar);
    }
    bars
}

/// Where the chart goes: its width, the height of one leg's panel and the margins, in the
/// SVG's own units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChartSize {
    pub width: f64,
    pub panel_height: f64,
    /// Room for the time axis's labels.
    pub left: f64,
    /// Room for the context axis's labels.
    pub right: f64,
    /// Room for a panel's title.
    pub top: f64,
    /// Room for the turn axis's labels.
    pub bottom: f64,
}

impl Default for ChartSize {
    fn default() -> Self {
        ChartSize {
            width: 720.0,
            panel_height: 150.0,
            left: 56.0,
            right: 52.0,
            top: 22.0,
            bottom: 24.0,
        }
    }
}

impl ChartSize {
    /// For a phone's width (360 units drawn about as many pixels wide, so the labels keep their
    /// size): the chart fits the screen instead of scrolling sideways.
    pub fn narrow() -> Self {
        ChartSize {
            width: 360.0,
            left: 46.0,
            right: 36.0,
            ..ChartSize::default()
        }
    }
}

/// A rectangle of one segment of one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct BarRect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub segment: Segment,
    pub turn: usize,
    pub ms: f64,
}

/// A label on an axis, where it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub at: f64,
    pub label: String,
}

/// One leg's panel, in the chart's coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: String,
    /// The panel's top edge.
    pub top: f64,
    /// The plot area: left, top, right, bottom.
    pub plot: (f64, f64, f64, f64),
    pub rects: Vec<BarRect>,
    /// The context line: one point per turn.
    pub context: Vec<(f64, f64)>,
    pub time_ticks: Vec<Tick>,
    pub context_ticks: Vec<Tick>,
    pub turn_ticks: Vec<Tick>,
}

/// The whole chart: one panel per leg, on shared scales.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub width: f64,
    pub height: f64,
    pub panels: Vec<Panel>,
    /// The segments any turn has, for the legend.
    pub segments: Vec<Segment>,
    /// The scales' tops: the longest turn, the largest context.
    pub max_ms: f64,
    pub max_tokens: u64,
}

/// `max` rounded up to a step of 1, 2 or 5 × 10ⁿ that divides it into at most `count` parts;
/// the ticks from 0 to that top.
pub fn nice_ticks(max: f64, count: usize) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) || count == 0 {
        return vec![0.0];
    }
    let raw = max / count as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude);
    let steps = (max / step - 1e-9).ceil().max(1.0) as usize;
    (0..=steps).map(|i| i as f64 * step).collect()
}

/// `0`, `50k`, `1.5M`: a token count on an axis.
pub fn short_count(value: f64) -> String {
    if value >= 1e6 {
        format!("{}M", trim(value / 1e6))
    } else if value >= 1e3 {
        format!("{}k", trim(value / 1e3))
    } else {
        format!("{value:.0}")
    }
}

fn trim(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

/// `0`, `200 ms`, `10 ms`, `2.5 ms`, `1.5 s`: a time on an axis — a round tick, so without the
/// `.0` that would not fit the phone's margin.
fn time_label(ms: f64) -> String {
    if ms == 0.0 {
        "0".to_string()
    } else if ms >= 1000.0 {
        format!("{} s", trim(ms / 1000.0))
    } else if ms >= 1.0 {
        format!("{} ms", trim(ms))
    } else {
        format_duration(ms, Precision::BySize)
    }
}

impl Chart {
    /// The panels of `legs` — each a title and its turns — in `size`, on one time scale and one
    /// context scale, one slot per turn of the longest leg.
    pub fn layout(legs: &[(String, Vec<TurnBar>)], size: ChartSize) -> Chart {
        let longest = legs.iter().map(|(_, bars)| bars.len()).max().unwrap_or(0);
        let max_ms = legs
            .iter()
            .flat_map(|(_, bars)| bars.iter().map(TurnBar::total_ms))
            .fold(0.0, f64::max);
        let max_tokens = legs
            .iter()
            .flat_map(|(_, bars)| bars.iter().map(|b| b.context_tokens))
            .max()
            .unwrap_or(0);
        let time_steps = nice_ticks(max_ms, 4);
        let time_top = time_steps
            .last()
            .copied()
            .filter(|t| *t > 0.0)
            .unwrap_or(1.0);
        let token_steps = nice_ticks(max_tokens as f64, 4);
        let token_top = token_steps
            .last()
            .copied()
            .filter(|t| *t > 0.0)
            .unwrap_or(1.0);
        // Every part a Tether server reports, always, so the legend never grows while a run
        // goes (and moves nothing below it); an unsplit response only when there is one.
        let segments: Vec<Segment> = Segment::ALL
            .into_iter()
            .filter(|s| {
                *s != Segment::Unsplit
                    || legs
                        .iter()
                        .any(|(_, bars)| bars.iter().any(|b| b.get(*s) > 0.0))
            })
            .collect();
        let left = size.left;
        let right = size.width - size.right;
        let slot = if longest > 0 {
            (right - left) / longest as f64
        } else {
            0.0
        };
        let bar_width = (slot * 0.72).max(1.0);
        let panels = legs
            .iter()
            .enumerate()
            .map(|(index, (title, bars))| {
                let top = index as f64 * size.panel_height;
                let plot_top = top + size.top;
                let plot_bottom = top + size.panel_height - size.bottom;
                let height = plot_bottom - plot_top;
                let y_of_ms = |ms: f64| plot_bottom - ms / time_top * height;
                let y_of_tokens = |t: f64| plot_bottom - t / token_top * height;
                let x_of = |i: usize| left + slot * i as f64 + (slot - bar_width) / 2.0;
                let mut rects = Vec::new();
                for (i, bar) in bars.iter().enumerate() {
                    let mut stacked = 0.0;
                    for segment in Segment::ALL {
                        let ms = bar.get(segment);
                        if ms <= 0.0 {
                            continue;
                        }
                        let (low, high) = (y_of_ms(stacked), y_of_ms(stacked + ms));
                        rects.push(BarRect {
                            x: x_of(i),
                            y: high,
                            width: bar_width,
                            height: low - high,
                            segment,
                            turn: bar.turn,
                            ms,
                        });
                        stacked += ms;
                    }
                }
                let context = bars
                    .iter()
                    .enumerate()
                    .map(|(i, bar)| {
                        (
                            x_of(i) + bar_width / 2.0,
                            y_of_tokens(bar.context_tokens as f64),
                        )
                    })
                    .collect();
                let time_ticks = time_steps
                    .iter()
                    .map(|ms| Tick {
                        at: y_of_ms(*ms),
                        label: time_label(*ms),
                    })
                    .collect();
                let context_ticks = token_steps
                    .iter()
                    .map(|t| Tick {
                        at: y_of_tokens(*t),
                        label: short_count(*t),
                    })
                    .collect();
                // Every turn up to ten, else every fifth (and the first).
                let every = if longest <= 10 { 1 } else { 5 };
                let turn_ticks = bars
                    .iter()
                    .enumerate()
                    .filter(|(_, bar)| bar.turn == 1 || bar.turn % every == 0)
                    .map(|(i, bar)| Tick {
                        at: x_of(i) + bar_width / 2.0,
                        label: bar.turn.to_string(),
                    })
                    .collect();
                Panel {
                    title: title.clone(),
                    top,
                    plot: (left, plot_top, right, plot_bottom),
                    rects,
                    context,
                    time_ticks,
                    context_ticks,
                    turn_ticks,
                }
            })
            .collect();
        Chart {
            width: size.width,
            height: size.panel_height * legs.len() as f64,
            panels,
            segments,
            max_ms,
            max_tokens,
        }
    }
}

/// The chart's points as SVG: `x,y x,y …`.
pub fn polyline(points: &[(f64, f64)]) -> String {
    points
        .iter()
        .map(|(x, y)| format!("{x:.1},{y:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Resume, ServerTimings, TurnRecord};
    use serde_json::json;
    use tether_protocol::ResponseCreate;

    /// A turn sent at `sent` whose response took `response` ms, of which the server says `api`
    /// ms of its own and (prefill, decode) of the engine's.
    fn turn(number: usize, sent: f64, response: f64, api: u64, engine: (u64, u64)) -> TurnRecord {
        let mut t = TurnRecord::new(number, &ResponseCreate::new("m", "x"), sent);
        t.completed_at = Some(sent + response);
        t.input_tokens = 1000 * number as u64;
        let (prefill, decode) = engine;
        t.server = ServerTimings::parse(&json!({"path": "http", "stages": {},
            "api_us": api * 1000,
            "engine": {"queue_us": 1000, "prefill_us": prefill * 1000, "decode_us": decode * 1000,
                       "service_total_us": 0, "service_ttft_us": 0, "iapi_ttft_us": 0,
                       "iapi_total_us": (1 + prefill + decode + 2) * 1000}}));
        t
    }

    #[test]
    fn each_turn_is_split_and_the_turns_add_up_to_the_run() {
        let mut first = turn(1, 0.0, 100.0, 10, (30, 50));
        first.tool_ms = 40.0;
        first.client_ms = 3.0;
        let mut second = turn(2, 145.0, 60.0, 5, (20, 25));
        second.client_ms = 1.0;
        let mut third = TurnRecord::new(3, &ResponseCreate::new("m", "x"), 300.0);
        third.first_event_at = Some(301.0);
        let run = AgentRun {
            turns: vec![first, second, third],
            ..AgentRun::default()
        };
        let bars = turn_bars(&run);
        assert_eq!(bars.len(), 2, "the turn under way has no bar yet");
        let bar = &bars[0];
        assert_eq!(bar.get(Segment::Api), 10.0);
        assert_eq!(
            bar.get(Segment::Wait),
            3.0,
            "queue 1 ms, hop and edges 2 ms"
        );
        assert_eq!(
            (bar.get(Segment::Prefill), bar.get(Segment::Decode)),
            (30.0, 50.0)
        );
        // 100 − 10 (API) − 83 (engine) − 3 (client) = 4 ms on the way.
        assert_eq!(bar.get(Segment::Delivery), 4.0);
        assert_eq!(bar.get(Segment::Tools), 40.0);
        // 3 ms measured, 5 ms between the tools' end and the next request.
        assert_eq!(bar.get(Segment::Client), 8.0);
        assert_eq!(bar.total_ms(), 145.0, "sent to the next request");
        assert_eq!(bar.context_tokens, 1000);
        assert_eq!(
            bars[1].get(Segment::Client),
            1.0 + 95.0,
            "until turn 3 was sent"
        );
        // Over the run's finished turns, the bars add up to its breakdown.
        let finished = AgentRun {
            turns: run.turns[..2].to_vec(),
            ..AgentRun::default()
        };
        let breakdown = crate::agent::Breakdown::of(&finished).unwrap();
        let bars = turn_bars(&finished);
        let sum: f64 = bars.iter().map(TurnBar::total_ms).sum();
        assert!((sum - breakdown.end_to_end_ms).abs() < 1e-9);
        let network: f64 = bars
            .iter()
            .map(|b| b.get(Segment::Link) + b.get(Segment::Delivery))
            .sum();
        assert!((network - breakdown.network_ms.unwrap()).abs() < 1e-9);
    }

    /// The connection dropped during turn 2, which was sent again 1.5 s after its first
    /// sending: that time is turn 2's, drawn undivided in its bar, not the page's handling
    /// after turn 1; and turn 3, lost and not sent again (the server gone), charges turn 2
    /// only until its first sending.
    #[test]
    fn a_turn_sent_again_keeps_its_lost_time() {
        let request = ResponseCreate::new("m", "x");
        let mut first = turn(1, 0.0, 100.0, 10, (30, 50));
        first.tool_ms = 40.0;
        let mut second = TurnRecord::new(2, &request, 145.0);
        second.restart(&request, 1645.0, Resume::FullContext);
        assert_eq!((second.lost_ms, second.first_sent_at()), (1500.0, 145.0));
        second.completed_at = Some(1705.0);
        let mut third = TurnRecord::new(3, &request, 1800.0);
        third.restart(&request, 3800.0, Resume::FullContext);
        third.resumed = Some(Resume::Failed);
        let run = AgentRun {
            turns: vec![first, second, third],
            ..AgentRun::default()
        };
        let bars = turn_bars(&run);
        assert_eq!(bars.len(), 2, "the unfinished turn has no bar");
        assert_eq!(
            bars[0].total_ms(),
            145.0,
            "turn 1: until turn 2 was first sent"
        );
        assert_eq!(bars[1].get(Segment::Unsplit), 1500.0 + 60.0);
        assert_eq!(
            bars[1].get(Segment::Client),
            95.0,
            "until turn 3 was first sent"
        );
        // Over the finished turns, the bars add up to the run's breakdown.
        let finished = AgentRun {
            turns: run.turns[..2].to_vec(),
            ..AgentRun::default()
        };
        let breakdown = crate::agent::Breakdown::of(&finished).unwrap();
        let sum: f64 = turn_bars(&finished).iter().map(TurnBar::total_ms).sum();
        assert!((sum - breakdown.end_to_end_ms).abs() < 1e-9, "{sum}");
        assert_eq!(breakdown.end_to_end_ms, 1705.0);
    }

    /// A long-running response: its paused turns have no summary, and the one on its last turn
    /// covers them all — drawn into that turn's bar it would be taller than the turn. Every
    /// bar is its own turn's time, undivided.
    #[test]
    fn a_long_running_responses_summary_is_not_drawn_into_its_last_turn() {
        let mut first = turn(1, 0.0, 100.0, 0, (0, 0));
        first.server = None;
        first.paused = true;
        // Its summary: 400 ms of engine time for the whole response, in a 120 ms turn.
        let last = turn(2, 110.0, 120.0, 10, (100, 300));
        let run = AgentRun {
            turns: vec![first, last],
            ..AgentRun::default()
        };
        let bars = turn_bars(&run);
        assert_eq!(bars[1].total_ms(), 120.0);
        assert_eq!(bars[1].get(Segment::Unsplit), 120.0);
        assert_eq!(bars[1].get(Segment::Decode), 0.0);
    }

    #[test]
    fn the_modelled_waits_are_drawn_apart_from_the_measured_parts() {
        // 10 ms of API time, 6 of them the modelled classifier; the engine's 2 ms beyond queue,
        // prefill and decode hold its 1 ms modelled hop.
        let mut t = turn(1, 0.0, 100.0, 10, (30, 50));
        t.server.as_mut().unwrap().modelled =
            vec![("classify".into(), 6.0), ("engine_hop".into(), 1.0)];
        let run = AgentRun {
            turns: vec![t.clone()],
            ..AgentRun::default()
        };
        let bar = &turn_bars(&run)[0];
        assert_eq!(bar.get(Segment::Api), 4.0);
        assert_eq!(bar.get(Segment::Modelled), 7.0);
        assert_eq!(
            bar.get(Segment::Wait),
            2.0,
            "queue 1 ms and the call's edges 1 ms"
        );
        assert_eq!(bar.total_ms(), 100.0);
        let breakdown = crate::agent::Breakdown::of(&run).unwrap();
        assert_eq!(
            breakdown.part(Part::Modelled),
            Some(bar.get(Segment::Modelled))
        );
        assert_eq!(Segment::Modelled.part(), Some(Part::Modelled));
        // Drawn on top of the measured segments.
        let chart = Chart::layout(&[("x".into(), turn_bars(&run))], ChartSize::default());
        let rects = &chart.panels[0].rects;
        let modelled = rects.iter().position(|r| r.segment == Segment::Modelled);
        assert_eq!(modelled, Some(rects.len() - 1), "{rects:?}");
    }

    #[test]
    fn a_turn_the_server_did_not_split_is_one_segment() {
        let mut t = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        t.completed_at = Some(50.0);
        t.client_ms = 2.0;
        let bars = turn_bars(&AgentRun {
            turns: vec![t],
            ..AgentRun::default()
        });
        assert_eq!(bars[0].get(Segment::Unsplit), 48.0);
        assert_eq!(bars[0].get(Segment::Client), 2.0);
        assert_eq!(Segment::Unsplit.part(), None);
        assert_eq!(Segment::Prefill.part(), Some(Part::Engine));
    }

    #[test]
    fn ticks_are_round_and_cover_the_maximum() {
        assert_eq!(nice_ticks(830.0, 4), [0.0, 500.0, 1000.0]);
        assert_eq!(nice_ticks(790.0, 4), [0.0, 200.0, 400.0, 600.0, 800.0]);
        assert_eq!(nice_ticks(4.1, 4), [0.0, 2.0, 4.0, 6.0]);
        assert_eq!(nice_ticks(100.0, 4), [0.0, 50.0, 100.0]);
        assert_eq!(
            nice_ticks(124_600.0, 4),
            [0.0, 50_000.0, 100_000.0, 150_000.0]
        );
        assert_eq!(nice_ticks(0.0, 4), [0.0]);
        assert_eq!(nice_ticks(f64::NAN, 4), [0.0]);
        assert_eq!(short_count(150_000.0), "150k");
        assert_eq!(short_count(1_500_000.0), "1.5M");
        assert_eq!(short_count(800.0), "800");
        assert_eq!(time_label(1500.0), "1.5 s");
        assert_eq!(time_label(200.0), "200 ms");
        assert_eq!(time_label(0.0), "0");
    }

    #[test]
    fn both_legs_share_the_scales_and_each_bar_stacks_its_segments() {
        let bar = |turn: usize, api: f64, decode: f64, tokens: u64| {
            let mut b = TurnBar {
                turn,
                ms: [0.0; Segment::ALL.len()],
                context_tokens: tokens,
                sent_bytes: 0,
            };
            b.add(Segment::Api, api);
            b.add(Segment::Decode, decode);
            b
        };
        let ws = vec![bar(1, 10.0, 90.0, 1000), bar(2, 10.0, 90.0, 2000)];
        let http = vec![bar(1, 10.0, 90.0, 1000), bar(2, 100.0, 90.0, 2000)];
        let size = ChartSize::default();
        let chart = Chart::layout(
            &[("WebSocket".into(), ws), ("HTTP stateless".into(), http)],
            size,
        );
        assert_eq!(chart.height, 2.0 * size.panel_height);
        assert_eq!(chart.max_ms, 190.0);
        assert_eq!(
            chart.segments,
            Segment::ALL[..9],
            "every part but an unsplit response"
        );
        let [ws, http] = &chart.panels[..] else {
            panic!("two panels")
        };
        assert_eq!(http.top, size.panel_height);
        // The same scale: a 100 ms turn is as tall in either panel, and the time axis tops at
        // 200 ms (above the longest turn).
        let height = |panel: &Panel, turn: usize| -> f64 {
            panel
                .rects
                .iter()
                .filter(|r| r.turn == turn)
                .map(|r| r.height)
                .sum()
        };
        let (plot_top, plot_bottom) = (ws.plot.1, ws.plot.3);
        let full = plot_bottom - plot_top;
        assert!((height(ws, 1) - full * 100.0 / 200.0).abs() < 1e-9);
        assert!((height(http, 1) - height(ws, 1)).abs() < 1e-9);
        assert!((height(http, 2) - full * 190.0 / 200.0).abs() < 1e-9);
        assert_eq!(ws.time_ticks.last().unwrap().label, "200 ms");
        // Segments stack bottom up: API first, touching the axis; decode on top of it.
        let turn1: Vec<&BarRect> = ws.rects.iter().filter(|r| r.turn == 1).collect();
        assert_eq!(turn1[0].segment, Segment::Api);
        assert!((turn1[0].y + turn1[0].height - plot_bottom).abs() < 1e-9);
        assert!((turn1[1].y + turn1[1].height - turn1[0].y).abs() < 1e-9);
        // Bars sit in their slots, inside the plot, left to right, at either width.
        assert!(
            ws.rects
                .iter()
                .all(|r| r.x >= size.left && r.x + r.width <= size.width - size.right)
        );
        let narrow = ChartSize::narrow();
        let bars = vec![bar(1, 10.0, 90.0, 1000), bar(2, 100.0, 90.0, 2000)];
        let small = Chart::layout(&[("HTTP stateless".into(), bars)], narrow);
        assert_eq!(small.width, narrow.width);
        assert!(small.panels[0].rects.iter().all(|r| r.x >= narrow.left
            && r.x + r.width <= narrow.width - narrow.right
            && r.width > 0.0));
        assert!(turn1[0].x < ws.rects.iter().find(|r| r.turn == 2).unwrap().x);
        // The context line rises with the turns; its axis tops at the largest context.
        assert!(ws.context[1].1 < ws.context[0].1);
        assert_eq!(http.context_ticks.last().unwrap().label, "2k");
        assert_eq!(polyline(&[(1.0, 2.26)]), "1.0,2.3");
        assert_eq!(
            ws.turn_ticks
                .iter()
                .map(|t| t.label.as_str())
                .collect::<Vec<_>>(),
            ["1", "2"]
        );
        // With no turns there is nothing to draw, and nothing breaks.
        let empty = Chart::layout(&[("x".into(), vec![])], size);
        assert!(empty.panels[0].rects.is_empty() && empty.segments.len() == 9);
    }
}
