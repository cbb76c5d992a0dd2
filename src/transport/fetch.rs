//! `fetch` from Rust, directly on web-sys: a request with a method, headers and an optional
//! body, its response, its body as text. (The playground once used gloo-net for this and for the
//! WebSocket; what it needs of either is a few calls, and its own code is smaller in the wasm.)

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, Request, RequestInit, Response};

/// The text of a JavaScript error: `TypeError: Failed to fetch`, as the console prints it.
pub fn js_error_text(error: &JsValue) -> String {
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
pub async fn fetch(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<Response, String> {
    let init = RequestInit::new();
    init.set_method(method);
    let header_map = Headers::new().map_err(|e| js_error_text(&e))?;
    for (name, value) in headers {
        header_map.set(name, value).map_err(|e| js_error_text(&e))?;
    }
    init.set_headers(&header_map);
    if let Some(body) = body {
        init.set_body(&JsValue::from_str(body));
    }
    let request = Request::new_with_str_and_init(url, &init).map_err(|e| js_error_text(&e))?;
    let window = web_sys::window().ok_or("no window")?;
    let response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|e| js_error_text(&e))?;
    response
        .dyn_into::<Response>()
        .map_err(|_| "fetch did not give a Response".to_string())
}

/// The whole body of `response` as text.
pub async fn text(response: &Response) -> Result<String, String> {
    let promise = response.text().map_err(|e| js_error_text(&e))?;
    let text = JsFuture::from(promise)
        .await
        .map_err(|e| js_error_text(&e))?;
    Ok(text.as_string().unwrap_or_default())
}

/// `Authorization: Bearer KEY`, or nothing for an empty key.
pub fn bearer(api_key: &str) -> Option<String> {
    let key = api_key.trim();
    (!key.is_empty()).then(|| format!("Bearer {key}"))
}
