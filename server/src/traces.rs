//! Traces (`--otlp-endpoint`): one span per response and, under it, one per pipeline stage and
//! per engine call, exported over OTLP/HTTP (protobuf or JSON) by the OpenTelemetry SDK's batch
//! processor, parented by the client's W3C trace context — the `traceparent` header over HTTP,
//! `client_metadata.ws_request_header_traceparent` on a WebSocket `response.create` (Codex's
//! convention: a `ws_request_header_*` key stands for that request header) — so a client's
//! turn and the server's stages are one trace (docs/server.md#traces).
//!
//! Off by default, and then free: no exporter, no context parsed, no instant kept. On, the
//! pipeline keeps the start of each stage it already times ([`crate::timing::Marks`]) and the
//! spans are built once the response has ended, from that record, with their real start and end
//! times: nothing is added to the work of a stage, and a WebSocket turn stays proportional to its
//! new input (a span per stage, not per item).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{
    Span as _, SpanContext, SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::error::OTelSdkError;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider};

use crate::timing::{Marks, StageTimings};

/// The path OTLP/HTTP takes traces on.
const TRACES_PATH: &str = "/v1/traces";

/// The wire format of the export (`--otlp-protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OtlpProtocol {
    /// OTLP/HTTP with protobuf bodies (`application/x-protobuf`), what collectors and Jaeger
    /// take by default.
    #[value(name = "http/protobuf")]
    HttpProtobuf,
    /// OTLP/HTTP with JSON bodies (`application/json`).
    #[value(name = "http/json")]
    HttpJson,
}

/// Why traces cannot be exported as configured (`--otlp-endpoint`).
#[derive(Debug, thiserror::Error)]
pub enum TracesError {
    #[error("'{endpoint}' is not a URL: {error}")]
    NotAUrl {
        endpoint: String,
        error: axum::http::uri::InvalidUri,
    },
    #[error(
        "'{endpoint}' must be an http:// URL of an OTLP/HTTP collector (e.g. \
         http://localhost:4318; TLS is not supported)"
    )]
    NotHttp { endpoint: String },
    #[error("traces need a tokio runtime")]
    NoRuntime,
    #[error("cannot build the OTLP exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// The exporter and the tracer spans are made with.
pub struct Traces {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

impl std::fmt::Debug for Traces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Traces")
    }
}

/// The traces endpoint for `endpoint`, an OTLP/HTTP collector's base URL
/// (`http://localhost:4318`): its `/v1/traces`, unless the URL names that path already.
pub fn traces_url(endpoint: &str) -> Result<String, TracesError> {
    let uri: axum::http::Uri = endpoint.parse().map_err(|error| TracesError::NotAUrl {
        endpoint: endpoint.to_string(),
        error,
    })?;
    if !matches!(uri.scheme_str(), Some("http")) || uri.host().is_none() {
        return Err(TracesError::NotHttp {
            endpoint: endpoint.to_string(),
        });
    }
    let trimmed = endpoint.trim_end_matches('/');
    Ok(if trimmed.ends_with(TRACES_PATH) {
        trimmed.to_string()
    } else {
        format!("{trimmed}{TRACES_PATH}")
    })
}

