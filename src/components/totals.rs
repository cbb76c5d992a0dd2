//! A run's totals — end-to-end time (once it is over), turns, tokens in, what the engine's
//! prompt cache held, what the connection cache reused, tokens out, the decoding rate — and where
//! its time went ([`BreakdownView`]).

use leptos::prelude::*;

use crate::agent::{Breakdown, Part, Precision, RunStatus, RunTotals, format_duration};
use crate::components::RunView;

fn seconds(ms: Option<f64>) -> String {
    format_duration(ms, Precision::Seconds)
}

/// A rate, whole.
pub(crate) fn rate(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), crate::conditions::thousands)
}

/// `1,920 (94 %)`: the engine's prompt-cache hits and their share of the input.
pub(crate) fn cached(tokens: u64, input: u64) -> String {
    let count = crate::conditions::thousands(tokens as f64);
    if input > 0 {
        format!("{count} ({:.0} %)", tokens as f64 * 100.0 / input as f64)
    } else {
        count
    }
}

/// `1,990`, or `–` when no turn reported it.
pub(crate) fn reused(tokens: Option<u64>) -> String {
    tokens.map_or_else(
        || "–".to_string(),
        |n| crate::conditions::thousands(n as f64),
    )
}

/// The totals of `run` as a definition list (`data-testid="totals"`).
#[component]
pub fn TotalsView(
    /// The run to add up.
    run: RunView,
) -> impl IntoView {
    let totals = Memo::new(move |_| run.with(RunTotals::of));
    let done = Memo::new(move |_| run.with(|r| r.status != RunStatus::Running));
    view! {
        <dl class="totals" data-testid="totals">
            <div>
                <dt>"End to end"</dt>
                <dd data-testid="total-time">
                    {move || {
                        if done.get() {
                            let totals = totals.get();
                            match totals.unfinished_turn {
                                Some(turn) => {
                                    let why = if totals.nothing_back {
                                        "nothing came back for it"
                                    } else if run.with(|r| r.status == RunStatus::Stopped) {
                                        "it was stopped before it completed"
                                    } else {
                                        "it ended before it completed"
                                    };
                                    format!(
                                        "{} (until turn {turn} was sent: {why})",
                                        seconds(totals.end_to_end_ms),
                                    )
                                }
                                None => seconds(totals.end_to_end_ms),
                            }
                        } else {
                            "running…".to_string()
                        }
                    }}
                </dd>
            </div>
            <div>
                <dt>"Tokens in"</dt>
                <dd data-testid="total-input">
                    {move || crate::conditions::thousands(totals.get().input_tokens as f64)}
                </dd>
            </div>
            <div>
                <dt>"Cached by the engine"</dt>
                <dd data-testid="total-cached">
                    {move || totals.with(|t| cached(t.cached_tokens, t.input_tokens))}
                </dd>
            </div>
            <div>
                <dt>"Reused by the connection"</dt>
                <dd data-testid="total-reused">
                    {move || reused(totals.get().reused_by_connection)}
                </dd>
            </div>
            <div>
                <dt>"Tokens out"</dt>
                <dd data-testid="total-output">
                    {move || crate::conditions::thousands(totals.get().output_tokens as f64)}
                </dd>
            </div>
            <div>
                <dt>"Output tokens/s (decoding)"</dt>
                <dd data-testid="total-rate">
                    {move || {
                        totals
                            .with(|t| {
                                if t.unpaced {
                                    "– (no pacing: instant)".to_string()
                                } else {
                                    rate(t.decoding_rate())
                                }
                            })
                    }}
                </dd>
            </div>
        </dl>
        <p class="totals-note field-note">
            "Cached by the engine: the engine's prompt cache, the same rule on every transport (prompts under 1,024 tokens are never cached). Reused by the connection: rendered tokens WebSocket mode's connection cache supplied, so the API did not tokenize them again. Output tokens/s: from each turn's first token to its last, as the page saw them; none for a model without pacing (instant), where it would measure the page, not the model."
        </p>
    }
}

/// A duration in a breakdown.
pub(crate) fn part_ms(ms: Option<f64>) -> String {
    format_duration(ms, Precision::BySize)
}

/// Where `run`'s end-to-end time went: a stacked bar and each part's time
/// (`data-testid="breakdown"`, a part `breakdown-<part>`), once the run is over.
#[component]
pub fn BreakdownView(
    /// The run whose time to split.
    run: RunView,
) -> impl IntoView {
    let breakdown = Memo::new(move |_| {
        run.with(|r| {
            (r.status != RunStatus::Running)
                .then(|| Breakdown::of(r))
                .flatten()
        })
    });
    let bar = move || {
        breakdown.with(|b| {
            b.map(|b| {
                Part::ALL
                    .iter()
                    .map(|part| {
                        let share = b
                            .part(*part)
                            .filter(|_| b.end_to_end_ms > 0.0)
                            .map_or(0.0, |ms| ms * 100.0 / b.end_to_end_ms);
                        view! {
                            <span
                                class=format!("part part-{}", part.id())
                                style=format!("width: {share:.2}%")
                                title=format!("{} {}", part.label(), part_ms(b.part(*part)))
                            ></span>
                        }
                    })
                    .collect_view()
            })
        })
    };
    let rows = Part::ALL
        .iter()
        .map(|part| {
            let part = *part;
            let value = move || {
                breakdown.with(|b| match b {
                    // A part that did not happen says why (loopback, local costs).
                    Some(b) if let (Some(0.0), Some(none)) = (b.part(part), part.absent()) => {
                        none.to_string()
                    }
                    Some(b) => {
                        let ms = part_ms(b.part(part));
                        match (part, b.client_us_per_event()) {
                            (Part::Client, Some(us)) => {
                                format!("{ms} ({} events, {us:.0} µs each)", b.events)
                            }
                            _ => ms,
                        }
                    }
                    None => "–".to_string(),
                })
            };
            view! {
                <div>
                    <dt>
                        <span class=format!("swatch part-{}", part.id())></span>
                        {part.label()}
                    </dt>
                    <dd data-testid=format!("breakdown-{}", part.id())>{value}</dd>
                    <dd class="part-note">{part.explanation()}</dd>
                </div>
            }
        })
        .collect_view();
    view! {
        <section class="breakdown" data-testid="breakdown" aria-label="Where the time went">
            <span class="part-bar" role="img" aria-label="the end-to-end time split into its parts">
                {bar}
            </span>
            <dl class="parts">{rows}</dl>
            {move || {
                breakdown
                    .with(|b| b.is_some_and(|b| b.server.is_none()))
                    .then(|| {
                        view! {
                            <p class="part-note" data-testid="breakdown-unknown">
                                "– : not known. A completed turn has no timings from the server \
                                 (a long-running response reports them at its end, which a run \
                                 stopped or out of turns does not reach), so its parts, the link \
                                 and the rest are not split out."
                            </p>
                        }
                    })
            }}
        </section>
    }
}
