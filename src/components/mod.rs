//! Components render state owned elsewhere; they hold no logic worth testing natively, except
//! the frame batching of updates ([`frame_batch`]), tested with a scheduler run by hand.

mod agent;
mod answer;
mod compare;
mod conversation;
mod details;
pub mod files;
pub mod frame_batch;
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
