//! Classification: a safety scan of the conversation's text for leaked secrets and personal data.
//!
//! Each rule's literal anchor (`sk-`, `AKIA`, `@`, …) is looked for with memchr's vectorised
//! substring search; only the rules whose anchor occurs then run their regular expression, so
//! clean text costs a few SIMD passes (about a seventh of the instructions one Aho-Corasick pass
//! over all the anchors took: BENCHMARKS.md, "A gateway's cost"). Card numbers have no literal
//! anchor: every 13th byte is probed for the run of digits one needs ([`may_hold_card`]), and a
//! match is confirmed with the Luhn check.
//! Findings are flagged (counted, logged without the secret) or refuse the request, per
//! `--classifier`.

use memchr::memmem::Finder;
use regex::Regex;
use tether_protocol::Item;

use crate::error::ApiFailure;
use crate::items;

/// What to do with a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClassifierPolicy {
    /// Do not scan.
    Off,
    /// Count findings in `/metrics` and let the request through.
    Flag,
    /// Refuse a request whose new input contains a finding.
    Refuse,
}

/// One rule: its name, what must occur for it to match, its pattern.
struct Rule {
    name: &'static str,
    anchor: Compiled,
    pattern: Regex,
}

/// What a rule's pattern needs in the text before it is worth running.
enum Anchor {
    /// This literal.
    Literal(&'static str),
    /// A run of 13 digits with single spaces or dashes between ([`may_hold_card`]).
    CardDigits,
}

/// [`Anchor`], compiled (the finder boxed: it is ~300 bytes, the other variant none).
enum Compiled {
    Literal(Box<Finder<'static>>),
    CardDigits,
}

/// A match of a rule (positions only: the matched text is never kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub start: usize,
    pub end: usize,
}

/// The compiled scanner.
pub struct Classifier {
    rules: Vec<Rule>,
}

impl Default for Classifier {
    fn default() -> Self {
        Self::new()
    }
}

impl Classifier {
    /// The built-in rules.
    pub fn new() -> Self {
        let rules = [
            (
                "openai_api_key",
                Anchor::Literal("sk-"),
                r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}",
            ),
            (
                "aws_access_key",
                Anchor::Literal("AKIA"),
                r"\bAKIA[0-9A-Z]{16}\b",
            ),
            (
                "github_token",
                Anchor::Literal("gh"),
                r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
            ),
            (
                "slack_token",
                Anchor::Literal("xox"),
                r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
            ),
            (
                "private_key",
                Anchor::Literal("-----BEGIN"),
                r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----",
            ),
            (
                "email_address",
                Anchor::Literal("@"),
                r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
            ),
            (
                "card_number",
                Anchor::CardDigits,
                r"\b(?:[0-9][ -]?){12,18}[0-9]\b",
            ),
        ]
        .into_iter()
        .map(|(name, anchor, pattern)| Rule {
            name,
            anchor: match anchor {
                Anchor::Literal(literal) => Compiled::Literal(Box::new(Finder::new(literal))),
                Anchor::CardDigits => Compiled::CardDigits,
            },
            pattern: Regex::new(pattern).expect("built-in rule"),
        })
        .collect();
        Classifier { rules }
    }

    /// Every finding in `text`.
    pub fn scan(&self, text: &str) -> Vec<Finding> {
        let mut findings = Vec::new();
        for rule in &self.rules {
            let candidate = match &rule.anchor {
                Compiled::Literal(literal) => literal.find(text.as_bytes()).is_some(),
                Compiled::CardDigits => may_hold_card(text.as_bytes()),
            };
            if !candidate {
                continue;
            }
            for m in rule.pattern.find_iter(text) {
                if rule.name == "card_number" && !luhn(m.as_str()) {
                    continue;
                }
                findings.push(Finding {
                    rule: rule.name,
                    start: m.start(),
                    end: m.end(),
                });
            }
        }
        findings
    }
}

