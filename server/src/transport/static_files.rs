//! The playground's static files: precompressed, and cached for as long as each may be.
//!
//! `cargo xtask dist` writes a brotli (`.br`) and a gzip (`.gz`) copy beside every file
//! (`xtask/src/dist.rs`); this serves the copy the browser's `Accept-Encoding` takes — brotli
//! first — with `Content-Encoding` and `Vary: Accept-Encoding`, and the file itself to a client
//! that takes neither (tower-http's `ServeDir`, which also answers ranges, conditional requests
//! and a directory's `index.html`).
//!
//! Caching: a file whose name carries its content hash (the wasm chunks:
//! `split_agent_view.<16 hex digits>.wasm`, `split_sandbox_jq.…`, `chunk_4.…`) never changes
//! under that name, so a browser may keep it for a year without asking again (`public, max-age=31536000, immutable`). Everything else —
//! the entry page, the JS glue, the main wasm, the styles — keeps `no-cache`: the browser
//! revalidates each (a 304 when unchanged) instead of reusing a heuristically fresh copy. The
//! playground is several files that must come from one build, its JS glue, its main wasm and
//! the chunk that links to the main module's internals, and a mix of two builds would fail to
//! start; a page opened before a rebuild asks for its own chunk by its hash and gets a 404.

use std::path::Path;

use axum::Router;
use axum::extract::Request;
use axum::http::HeaderValue;
use axum::http::header::CACHE_CONTROL;
use axum::middleware::Next;
use axum::response::Response;
use tower_http::services::ServeDir;

/// `Cache-Control` of a file named by its content.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of every other file.
pub const REVALIDATE: &str = "no-cache";

/// Whether the last segment of `path` names its content: a `.<16 lowercase hex digits>.` part,
/// as `xtask dist` names the wasm chunks.
pub fn is_content_hashed(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let parts: Vec<&str> = name.split('.').collect();
    // Neither the stem (the first part) nor the extension (the last).
    parts.len() > 2
        && parts[1..parts.len() - 1].iter().any(|part| {
            part.len() == 16 && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
}

/// Sets the `Cache-Control` the requested path calls for.
async fn cache_control(request: Request, next: Next) -> Response {
    let hashed = is_content_hashed(request.uri().path());
    let mut response = next.run(request).await;
    let value = if hashed && response.status().is_success() {
        IMMUTABLE
    } else {
        REVALIDATE
    };
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static(value));
    response
}

/// The files under `dir`, precompressed where `xtask dist` compressed them, as a router for the
/// API's fallback.
pub fn service(dir: &Path) -> Router {
    Router::new()
        .fallback_service(ServeDir::new(dir).precompressed_br().precompressed_gzip())
        .layer(axum::middleware::from_fn(cache_control))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, VARY};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    const CHUNK: &str = "pkg/split_agent_view.0123456789abcdef.wasm";

    /// A `dist/` with a page, a hashed chunk and an unhashed wasm, each with its copies.
    fn dist(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("tether-static-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        for (path, body) in [
            ("index.html", "<!doctype html>page"),
            (CHUNK, "chunk"),
            ("pkg/tether_playground_bg.wasm", "main wasm"),
        ] {
            std::fs::write(dir.join(path), body).unwrap();
            std::fs::write(dir.join(format!("{path}.br")), format!("br:{body}")).unwrap();
            std::fs::write(dir.join(format!("{path}.gz")), format!("gz:{body}")).unwrap();
        }
        dir
    }

    async fn get(dir: &Path, path: &str, accept: Option<&str>) -> (Response, String) {
        let mut request = Request::builder().uri(path);
        if let Some(accept) = accept {
            request = request.header(ACCEPT_ENCODING, accept);
        }
        let response = service(dir)
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (
            Response::from_parts(parts, Body::empty()),
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }

    fn header(response: &Response, name: axum::http::HeaderName) -> Option<&str> {
        response.headers().get(name).and_then(|v| v.to_str().ok())
    }

    #[tokio::test]
    async fn the_encoding_follows_accept_encoding() {
        let dir = dist("encoding");
        let (br, body) = get(&dir, "/", Some("gzip, deflate, br")).await;
        assert_eq!(body, "br:<!doctype html>page");
        assert_eq!(header(&br, CONTENT_ENCODING), Some("br"));
        assert_eq!(header(&br, VARY), Some("accept-encoding"));
        assert!(header(&br, CONTENT_TYPE).unwrap().starts_with("text/html"));

        let (gz, body) = get(&dir, "/pkg/tether_playground_bg.wasm", Some("gzip")).await;
        assert_eq!(body, "gz:main wasm");
        assert_eq!(header(&gz, CONTENT_ENCODING), Some("gzip"));
        assert_eq!(header(&gz, CONTENT_TYPE), Some("application/wasm"));

        let (plain, body) = get(&dir, "/pkg/tether_playground_bg.wasm", None).await;
        assert_eq!(body, "main wasm");
        assert_eq!(header(&plain, CONTENT_ENCODING), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn only_a_content_hashed_file_is_immutable() {
        let dir = dist("cache");
        let (chunk, _) = get(&dir, &format!("/{CHUNK}"), Some("br")).await;
        assert_eq!(header(&chunk, CACHE_CONTROL), Some(IMMUTABLE));
        for path in ["/", "/index.html", "/pkg/tether_playground_bg.wasm"] {
            let (response, _) = get(&dir, path, Some("br")).await;
            assert_eq!(header(&response, CACHE_CONTROL), Some(REVALIDATE), "{path}");
        }
        // A chunk of another build is not there; its 404 must not be kept for a year.
        let (gone, _) = get(&dir, "/pkg/split_agent_view.fedcba9876543210.wasm", None).await;
        assert_eq!(gone.status(), StatusCode::NOT_FOUND);
        assert_eq!(header(&gone, CACHE_CONTROL), Some(REVALIDATE));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn content_hashes_are_sixteen_hex_digits_inside_the_name() {
        assert!(is_content_hashed(
            "/pkg/split_agent_view.ac344d18faf55444.wasm"
        ));
        assert!(!is_content_hashed("/pkg/tether_playground_bg.wasm"));
        assert!(!is_content_hashed("/pkg/ac344d18faf55444"));
        assert!(!is_content_hashed("/pkg/x.AC344D18FAF55444.wasm"));
        assert!(!is_content_hashed("/pkg/x.ac344d18faf5544.wasm"));
        assert!(!is_content_hashed("/ac344d18faf55444.d/index.html"));
    }
}
