//! Classification: a safety scan of the conversation's text for leaked secrets and personal data.
//!
//! One Aho-Corasick pass finds the literal anchors every rule needs (`sk-`, `AKIA`, `@`, …); only
//! the rules whose anchor occurs then run their regular expression, so clean text costs one
//! linear scan. Card numbers have no literal anchor and are confirmed with the Luhn check.
//! Findings are flagged (counted, logged without the secret) or refuse the request, per
//! `--classifier`.

use aho_corasick::AhoCorasick;
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

/// One rule: its name, the literal that must occur for it to match, its pattern.
struct Rule {
    name: &'static str,
    anchor: Option<&'static str>,
    pattern: Regex,
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
    anchors: AhoCorasick,
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
                Some("sk-"),
                r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}",
            ),
            ("aws_access_key", Some("AKIA"), r"\bAKIA[0-9A-Z]{16}\b"),
            (
                "github_token",
                Some("gh"),
                r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
            ),
            (
                "slack_token",
                Some("xox"),
                r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
            ),
            (
                "private_key",
                Some("-----BEGIN"),
                r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----",
            ),
            (
                "email_address",
                Some("@"),
                r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
            ),
            ("card_number", None, r"\b(?:\d[ -]?){12,18}\d\b"),
        ]
        .into_iter()
        .map(|(name, anchor, pattern)| Rule {
            name,
            anchor,
            pattern: Regex::new(pattern).expect("built-in rule"),
        })
        .collect::<Vec<_>>();
        let anchors =
            AhoCorasick::new(rules.iter().filter_map(|r| r.anchor)).expect("built-in anchors");
        Classifier { anchors, rules }
    }

    /// Every finding in `text`.
    pub fn scan(&self, text: &str) -> Vec<Finding> {
        let mut present = vec![false; self.rules.len()];
        let anchored: Vec<usize> = (0..self.rules.len())
            .filter(|&i| self.rules[i].anchor.is_some())
            .collect();
        for found in self.anchors.find_overlapping_iter(text) {
            present[anchored[found.pattern().as_usize()]] = true;
        }
        let mut findings = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            if rule.anchor.is_some() && !present[index] {
                continue;
            }
            if rule.anchor.is_none() && !text.bytes().any(|b| b.is_ascii_digit()) {
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
}