/// Scans the text of `items` under `policy` (not `Off`): every finding is reported to `found`;
/// with `Refuse`, the first one refuses the request.
pub fn check(
    classifier: &Classifier,
    policy: ClassifierPolicy,
    items: &[&Item],
    mut found: impl FnMut(&'static str),
) -> Result<(), ApiFailure> {
    for item in items {
        for finding in classifier.scan(&items::body(item)) {
            found(finding.rule);
            if policy == ClassifierPolicy::Refuse {
                return Err(ApiFailure::bad_request(
                    Some("sensitive_content"),
                    format!(
                        "The input contains what looks like sensitive data ({}); remove it or ask the server operator to relax --classifier.",
                        finding.rule
                    ),
                    Some("input"),
                ));
            }
        }
    }
    Ok(())
}

/// The fewest digits of a card number.
const CARD_DIGITS: usize = 13;

/// Whether `text` may hold a card number: 13 to 19 ASCII digits with single spaces or dashes
/// between, so a run of at least 13 bytes that are all digits, spaces or dashes, holding 13
/// digits. Any 13 bytes in a row hold one byte of every 13th, so only those bytes are probed,
/// and only around a probe on a digit, space or dash is the run measured (once: the probes go
/// on past it). Text without a card number costs about a byte in 13, not a regex over all of it.
fn may_hold_card(text: &[u8]) -> bool {
    let in_run = |byte: &u8| byte.is_ascii_digit() || *byte == b' ' || *byte == b'-';
    let mut probe = CARD_DIGITS - 1;
    while probe < text.len() {
        if !in_run(&text[probe]) {
            probe += CARD_DIGITS;
            continue;
        }
        let start = text[..probe]
            .iter()
            .rposition(|byte| !in_run(byte))
            .map_or(0, |i| i + 1);
        let end = text[probe..]
            .iter()
            .position(|byte| !in_run(byte))
            .map_or(text.len(), |i| probe + i);
        let digits = text[start..end]
            .iter()
            .filter(|b| b.is_ascii_digit())
            .count();
        if digits >= CARD_DIGITS {
            return true;
        }
        // A later run starts after `end`: its first 13 bytes hold a byte of this stride.
        probe = end + CARD_DIGITS;
    }
    false
}

/// The Luhn checksum of the digits in `candidate`.
fn luhn(candidate: &str) -> bool {
    let digits: Vec<u32> = candidate.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_secrets_and_personal_data() {
        let classifier = Classifier::new();
        let text = "key sk-proj-abcdefghijklmnopqrstuvwxyz012345 and AKIAABCDEFGHIJKLMNOP, \
                    mail me at dev@example.com, card 4111 1111 1111 1111.\n-----BEGIN RSA PRIVATE KEY-----";
        let rules: Vec<&str> = classifier.scan(text).iter().map(|f| f.rule).collect();
        assert_eq!(
            rules,
            [
                "openai_api_key",
                "aws_access_key",
                "private_key",
                "email_address",
                "card_number"
            ]
        );
    }

    #[test]
    fn clean_text_and_near_misses_pass() {
        let classifier = Classifier::new();
        assert!(
            classifier
                .scan("fn main() { println!(\"sk-short\"); } // 1234 5678")
                .is_empty()
        );
        assert!(
            classifier
                .scan("order 4111 1111 1111 1112 is not a card")
                .is_empty(),
            "Luhn fails"
        );
        assert!(classifier.scan("").is_empty());
    }

    #[test]
    fn a_card_is_found_wherever_it_starts() {
        let classifier = Classifier::new();
        for card in [
            "4111111111111111",
            "4111 1111 1111 1111",
            "4111-1111-1111-1111",
        ] {
            for offset in 0..40 {
                let text = format!("{} {card} end", "x".repeat(offset));
                let found: Vec<&str> = classifier.scan(&text).iter().map(|f| f.rule).collect();
                assert_eq!(found, ["card_number"], "{text:?}");
            }
        }
    }

    /// The probe never misses what the regex would find: over random runs of digits, spaces,
    /// dashes and letters, where it says no card can be, the card rule's regex finds none.
    #[test]
    fn the_probe_is_a_necessary_condition() {
        let classifier = Classifier::new();
        let card = &classifier.rules.last().expect("rules").pattern;
        let alphabet = b"0123456789 -- a\n";
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut candidates = 0;
        for _ in 0..20_000 {
            let len = (state % 60) as usize;
            let text: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    // Digits half the time, so that runs long enough to matter are common.
                    let pick = (state % 32) as usize;
                    char::from(
                        alphabet[if pick < 16 {
                            pick % 10
                        } else {
                            pick % alphabet.len()
                        }],
                    )
                })
                .collect();
            state = state.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(1);
            if may_hold_card(text.as_bytes()) {
                candidates += 1;
            } else {
                assert!(!card.is_match(&text), "missed in {text:?}");
            }
        }
        assert!(
            candidates > 1_000,
            "the texts exercised the probe: {candidates}"
        );
    }
}
