//! The per-turn chart ([`TurnChart`]) and the sweep's plot ([`SweepChart`]), drawn as SVG from
//! the geometry [`crate::agent`] lays out: rectangles, lines and labels, nothing computed here.
//! Each has a visible legend with what every colour means, and a text equivalent for screen
//! readers.

use leptos::prelude::*;

use crate::agent::{
    Chart, ChartSize, Comparison, Precision, RunStatus, Segment, SweepPlot, TurnBar, Verdict,
    format_duration, polyline, savings_range, signed_percent, turn_bars,
};
use crate::components::RunView;

/// Whether the page is a phone's width (the stylesheet's 600 px breakpoint), kept current as the
/// window resizes: the charts lay themselves out for it rather than scroll sideways.
fn narrow_screen() -> Signal<bool> {
    let narrow_now = || {
        window()
            .inner_width()
            .ok()
            .and_then(|width| width.as_f64())
            .is_some_and(|width| width <= 600.0)
    };
    let narrow = RwSignal::new(narrow_now());
    let resized = window_event_listener(leptos::ev::resize, move |_| {
        let now = narrow_now();
        if narrow.get_untracked() != now {
            narrow.set(now);
        }
    });
    on_cleanup(move || resized.remove());
    narrow.into()
}

/// The legend of the segments `segments`, each with its colour and what it is.
fn legend(segments: Vec<Segment>) -> impl IntoView {
    view! {
        <ul class="chart-legend" data-testid="chart-legend">
            {segments
                .into_iter()
                .map(|segment| {
                    view! {
                        <li>
                            <span class=format!("swatch seg-{}", segment.id())></span>
                            {segment.label()}
                        </li>
                    }
                })
                .collect_view()}
            <li>
                <span class="swatch-line"></span>
                "context: the prompt the model read that turn (tokens, right axis)"
            </li>
        </ul>
    }
}

/// A leg's turns in words, for a screen reader: `WebSocket: 41 turns, 0.41 s to 0.44 s each;
/// context 3k to 124k tokens`.
fn described(title: &str, bars: &[TurnBar]) -> String {
    let times: Vec<f64> = bars.iter().map(TurnBar::total_ms).collect();
    let (Some(first), Some(last)) = (bars.first(), bars.last()) else {
        return format!("{title}: no turn yet");
    };
    let low = times.iter().copied().fold(f64::INFINITY, f64::min);
    let high = times.iter().copied().fold(0.0, f64::max);
    format!(
        "{title}: {} turns, {} to {} each (turn 1 {}, turn {} {}); context {} to {} tokens",
        bars.len(),
        format_duration(low, Precision::BySize),
        format_duration(high, Precision::BySize),
        format_duration(times[0], Precision::BySize),
        last.turn,
        format_duration(*times.last().unwrap_or(&0.0), Precision::BySize),
        first.context_tokens,
        last.context_tokens
    )
}

