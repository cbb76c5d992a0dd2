//! The simulator's latency profiles as the page describes them: which model id does what. The
//! server lists the ids (`GET /v1/models`) but not their parameters — those are behind the admin
//! endpoint, which is not public — so the page keeps them here, in one place, and the tests hold
//! this table to the one in `docs/simulator.md` ("Latency profiles"), which documents
//! `Profile::builtin` in `server/src/sim/latency.rs`.

/// One profile of the simulated model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileInfo {
    /// The model id.
    pub name: &'static str,
    /// Tokens per second; `None`: no delay at all (`instant`) or the server's
    /// `--tokens-per-second` (`tether-sim`).
    pub tokens_per_second: Option<f64>,
    /// Time to first token before prefill, in milliseconds.
    pub ttft_ms: f64,
    /// Prefill per uncached prompt token, in milliseconds.
    pub prefill_ms_per_token: f64,
    /// What it is for, in a few words.
    pub what: &'static str,
    /// The table row's tokens/s and TTFT cells, word for word (the tests compare them).
    doc_rate: &'static str,
    doc_ttft: &'static str,
}

/// The shipped profiles, in the docs' order.
pub const PROFILES: [ProfileInfo; 5] = [
    ProfileInfo {
        name: "tether-sim",
        tokens_per_second: None,
        ttft_ms: 0.0,
        prefill_ms_per_token: 0.0,
        what: "the server's default model, paced exactly",
        doc_rate: "`--tokens-per-second`",
        doc_ttft: "0",
    },
    ProfileInfo {
        name: "flagship",
        tokens_per_second: Some(65.0),
        ttft_ms: 400.0,
        prefill_ms_per_token: 0.2,
        what: "a large model: slow decoding and prefill, where the model's time dwarfs the API's",
        doc_rate: "65",
        doc_ttft: "0.4 s + 0.2 ms/token",
    },
    ProfileInfo {
        name: "spark",
        tokens_per_second: Some(1000.0),
        ttft_ms: 80.0,
        prefill_ms_per_token: 0.02,
        what: "a fast model",
        doc_rate: "1,000",
        doc_ttft: "80 ms + 20 µs/token",
    },
    ProfileInfo {
        name: "burst",
        tokens_per_second: Some(4000.0),
        ttft_ms: 30.0,
        prefill_ms_per_token: 0.005,
        what: "a very fast model: four tokens a frame, one frame a millisecond",
        doc_rate: "4,000",
        doc_ttft: "30 ms + 5 µs/token",
    },
    ProfileInfo {
        name: "instant",
        tokens_per_second: None,
        ttft_ms: 0.0,
        prefill_ms_per_token: 0.0,
        what: "what is left is the API's own work, the network and the page",
        doc_rate: "no delay",
        doc_ttft: "0",
    },
];

/// The profile called `name`, if it is a shipped one.
pub fn profile(name: &str) -> Option<&'static ProfileInfo> {
    PROFILES.iter().find(|p| p.name == name)
}

impl ProfileInfo {
    /// Its speed in a few words: `65 tok/s, TTFT 400 ms + 0.2 ms/token of prefill`.
    pub fn speed(&self) -> String {
        match (self.name, self.tokens_per_second) {
            ("instant", _) => "no delay, the model takes no time".to_string(),
            (_, None) => "the server's --tokens-per-second (1,000 unless set), no TTFT".to_string(),
            (_, Some(rate)) => format!(
                "{} tok/s, TTFT {} ms + {} ms/token of prefill",
                crate::conditions::thousands(rate),
                self.ttft_ms,
                self.prefill_ms_per_token
            ),
        }
    }

    /// The note under the menu: its speed, then what it is for, each said once.
    pub fn note(&self) -> String {
        format!("{}: {}", self.speed(), self.what)
    }
}

