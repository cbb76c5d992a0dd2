//! Every repetition of a comparison: its order, each leg's time and HTTP's over the WebSocket
//! design's — measured first, and with the modelled waits when there were any. The warm-up has
//! a row, but not a result: it runs on `instant` with local costs, to warm the page and the
//! server, so its times say nothing about the conditions chosen.

use leptos::prelude::*;

use crate::agent::{
    COMPARE_HTTP_MODE, Comparison, ContinuationMode, LegSummary, Precision, RunStatus, WARM_UP,
    WARM_UP_PROFILE, format_duration, format_speedup, leg_name,
};
use crate::profiles::short_label;

/// One leg of one repetition: its time once done (the warm-up's only its status).
fn cell(c: &Comparison, repetition: usize, mode: ContinuationMode) -> String {
    match c.leg(repetition, mode) {
        None => "–".to_string(),
        Some(leg) => match leg.status {
            RunStatus::Done if repetition == WARM_UP => "done".to_string(),
            // Measured first, as the ratio: with modelled waits, `11.1 s + 1.1 s modelled`.
            RunStatus::Done => match (leg.end_to_end_ms, leg.modelled_ms()) {
                (Some(total), Some(modelled)) => format!(
                    "{} + {} modelled",
                    format_duration(Some(total - modelled), Precision::BySize),
                    format_duration(Some(modelled), Precision::BySize)
                ),
                (total, _) => format_duration(total, Precision::BySize),
            },
            RunStatus::Running => "running…".to_string(),
            other => other.as_str().to_string(),
        },
    }
}

/// The leg done, if it is.
fn done(c: &Comparison, repetition: usize, mode: ContinuationMode) -> Option<&LegSummary> {
    c.leg(repetition, mode)
        .filter(|l| l.status == RunStatus::Done)
}

/// HTTP's time over the leg `ws`'s in `repetition`, once both are done: measured, and with the
/// modelled waits when there were any (`1.36× (2.54× with the modelled waits)`).
fn ratio(c: &Comparison, repetition: usize, ws: ContinuationMode) -> String {
    if repetition == WARM_UP {
        return format!("not a result ({WARM_UP_PROFILE}, local costs)");
    }
    let (Some(w), Some(h)) = (
        done(c, repetition, ws),
        done(c, repetition, COMPARE_HTTP_MODE),
    ) else {
        return "–".to_string();
    };
    let over = |h: Option<f64>, w: Option<f64>| Some(h? / w.filter(|w| *w > 0.0)?);
    let total = over(h.end_to_end_ms, w.end_to_end_ms);
    let measured = over(
        h.breakdown.and_then(|b| b.measured_ms()),
        w.breakdown.and_then(|b| b.measured_ms()),
    );
    let modelled = w.modelled_ms().is_some() || h.modelled_ms().is_some();
    match (measured, total) {
        (Some(m), Some(t)) if modelled => format!(
            "{} ({} with the modelled waits)",
            format_speedup(m),
            format_speedup(t)
        ),
        (_, Some(t)) => format_speedup(t),
        _ => "–".to_string(),
    }
}

/// The table of every repetition (`compare-repetition` rows, the warm-up's `compare-warm-up`).
#[component]
pub fn RepetitionsTable(
    /// The comparison.
    #[prop(into)]
    comparison: Signal<Comparison>,
    /// Whether the long-running design is a leg (columns of its own).
    long_running: bool,
) -> impl IntoView {
    let [ws, http] = Comparison::MODES;
    let long = ContinuationMode::LongRunning;
    let body = move || {
        comparison.with(|c| {
            let first = if c.warm_up { WARM_UP } else { 1 };
            (first..=c.repetitions)
                .map(|repetition| {
                    let order = c
                        .order(repetition)
                        .into_iter()
                        .map(leg_name)
                        .collect::<Vec<_>>()
                        .join(", then ");
                    let (name, test_id) = match c.sweep_point(repetition) {
                        _ if repetition == WARM_UP => {
                            ("warm-up (not counted)".to_string(), "compare-warm-up")
                        }
                        Some(at) => (
                            format!("{repetition}: {}", short_label(&at.profile)),
                            "compare-repetition",
                        ),
                        None => (repetition.to_string(), "compare-repetition"),
                    };
                    view! {
                        <tr data-testid=test_id class:warm-up=repetition == WARM_UP>
                            <th scope="row">{name}</th>
                            <td>{order}</td>
                            <td>{cell(c, repetition, ws)}</td>
                            <td>{cell(c, repetition, http)}</td>
                            {long_running.then(|| view! { <td>{cell(c, repetition, long)}</td> })}
                            <td>{ratio(c, repetition, ws)}</td>
                            {long_running.then(|| view! { <td>{ratio(c, repetition, long)}</td> })}
                        </tr>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <div class="table-scroll" role="region" aria-label="Every repetition" tabindex="0">
            <table class="compare-repetitions">
                <caption>
                    "Every repetition: a warm-up of every leg first, not counted and not a result; then the legs take turns to go first. A leg's time is what was measured, plus the modelled waits when there were any; the ratio is HTTP's time over WebSocket's, measured first."
                </caption>
                <thead>
                    <tr>
                        <th scope="col">"Repetition"</th>
                        <th scope="col">"Order"</th>
                        <th scope="col">"WebSocket"</th>
                        <th scope="col">"HTTP stateless"</th>
                        {long_running.then(|| view! { <th scope="col">"WebSocket long-running"</th> })}
                        <th scope="col">"Ratio"</th>
                        {long_running.then(|| view! { <th scope="col">"Ratio (long-running)"</th> })}
                    </tr>
                </thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    }
}
