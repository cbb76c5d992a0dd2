//! The docs' tables of what the code defines, held to the code: docs/server.md's endpoint table
//! and docs/protocol.md §11's conversation table against the router's routes (methods and
//! paths), and docs/server.md's flag table against the command line `Config` declares (flags,
//! aliases, environment variables, defaults). A route, flag or default added, renamed or removed
//! on one side and not the other fails here, naming it.
//!
//! axum's `Router` does not list its routes, so they are read from the source: every
//! `.route("/…", …)` under `server/src/transport`, with the method routers (`get(…)`,
//! `.post(…)`, …) of its second argument. The router itself then answers for that reading: each
//! route read must reach a handler (not the fallback, not 405) and every other method on its
//! path must get 405, so a misread source fails too.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use axum::http::StatusCode;
use clap::CommandFactory;
use tether_server::Config;

const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH"];

/// A route: its method and its path in the router's syntax (`/v1/responses/{id}`).
type Route = (String, String);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The rows of the first table after the heading `heading` (a line that starts with it), each
/// split into its cells (`\|` inside a cell is not a separator).
fn table_after(markdown: &str, heading: &str) -> Vec<Vec<String>> {
    let mut lines = markdown
        .lines()
        .skip_while(|line| !line.starts_with(heading));
    assert!(lines.next().is_some(), "no heading {heading:?}");
    let rows: Vec<Vec<String>> = lines
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .map(cells)
        .collect();
    assert!(rows.len() > 2, "no table after {heading:?}");
    // The header and the delimiter row.
    rows[2..].to_vec()
}

fn cells(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => cell.push(chars.next().unwrap()),
            '|' => cells.push(std::mem::take(&mut cell).trim().to_string()),
            _ => cell.push(c),
        }
    }
    cells
}

/// The `code spans` of a cell.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The routes a table's first column names: `` `GET /path` ``, `` `GET`, `PATCH /path` ``; a
/// query string after the path is left out. Rows that name no path (the fallback's) are skipped.
fn documented_routes(rows: &[Vec<String>], filter: impl Fn(&str) -> bool) -> BTreeSet<Route> {
    let mut routes = BTreeSet::new();
    for row in rows {
        let mut methods = Vec::new();
        let mut path = None;
        for span in code_spans(&row[0]) {
            for word in span.split_whitespace() {
                let word = word.trim_end_matches(',');
                if METHODS.contains(&word) {
                    methods.push(word.to_string());
                } else if word.starts_with('/') && path.is_none() {
                    path = Some(word.split('?').next().unwrap().to_string());
                }
            }
        }
        match path {
            Some(path) if filter(&path) => {
                assert!(
                    !methods.is_empty(),
                    "a row names {path} but no method: {row:?}"
                );
                routes.extend(methods.into_iter().map(|m| (m, path.clone())));
            }
            Some(_) => {}
            None => assert!(
                methods.is_empty(),
                "a row names methods but no path: {row:?}"
            ),
        }
    }
    routes
}

/// Every `.route("/…", method_router)` in the `.rs` files under `dir`.
fn routes_in_source(dir: &Path) -> BTreeSet<Route> {
    let mut routes = BTreeSet::new();
    let mut files = vec![dir.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let source = read(&path);
            for bad in [".nest(", ".merge(", ".route_service(", ".nest_service("] {
                assert!(
                    !source.contains(bad),
                    "{} composes routers with {bad}: teach this test to follow it",
                    path.display()
                );
            }
            for (at, _) in source.match_indices(".route(") {
                routes.extend(route_call(&source[at + ".route(".len()..]));
            }
        }
    }
    routes
}

/// The routes of one `.route(` call, given the text after its parenthesis; none when its first
/// argument is not a path literal (`cache.route(&model)` is another `route`).
fn route_call(text: &str) -> Vec<Route> {
    let text = text.trim_start();
    let Some(rest) = text.strip_prefix("\"/") else {
        return Vec::new();
    };
    let end = rest.find('"').unwrap();
    let path = format!("/{}", &rest[..end]);
    let rest = &rest[end + 1..];
    let router = &rest[rest.find(',').expect("a method router") + 1..];
    // The method routers at the argument's own depth, up to the `.route(` call's closing `)`.
    let mut methods = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let bytes = router.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' if i == 0 || bytes[i - 1] != b'\\' => in_string = !in_string,
            _ if in_string => {}
            b'(' => {
                if depth == 0 {
                    let before = &router[..i];
                    let name_start = before
                        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .map_or(0, |p| p + 1);
                    let name = &before[name_start..];
                    if METHODS.contains(&name.to_ascii_uppercase().as_str()) {
                        methods.push(name.to_ascii_uppercase());
                    }
                }
                depth += 1;
            }
            b')' if depth == 0 => break,
            b')' => depth -= 1,
            _ => {}
        }
    }
    assert!(!methods.is_empty(), "no method router for {path}");
    methods.into_iter().map(|m| (m, path.clone())).collect()
}

