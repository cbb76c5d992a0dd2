//! The simulator's behaviour through the [`Model`] trait, with paused tokio time: no test
//! sleeps, every duration is exact.

use std::time::Duration;

use futures_util::StreamExt;
use tokio::time::Instant;

use super::testing::{context, context_with};
use super::*;
use tether_protocol::Item;

use crate::metrics::Metrics;
use crate::model::ModelEvent;
use serde_json::Value;
use serde_json::json;
use tether_protocol::Tool;

/// On tokio's timer, which follows paused time.
fn simulator(tokens_per_second: f64) -> Simulator {
    simulator_on(tokens_per_second, Clock::Runtime)
}

fn simulator_on(tokens_per_second: f64, clock: Clock) -> Simulator {
    simulator_in(tokens_per_second, clock, &Metrics::new())
}

/// A simulator whose series are in `metrics`.
fn simulator_in(tokens_per_second: f64, clock: Clock, metrics: &Metrics) -> Simulator {
    Simulator::new(
        SimulatorConfig {
            seed: 42,
            tokens_per_second,
            scenarios: ScenarioSet::builtin(),
            aliases: config::Aliases::new(),
            clock,
        },
        metrics,
    )
}

fn text_of(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta(d) | ModelEvent::ArgumentsDelta(d) => Some(d.text.as_str()),
            _ => None,
        })
        .collect()
}

fn token_count(events: &[ModelEvent]) -> usize {
    events.iter().map(ModelEvent::tokens).sum()
}

/// Each event with the time it arrived, relative to the start.
async fn timed(stream: ModelStream) -> Vec<(Duration, ModelEvent)> {
    let start = Instant::now();
    stream.map(|event| (start.elapsed(), event)).collect().await
}

/// The profile slot serving `model`.
fn profile_for<'a>(model: &'a Simulator, name: &str) -> &'a ProfileSlot {
    &model.entry_for(name).slot
}

fn request(model: &str, text: &str) -> ResponseCreate {
    ResponseCreate::new(model, text)
}

fn with_metadata(mut request: ResponseCreate, pairs: &[(&str, &str)]) -> ResponseCreate {
    request.metadata = Some(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect(),
    );
    request
}

#[tokio::test(start_paused = true)]
async fn default_profile_paces_tokens_exactly_at_the_configured_rate() {
    let model = simulator(100.0);
    let context = context(request("tether-sim", "hello there"));
    let start = Instant::now();
    let events: Vec<_> = model.generate(&context).collect().await;
    assert_eq!(
        events.first(),
        Some(&ModelEvent::Started(crate::model::Admission::default())),
        "admitted at once; a short prompt neither reads nor writes the prompt cache"
    );
    assert_eq!(events[1], ModelEvent::BeginMessage);
    assert_eq!(events.last(), Some(&ModelEvent::EndItem));
    assert_eq!(text_of(&events), echo::answer(Some("hello there")));
    // The last of n tokens is due (n - 1) intervals after the first, which is immediate.
    let expected = Duration::from_millis(10) * (token_count(&events) as u32 - 1);
    assert_eq!(start.elapsed(), expected);
}

