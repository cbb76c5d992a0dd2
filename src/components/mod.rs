//! Components render state owned elsewhere ([`crate::agent`]); they hold no logic worth testing
//! natively.

mod agent;
mod answer;
mod chat;
mod compare;
mod conversation;
mod details;
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
pub use chat::ChatView;
pub use compare::{CompareView, LegsView};
pub use conversation::Conversation;
pub use details::RunDetails;
pub use files::FilesView;
pub use inspector::Inspector;
pub use overview::Overview;
pub use run_view::RunView;
pub use settings::SettingsPanel;
pub use timeline::Timeline;
pub use totals::{BreakdownView, TotalsView};
