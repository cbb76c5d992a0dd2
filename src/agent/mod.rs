//! The agent side of the playground, independent of the DOM and of the transport: one turn of the
//! chat view ([`Turn`]) and the chat view's [`ChatSession`] around it, the agent loop
//! ([`run_agent`]) that drives a [`Transport`] and a sandbox until the task is answered,
//! recording what it saw ([`AgentRun`]), and the agent view's [`Session`] around it: what Run,
//! Stop and Reset do and what the page keeps.
//!
//! [`Transport`]: crate::transport::Transport

mod announce;
mod breakdown;
mod chart;
mod chat;
mod compare;
mod duration;
mod estimate;
mod files;
mod frame_batch;
mod frames;
mod play;
mod record;
mod run;
mod session;
mod shown;
mod snapshot;
mod stats;
mod steer;
mod stop;
mod sweep;
mod thread;
mod timing;
mod totals;
mod turn;
mod verdict;
mod why;

pub use announce::{announce_comparison, announce_run};
pub use breakdown::{Breakdown, Part, ServerParts, part_spread};
pub use chart::{
    BarRect, Chart, ChartSize, Panel, Segment, Tick, TurnBar, nice_ticks, polyline, short_count,
    turn_bars,
};
pub use chat::{ChatBrowser, ChatConnection, ChatScreen, ChatSession, ChatTarget};
pub use compare::{
    COMPARE_HTTP_MODE, Comparison, DEFAULT_REPETITIONS, LegSummary, REPETITIONS, WARM_UP,
    format_speedup, leg_name, run_progress, signed_ms,
};
pub use duration::{Precision, format_duration, format_range, format_span};
pub use estimate::{
    LONG_TASK, LegConditions, SHORT_TASK, TaskShape, comparison_ms, estimate_run, estimate_sweep,
    format_estimate, leg_ms, sweep_ms, task_of,
};
pub use files::{ChangeLog, FileBody, FileChangeRecord, FileSnapshot, TreeRow};
pub use frame_batch::FrameBatch;
pub use frames::{
    AppendLog, Direction, DirectionFilter, Frame, FrameFilter, FrameLog, pretty_json,
};
pub use record::{AgentRun, CallKind, Entry, Resume, SentAs, ToolCallEntry, TurnRecord};
pub use run::{Agent, AgentConfig, ContinuationMode, SharedRun, run_agent, run_agent_shared};
pub use session::{Browser, Endpoint, Memory, Screen, Session, WARM_UP_PROFILE};
pub use shown::{Opening, Shown};
pub use snapshot::{LastRun, RunSnapshot, StoredLeg};
pub use stats::Spread;
pub use steer::{SteerOutcome, SteerRecord, steer_frame, steer_target};
pub use stop::{StopSignal, Stopped};
pub use sweep::{
    PlotPoint, SWEEP_PROFILES, SweepAt, SweepLines, SweepPlot, SweepPoint, describe_sweep,
    savings_range, signed_percent, sweep_points, sweep_profiles,
};
pub use timing::{EngineTimings, LinkTimings, ServerTimings, ServerTokens};
pub use totals::{RunTotals, decoding_rate, turn_durations};
pub use turn::{RunStatus, Turn};
pub use verdict::{JUDGED_FROM, Ratio, Speedup, Verdict};
pub use why::{explain_why, format_bytes};
