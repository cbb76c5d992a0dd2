//! The overview, where the page opens: what WebSocket mode is and what this page measures, that
//! the model is simulated and what each of its profiles does, a one-click comparison, the way to
//! the walkthrough at `/docs/`, and Chat and Agent one tab away.

use leptos::prelude::*;

use crate::profiles::PROFILES;
use crate::settings::{
    DEFAULT_SCENARIO, INTRO_COMPARE_PROFILE, INTRO_COMPARE_WHY, Settings, TransportChoice,
};
use crate::{PageContext, View};

/// The overview (`data-testid="overview"`, its button `intro-compare`).
#[component]
pub fn Overview() -> impl IntoView {
    let page = use_context::<PageContext>().unwrap_or_else(PageContext::standalone);
    let compare = move |_| {
        page.settings.update(|s: &mut Settings| {
            s.transport = TransportChoice::Compare;
            s.profile = INTRO_COMPARE_PROFILE.to_string();
            s.scenario = DEFAULT_SCENARIO.to_string();
        });
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
            <h2>"What this is"</h2>
            <p>
                "An agent such as Codex makes dozens of requests per task: the model picks a tool, the tool runs, its output goes back. Over plain HTTP each request re-sends the whole conversation, and the API parses, renders into tokens, validates and classifies all of it again. The Responses API's "
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
                " Tether's server has an inference simulator in place of a model: it streams scripted or generated answers at the pace of the profile a request names, and prefills only the prompt tokens its prompt cache (the same for both transports) does not hold."
            </p>
            <div class="table-scroll" role="region" aria-label="The simulated model's profiles" tabindex="0">
                <table class="profiles" data-testid="profiles">
                    <caption>"The simulated model's profiles (pick one in the Agent tab's settings)"</caption>
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
            <h2>"Try it"</h2>
            <p>
                <button type="button" class="cta" data-testid="intro-compare" on:click=compare>
                    "Compare WebSocket mode and HTTP"
                </button>
            </p>
            <p class="cta-note">
                "Runs the " <code>{DEFAULT_SCENARIO}</code>
                " scenario — an agent lists, reads and tests a small project, patches it and tests it again, about six turns — over WebSocket mode and over HTTP stateless (what Codex sends over HTTP), on the "
                <code>{INTRO_COMPARE_PROFILE}</code> " profile: " {INTRO_COMPARE_WHY}
                " Each leg is warmed first and runs three times, the legs alternating which goes first; you get the median speedup and what it is made of, part by part."
            </p>
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
