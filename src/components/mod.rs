//! Components render state owned elsewhere; they hold no logic worth testing natively.

mod agent;
mod answer;
mod conversation;
mod timeline;

pub use agent::AgentView;
pub use answer::AnswerView;
pub use conversation::Conversation;
pub use timeline::Timeline;
