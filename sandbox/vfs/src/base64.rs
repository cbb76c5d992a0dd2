//! Standard base64 (RFC 4648, padded), for binary files in JSON snapshots. Owned rather than
//! taken from the `base64` crate: the crate's engine made the playground's agent chunk 3.7 KiB
//! larger gzipped (566.5 KiB against 562.8, `cargo xtask dist`), and the bundle is over its
//! budget. The tests hold this file against the crate: the same text out, and the same bytes —
//! or the same refusal — back for any input, valid or not.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Not a base64 digit.
const INVALID: u8 = 0xff;

/// The value of each byte as a base64 digit.
const DIGITS: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut value = 0;
    while value < 64 {
        table[ALPHABET[value] as usize] = value as u8;
        value += 1;
    }
    table
};

pub fn encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The bytes `text` encodes, or `None` unless it is canonical padded base64: groups of four
/// digits, `=` only at the end of the last group (one or two), no bits set past the last byte.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let groups = bytes.len() / 4;
    let mut out = Vec::with_capacity(groups * 3);
    for (index, group) in bytes.chunks_exact(4).enumerate() {
        let padding = if index + 1 == groups {
            group.iter().rev().take_while(|b| **b == b'=').count()
        } else {
            0
        };
        if padding > 2 {
            return None;
        }
        let mut n = 0u32;
        for (i, byte) in group[..4 - padding].iter().enumerate() {
            let digit = DIGITS[usize::from(*byte)];
            if digit == INVALID {
                return None;
            }
            n |= u32::from(digit) << (18 - 6 * i);
        }
        // The last digit's bits past the last whole byte must be zero.
        if n & ((1 << (8 * padding)) - 1) != 0 {
            return None;
        }
        for i in 0..3 - padding {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{RngExt, SeedableRng};

    use super::{decode, encode};

    /// Ours against the crate: the same encoding, and the same answer when decoding.
    fn agree(text: &str) {
        assert_eq!(decode(text), STANDARD.decode(text).ok(), "{text:?}");
    }

    #[test]
    fn encodes_as_the_crate_does() {
        let data: Vec<u8> = (0..=255).collect();
        for len in 0..data.len() {
            let encoded = encode(&data[..len]);
            assert_eq!(encoded, STANDARD.encode(&data[..len]));
            assert_eq!(decode(&encoded).as_deref(), Some(&data[..len]));
        }
        assert_eq!(encode(b"hello"), "aGVsbG8=");
    }

    #[test]
    fn refuses_what_the_crate_refuses() {
        for text in [
            "",
            "=",
            "==",
            "A===",
            "AA==",
            "AB==",
            "AAA=",
            "AAB=",
            "aGVsbG8",
            "aGVs=bG8",
            "aGVsbG8=",
            "aGVs\nbG8=",
            " aGVsbG8=",
            "aGVsbG8==",
            "aG=sbG8=",
            "aGVsbG8=aGVs",
            "a-_b",
            "////",
            "é===",
        ] {
            agree(text);
        }
    }

    #[test]
    fn agrees_with_the_crate_on_random_and_mangled_input() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(64);
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=- \n";
        for _ in 0..20_000 {
            let data: Vec<u8> = (0..rng.random_range(0..12)).map(|_| rng.random()).collect();
            let mut text = encode(&data).into_bytes();
            match rng.random_range(0..4) {
                0 => {}
                1 if !text.is_empty() => {
                    let at = rng.random_range(0..text.len());
                    text[at] = alphabet[rng.random_range(0..alphabet.len())];
                }
                2 if !text.is_empty() => {
                    text.truncate(rng.random_range(0..text.len()));
                }
                _ => text.insert(
                    rng.random_range(0..=text.len()),
                    alphabet[rng.random_range(0..alphabet.len())],
                ),
            }
            agree(std::str::from_utf8(&text).unwrap());
        }
    }
}
