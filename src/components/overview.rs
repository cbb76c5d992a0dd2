//! The overview, where the page opens: what is simulated and what measured, in a line; then the
//! one button — compare WebSocket mode and HTTP under stated conditions, which can be changed
//! right under it, saying how long that takes — then what WebSocket mode is
//! and what this page measures, that the model is simulated and what each of its profiles does,
//! the way to the walkthrough at `/docs/`, and Chat and Agent one tab away.

use leptos::prelude::*;

use crate::agent::{estimate_run, format_estimate};
use crate::components::ConditionsPanel;
use crate::components::conditions::conditions_refused;
use crate::components::field::{InputErrors, focus_field_when_shown};
use crate::conditions::counted;
use crate::profiles::PROFILES;
use crate::settings::{Field, Settings, TaskLength, TransportChoice};
use crate::{PageContext, View};

/// What the comparison runs, in a sentence.
fn what_it_runs(s: &Settings) -> String {
    let task = match s.task_length {
        TaskLength::Long => {
            "the long rollout (40 tool calls, the context growing past 100k tokens)"
        }
        TaskLength::Short => "the short demo (about six turns)",
    };
    let costs = match s.api_costs {
        crate::conditions::ApiCosts::Server => "the server's own API costs".to_string(),
        costs => format!("{} API costs", costs.as_str()),
    };
    let takes = match estimate_comparison(s) {
        Some(ms) => format!(
            " It takes {}: the estimate adds up, turn by turn, the model's time at this \
             profile's rate, the link's round trip and bytes, and the API's work.",
            format_estimate(ms)
        ),
        None => String::new(),
    };
    // One repetition has no turns to take and no median.
    let repetitions = if s.repetitions == 1 {
        "then 1 repetition. You get its saving".to_string()
    } else {
        format!(
            "then {}, the legs taking turns to go first. You get a first result after one \
             repetition, the median saving once all are done",
            counted(s.repetitions, "repetition")
        )
    };
    format!(
        "Runs {task} over WebSocket mode and over HTTP stateless (what Codex sends over HTTP) on \
         the {} model, over {}, with {costs}: a warm-up of both legs that is not counted, \
         {repetitions}, why, and a chart of every turn.{takes}",
        s.profile,
        s.link().describe(),
    )
}

/// How long the button's comparison takes with `settings`: it compares whatever transport the
/// Agent tab (or the URL) has chosen.
fn estimate_comparison(settings: &Settings) -> Option<f64> {
    estimate_run(&Settings {
        transport: TransportChoice::Compare,
        ..settings.clone()
    })
}

/// The fields the overview shows (its conditions panel); the others are the Agent tab's.
fn on_the_overview(field: Field) -> bool {
    matches!(
        field,
        Field::TaskLength
            | Field::Profile
            | Field::Link
            | Field::RttMs
            | Field::UpMbit
            | Field::DownMbit
            | Field::ApiCosts
    )
}

/// What is simulated and what is measured, in a line, before the button.
const SIMULATED: &str = "Simulated alike for both transports: the model's pace and the network \
     link. Measured here: this server's work, each transport's bytes and their time on the link, \
     this page. Modelled, with hosted costs only: the API's classifier and engine hop, said apart.";