impl Traces {
    /// An exporter to `endpoint` (see [`traces_url`]) in `protocol`, naming the service
    /// `tether-server` and this `replica`. Must be called inside a tokio runtime: exports run on
    /// it.
    pub fn start(
        endpoint: &str,
        protocol: OtlpProtocol,
        replica: &str,
    ) -> Result<Self, TracesError> {
        let url = traces_url(endpoint)?;
        let client = OnRuntime {
            inner: opentelemetry_http::hyper::HyperClient::with_default_connector(
                Duration::from_secs(10),
                None,
            ),
            runtime: tokio::runtime::Handle::try_current().map_err(|_| TracesError::NoRuntime)?,
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(match protocol {
                OtlpProtocol::HttpProtobuf => Protocol::HttpBinary,
                OtlpProtocol::HttpJson => Protocol::HttpJson,
            })
            .with_endpoint(url)
            .build()?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name("tether-server")
            .with_attribute(KeyValue::new("service.instance.id", replica.to_string()))
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(BatchSpanProcessor::builder(exporter).build())
            .with_resource(resource)
            .build();
        let tracer = provider.tracer("tether-server");
        Ok(Traces { provider, tracer })
    }

    /// Exports every span ended so far; blocks until the collector answered.
    pub fn flush(&self) -> Result<(), OTelSdkError> {
        self.provider.force_flush()
    }

    /// Exports what is left and stops the exporter (at shutdown).
    pub fn shutdown(&self) -> Result<(), OTelSdkError> {
        self.provider.shutdown()
    }

    /// The parent a `traceparent` (and `tracestate`) names: the client's span, or none (the
    /// response's span starts a trace) when it is absent or malformed.
    pub fn parent(&self, traceparent: Option<&str>, tracestate: Option<&str>) -> Parent {
        let Some(traceparent) = traceparent else {
            return Parent::default();
        };
        let carrier = Carrier {
            traceparent,
            tracestate,
        };
        let context = TraceContextPropagator::new().extract(&carrier);
        let remote = context.span().span_context().clone();
        Parent {
            context: remote.is_valid().then(|| Arc::new(context)),
        }
    }

    /// Starts the span of one response, at `started`, under `parent`; its stages are added
    /// when it ends ([`ResponseSpan::end`]).
    pub fn begin(self: &Arc<Self>, parent: &Parent, started: Instant, name: &str) -> ResponseSpan {
        let clock = Clock::now();
        let context = parent
            .context
            .as_deref()
            .cloned()
            .unwrap_or_else(Context::new);
        let span = self
            .tracer
            .span_builder(name.to_string())
            .with_kind(SpanKind::Server)
            .with_start_time(clock.at(started))
            .start_with_context(&self.tracer, &context);
        let context = Context::new().with_remote_span_context(span.span_context().clone());
        ResponseSpan {
            traces: self.clone(),
            span,
            context,
        }
    }

    /// A child of `parent` from `start` for `duration` (`when`).
    fn child(
        &self,
        parent: &Context,
        clock: &Clock,
        name: String,
        kind: SpanKind,
        (start, duration): (Instant, Duration),
        attributes: Vec<KeyValue>,
    ) -> SpanContext {
        let mut span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_start_time(clock.at(start))
            .with_attributes(attributes)
            .start_with_context(&self.tracer, parent);
        let context = span.span_context().clone();
        span.end_with_timestamp(clock.at(start + duration));
        context
    }
}

/// The client's span a response's span is a child of (none: it starts a trace).
#[derive(Debug, Clone, Default)]
pub struct Parent {
    context: Option<Arc<Context>>,
}

impl Parent {
    /// The client's trace, when it named one.
    pub fn trace_id(&self) -> Option<String> {
        let context = self.context.as_deref()?;
        Some(context.span().span_context().trace_id().to_string())
    }
}

/// The trace context as the propagator reads it.
struct Carrier<'a> {
    traceparent: &'a str,
    tracestate: Option<&'a str>,
}

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => Some(self.traceparent),
            "tracestate" => self.tracestate,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// The span of a response being served.
pub struct ResponseSpan {
    traces: Arc<Traces>,
    span: opentelemetry_sdk::trace::Span,
    /// `span` as a parent, for its children.
    context: Context,
}

impl std::fmt::Debug for ResponseSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ResponseSpan")
            .field(self.span.span_context())
            .finish()
    }
}

/// What a response's span says about it.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub response_id: String,
    pub model: String,
    /// `http`, `sse` or `ws`.
    pub transport: &'static str,
    /// `completed`, `incomplete`, `failed`.
    pub status: String,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    /// The error a failed response ended with.
    pub error: Option<String>,
}

impl ResponseSpan {
    /// Where the writes behind the response (persist, bill) put their spans.
    pub fn writes(&self) -> WriteSpans {
        WriteSpans {
            traces: self.traces.clone(),
            parent: self.context.clone(),
        }
    }

    /// Ends the span now, with a child for every stage, modelled wait and engine call `timings`
    /// marked, and `summary`'s attributes.
    pub fn end(mut self, timings: &StageTimings, summary: &Summary) {
        let clock = Clock::now();
        let path = timings.path.name();
        let mut attributes = vec![
            KeyValue::new("tether.response.id", summary.response_id.clone()),
            KeyValue::new("gen_ai.response.id", summary.response_id.clone()),
            KeyValue::new("gen_ai.request.model", summary.model.clone()),
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("tether.transport", summary.transport),
            KeyValue::new("tether.path", path),
            KeyValue::new("tether.status", summary.status.clone()),
            KeyValue::new("gen_ai.usage.input_tokens", summary.input_tokens as i64),
            KeyValue::new(
                "gen_ai.usage.cache_read.input_tokens",
                summary.cached_tokens as i64,
            ),
            KeyValue::new("gen_ai.usage.output_tokens", summary.output_tokens as i64),
            KeyValue::new(
                "tether.tokens.reused_by_connection",
                timings.tokens.reused_by_connection as i64,
            ),
        ];
        if let Some(error) = &summary.error {
            self.span.set_status(Status::error(error.clone()));
        }
        if let Some(marks) = timings.marks.as_deref() {
            self.children(marks, &clock, path);
        }
        self.span.set_attributes(attributes.drain(..));
        self.span.end_with_timestamp(clock.at(Instant::now()));
    }