/// The router's routes, read from the source and confirmed by the router itself.
async fn router_routes() -> BTreeSet<Route> {
    let routes = routes_in_source(&repo().join("server/src/transport"));
    assert!(routes.len() > 10, "too few routes read: {routes:?}");
    let router = common::router_at(100_000.0);
    let mut by_path: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (method, path) in &routes {
        by_path.entry(path).or_default().insert(method);
    }
    for (path, methods) in by_path {
        let uri = path
            .split('/')
            .map(|segment| {
                if segment.starts_with('{') {
                    "probe"
                } else {
                    segment
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        for method in METHODS {
            let (status, body) = common::oneshot(&router, method, &uri, None).await;
            let fallback = body.contains("The playground is not built");
            if methods.contains(method) {
                assert!(
                    status != StatusCode::METHOD_NOT_ALLOWED && !fallback,
                    "{method} {path} was read from the source, but the router answers {status}"
                );
            } else {
                assert_eq!(
                    status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{method} {path} was not read from the source, but the router serves it"
                );
            }
        }
    }
    routes
}

fn assert_same(documented: &BTreeSet<Route>, defined: &BTreeSet<Route>, table: &str) {
    let missing: Vec<_> = defined.difference(documented).collect();
    let extra: Vec<_> = documented.difference(defined).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{table} and the router differ:\n  routes the table lacks: {missing:?}\n  \
         rows the router does not serve: {extra:?}"
    );
}

#[tokio::test]
async fn the_endpoint_tables_list_the_routers_routes() {
    let routes = router_routes().await;

    let server_md = read(&repo().join("docs/server.md"));
    let endpoints = documented_routes(&table_after(&server_md, "## Endpoints"), |_| true);
    assert_same(&endpoints, &routes, "docs/server.md's endpoint table");

    let protocol_md = read(&repo().join("docs/protocol.md"));
    let conversations = |path: &str| path.starts_with("/v1/conversations");
    let documented = documented_routes(
        &table_after(&protocol_md, "## 11. Conversations"),
        conversations,
    );
    let served = routes
        .iter()
        .filter(|(_, path)| conversations(path))
        .cloned()
        .collect();
    assert_same(&documented, &served, "docs/protocol.md §11's table");
}

#[test]
fn the_flag_table_lists_every_flag_with_its_variable_and_default() {
    let server_md = read(&repo().join("docs/server.md"));
    let rows = table_after(&server_md, "## Flags");
    let flags_of = |row: &Vec<String>| -> Vec<String> {
        code_spans(&row[0])
            .iter()
            .filter_map(|span| span.split_whitespace().next())
            .filter(|word| word.starts_with("--"))
            .map(|word| word.trim_start_matches("--").to_string())
            .collect()
    };
    let row_of = |flag: &str| {
        rows.iter()
            .find(|row| flags_of(row).iter().any(|f| f == flag))
    };

    let command = Config::command();
    let mut known_flags = BTreeSet::new();
    let mut known_vars = BTreeSet::new();
    for arg in command.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        let var = arg.get_env().map(|v| v.to_string_lossy().into_owned());
        known_vars.extend(var.clone());
        if arg.is_hide_set() {
            // A hidden flag is not in the table, but its variable is read: it must be there.
            if let Some(var) = var {
                assert!(
                    rows.iter()
                        .any(|row| code_spans(&row[1]).contains(&var.as_str())),
                    "{var} (of the hidden --{long}) is not in docs/server.md's flag table"
                );
            }
            continue;
        }
        known_flags.insert(long.to_string());
        let row = row_of(long)
            .unwrap_or_else(|| panic!("--{long} is not in docs/server.md's flag table"));
        for alias in arg.get_visible_aliases().into_iter().flatten() {
            known_flags.insert(alias.to_string());
            assert!(
                flags_of(row).iter().any(|f| f == alias),
                "--{long}'s alias --{alias} is not in its row"
            );
        }
        if let Some(var) = var {
            assert!(
                code_spans(&row[1]).contains(&var.as_str()),
                "--{long}'s variable {var} is not in its row: {}",
                row[1]
            );
        }
        let takes_value = arg.get_action().takes_values();
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        if takes_value && !defaults.is_empty() {
            let default = defaults.join(",");
            assert!(
                code_spans(&row[2]).contains(&default.as_str()),
                "--{long}'s default `{default}` is not in its row: {}",
                row[2]
            );
        }
    }

    for row in &rows {
        for flag in flags_of(row) {
            assert!(
                known_flags.contains(&flag),
                "the table lists --{flag}, which is no flag"
            );
        }
        for var in code_spans(&row[1]) {
            assert!(
                !var.starts_with("TETHER_") || known_vars.contains(var),
                "the table lists {var}, which no flag reads"
            );
        }
    }
}
