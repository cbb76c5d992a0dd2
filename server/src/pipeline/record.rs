//! What a finished response leaves behind: the stored row (when `store:true`) and the usage
//! ledger line, built for the store to write (`crate::store::write_behind`).

use tether_protocol::items::{ContentPart, MessageContent, OutputText};
use tether_protocol::{Item, Response, Role, Usage};

use crate::ids::{new_id, unix_now};
use crate::store::{LedgerEntry, Record, StoredResponse};
use crate::tenancy::Project;

/// The writes `response` (of `project`) needs: its row (if stored) with the input it added and its stored
/// parent, and its bill for `usage` over `transport` (`http`, `sse` or `ws`).
pub fn record(
    project: &Project,
    response: &Response,
    usage: &Usage,
    added_input: Vec<Item>,
    parent_id: Option<String>,
    transport: &'static str,
) -> Record {
    Record {
        stored: response.store.then(|| StoredResponse {
            project: project.as_str().to_string(),
            response: response.clone(),
            added_input: with_listing_shape(added_input),
            parent_id,
        }),
        bill: LedgerEntry {
            project: project.as_str().to_string(),
            response_id: response.id.clone(),
            model: response.model.clone(),
            transport,
            input_tokens: usage.input_tokens,
            cached_tokens: usage.input_tokens_details.cached_tokens,
            cache_write_tokens: usage.input_tokens_details.cache_write_tokens,
            output_tokens: usage.output_tokens,
            recorded_at: unix_now(),
        },
        trace: None,
    }
}

/// Gives stored input items the shape `GET /v1/responses/{id}/input_items` lists: every item
/// has an `id`, and message content is a list of parts.
pub(super) fn with_listing_shape(items: Vec<Item>) -> Vec<Item> {
    items
        .into_iter()
        .map(|item| match item {
            Item::Message(mut message) => {
                message.id.get_or_insert_with(|| new_id("msg"));
                if let MessageContent::Text(text) = &message.content {
                    let part = match message.role {
                        Role::Assistant => ContentPart::OutputText(OutputText::new(text.clone())),
                        _ => ContentPart::input_text(text.clone()),
                    };
                    message.content = MessageContent::Parts(vec![part]);
                }
                Item::Message(message)
            }
            Item::FunctionCallOutput(mut output) => {
                output.id.get_or_insert_with(|| new_id("fco"));
                Item::FunctionCallOutput(output)
            }
            Item::CustomToolCallOutput(mut output) => {
                output.id.get_or_insert_with(|| new_id("ctco"));
                Item::CustomToolCallOutput(output)
            }
            Item::FunctionCall(mut call) => {
                call.id.get_or_insert_with(|| new_id("fc"));
                Item::FunctionCall(call)
            }
            other => other,
        })
        .collect()
}
