//! Components render state owned elsewhere ([`crate::agent`]); they hold no logic worth testing
//! natively.

mod agent;
mod answer;
mod compare;
mod conversation;
mod details;
pub mod files;
pub mod inspector;
pub mod settings;
mod timeline;
mod totals;

pub use agent::AgentView;
pub use answer::AnswerView;
pub use compare::CompareView;
pub use conversation::Conversation;
pub use details::RunDetails;
pub use files::FilesView;
pub use inspector::Inspector;
pub use settings::SettingsPanel;
pub use timeline::Timeline;
pub use totals::TotalsView;