/// The chart of `legs` — each a title and its run — on shared scales
/// (`data-testid="turn-chart"`, one `chart-panel` per leg, one `chart-bar` per segment of a
/// turn). It draws the turns each run has completed, so it grows while the runs go.
#[component]
pub fn TurnChart(
    /// The legs to draw, top to bottom.
    legs: Vec<(String, RunView)>,
    /// What the chart shows, in a sentence above it.
    #[prop(into)]
    caption: String,
    /// Said after each panel's title, leg by leg: which repetition its run is, or that it is a
    /// warm-up and no result.
    #[prop(optional, into)]
    which: Option<Signal<Vec<String>>>,
) -> impl IntoView {
    let narrow = narrow_screen();
    let chart = Memo::new(move |_| {
        let which = which.map(|w| w.get()).unwrap_or_default();
        let size = if narrow.get() {
            ChartSize::narrow()
        } else {
            ChartSize::default()
        };
        let bars: Vec<(String, Vec<TurnBar>)> = legs
            .iter()
            .enumerate()
            .map(|(i, (title, run))| {
                let which = which.get(i).map_or("", String::as_str);
                (format!("{title}{which}"), run.with(turn_bars))
            })
            .collect();
        let described: Vec<String> = bars.iter().map(|(t, b)| described(t, b)).collect();
        (Chart::layout(&bars, size), described.join(". "))
    });
    let svg = move || {
        chart.with(|(chart, described)| {
            let panels = chart
                .panels
                .iter()
                .map(|panel| {
                    let (left, _, right, bottom) = panel.plot;
                    let grid = panel
                        .time_ticks
                        .iter()
                        .map(|tick| {
                            view! {
                                <line class="grid" x1=left x2=right y1=tick.at y2=tick.at></line>
                                <text class="tick" x=left - 6.0 y=tick.at + 4.0 text-anchor="end">
                                    {tick.label.clone()}
                                </text>
                            }
                        })
                        .collect_view();
                    let context_ticks = panel
                        .context_ticks
                        .iter()
                        .map(|tick| {
                            view! {
                                <text class="tick tick-context" x=right + 6.0 y=tick.at + 4.0>
                                    {tick.label.clone()}
                                </text>
                            }
                        })
                        .collect_view();
                    let turn_ticks = panel
                        .turn_ticks
                        .iter()
                        .map(|tick| {
                            view! {
                                <text class="tick" x=tick.at y=bottom + 14.0 text-anchor="middle">
                                    {tick.label.clone()}
                                </text>
                            }
                        })
                        .collect_view();
                    let bars = panel
                        .rects
                        .iter()
                        .map(|r| {
                            view! {
                                <rect
                                    class=format!("chart-bar seg-{}", r.segment.id())
                                    data-testid="chart-bar"
                                    x=format!("{:.2}", r.x)
                                    y=format!("{:.2}", r.y)
                                    width=format!("{:.2}", r.width)
                                    height=format!("{:.2}", r.height.max(0.0))
                                >
                                    <title>
                                        {format!(
                                            "turn {}: {} {}",
                                            r.turn,
                                            r.segment.label(),
                                            format_duration(r.ms, Precision::BySize),
                                        )}
                                    </title>
                                </rect>
                            }
                        })
                        .collect_view();
                    view! {
                        <g class="chart-panel" data-testid="chart-panel">
                            <text class="panel-title" x=left y=panel.top + 14.0>
                                {panel.title.clone()}
                            </text>
                            {grid}
                            {context_ticks}
                            {bars}
                            <polyline
                                class="context-line"
                                data-testid="chart-context"
                                points=polyline(&panel.context)
                            ></polyline>
                            <line class="axis" x1=left x2=right y1=bottom y2=bottom></line>
                            {turn_ticks}
                            <text class="axis-title" x=(left + right) / 2.0 y=bottom + 22.0 text-anchor="middle">
                                "turn"
                            </text>
                        </g>
                    }
                })
                .collect_view();
            view! {
                <svg
                    class="turn-chart-svg"
                    viewBox=format!("0 0 {} {}", chart.width, chart.height + 8.0)
                    role="img"
                    aria-label=format!("Time per turn and context size: {described}")
                >
                    {panels}
                </svg>
            }
        })
    };
    let segments = move || chart.with(|(chart, _)| legend(chart.segments.clone()));
    view! {
        <figure class="turn-chart" data-testid="turn-chart">
            <figcaption>{caption}</figcaption>
            <div class="chart-box" role="region" aria-label="Per-turn chart" tabindex="0">
                {svg}
            </div>
            {segments}
        </figure>
    }
}