/// The overview (`data-testid="overview"`, its button `intro-compare`).
#[component]
pub fn Overview() -> impl IntoView {
    let page = use_context::<PageContext>().unwrap_or_else(PageContext::standalone);
    // The same settings as the Agent tab's: a condition chosen here is chosen there.
    let form = page.form();
    // The server refuses the conditions these settings ask for.
    let refused = page.conditions_refused;
    let refused_here =
        move || refused.with(Option::is_some) && page.settings.with(Settings::asks_for_conditions);
    // A field the overview does not have is fixed where it is: on the Agent tab.
    let fix_on_agent_tab = move |field| {
        page.view.set(View::Agent);
        focus_field_when_shown("", field);
    };
    let compare = move |_| {
        // Nothing runs on a value the page did not understand, the URL's transport included
        // (the button replaces it below): the focus goes to the first such field, on the
        // Agent tab if it is one of that tab's.
        if let Some(field) = form.first_blocking() {
            if on_the_overview(field) {
                focus_field_when_shown("overview-", field);
            } else {
                fix_on_agent_tab(field);
            }
            return;
        }
        // The button compares, whatever the Agent tab's transport (or the URL's) says.
        form.edit(
            Field::Transport,
            TransportChoice::Compare.as_str().to_string(),
        );
        if page
            .settings
            .with_untracked(|s| conditions_refused(page.conditions_refused, s, Some("overview-")))
        {
            return;
        }
        page.run_on_open.set_value(true);
        page.view.set(View::Agent);
    };
    let profiles = PROFILES
        .iter()
        .map(|p| {
            view! {
                <tr>
                    <th scope="row"><code>{p.name}</code></th>
                    <td>{p.speed()}</td>
                    <td>{p.what}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="overview" data-testid="overview">
            <h2>"When does WebSocket mode pay off, and why?"</h2>
            <p class="lead">
                "An agent makes dozens of requests per task. Over HTTP each one re-sends the whole conversation and the API processes all of it again; WebSocket mode keeps one connection and a cache of its last response, so a continuation carries and costs only what is new. Compare them here, under the conditions you choose:"
            </p>
            <div class="try">
                <p class="simulated" data-testid="intro-simulated">{SIMULATED}</p>
                <button type="button" class="cta" data-testid="intro-compare" on:click=compare>
                    "Compare WebSocket mode and HTTP"
                    {move || {
                        page
                            .settings
                            .with(estimate_comparison)
                            .filter(|_| form.blocking().is_empty() && !refused_here())
                            .map(|ms| {
                                view! {
                                    <span
                                        class="estimate"
                                        data-testid="intro-estimate"
                                        data-ms=format!("{ms:.0}")
                                    >
                                        {format!(" · {}", format_estimate(ms))}
                                    </span>
                                }
                            })
                    }}
                </button>
                <InputErrors
                    form=form
                    shows=on_the_overview
                    elsewhere=("Agent tab", Callback::new(fix_on_agent_tab))
                />
                <p class="cta-note" data-testid="intro-what">
                    {move || {
                        // Nothing is described, or estimated, from a value the page did not
                        // understand: the settings still hold the last good one.
                        if !form.blocking().is_empty() {
                            "What runs, and how long it takes, once the fields below are fixed."
                                .to_string()
                        } else if refused_here() {
                            "This server does not take the link or API costs chosen below: \
                             choose what it runs there."
                                .to_string()
                        } else {
                            page.settings.with(what_it_runs)
                        }
                    }}
                </p>
                <ConditionsPanel
                    form=form
                    models=page.models
                    refused=page.conditions_refused
                    locked=Signal::stored(false)
                    id="overview-"
                />
                <p class="field-note">
                    "With the short demo on loopback and local API costs there is little to save — the model and the tools are nearly all of a run; the long task over a real link, or with a hosted API's costs, is where it pays. The Agent tab's "
                    <strong>"Sweep model speed"</strong>
                    " measures the saving at 65, 1,000 and 4,000 tokens/s and with no model time, under the same conditions."
                </p>
            </div>
            <h2>"What this is"</h2>
            <p>
                "The Responses API's "
                <strong>"WebSocket mode"</strong>
                " keeps one connection open with a cache of the connection's last response, so a continuation carries only what is new — the tool outputs — and the API only processes that. This page runs a Codex-style agent loop in your browser against this server, over either transport, executes the model's tool calls in a sandbox here, and shows where each run's time goes: the API's own work, the model's, the tools', the network's and this page's."
            </p>
            <p>"The Agent tab runs the loop over four designs (its Transport setting):"</p>
            <ul class="designs" data-testid="designs">
                <li>
                    <strong>"WebSocket"</strong>
                    " — one connection; each turn is a response.create with only the new tool outputs and previous_response_id, served from the connection's cache."
                </li>
                <li>
                    <strong>"WebSocket long-running"</strong>
                    " — the reference service's first design (v1, response.append): one response for the whole run, which pauses with response.done at each tool call and resumes when the page appends the outputs, so the API's work before and after inference happens once per run."
                </li>
                <li>
                    <strong>"HTTP chained"</strong>
                    " — a POST per turn with the new items and previous_response_id, through the store."
                </li>
                <li>
                    <strong>"HTTP stateless"</strong>
                    " — a POST per turn with the whole conversation: what Codex sends over HTTP."
                </li>
            </ul>
            <p>
                "While a run streams over WebSocket you can steer it: the Steer box sends response.steer, and the server ends the response at a safe point and continues with your input."
            </p>
            <p>
                <strong>"The model is simulated."</strong>
                " Tether's server has an inference simulator in place of a model: it streams scripted or generated answers at the pace of the profile a request names, and prefills only the prompt tokens its prompt cache (the same for both transports) does not hold. The network link is emulated by the server too, at its own socket, for the connection or request that asks: a browser cannot slow down one socket."
            </p>
            <div class="table-scroll" role="region" aria-label="The simulated model's profiles" tabindex="0">
                <table class="profiles" data-testid="profiles">
                    <caption>"The simulated model's profiles (the model speed above)"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Profile"</th>
                            <th scope="col">"Speed"</th>
                            <th scope="col">"What it is for"</th>
                        </tr>
                    </thead>
                    <tbody>{profiles}</tbody>
                </table>
            </div>
            <p>
                <a href="docs/">"Read how WebSocket mode works"</a>
                " — the walkthrough of the protocol, with live demos. Or open "
                <strong>"Chat"</strong>
                " to stream one answer, or "
                <strong>"Agent"</strong>
                " to run the loop with your own settings."
            </p>
        </section>
    }
}
