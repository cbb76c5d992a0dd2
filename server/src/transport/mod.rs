//! How requests reach the server: the routes of the API over [`http`] and WebSocket mode
//! ([`ws`]), behind API-key [`auth`]; the simulator's [`admin`] endpoint; health and `/metrics`;
//! and the playground's static files as the fallback. [`router`] puts them together from an
//! [`AppState`], so tests drive the whole server without a socket.

pub mod admin;
pub mod auth;
pub mod errors;
pub mod http;
pub mod options;
pub mod ws;

use std::path::Path;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeader;

use crate::AppState;

/// The router: API routes, health, metrics, and the playground in `static_dir` as the fallback.
pub fn router(state: AppState, static_dir: &Path) -> Router {
    let body_limit = state.max_frame_bytes;
    let api = Router::new()
        .route("/v1/models", get(http::models))
        .route("/v1/responses", get(ws::upgrade).post(http::create))
        .route(
            "/v1/responses/{id}",
            get(http::retrieve).delete(http::delete),
        )
        .route("/v1/responses/{id}/input_items", get(http::input_items))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_api_key,
        ))
        .route("/admin/simulator", get(admin::show).patch(admin::update))
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/metrics",
            get(|State(state): State<AppState>| async move {
                (
                    [(CONTENT_TYPE, state.metrics.content_type())],
                    state.metrics.render(),
                )
            }),
        )
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            errors::json_errors,
        ))
        // A playground (or any page) served from another origin may call the API: no cookies
        // are involved (keys go in `Authorization`), and WebSocket upgrades are not subject to
        // CORS anyway. Preflights are answered before authentication.
        .layer(
            tower_http::cors::CorsLayer::new()
                .allow_origin(tower_http::cors::Any)
                .allow_methods([
                    axum::http::Method::GET,
                    axum::http::Method::POST,
                    axum::http::Method::DELETE,
                    axum::http::Method::PATCH,
                ])
                // Mirrored, not `*`: a wildcard does not cover `Authorization` (Fetch spec).
                .allow_headers(tower_http::cors::AllowHeaders::mirror_request())
                .max_age(std::time::Duration::from_secs(600)),
        )
        .with_state(state);
    if static_dir.join("index.html").is_file() {
        // `no-cache`: the browser revalidates every file (a 304 when unchanged) instead of
        // reusing a heuristically fresh copy. The playground is several files that must come
        // from one build — its JS glue, its main wasm and the agent view's wasm chunk, which
        // links to the main module's internals — and a mix of two builds would fail to start.
        // (A page opened before a rebuild asks for its own chunk by content hash: `xtask dist`.)
        api.fallback_service(SetResponseHeader::overriding(
            ServeDir::new(static_dir),
            axum::http::header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static("no-cache"),
        ))
    } else {
        let hint = format!(
            "The playground is not built: {} has no index.html.\n\
             Run `cargo xtask run` (builds it and starts the server) or `cargo xtask dist`.\n",
            static_dir.display()
        );
        api.fallback(move || async move { (StatusCode::NOT_FOUND, hint).into_response() })
    }
}