/// The sweep's plot: WebSocket mode's saving against the model's speed
/// (`data-testid="sweep-chart"`, a `sweep-point` per measured point).
#[component]
pub fn SweepChart(
    /// The sweep.
    #[prop(into)]
    comparison: Signal<Comparison>,
) -> impl IntoView {
    let narrow = narrow_screen();
    let plot = Memo::new(move |_| {
        let width = if narrow.get() { 360.0 } else { 640.0 };
        comparison.with(|c| SweepPlot::layout(c, width, 272.0))
    });
    let progress = Memo::new(move |_| comparison.with(Comparison::legs_done));
    let running = Memo::new(move |_| comparison.with(|c| c.status() == RunStatus::Running));
    let svg = move || {
        plot.with(|plot| {
            let (left, top, right, bottom) = plot.plot;
            let grid = plot
                .saving_ticks
                .iter()
                .map(|(y, label)| {
                    view! {
                        <line class="grid" x1=left x2=right y1=*y y2=*y></line>
                        <text class="tick" x=left - 6.0 y=y + 4.0 text-anchor="end">{label.clone()}</text>
                    }
                })
                .collect_view();
            let speeds = plot
                .speed_ticks
                .iter()
                .map(|(x, label)| {
                    view! {
                        <line class="grid grid-v" x1=*x x2=*x y1=top y2=bottom></line>
                        <text class="tick" x=*x y=bottom + 14.0 text-anchor="middle">
                            <tspan x=*x>{label[0].clone()}</tspan>
                            <tspan x=*x dy="1.1em">{label[1].clone()}</tspan>
                        </text>
                    }
                })
                .collect_view();
            let lines = plot.lines();
            let middle = (left + right) / 2.0;
            let points = plot
                .points
                .iter()
                .map(|p| {
                    let label = signed_percent(p.saving);
                    let range = if p.savings.n > 1 {
                        format!(
                            "{label}: the median of {} pairs, {}; {}",
                            p.savings.n,
                            savings_range(&p.savings),
                            match p.verdict {
                                Verdict::Noise if p.apart => "too few pairs to judge by",
                                Verdict::Noise => "within noise, the legs' times overlap",
                                _ => "the legs' times separate",
                            }
                        )
                    } else {
                        format!("{label}: 1 pair, no spread to judge by")
                    };
                    view! {
                        <g
                            class=format!("sweep-point verdict-{}", p.verdict.as_str())
                            data-testid="sweep-point"
                        >
                            <line
                                class="sweep-range"
                                data-testid="sweep-range"
                                x1=p.x
                                x2=p.x
                                y1=p.low_y
                                y2=p.high_y
                            ></line>
                            <circle cx=p.x cy=p.y r="5"></circle>
                            // Beside the point, clear of its range's line and its ring (a
                            // hollow ring beside "0 %" read "00 %"): to its right in the
                            // plot's left half, to its left in the right half.
                            <text
                                class="point-label"
                                x=if p.x < middle { p.x + 13.0 } else { p.x - 13.0 }
                                y=p.y + 4.0
                                text-anchor=if p.x < middle { "start" } else { "end" }
                            >
                                {label.clone()}
                            </text>
                            <title>{format!("{}: {range}", p.profile)}</title>
                        </g>
                    }
                })
                .collect_view();
            view! {
                <svg
                    class="sweep-svg"
                    viewBox=format!("0 0 {} {}", plot.width, plot.height)
                    role="img"
                    aria-label="WebSocket mode's saving over HTTP stateless against the model's speed"
                >
                    {grid}
                    {speeds}
                    <line class="zero" x1=left x2=right y1=plot.zero y2=plot.zero></line>
                    <polyline class="sweep-line" data-testid="sweep-line" points=polyline(&lines.paced)></polyline>
                    {lines.to_unpaced.map(|step| {
                        view! {
                            <polyline
                                class="sweep-line sweep-line-unpaced"
                                data-testid="sweep-line-unpaced"
                                points=polyline(&step)
                            ></polyline>
                        }
                    })}
                    {points}
                    <text class="axis-title" x=(left + right) / 2.0 y=bottom + 46.0 text-anchor="middle">
                        "model speed (decoding, tokens/s; log scale)"
                    </text>
                    <text class="axis-title" x="12" y=(top + bottom) / 2.0 text-anchor="middle" transform=format!("rotate(-90 12 {})", (top + bottom) / 2.0)>
                        "saving"
                    </text>
                </svg>
            }
        })
    };
    view! {
        <figure class="sweep-chart" data-testid="sweep-chart">
            <figcaption>
                "Where it pays off: WebSocket mode's saving over HTTP stateless, 1 − WebSocket ÷ HTTP of a pair of runs' measured times (end to end less the modelled hosted costs, when there are any), against the model's speed, under the same task, link and API costs. Each point is the median of its pairs and its bar their range; a point is filled when every WebSocket run of it took less time than every HTTP run (the legs separate), hollow when within noise — with one pair a point there is no spread to judge by."
            </figcaption>
            <div class="chart-box" role="region" aria-label="Sweep plot" tabindex="0">
                {svg}
            </div>
            <p class="sweep-progress">
                <progress
                    data-testid="sweep-progress"
                    max=move || progress.get().1
                    value=move || progress.get().0
                    aria-label="Legs of the sweep done"
                ></progress>
                {move || {
                    let (done, all) = progress.get();
                    if running.get() {
                        format!(" {done} of {all} legs done (the first two are the warm-up, not a result)")
                    } else if done == all {
                        // The status line above says the legs done; here, what they measured.
                        let points = plot.with(|p| p.points.len());
                        let pairs = (all.saturating_sub(2)) / 2;
                        format!(
                            " all done: {pairs} pairs measured at {points} model speeds, after a warm-up"
                        )
                    } else {
                        format!(" {done} of {all} legs done")
                    }
                }}
            </p>
        </figure>
    }
}
