//! Components render state owned elsewhere ([`crate::agent`]); they hold no logic worth testing
//! natively.

mod agent;
mod answer;
mod chart;
mod chat;
mod compare;
pub mod conditions;
mod conversation;
mod details;
pub mod field;
pub mod files;
pub mod inspector;
mod overview;
mod run_view;
pub mod settings;
mod steer;
mod timeline;
mod totals;

pub use agent::AgentView;
pub use answer::AnswerView;
pub use chart::{SweepChart, TurnChart};
pub use chat::ChatView;
pub use compare::{CompareView, LegsView};
pub use conditions::ConditionsPanel;
pub use conversation::Conversation;
pub use details::RunDetails;
pub use files::FilesView;
pub use inspector::Inspector;
pub use overview::Overview;
pub use run_view::RunView;
pub use settings::SettingsPanel;
pub use timeline::{Timeline, TimelineDefinitions};
pub use totals::{BreakdownView, TotalsView};
