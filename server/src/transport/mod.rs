//! How requests reach the server: the routes of the API over [`http`] and WebSocket mode
//! ([`ws`]), behind API-key [`auth`]; the simulator's [`admin`] endpoint; liveness and readiness
//! ([`health`]) and `/metrics`; and the playground's static files as the fallback. [`router`]
//! puts them together from an [`AppState`], so tests drive the whole server without a socket.

pub mod admin;
pub mod auth;
pub mod background;
pub mod client_secrets;
pub mod conversations;
pub mod dry_run;
pub mod errors;
pub mod health;
pub mod http;
pub mod link;
pub mod options;
pub mod rate_limit;
pub mod server_headers;
pub mod sse;
pub mod static_files;
pub mod trace_context;
pub mod ws;

use std::path::Path;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::{get, post};

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
        .route("/v1/responses/{id}/cancel", post(http::cancel))
        .route("/v1/responses/input_tokens", post(dry_run::input_tokens))
        .route("/v1/responses/compact", post(dry_run::compact))
        .route("/v1/responses/client_secrets", post(client_secrets::create))
        .route("/v1/conversations", post(conversations::create))
        .route(
            "/v1/conversations/{id}",
            get(conversations::retrieve)
                .post(conversations::update)
                .delete(conversations::delete),
        )
        .route(
            "/v1/conversations/{id}/items",
            get(conversations::list_items).post(conversations::add_items),
        )
        .route(
            "/v1/conversations/{id}/items/{item_id}",
            get(conversations::retrieve_item).delete(conversations::delete_item),
        )
        // Runs after authentication (route layers run last added first): it needs the project.
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            rate_limit::enforce,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_api_key,
        ))
        .route("/admin/simulator", get(admin::show).patch(admin::update))
        .route("/healthz", get(health::live))
        .route("/readyz", get(health::ready))
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
        ));
    let served = if static_dir.join("index.html").is_file() {
        // Precompressed (brotli, gzip) as `xtask dist` wrote them; `no-cache` but for the
        // content-hashed chunk, which is immutable (`static_files.rs` says why).
        api.fallback_service(static_files::service(static_dir))
    } else {
        let hint = format!(
            "The playground is not built: {} has no index.html.\n\
             Run `cargo xtask run` (builds it and starts the server) or `cargo xtask dist`.\n",
            static_dir.display()
        );
        api.fallback(move || async move { (StatusCode::NOT_FOUND, hint).into_response() })
    };
    served
        // Every request sets its socket's link (the playground's files too, so a socket kept
        // alive after an API request's link serves them without one); inside CORS, so a page
        // can read a refusal.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            link::apply,
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
                // A page may read where its project stands with the rate limits, and a 429's
                // wait; and whether this server takes the conditions it would ask for.
                .expose_headers(
                    rate_limit::HEADERS
                        .map(axum::http::HeaderName::from_static)
                        .into_iter()
                        .chain([server_headers::CLIENT_CONDITIONS, server_headers::SCENARIOS])
                        .collect::<Vec<_>>(),
                )
                .max_age(std::time::Duration::from_secs(600)),
        )
        .with_state(state)
}
