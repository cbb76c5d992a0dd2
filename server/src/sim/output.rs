//! What a generator decides to answer, before it is tokenized and paced: a list of outputs —
//! reasoning, a message, tool calls — possibly ending in a failure.

use crate::model::{FailureKind, ModelEvent};

/// One output item a generator decided on.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A reasoning item with this summary.
    Reasoning(String),
    Message(String),
    Call(ToolCallPlan),
    /// The response fails here (after the outputs before it).
    Fail(FailureKind),
}

/// A tool call the model will make: how it begins and the text of its arguments or input.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallPlan {
    pub begin: ModelEvent,
    pub input: String,
}

impl ToolCallPlan {
    /// The name of the tool called.
    pub fn name(&self) -> Option<&str> {
        match &self.begin {
            ModelEvent::BeginFunctionCall { name, .. }
            | ModelEvent::BeginCustomToolCall { name, .. } => Some(name),
            _ => None,
        }
    }
}