/// The model `id` in the conditions' menu, in short — `spark — 1,000 tok/s` — its numbers in
/// full under the menu.
pub fn short_label(id: &str) -> String {
    match profile(id) {
        Some(p) => match (p.name, p.tokens_per_second) {
            ("instant", _) => format!("{id} — no model time"),
            (_, None) => format!("{id} — the server's rate"),
            (_, Some(rate)) => format!("{id} — {} tok/s", crate::conditions::thousands(rate)),
        },
        None => id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of the "Latency profiles" table of docs/simulator.md: model, tokens/s, TTFT.
    fn documented() -> Vec<(String, String, String)> {
        let doc = include_str!("../docs/simulator.md");
        let section = doc
            .split("## Latency profiles")
            .nth(1)
            .expect("docs/simulator.md has a Latency profiles section");
        section
            .lines()
            .skip_while(|line| !line.starts_with("| model"))
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let name = cells[1].split('`').nth(1).unwrap_or(cells[1]).to_string();
                (name, cells[2].to_string(), cells[3].to_string())
            })
            .collect()
    }

    /// `0.4 s`, `80 ms`, `20 µs` in milliseconds.
    fn ms(text: &str) -> f64 {
        let (number, unit) = text.trim().split_once(' ').unwrap();
        let number: f64 = number.parse().unwrap();
        match unit.trim_end_matches("/token") {
            "s" => number * 1000.0,
            "ms" => number,
            "µs" => number / 1000.0,
            other => panic!("unit {other}"),
        }
    }

    #[test]
    fn a_profile_note_says_each_thing_once() {
        let note = |name| profile(name).unwrap().note();
        assert_eq!(
            note("tether-sim"),
            "the server's --tokens-per-second (1,000 unless set), no TTFT: the server's default \
             model, paced exactly"
        );
        assert_eq!(
            note("instant"),
            "no delay, the model takes no time: what is left is the API's own work, the network \
             and the page"
        );
        assert_eq!(
            note("spark"),
            "1,000 tok/s, TTFT 80 ms + 0.02 ms/token of prefill: a fast model"
        );
    }

    #[test]
    fn the_table_is_the_documented_one() {
        let rows = documented();
        assert_eq!(
            rows.iter()
                .map(|(name, ..)| name.as_str())
                .collect::<Vec<_>>(),
            PROFILES.map(|p| p.name),
            "the same profiles, in the same order"
        );
        for ((_, rate, ttft), info) in rows.iter().zip(PROFILES) {
            assert_eq!(rate, info.doc_rate, "{}", info.name);
            assert_eq!(ttft, info.doc_ttft, "{}", info.name);
            match info.tokens_per_second {
                Some(tps) => assert_eq!(rate.replace(',', "").parse::<f64>().unwrap(), tps),
                None => assert!(!rate.chars().next().unwrap().is_ascii_digit()),
            }
            match ttft.split_once(" + ") {
                Some((overhead, per_token)) => {
                    assert_eq!(ms(overhead), info.ttft_ms, "{}", info.name);
                    assert!((ms(per_token) - info.prefill_ms_per_token).abs() < 1e-12);
                }
                None => assert_eq!((info.ttft_ms, info.prefill_ms_per_token), (0.0, 0.0)),
            }
        }
    }

    #[test]
    fn labels_say_each_profiles_speed() {
        assert_eq!(
            profile("flagship").unwrap().speed(),
            "65 tok/s, TTFT 400 ms + 0.2 ms/token of prefill"
        );
        assert_eq!(
            profile("burst").unwrap().speed(),
            "4,000 tok/s, TTFT 30 ms + 0.005 ms/token of prefill"
        );
        assert_eq!(
            profile("instant").unwrap().speed(),
            "no delay, the model takes no time"
        );
        assert_eq!(short_label("spark"), "spark — 1,000 tok/s");
        assert_eq!(short_label("instant"), "instant — no model time");
        assert_eq!(short_label("tether-sim"), "tether-sim — the server's rate");
        assert_eq!(short_label("gpt-5"), "gpt-5");
    }
}