#[tokio::test(start_paused = true)]
async fn above_a_thousand_tokens_a_second_a_stream_sends_one_delta_per_millisecond() {
    let model = simulator(4_000.0);
    let context = context(with_metadata(
        request("tether-sim", "hi"),
        &[("sim_output_tokens", "40"), ("sim_tool_calls", "0")],
    ));
    let deltas: Vec<_> = timed(model.generate(&context))
        .await
        .into_iter()
        .filter(|(_, event)| matches!(event, ModelEvent::TextDelta(_)))
        .map(|(at, event)| (at, event.tokens()))
        .collect();
    // Token i is due at i / 4,000 s. The first goes alone; each later delta carries the tokens
    // that fell due in the millisecond since the one before, so none is more than 1 ms late.
    // (On tokio's timer, which paused time needs, the millisecond tick alone groups them so;
    // the precise clock's own test is below.)
    let tokens: Vec<_> = deltas.iter().map(|(_, tokens)| *tokens).collect();
    assert_eq!(tokens, [1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3]);
    let times: Vec<_> = deltas.iter().map(|(at, _)| *at).collect();
    let every_millisecond: Vec<_> = (0..11).map(Duration::from_millis).collect();
    assert_eq!(times, every_millisecond);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_precise_clock_a_fast_stream_sends_a_delta_per_millisecond_not_per_token() {
    let model = simulator_on(4_000.0, Clock::Precise);
    let context = context(with_metadata(
        request("tether-sim", "hi"),
        &[("sim_output_tokens", "80"), ("sim_tool_calls", "0")],
    ));
    let deltas: Vec<_> = model
        .generate(&context)
        .filter(|event| std::future::ready(matches!(event, ModelEvent::TextDelta(_))))
        .collect()
        .await;
    assert_eq!(deltas.iter().map(ModelEvent::tokens).sum::<usize>(), 80);
    // 80 tokens over 20 ms: about 21 deltas (fewer on a busy machine, whose late wake-ups
    // gather more tokens each); one per token, on the 250 µs grid, would be 80.
    assert!(deltas.len() <= 30, "{} deltas for 80 tokens", deltas.len());
}

#[tokio::test(start_paused = true)]
async fn unknown_models_get_the_default_profile_and_models_are_listed() {
    let model = simulator(100.0);
    let context = context(request("gpt-unknown", "hi"));
    let start = Instant::now();
    let events: Vec<_> = model.generate(&context).collect().await;
    let expected = Duration::from_millis(10) * (token_count(&events) as u32 - 1);
    assert_eq!(start.elapsed(), expected);
    assert_eq!(
        model.model_ids(),
        ["tether-sim", "flagship", "spark", "burst", "instant"]
    );
}

#[tokio::test(start_paused = true)]
async fn instant_profile_takes_no_time() {
    let model = simulator(1.0);
    let start = Instant::now();
    let events: Vec<_> = model
        .generate(&context(request("instant", "hi")))
        .collect()
        .await;
    assert!(token_count(&events) > 10);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn ttft_is_prefill_then_tokens_follow_at_the_profile_rate_within_the_jitter_band() {
    let model = simulator(1000.0);
    let context = context(with_metadata(
        request("spark", &"word ".repeat(1000)),
        &[("sim_output_tokens", "400")],
    ));
    let profile = profile_for(&model, "spark").profile();
    let ttft = profile.ttft(context.input_tokens());
    assert!(ttft > Duration::from_millis(80), "{ttft:?}");
    let events = timed(model.generate(&context)).await;
    // A delta carries the tokens that were due when it went out (several per millisecond tick
    // when jitter bunches them): each of its tokens arrived with it.
    let token_times: Vec<Duration> = events
        .iter()
        .flat_map(|(t, e)| std::iter::repeat_n(*t, e.tokens()))
        .collect();
    assert_eq!(token_times.len(), 400);
    // tokio's timer has millisecond resolution: a due time fires on the next millisecond.
    let tick = Duration::from_millis(1);
    assert!(
        token_times[0] >= ttft && token_times[0] < ttft + tick,
        "the first token arrives after the TTFT: {:?} vs {ttft:?}",
        token_times[0]
    );
    // Nothing shows before the first token.
    let begin = events
        .iter()
        .find(|(_, e)| *e == ModelEvent::BeginMessage)
        .unwrap();
    assert_eq!(begin.0, token_times[0]);
    // Due times accumulate intervals within the jitter band, so token i arrives between
    // i × the shortest and i × the longest interval after the first (plus one tick).
    let mean = 0.001;
    let (low, high) = (
        mean * (1.0 - profile.jitter_clamp),
        mean * (1.0 + profile.jitter_clamp),
    );
    for (i, time) in token_times.iter().enumerate() {
        let since_first = (*time - token_times[0]).as_secs_f64();
        assert!(since_first >= low * i as f64 - 0.001, "token {i} early");
        assert!(since_first <= high * i as f64 + 0.001, "token {i} late");
    }
    let span = (token_times[399] - token_times[0]).as_secs_f64();
    let average = span / 399.0;
    assert!(
        (average - mean).abs() < mean * 0.05,
        "average gap {average}"
    );
    let gaps: std::collections::BTreeSet<Duration> =
        token_times.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.len() > 1, "jitter varies the gaps");
}

#[tokio::test(start_paused = true)]
async fn the_same_seed_replays_the_same_timings() {
    let context = context(request("flagship", "replay me"));
    let first: Vec<Duration> = timed(simulator(1000.0).generate(&context))
        .await
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let second: Vec<Duration> = timed(simulator(1000.0).generate(&context))
        .await
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    assert_eq!(first, second);
}

#[tokio::test(start_paused = true)]
async fn load_slows_every_running_stream_and_the_queue_is_bounded() {
    let model = Arc::new(simulator(1000.0));
    let slot = profile_for(&model, "flagship");
    slot.replace(Profile {
        tokens_per_second: Some(100.0),
        prefill_overhead_seconds: 0.0,
        prefill_seconds_per_token: 0.0,
        jitter: 0.0,
        jitter_clamp: 0.0,
        load_slowdown: 1.0,
        max_running: 2,
        max_waiting: 1,
        ..Profile::exact(100.0)
    });
    let context = context(with_metadata(
        request("flagship", "go"),
        &[("sim_output_tokens", "11")],
    ));
    // Alone: 10 intervals of 10 ms.
    let alone = timed(model.generate(&context)).await;
    assert_eq!(alone.last().unwrap().0, Duration::from_millis(100));
    // Two at once: intervals double (full load, load_slowdown 1) — all of them, or all but the
    // first one when the first stream's first token comes before the second is admitted.
    let (a, b) = tokio::join!(
        timed(model.generate(&context)),
        timed(model.generate(&context))
    );
    let loaded = Duration::from_millis(190)..=Duration::from_millis(200);
    assert!(loaded.contains(&a.last().unwrap().0), "{:?}", a.last());
    assert!(loaded.contains(&b.last().unwrap().0), "{:?}", b.last());
    // A third waits for a slot and reports its queue time; a fourth is refused with 429.
    let streams: Vec<_> = (0..4).map(|_| timed(model.generate(&context))).collect();
    let results = futures_util::future::join_all(streams).await;
    let queued = results
        .iter()
        .filter_map(|events| match &events[0].1 {
            ModelEvent::Started(admission) if !admission.queue_time.is_zero() => {
                Some(admission.queue_time)
            }
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(queued.len(), 1);
    assert!(loaded.contains(&queued[0]), "{queued:?}");
    let refused: Vec<_> = results
        .iter()
        .filter_map(|events| match &events[0].1 {
            ModelEvent::Fail { status, error } => Some((*status, error.code.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(refused, [(429, Some("rate_limit_exceeded".to_string()))]);
    let scheduler = slot.scheduler();
    assert_eq!((scheduler.running(), scheduler.waiting()), (0, 0));
}

#[tokio::test(start_paused = true)]
async fn exact_output_length_and_suppressed_tool_calls() {
    let model = simulator(100_000.0);
    let mut req = with_metadata(
        request("tether-sim", "hi"),
        &[("sim_output_tokens", "137"), ("sim_tool_calls", "0")],
    );
    req.tools = vec![shell_tool()];
    let events: Vec<_> = model.generate(&context(req)).collect().await;
    assert_eq!(events[1], ModelEvent::BeginMessage);
    assert_eq!(token_count(&events), 137);
    assert_eq!(crate::tokenizer::count(&text_of(&events)), 137);
}

fn shell_tool() -> Tool {
    Tool::Function(tether_protocol::tools::FunctionTool {
        name: "shell".into(),
        description: None,
        parameters: Some(
            json!({"type": "object", "required": ["cmd"], "properties": {"cmd": {"type": "string"}}}),
        ),
        strict: None,
    })
}

#[tokio::test(start_paused = true)]
async fn offered_tools_are_called_until_a_tool_output_arrives() {
    let model = simulator(1000.0);
    let mut req = request("m", "list files");
    req.tools = vec![shell_tool()];
    let events: Vec<_> = model.generate(&context(req.clone())).collect().await;
    assert_eq!(
        events[1],
        ModelEvent::BeginFunctionCall {
            name: "shell".into(),
            namespace: None,
            call_id: None,
        }
    );
    assert_eq!(text_of(&events), r#"{"cmd":"example"}"#);

    let items = vec![
        Item::user_text("list files"),
        Item::FunctionCallOutput(tether_protocol::items::ToolCallOutput {
            id: None,
            call_id: "call_1".into(),
            output: tether_protocol::items::ToolOutputContent::Text("a.txt".into()),
            status: None,
        }),
    ];
    let events: Vec<_> = model.generate(&context_with(req, items)).collect().await;
    assert_eq!(events[1], ModelEvent::BeginMessage);
    let text = text_of(&events);
    assert!(text.starts_with("The tool returned \"a.txt\"."), "{text}");
}

#[test]
fn echo_calls_honour_tool_choice() {
    let tools: Vec<Tool> = serde_json::from_value(json!([
        {"type": "function", "name": "first", "parameters": {"type": "object"}},
        {"type": "namespace", "name": "mcp", "description": "d",
         "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]},
        {"type": "custom", "name": "apply_patch"}
    ]))
    .unwrap();
    let names = |choice: Value, parallel: Option<bool>, after_tool: bool| {
        let mut req = request("m", "go");
        req.tools = tools.clone();
        req.tool_choice = Some(choice);
        req.parallel_tool_calls = parallel;
        let items = if after_tool {
            vec![
                Item::user_text("go"),
                Item::FunctionCallOutput(tether_protocol::items::ToolCallOutput {
                    id: None,
                    call_id: "call_1".into(),
                    output: tether_protocol::items::ToolOutputContent::Text("ok".into()),
                    status: None,
                }),
            ]
        } else {
            vec![Item::user_text("go")]
        };
        context_with(req, items)
            .tools_to_call()
            .iter()
            .map(|plan| plan.name().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(json!("auto"), None, false), ["first"]);
    assert!(names(json!("none"), None, false).is_empty());
    assert!(
        names(json!("auto"), None, true).is_empty(),
        "auto stops after a tool output"
    );
    // A forced tool is called, alone, even after a tool output; inside a namespace too.
    let forced = json!({"type": "function", "name": "lookup"});
    assert_eq!(names(forced.clone(), Some(true), false), ["lookup"]);
    assert_eq!(names(forced, None, true), ["lookup"]);
    assert_eq!(
        names(
            json!({"type": "custom", "name": "apply_patch"}),
            None,
            false
        ),
        ["apply_patch"]
    );
    assert_eq!(names(json!("required"), None, true), ["first"]);
    let allowed = json!({"type": "allowed_tools", "mode": "auto",
        "tools": [{"type": "custom", "name": "apply_patch"}, {"type": "function", "name": "lookup"}]});
    assert_eq!(
        names(allowed.clone(), Some(true), false),
        ["lookup", "apply_patch"]
    );
    assert!(names(allowed, None, true).is_empty());
}

#[tokio::test(start_paused = true)]
async fn custom_namespaced_and_parallel_calls() {
    let tools: Vec<Tool> = serde_json::from_value(json!([
        {"type": "web_search"},
        {"type": "namespace", "name": "mcp", "description": "d",
         "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]},
        {"type": "custom", "name": "apply_patch"}
    ]))
    .unwrap();
    let mut req = request("m", "go");
    req.tools = tools;
    let plans = context(req.clone()).tools_to_call();
    assert_eq!(
        plans.len(),
        1,
        "one call unless parallel calls are asked for"
    );
    assert_eq!(
        plans[0].begin,
        ModelEvent::BeginFunctionCall {
            name: "lookup".into(),
            namespace: Some("mcp".into()),
            call_id: None,
        }
    );
    req.parallel_tool_calls = Some(true);
    let events: Vec<_> = simulator(1000.0).generate(&context(req)).collect().await;
    let begins: Vec<_> = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                ModelEvent::BeginFunctionCall { .. } | ModelEvent::BeginCustomToolCall { .. }
            )
        })
        .collect();
    assert_eq!(begins.len(), 2);
    assert_eq!(
        begins[1],
        &ModelEvent::BeginCustomToolCall {
            name: "apply_patch".into(),
            call_id: None,
        }
    );
    assert_eq!(
        events.iter().filter(|e| **e == ModelEvent::EndItem).count(),
        2
    );
}

#[tokio::test(start_paused = true)]
async fn forced_failures_come_before_or_inside_the_output() {
    let model = simulator(100_000.0);
    let mut context = context(request("tether-sim", "hi"));
    context.forced_failure = Some(FailureKind::RateLimit);
    let events: Vec<_> = model.generate(&context).collect().await;
    assert!(matches!(events[1], ModelEvent::Fail { status: 429, .. }));
    assert_eq!(events.len(), 2);

    context.forced_failure = Some(FailureKind::ServerError);
    let events: Vec<_> = model.generate(&context).collect().await;
    assert!(token_count(&events) >= 1, "some output streams first");
    assert!(matches!(
        events.last(),
        Some(ModelEvent::Fail { status: 500, .. })
    ));
    assert!(
        !events.contains(&ModelEvent::EndItem),
        "the item is cut off"
    );
}

#[tokio::test(start_paused = true)]
async fn failure_rates_apply_per_request() {
    let model = simulator(100_000.0);
    model.set_failure_rates(FailureRates {
        context_length_exceeded: 1.0,
        ..FailureRates::default()
    });
    let events: Vec<_> = model
        .generate(&context(request("tether-sim", "hi")))
        .collect()
        .await;
    match &events[1] {
        ModelEvent::Fail { status, error } => {
            assert_eq!(*status, 400);
            assert_eq!(error.code.as_deref(), Some("context_length_exceeded"));
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn dropping_a_stream_frees_its_slot() {
    let model = simulator(10.0);
    let slot = profile_for(&model, "tether-sim");
    let mut stream = model.generate(&context(request("tether-sim", "hi")));
    stream.next().await;
    assert_eq!(slot.scheduler().running(), 1);
    drop(stream);
    assert_eq!(slot.scheduler().running(), 0);
}

#[tokio::test(start_paused = true)]
async fn reasoning_comes_first_and_is_paced_like_any_token() {
    let model = simulator(100.0);
    let context = context(with_metadata(
        request("tether-sim", "think"),
        &[("sim_reasoning_tokens", "25"), ("sim_output_tokens", "5")],
    ));
    let start = Instant::now();
    let events: Vec<_> = model.generate(&context).collect().await;
    assert_eq!(events[1], ModelEvent::BeginReasoning);
    let reasoning = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::ReasoningDelta(_)))
        .map(ModelEvent::tokens)
        .sum::<usize>();
    assert_eq!(reasoning, 25);
    assert_eq!(token_count(&events), 30);
    assert_eq!(start.elapsed(), Duration::from_millis(10) * 29);
}

#[tokio::test(start_paused = true)]
async fn metrics_measure_ttft_inter_token_latency_and_queue_time() {
    let metrics = Metrics::new();
    let model = simulator_in(100.0, Clock::Runtime, &metrics);
    let context = context(with_metadata(
        request("tether-sim", "measure"),
        &[("sim_output_tokens", "11")],
    ));
    let _: Vec<_> = model.generate(&context).collect().await;
    let text = metrics.render();
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}"))
            .to_string()
    };
    let model_label = "{model_name=\"tether-sim\"}";
    assert_eq!(
        line(&format!("vllm:generation_tokens_total{model_label}")),
        format!("vllm:generation_tokens_total{model_label} 11")
    );
    assert_eq!(
        line(&format!(
            "vllm:inter_token_latency_seconds_count{model_label}"
        )),
        format!("vllm:inter_token_latency_seconds_count{model_label} 10")
    );
    // Ten intervals of exactly 10 ms (the sum is a float).
    let seconds = |series: &str| -> f64 {
        let line = line(&format!("{series}{model_label}"));
        line.rsplit_once(' ').unwrap().1.parse().unwrap()
    };
    assert!((seconds("vllm:inter_token_latency_seconds_sum") - 0.1).abs() < 1e-9);
    assert_eq!(
        line(&format!(
            "vllm:time_to_first_token_seconds_sum{model_label}"
        )),
        format!("vllm:time_to_first_token_seconds_sum{model_label} 0")
    );
    assert!((seconds("vllm:e2e_request_latency_seconds_sum") - 0.1).abs() < 1e-9);
    assert_eq!(
        line(&format!(
            "vllm:request_queue_time_seconds_count{model_label}"
        )),
        format!("vllm:request_queue_time_seconds_count{model_label} 1")
    );
    assert!(text.contains("vllm:num_requests_running{model_name=\"spark\"} 0\n"));
}

#[tokio::test(start_paused = true)]
async fn metadata_forces_a_failure_on_any_transport() {
    let model = simulator(100_000.0);
    let context = context(with_metadata(
        request("tether-sim", "hi"),
        &[("sim_fail", "context_length_exceeded")],
    ));
    let events: Vec<_> = model.generate(&context).collect().await;
    assert!(matches!(&events[1], ModelEvent::Fail { status: 400, error }
        if error.code.as_deref() == Some("context_length_exceeded")));
}

#[tokio::test(start_paused = true)]
async fn prefill_is_charged_only_for_tokens_the_prompt_cache_does_not_hold() {
    let model = simulator(1000.0);
    profile_for(&model, "flagship").replace(Profile {
        prefill_overhead_seconds: 0.01,
        prefill_seconds_per_token: 0.001,
        jitter: 0.0,
        jitter_clamp: 0.0,
        ..Profile::exact(100.0)
    });
    let request = with_metadata(
        request("flagship", &"word ".repeat(2000)),
        &[("sim_output_tokens", "1")],
    );
    let ttft = |events: &[(Duration, ModelEvent)]| {
        events
            .iter()
            .find(|(_, event)| event.tokens() > 0)
            .map(|(at, _)| *at)
            .unwrap()
    };
    let admission = |events: &[(Duration, ModelEvent)]| match &events[0].1 {
        ModelEvent::Started(admission) => admission.clone(),
        other => panic!("{other:?}"),
    };
    let first_context = context(request.clone());
    let input = first_context.input_tokens();
    let first = timed(model.generate(&first_context)).await;
    assert_eq!(admission(&first).cache.cached_tokens, 0);
    assert_eq!(
        ttft(&first),
        Duration::from_secs_f64(0.01 + 0.001 * input as f64)
    );
    // The same prompt again: whole 128-token blocks come from the cache, the rest is prefilled.
    let second = timed(model.generate(&context(request))).await;
    let cached = admission(&second).cache.cached_tokens;
    assert_eq!(cached, input / 128 * 128);
    assert_eq!(
        ttft(&second),
        Duration::from_secs_f64(0.01 + 0.001 * (input - cached) as f64)
    );
}
