//! The streaming answer of one turn with its status and timings.

use leptos::prelude::*;

use crate::agent::{Precision, Turn, format_duration};

/// Shows `turn`: its status (`data-testid="run-status"`), the answer text as it streams
/// (`answer`), any error (`error`), and once complete the time to first token (`ttft`), the
/// decoding speed (`tokens-per-second`) and the token counts.
#[component]
pub fn AnswerView(
    /// The turn to show.
    #[prop(into)]
    turn: Signal<Turn>,
) -> impl IntoView {
    view! {
        <section class="answer-panel" aria-live="polite">
            <div class="status-line">
                "Status: "
                <span
                    class=move || format!("status status-{}", turn.with(|t| t.status.as_str()))
                    data-testid="run-status"
                >
                    {move || turn.with(|t| t.status.as_str())}
                </span>
            </div>
            <div class="answer" data-testid="answer">
                {move || turn.with(|t| t.text.clone())}
            </div>
            <Show when=move || turn.with(|t| t.error.is_some())>
                <p class="error" role="alert" data-testid="error">
                    {move || turn.with(|t| t.error.clone().unwrap_or_default())}
                </p>
            </Show>
            <dl class="stats">
                <div>
                    <dt>"Time to first token"</dt>
                    <dd data-testid="ttft">{move || turn.with(|t| format_duration(t.ttft_ms(), Precision::WholeMs))}</dd>
                </div>
                <div>
                    <dt>"Decoding speed"</dt>
                    <dd data-testid="tokens-per-second">
                        {move || {
                            turn.with(|t| {
                                t.tokens_per_second()
                                    .map_or_else(|| "–".to_string(), |r| format!("{r:.0} tokens/s"))
                            })
                        }}
                    </dd>
                </div>
                <div>
                    <dt>"Total"</dt>
                    <dd data-testid="total">{move || turn.with(|t| format_duration(t.total_ms(), Precision::WholeMs))}</dd>
                </div>
                <div>
                    <dt>"Tokens in / out"</dt>
                    <dd data-testid="tokens">
                        {move || turn.with(|t| format!("{} / {}", t.input_tokens, t.output_tokens))}
                    </dd>
                </div>
            </dl>
        </section>
    }
}