    fn children(&self, marks: &Marks, clock: &Clock, path: &str) {
        let traces = &self.traces;
        let mut generate = None;
        for (stage, start, duration) in &marks.stages {
            let attributes = vec![KeyValue::new("tether.path", path.to_string())];
            let context = traces.child(
                &self.context,
                clock,
                format!("tether.{}", stage.name()),
                SpanKind::Internal,
                (*start, *duration),
                attributes,
            );
            if *stage == crate::timing::Stage::Generate {
                generate = Some(context);
            }
        }
        for (service, start, duration) in &marks.modelled {
            traces.child(
                &self.context,
                clock,
                format!("tether.modelled.{}", service.name()),
                SpanKind::Internal,
                (*start, *duration),
                vec![KeyValue::new("tether.modelled", true)],
            );
        }
        // Engine calls are the generate stage's children (its time is theirs and the stream's).
        let under = match generate {
            Some(context) => Context::new().with_remote_span_context(context),
            None => self.context.clone(),
        };
        for (index, call) in marks.engine_calls.iter().enumerate() {
            let mut attributes = vec![
                KeyValue::new("tether.engine.call", index as i64),
                KeyValue::new("tether.engine.replica", call.replica as i64),
                KeyValue::new("tether.engine.queue_us", call.queue.as_micros() as i64),
                KeyValue::new("gen_ai.usage.input_tokens", call.input_tokens as i64),
                KeyValue::new(
                    "gen_ai.usage.cache_read.input_tokens",
                    call.cached_tokens as i64,
                ),
                KeyValue::new("gen_ai.usage.output_tokens", call.output_tokens as i64),
            ];
            if let Some(first) = call.first_token {
                attributes.push(KeyValue::new(
                    "tether.engine.ttft_us",
                    first.saturating_duration_since(call.called).as_micros() as i64,
                ));
            }
            traces.child(
                &under,
                clock,
                "tether.engine".to_string(),
                SpanKind::Client,
                (
                    call.called,
                    call.ended.saturating_duration_since(call.called),
                ),
                attributes,
            );
        }
    }
}

/// Where the spans of a response's writes go (they may run after its span ended: WebSocket
/// mode writes behind `response.completed`).
#[derive(Clone)]
pub struct WriteSpans {
    traces: Arc<Traces>,
    parent: Context,
}

impl std::fmt::Debug for WriteSpans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WriteSpans")
    }
}

impl WriteSpans {
    /// A span for every stage `timings` marked (persist, bill).
    pub fn record(&self, timings: &StageTimings) {
        let Some(marks) = timings.marks.as_deref() else {
            return;
        };
        let clock = Clock::now();
        for (stage, start, duration) in &marks.stages {
            self.traces.child(
                &self.parent,
                &clock,
                format!("tether.{}", stage.name()),
                SpanKind::Internal,
                (*start, *duration),
                vec![KeyValue::new("tether.path", timings.path.name())],
            );
        }
    }
}

/// Wall-clock times for the monotonic instants the pipeline keeps, as of one moment.
struct Clock {
    instant: Instant,
    system: SystemTime,
}

impl Clock {
    fn now() -> Self {
        Clock {
            instant: Instant::now(),
            system: SystemTime::now(),
        }
    }

    fn at(&self, instant: Instant) -> SystemTime {
        match self.instant.checked_duration_since(instant) {
            Some(before) => self.system - before,
            None => self.system + instant.duration_since(self.instant),
        }
    }
}

/// Hyper's client, run on the server's tokio runtime: the SDK's batch processor exports from a
/// thread of its own, where hyper would find no runtime.
#[derive(Debug, Clone)]
struct OnRuntime {
    inner: opentelemetry_http::hyper::HyperClient,
    runtime: tokio::runtime::Handle,
}

#[async_trait::async_trait]
impl HttpClient for OnRuntime {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let inner = self.inner.clone();
        self.runtime
            .spawn(async move { inner.send_bytes(request).await })
            .await
            .map_err(|e| Box::new(e) as HttpError)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_a_collector_base_url() {
        assert_eq!(
            traces_url("http://localhost:4318").unwrap(),
            "http://localhost:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://127.0.0.1:4318/").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://collector/v1/traces").unwrap(),
            "http://collector/v1/traces"
        );
        for bad in ["localhost:4318", "https://collector"] {
            let error = traces_url(bad).unwrap_err();
            assert!(
                matches!(&error, TracesError::NotHttp { endpoint } if endpoint == bad),
                "{bad}: {error:?}"
            );
        }
        for bad in ["not a url", ""] {
            let error = traces_url(bad).unwrap_err();
            assert!(
                matches!(error, TracesError::NotAUrl { .. }),
                "{bad}: {error:?}"
            );
        }
        assert!(matches!(
            Traces::start("http://127.0.0.1:9", OtlpProtocol::HttpJson, "t").unwrap_err(),
            TracesError::NoRuntime
        ));
    }

    #[tokio::test]
    async fn a_parent_is_the_client_s_span_or_none() {
        let traces = Traces::start("http://127.0.0.1:9", OtlpProtocol::HttpProtobuf, "t").unwrap();
        let parent = traces.parent(
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            Some("vendor=x"),
        );
        assert_eq!(
            parent.trace_id().as_deref(),
            Some("0af7651916cd43dd8448eb211c80319c")
        );
        for bad in [None, Some("garbage"), Some("00-0000-0000-01")] {
            assert_eq!(traces.parent(bad, None).trace_id(), None, "{bad:?}");
        }
        let _ = traces.shutdown();
    }
}
