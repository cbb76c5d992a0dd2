//! Why a comparison came out as it did, under its chart: the sentence of
//! [`crate::agent::explain_why`] (measured first, the link's round trips, then the modelled
//! waits) or a sweep's description, the difference part by part, and what the server said it
//! applied.

use leptos::prelude::*;

use crate::agent::{Comparison, ContinuationMode, WARM_UP, describe_sweep, explain_why};
use crate::conditions::Applied;

/// What the server applied, in words; a sweep's points share the link and the costs, each at
/// its own profile, which the latest leg's conditions alone would not say.
fn described(c: &Comparison, applied: &Applied) -> String {
    if !c.is_sweep() {
        return applied.describe();
    }
    let mut profiles: Vec<&str> = Vec::new();
    for profile in &c.sweep {
        if !profiles.contains(&profile.as_str()) {
            profiles.push(profile);
        }
    }
    format!(
        "{} · each point at its own model speed ({})",
        applied.describe_link_and_costs(),
        profiles.join(", ")
    )
}

/// `speedup-why`, `speedup-explained` (and the long-running leg's), `conditions-applied`.
#[component]
pub fn WhyLines(
    /// The comparison.
    #[prop(into)]
    comparison: Signal<Comparison>,
) -> impl IntoView {
    let long = ContinuationMode::LongRunning;
    let why = move || {
        comparison.with(|c| {
            if c.is_sweep() {
                describe_sweep(c)
            } else {
                explain_why(c, ContinuationMode::WebSocket)
            }
        })
    };
    let explained = move || comparison.with(|c| c.explain()).unwrap_or_default();
    let long_explained = move || {
        comparison.with(|c| {
            c.has_long_running()
                .then(|| c.explain_of(long))
                .flatten()
                .map(|text| view! { <p class="speedup-explained">{text}</p> })
        })
    };
    // What the server said it applied, once a counted leg has reported it.
    let applied = move || {
        comparison.with(|c| {
            let latest = c.legs.iter().rev().find_map(|l| {
                l.conditions
                    .as_ref()
                    .filter(|_| l.repetition != WARM_UP)
                    .map(|a| (described(c, a), a.chosen_by.clone()))
            });
            let exhausted = c.legs.iter().any(|l| l.link_budget_exhausted);
            latest.map(|(described, chosen_by)| {
                let by = if chosen_by == "client" {
                    "as this page asked"
                } else {
                    "the server's own"
                };
                let lifted = if exhausted {
                    " The link's time budget ran out on a leg: its bandwidth limit was lifted for the rest of it."
                } else {
                    ""
                };
                format!("The server applied: {described} ({by}).{lifted}")
            })
        })
    };
    view! {
        <p class="speedup-why" data-testid="speedup-why">{why}</p>
        <p class="speedup-explained" data-testid="speedup-explained">{explained}</p>
        {long_explained}
        <p class="conditions-applied" data-testid="conditions-applied">{applied}</p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::Link;

    #[test]
    fn a_sweep_says_its_points_each_ran_at_their_own_profile() {
        let applied = Applied {
            link: Link::LOOPBACK,
            api_costs: "local".into(),
            chosen_by: "client".into(),
            model: Some("instant".into()),
            tokens_per_second: None,
        };
        let sweep = Comparison::sweep(&["flagship", "spark", "spark", "instant"]);
        let said = described(&sweep, &applied);
        assert!(
            said.ends_with(
                "local API costs · each point at its own model speed (flagship, spark, instant)"
            ),
            "{said}"
        );
        assert!(
            !said.contains("no model time"),
            "not the last point's alone: {said}"
        );
        assert!(described(&Comparison::new(3), &applied).ends_with("instant, no model time"));
    }
}
