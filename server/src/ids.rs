//! Identifiers in the API's style: a type prefix and 24 random hex digits (`resp_…`, `msg_…`).

/// A new random id with `prefix`, e.g. `new_id("resp")` → `resp_3f2a…`.
pub fn new_id(prefix: &str) -> String {
    let a: u64 = rand::random();
    let b: u32 = rand::random();
    // Written digit by digit into a string of the right size: `format!` grew it twice and
    // formatted through `fmt` (~1 % of the server's CPU under load, several ids a turn).
    let mut id = String::with_capacity(prefix.len() + 1 + 24);
    id.push_str(prefix);
    id.push('_');
    push_hex(&mut id, a, 16);
    push_hex(&mut id, u64::from(b), 8);
    id
}

/// Appends the low `digits` hex digits of `value`, most significant first, lowercase.
fn push_hex(out: &mut String, value: u64, digits: u32) {
    for shift in (0..digits).rev() {
        let nibble = (value >> (shift * 4)) & 0xf;
        out.push(char::from(b"0123456789abcdef"[nibble as usize]));
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_prefix_and_24_lowercase_hex_digits_as_format_writes_them() {
        let mut written = String::new();
        push_hex(&mut written, 0x00ab_cdef_0123_4567, 16);
        push_hex(&mut written, 0x0000_0000_0000_00f0, 8);
        assert_eq!(
            written,
            format!("{:016x}{:08x}", 0x00ab_cdef_0123_4567u64, 0xf0u32)
        );
        let id = new_id("resp");
        let (prefix, digits) = id.split_once('_').unwrap();
        assert_eq!(prefix, "resp");
        assert_eq!(digits.len(), 24);
        assert!(
            digits
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        assert_ne!(new_id("resp"), id);
    }
}
