//! A server event as Server-Sent Events, the one encoding both SSE streams use — a response's
//! own ([`super::http`]) and a background response's, resumed ([`super::background`]): its type
//! as the event name, its JSON as the data, an error flat (`{"type":"error","code","message",
//! "param"}`) rather than in the WebSocket shape the pipeline emits.

use axum::response::sse::Event;
use tether_protocol::{ErrorFrame, ServerEvent, StreamEvent};

/// `event` with an error in SSE's flat shape.
pub fn flat_error(mut event: ServerEvent) -> ServerEvent {
    if let StreamEvent::Error(frame) = &event.event {
        event.event = StreamEvent::Error(ErrorFrame::sse(frame.api_error()));
    }
    event
}

/// `event` (its error already flat) as an SSE event.
pub fn encode(event: &ServerEvent) -> Event {
    Event::default()
        .event(event.type_name())
        .data(event.to_json())
}
