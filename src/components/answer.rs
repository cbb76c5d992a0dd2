//! The streaming answer of one turn with its status and timings.

use leptos::prelude::*;

use crate::agent::{Precision, RunStatus, Turn, format_duration};
use crate::conditions::thousands;

/// Shows `turn`: its status (`data-testid="run-status"`), the time to first token (`ttft`), the
/// decoding speed (`tokens-per-second`), the total and the token counts once complete, any error
/// (`error`) and the answer text as it streams (`answer`) — last, so that its growth moves
/// nothing. A screen reader is told the status and, at the end, the whole answer (`announce`),
/// not each fragment as it streams.
#[component]
pub fn AnswerView(
    /// The turn to show.
    #[prop(into)]
    turn: Signal<Turn>,
) -> impl IntoView {
    let status = Memo::new(move |_| turn.with(|t| t.status));
    let announcement = move || match status.get() {
        RunStatus::Idle => String::new(),
        RunStatus::Running => "Streaming the answer.".to_string(),
        RunStatus::Done => turn.with_untracked(|t| format!("Answer: {}", t.text)),
        RunStatus::Failed => {
            turn.with_untracked(|t| format!("Failed: {}", t.error.clone().unwrap_or_default()))
        }
        RunStatus::Stopped => "Stopped.".to_string(),
    };
    view! {
        <section class="answer-panel">
            <p class="sr-only" role="status" data-testid="announce">{announcement}</p>
            <div class="status-line">
                "Status: "
                <span
                    class=move || format!("status status-{}", status.get().as_str())
                    data-testid="run-status"
                >
                    {move || status.get().as_str()}
                </span>
            </div>
            <dl class="stats">
                <div>
                    <dt>"Time to first token"</dt>
                    <dd data-testid="ttft">{move || turn.with(|t| format_duration(t.ttft_ms(), Precision::WholeMs))}</dd>
                </div>
                <div>
                    <dt title="output tokens per second from the first token to the last">
                        "Decoding speed"
                    </dt>
                    <dd data-testid="tokens-per-second">
                        {move || {
                            turn.with(|t| {
                                t.tokens_per_second()
                                    .map_or_else(
                                        || "–".to_string(),
                                        |r| format!("{} tokens/s", thousands(r)),
                                    )
                            })
                        }}
                    </dd>
                </div>
                <div>
                    <dt>"Total"</dt>
                    <dd data-testid="total">{move || turn.with(|t| format_duration(t.total_ms(), Precision::BySize))}</dd>
                </div>
                <div>
                    <dt>"Tokens in / out"</dt>
                    <dd data-testid="tokens">
                        {move || {
                            turn.with(|t| {
                                // No usage (a turn that failed before its end): not "0 / 0".
                                if t.input_tokens == 0 && t.output_tokens == 0 {
                                    "–".to_string()
                                } else {
                                    format!(
                                        "{} / {}",
                                        thousands(t.input_tokens as f64),
                                        thousands(t.output_tokens as f64)
                                    )
                                }
                            })
                        }}
                    </dd>
                </div>
            </dl>
            <Show when=move || turn.with(|t| t.error.is_some())>
                <p class="error" role="alert" data-testid="error">
                    {move || turn.with(|t| t.error.clone().unwrap_or_default())}
                </p>
            </Show>
            <div class="answer" data-testid="answer">
                {move || turn.with(|t| t.text.clone())}
            </div>
        </section>
    }
}
