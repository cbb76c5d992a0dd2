//! The model behind the API. The pipeline only sees the [`Model`] trait — `generate(&Context)`
//! returning a stream of [`ModelEvent`]s — so the simulator can be replaced by a real upstream
//! model server without touching transports or the event builder.
//!
//! [`TextModel`] is the first simulator: it answers every request with a deterministic text that
//! quotes the user's last message, paced at a fixed number of tokens per second.

pub mod tokens;

use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use tether_protocol::{Item, ResponseCreate, Role};

/// What a model generates from: the request and its full logical input.
#[derive(Debug, Clone)]
pub struct Context {
    pub request: ResponseCreate,
    /// The whole conversation: previous context plus the request's new input.
    pub items: Vec<Item>,
    pub input_tokens: u64,
}

impl Context {
    /// The context of a request without history.
    pub fn new(request: ResponseCreate) -> Self {
        let items = request.input.clone().into_items();
        let input_tokens = items
            .iter()
            .map(|item| tokens::count(&item_text(item)) as u64)
            .sum();
        Context {
            request,
            items,
            input_tokens,
        }
    }

    /// The text of the last user message, if any.
    pub fn last_user_text(&self) -> Option<String> {
        self.items.iter().rev().find_map(|item| match item {
            Item::Message(m) if m.role == Role::User => Some(m.content.text()),
            _ => None,
        })
    }
}

/// The text an item contributes to the prompt.
fn item_text(item: &Item) -> String {
    match item {
        Item::Message(m) => m.content.text(),
        Item::FunctionCall(c) => format!("{} {}", c.name, c.arguments),
        Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => o.output.text(),
        Item::CustomToolCall(c) => format!("{} {}", c.name, c.input),
        Item::Reasoning(r) => r.summary.iter().map(|s| s.text.as_str()).collect(),
        Item::ItemReference { .. } | Item::Unknown(_) => String::new(),
    }
}

/// One step of generation, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    BeginMessage,
    TextDelta(String),
    EndItem,
}

/// A stream of model events.
pub type ModelStream = Pin<Box<dyn Stream<Item = ModelEvent> + Send>>;

/// Generates output for a context.
pub trait Model: Send + Sync + 'static {
    fn generate(&self, context: &Context) -> ModelStream;
}

/// Answers with a fixed text quoting the user, decoded at `tokens_per_second`.
#[derive(Debug, Clone)]
pub struct TextModel {
    token_interval: Duration,
}

impl TextModel {
    /// A model decoding `tokens_per_second` (must be positive and finite).
    pub fn new(tokens_per_second: f64) -> Self {
        TextModel {
            token_interval: Duration::from_secs_f64(1.0 / tokens_per_second),
        }
    }

    /// The answer to a prompt.
    pub fn answer(prompt: Option<&str>) -> String {
        let prompt = prompt.map(str::trim).filter(|p| !p.is_empty());
        let quoted = match prompt {
            Some(p) if p.chars().count() > 200 => {
                format!("\"{}…\"", p.chars().take(200).collect::<String>())
            }
            Some(p) => format!("\"{p}\""),
            None => "nothing".to_string(),
        };
        format!(
            "You said: {quoted}. This answer comes from Tether's inference simulator and is \
             streamed over one WebSocket, one token per response.output_text.delta event. When \
             response.completed arrives, the page shows the time to first token and the decoding \
             speed in tokens per second."
        )
    }
}

impl Model for TextModel {
    fn generate(&self, context: &Context) -> ModelStream {
        let text = Self::answer(context.last_user_text().as_deref());
        let pieces: Vec<String> = tokens::split(&text).map(str::to_string).collect();
        let interval = self.token_interval;
        let start = tokio::time::Instant::now();
        // Token i is due at start + i × interval: pacing against the start, not the previous
        // token, keeps the rate exact even when a send is delayed.
        let deltas = futures_util::stream::unfold(0usize, move |i| {
            let piece = pieces.get(i).cloned();
            async move {
                let piece = piece?;
                tokio::time::sleep_until(start + interval * i as u32).await;
                Some((ModelEvent::TextDelta(piece), i + 1))
            }
        });
        use futures_util::StreamExt;
        Box::pin(
            futures_util::stream::once(async { ModelEvent::BeginMessage })
                .chain(deltas)
                .chain(futures_util::stream::once(async { ModelEvent::EndItem })),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[tokio::test(start_paused = true)]
    async fn text_model_paces_tokens_at_the_configured_rate() {
        let model = TextModel::new(100.0);
        let context = Context::new(ResponseCreate::new("m", "hello there"));
        let start = tokio::time::Instant::now();
        let events: Vec<_> = model.generate(&context).collect().await;
        let deltas: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::TextDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(events.first(), Some(&ModelEvent::BeginMessage));
        assert_eq!(events.last(), Some(&ModelEvent::EndItem));
        assert_eq!(deltas.concat(), TextModel::answer(Some("hello there")));
        // The last of n tokens is due (n - 1) intervals after the first, which is immediate.
        let expected = Duration::from_millis(10) * (deltas.len() as u32 - 1);
        assert_eq!(start.elapsed(), expected);
    }

    #[test]
    fn answer_quotes_and_truncates_the_prompt() {
        assert!(TextModel::answer(Some("  hi ")).starts_with("You said: \"hi\"."));
        assert!(TextModel::answer(None).starts_with("You said: nothing."));
        let long = "x".repeat(500);
        assert!(TextModel::answer(Some(&long)).contains(&format!("\"{}…\"", "x".repeat(200))));
    }
}
