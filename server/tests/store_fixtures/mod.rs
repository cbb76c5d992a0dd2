//! What the store tests build their data from: responses with one answer, questions with ids,
//! stored records, ledger lines.
#![allow(dead_code)]

use tether_protocol::{Item, ItemStatus, Response, ResponseCreate};
use tether_server::store::{LedgerEntry, StoredResponse};

pub fn response(id: &str, answer: &str) -> Response {
    let mut response = Response::in_progress(id, 1, &ResponseCreate::new("m", "x"));
    response.output.push(Item::assistant_text(
        format!("msg_{id}"),
        answer,
        ItemStatus::Completed,
    ));
    response
}

pub fn question(id: &str, text: &str) -> Item {
    let mut question = Item::user_text(text);
    if let Item::Message(message) = &mut question {
        message.id = Some(id.into());
    }
    question
}

pub fn stored(project: &str, id: &str, input: Vec<Item>, parent: Option<&str>) -> StoredResponse {
    StoredResponse {
        project: project.into(),
        response: response(id, &format!("a-{id}")),
        added_input: input,
        parent_id: parent.map(str::to_string),
    }
}

pub fn ids(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|id| id.to_string()).collect()
}

pub fn texts(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            Item::Message(m) => m.content.text(),
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

pub fn entry(project: &str, id: &str) -> LedgerEntry {
    LedgerEntry {
        project: project.into(),
        response_id: id.into(),
        model: "m".into(),
        transport: "ws",
        input_tokens: 10,
        cached_tokens: 4,
        cache_write_tokens: 3,
        output_tokens: 2,
        recorded_at: 1,
    }
}
