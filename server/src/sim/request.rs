//! The simulator's reading of a request: the `metadata` knobs that steer it (`sim_output_tokens`,
//! `sim_reasoning_tokens`, `sim_fail`, `sim_tool_calls`) and what the conversation asks of the
//! model (which tools to call now, the last user message, a trailing tool output).

use tether_protocol::{Item, Role, ToolChoice};

use super::output::{self, ToolCallPlan};
use crate::model::{Context, FailureKind};

/// What the simulator reads from a [`Context`] beyond its fields.
pub trait SimRequest {
    /// `metadata.sim_output_tokens`: the exact length of the answer's text, in tokens.
    fn sim_output_tokens(&self) -> Option<usize>;
    /// `metadata.sim_reasoning_tokens`: a reasoning item of exactly this many summary tokens
    /// comes first.
    fn sim_reasoning_tokens(&self) -> Option<usize>;
    /// `metadata.sim_fail`: a failure to inject, like the `x-tether-fail` header but on every
    /// transport.
    fn sim_fail(&self) -> Option<FailureKind>;
    /// `metadata.sim_tool_calls`: the most tool calls to make (`0` suppresses them).
    fn sim_tool_calls(&self) -> Option<usize>;
    /// The tool output that ends the conversation, if it ends with one.
    fn trailing_tool_output(&self) -> Option<String>;
    /// What `tool_choice` allows (the pipeline has refused a malformed one; `auto` if absent).
    fn tool_choice(&self) -> ToolChoice;
    /// The tools to call now: the first callable tool `tool_choice` allows — or the first two
    /// when the request explicitly sets `parallel_tool_calls: true` (one when a tool is
    /// forced) —, at most `metadata.sim_tool_calls`; none when `tool_choice` is `none`, or when
    /// the conversation ends with a tool output unless `tool_choice` requires a call.
    fn tools_to_call(&self) -> Vec<ToolCallPlan>;
    /// The text of the last user message, if any.
    fn last_user_text(&self) -> Option<String>;
    /// `prompt_cache_options.prewarm: true`: prefill and cache the prompt, sample nothing.
    fn prewarm(&self) -> bool;
}

impl SimRequest for Context {
    fn sim_output_tokens(&self) -> Option<usize> {
        self.metadata("sim_output_tokens")?.trim().parse().ok()
    }

    fn sim_reasoning_tokens(&self) -> Option<usize> {
        self.metadata("sim_reasoning_tokens")?.trim().parse().ok()
    }

    fn sim_fail(&self) -> Option<FailureKind> {
        FailureKind::parse(self.metadata("sim_fail")?)
    }

    fn sim_tool_calls(&self) -> Option<usize> {
        self.metadata("sim_tool_calls")?.trim().parse().ok()
    }

    fn trailing_tool_output(&self) -> Option<String> {
        match self.items.last()? {
            Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => Some(o.output.text()),
            _ => None,
        }
    }

    fn tool_choice(&self) -> ToolChoice {
        ToolChoice::parse(self.request.tool_choice.as_ref()).unwrap_or(ToolChoice::Auto)
    }

    fn tools_to_call(&self) -> Vec<ToolCallPlan> {
        let choice = self.tool_choice();
        if !choice.must_call() && self.trailing_tool_output().is_some() {
            return Vec::new();
        }
        let mut callable = output::callable(&self.request.tools);
        callable.retain(|plan| plan.name().is_some_and(|name| choice.allows(name)));
        let count = match choice {
            ToolChoice::Forced(_) => 1,
            _ if self.request.parallel_tool_calls == Some(true) => 2,
            _ => 1,
        };
        callable.truncate(count.min(self.sim_tool_calls().unwrap_or(count)));
        callable
    }

    fn prewarm(&self) -> bool {
        let options = self.request.prompt_cache_options.as_ref();
        options
            .and_then(|o| o.get("prewarm"))
            .and_then(|p| p.as_bool())
            == Some(true)
    }

    fn last_user_text(&self) -> Option<String> {
        self.items.iter().rev().find_map(|item| match item {
            Item::Message(m) if m.role == Role::User => Some(m.content.text()),
            _ => None,
        })
    }
}
