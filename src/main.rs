//! Entry point of the playground's wasm binary: mounts [`tether_playground::App`] on `<body>`.
//!
//! The agent view — with the agent loop, the sandbox and every view of a run — is a split point:
//! `cargo xtask dist` cuts everything only it reaches into a second wasm module, which the page
//! fetches the first time the Agent tab opens (or is pointed at or focused), or at once with
//! `autorun=1` or `embed=1`. The chat view and the page shell load without it.
//!
//! `awk` and `jq`, the sandbox's two largest commands, are split points of their own in the
//! dist build (`--cfg tether_split_commands`): the sandbox asks for one the first time a
//! command line runs it, and the page fetches its module then (`commands::set_loader`).

use leptos::prelude::*;
use leptos::wasm_split::{SplitLoaderError, wasm_split};
use tether_playground::{AgentLoader, AgentViewFuture, App};

/// The agent view, built in the second wasm module once it is loaded.
#[wasm_split(agent_view, wasm_split_path = ::leptos::wasm_split, fallible, preload(preload_agent_view))]
fn agent_view() -> Result<AnyView, SplitLoaderError> {
    Ok(view! { <tether_playground::components::AgentView /> }.into_any())
}

fn load_agent_view() -> AgentViewFuture {
    // The loader's future is not `Send`; the page is single-threaded, so it never moves threads.
    Box::pin(send_wrapper::SendWrapper::new(async {
        agent_view().await.map_err(|e| {
            format!(
                "{e}. The network or the server failed, or the playground was rebuilt since this \
                 page loaded (then reload the page); the browser's console has the details."
            )
        })
    }))
}

/// `awk`'s code, in a module of its own.
#[cfg(tether_split_commands)]
#[wasm_split(sandbox_awk, wasm_split_path = ::leptos::wasm_split, fallible)]
fn awk_command() -> Result<tether_sandbox::commands::Command, SplitLoaderError> {
    Ok(tether_sandbox::commands::split::awk)
}

/// `jq`'s code, in a module of its own.
#[cfg(tether_split_commands)]
#[wasm_split(sandbox_jq, wasm_split_path = ::leptos::wasm_split, fallible)]
fn jq_command() -> Result<tether_sandbox::commands::Command, SplitLoaderError> {
    Ok(tether_sandbox::commands::split::jq)
}

/// The sandbox's loader for the commands it supplies on first use.
#[cfg(tether_split_commands)]
fn load_command(
    name: &'static str,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<tether_sandbox::commands::Command, String>>>,
> {
    Box::pin(async move {
        let loaded = match name {
            "awk" => awk_command().await,
            "jq" => jq_command().await,
            _ => return Err(format!("{name} is not loaded on demand")),
        };
        loaded.map_err(|e| {
            format!(
                "its module did not load ({e}); the network or the server failed, or the \
                 playground was rebuilt since this page loaded (then reload the page)"
            )
        })
    })
}

fn main() {
    console_error_panic_hook::set_once();
    #[cfg(tether_split_commands)]
    tether_sandbox::commands::set_loader(load_command);
    let agent = AgentLoader {
        load: load_agent_view,
        preload: || {
            // Once per page: every caller waiting on a failed attempt makes its own next
            // attempt, so repeated preloads would multiply a failing fetch.
            static STARTED: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            if STARTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            leptos::task::spawn_local(async {
                // A failure here is reported when the tab opens and loads it again.
                let _ = preload_agent_view().await;
            })
        },
    };
    leptos::mount::mount_to_body(move || view! { <App agent=agent /> });
}
