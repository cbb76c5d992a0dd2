//! The playground's static files: the docs page built into `dist/docs/` is reachable at `/docs`
//! (redirected to `/docs/`, so its relative links resolve) and at `/docs/`; every static file
//! says `Cache-Control: no-cache`.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use tether_server::{AppState, app};
use tower::ServiceExt;

mod common;

async fn get(router: &axum::Router, uri: &str) -> (StatusCode, Option<String>, String) {
    let request = Request::get(uri).body(Body::empty()).unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    if status == StatusCode::OK {
        // Every static file is revalidated: the playground's JS, main wasm and agent chunk
        // must come from one build.
        assert_eq!(
            response
                .headers()
                .get(header::CACHE_CONTROL)
                .map(|v| v.to_str().unwrap()),
            Some("no-cache"),
            "{uri}"
        );
    }
    let location = response
        .headers()
        .get(header::LOCATION)
        .map(|v| v.to_str().unwrap().to_string());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        location,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

#[tokio::test]
async fn the_docs_page_is_served_at_docs_with_and_without_the_slash() {
    let dist = std::env::temp_dir().join(format!("tether-static-docs-{}", std::process::id()));
    std::fs::create_dir_all(dist.join("docs")).unwrap();
    std::fs::write(dist.join("index.html"), "<title>playground</title>").unwrap();
    std::fs::write(dist.join("docs/index.html"), "<title>docs</title>").unwrap();
    let router = app(AppState::new(&common::config(":memory:")).unwrap(), &dist);

    let (status, _, body) = get(&router, "/docs/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("<title>docs</title>"), "{body}");

    let (status, location, _) = get(&router, "/docs").await;
    assert!(status.is_redirection(), "{status}");
    assert_eq!(location.as_deref(), Some("/docs/"));

    let (status, _, body) = get(&router, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("playground"));

    std::fs::create_dir_all(dist.join("pkg")).unwrap();
    std::fs::write(dist.join("pkg/split_agent_view.wasm"), b"\0asm").unwrap();
    let (status, _, _) = get(&router, "/pkg/split_agent_view.wasm").await;
    assert_eq!(status, StatusCode::OK);
    std::fs::remove_dir_all(&dist).unwrap();
}
