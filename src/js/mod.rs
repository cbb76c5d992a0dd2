//! The sandbox's JavaScript runtime in the browser: [`WorkerRuntime`] runs each `node` invocation
//! in a fresh Web Worker (`worker.js`, loaded from a Blob URL), so the page stays responsive and
//! a script over its time budget is terminated rather than waited for.

use std::future::Future;
use std::pin::Pin;

use futures::StreamExt;
use futures::channel::mpsc;
use serde::Deserialize;
use tether_sandbox::{JsEntry, JsOutcome, JsRequest, JsRuntime};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use web_sys::{Blob, BlobPropertyBag, MessageEvent, Url, Worker};

const WORKER_SOURCE: &str = include_str!("worker.js");

/// The worker's answer.
#[derive(Deserialize)]
struct WorkerReply {
    stdout: String,
    stderr: String,
    exit_code: i32,
}

/// The message the worker receives, as JSON text.
pub fn worker_message(request: &JsRequest<'_>) -> String {
    let entry = match request.entry {
        JsEntry::File(path) => serde_json::json!({ "file": path }),
        JsEntry::Eval(code) => serde_json::json!({ "eval": code }),
    };
    serde_json::json!({
        "entry": entry,
        "args": request.args,
        "cwd": request.cwd,
        "files": request.files,
        "stdin": String::from_utf8_lossy(request.stdin),
        "max_output_bytes": request.max_output_bytes,
    })
    .to_string()
}

/// Runs `node` in a Web Worker per invocation.
#[derive(Debug, Default, Clone, Copy)]
pub struct WorkerRuntime;

enum Event {
    Reply(String),
    Failed(String),
    TimedOut,
}

fn failure(message: String) -> JsOutcome {
    JsOutcome {
        stdout: String::new(),
        stderr: format!("node: {message}\n"),
        exit_code: 1,
        timed_out: false,
    }
}

impl WorkerRuntime {
    async fn run_in_worker(request: JsRequest<'_>) -> JsOutcome {
        let message = worker_message(&request);
        let options = BlobPropertyBag::new();
        options.set_type("text/javascript");
        let parts = js_sys::Array::of1(&WORKER_SOURCE.into());
        let url = match Blob::new_with_str_sequence_and_options(&parts, &options)
            .and_then(|blob| Url::create_object_url_with_blob(&blob))
        {
            Ok(url) => url,
            Err(error) => return failure(format!("cannot create the worker script: {error:?}")),
        };
        let worker = Worker::new(&url);
        // The worker has fetched its script once constructed; the URL is no longer needed.
        let _ = Url::revoke_object_url(&url);
        let worker = match worker {
            Ok(worker) => worker,
            Err(error) => return failure(format!("cannot start a Web Worker: {error:?}")),
        };
        let (sender, mut events) = mpsc::unbounded::<Event>();
        let on_message = {
            let sender = sender.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
                let text = event.data().as_string().unwrap_or_default();
                let _ = sender.unbounded_send(Event::Reply(text));
            })
        };
        let on_error = {
            let sender = sender.clone();
            Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
                let _ = sender.unbounded_send(Event::Failed("the worker failed".into()));
            })
        };
        let on_timeout = Closure::<dyn FnMut()>::new(move || {
            let _ = sender.unbounded_send(Event::TimedOut);
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let window = web_sys::window();
        let timer = window.as_ref().and_then(|w| {
            let ms = i32::try_from(request.timeout_ms).unwrap_or(i32::MAX);
            w.set_timeout_with_callback_and_timeout_and_arguments_0(
                on_timeout.as_ref().unchecked_ref(),
                ms,
            )
            .ok()
        });
        let outcome = match worker.post_message(&message.into()) {
            Err(error) => failure(format!("cannot send the script to the worker: {error:?}")),
            Ok(()) => match events.next().await {
                Some(Event::Reply(text)) => match serde_json::from_str::<WorkerReply>(&text) {
                    Ok(reply) => JsOutcome {
                        stdout: reply.stdout,
                        stderr: reply.stderr,
                        exit_code: reply.exit_code,
                        timed_out: false,
                    },
                    Err(error) => failure(format!("bad reply from the worker: {error}")),
                },
                Some(Event::Failed(why)) => failure(why),
                Some(Event::TimedOut) | None => JsOutcome {
                    timed_out: true,
                    ..JsOutcome::default()
                },
            },
        };
        worker.terminate();
        if let (Some(window), Some(timer)) = (window, timer) {
            window.clear_timeout_with_handle(timer);
        }
        outcome
    }
}

impl JsRuntime for WorkerRuntime {
    fn run<'a>(&'a self, request: JsRequest<'a>) -> Pin<Box<dyn Future<Output = JsOutcome> + 'a>> {
        Box::pin(Self::run_in_worker(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_carries_entry_arguments_and_files() {
        let args = vec!["--verbose".to_string()];
        let request = JsRequest {
            entry: JsEntry::File("/test/run.js"),
            args: &args,
            cwd: "/",
            files: vec![("/test/run.js", "console.log(1)")],
            stdin: b"",
            timeout_ms: 1000,
            max_output_bytes: 64,
        };
        let message: serde_json::Value = serde_json::from_str(&worker_message(&request)).unwrap();
        assert_eq!(message["entry"]["file"], "/test/run.js");
        assert_eq!(message["args"][0], "--verbose");
        assert_eq!(message["files"][0][1], "console.log(1)");
        assert_eq!(message["max_output_bytes"], 64);
    }
}
