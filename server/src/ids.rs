//! Identifiers in the API's style: a type prefix and 24 random hex digits (`resp_…`, `msg_…`).

/// A new random id with `prefix`, e.g. `new_id("resp")` → `resp_3f2a…`.
pub fn new_id(prefix: &str) -> String {
    let a: u64 = rand::random();
    let b: u32 = rand::random();
    format!("{prefix}_{a:016x}{b:08x}")
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
