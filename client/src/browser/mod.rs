//! The browser backend (`wasm32`): the page's own `WebSocket` and `fetch`, through web-sys —
//! nothing else, so a wasm page pays only for the calls it makes.
//!
//! What a browser does not allow, it does differently: an upgrade cannot carry headers, so the
//! timing opt-in and the betas travel in the upgrade URL's query
//! ([`Endpoint::browser_websocket_url`](crate::Endpoint::browser_websocket_url)) and the API key
//! as a minted client secret offered as a subprotocol ([`crate::secrets`]); a refused upgrade
//! shows no status, so the same server is asked over HTTP why ([`crate::diagnosis`]).
//!
//! Browser handles cannot cross threads, so nothing here is `Send`; wasm is single-threaded.

mod http;
mod socket;
mod ws;

pub use http::{Http, SseStream};
pub(crate) use ws::WsConnection;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The text of a JavaScript error: `TypeError: Failed to fetch`, as the console prints it.
pub(crate) fn js_error_text(error: &JsValue) -> String {
    if let Some(error) = error.dyn_ref::<js_sys::Error>() {
        let name: String = error.name().into();
        let message: String = error.message().into();
        return if name.is_empty() {
            message
        } else {
            format!("{name}: {message}")
        };
    }
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}

/// Sends `method url` with `headers` and `body`; the error is the browser's reason when nothing
/// answered (the request was refused, the server is down, the page is offline, CORS).
pub(crate) async fn fetch(
    method: &str,
    url: &str,
    headers: &[(&str, String)],
    body: Option<&[u8]>,
) -> Result<web_sys::Response, String> {
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    let header_map = web_sys::Headers::new().map_err(|e| js_error_text(&e))?;
    for (name, value) in headers {
        header_map.set(name, value).map_err(|e| js_error_text(&e))?;
    }
    init.set_headers(&header_map);
    if let Some(body) = body {
        init.set_body(&js_sys::Uint8Array::from(body));
    }
    let request =
        web_sys::Request::new_with_str_and_init(url, &init).map_err(|e| js_error_text(&e))?;
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|e| js_error_text(&e))?;
    response
        .dyn_into::<web_sys::Response>()
        .map_err(|_| "fetch did not give a Response".to_string())
}

/// The whole body of `response`.
pub(crate) async fn body_bytes(response: &web_sys::Response) -> Result<Vec<u8>, String> {
    let promise = response.array_buffer().map_err(|e| js_error_text(&e))?;
    let buffer = JsFuture::from(promise)
        .await
        .map_err(|e| js_error_text(&e))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}
