//! The conditions a run is measured under, chosen on the page and applied by the server to
//! both legs alike: the **network link** between this page and the server (round-trip time and
//! bandwidth each way — a browser cannot throttle one socket, so the server emulates the link
//! at its own socket edge, for the connection or the request that asks), and the **API costs**
//! (`local`: only the work the server really does; `hosted`: the modelled services of a hosted
//! API, with their stated sources). The model's speed is the profile, the task's length the
//! task (`crate::settings`).
//!
//! The page asks with query parameters (`tether_rtt_ms`, `tether_up_mbit`, `tether_down_mbit`,
//! `tether_api_costs`) on the WebSocket upgrade and on every HTTP request, and the server says
//! in each response's timing summary which conditions it applied
//! ([`crate::agent::ServerTimings`]). A server that does not allow client-chosen conditions
//! refuses them with a clear error; `cargo xtask run` allows them.

use serde::{Deserialize, Serialize};

/// The longest round trip the server accepts, in milliseconds.
pub const MAX_RTT_MS: f64 = 1000.0;
/// The narrowest bandwidth the server accepts, in Mbit/s (0 means unlimited).
pub const MIN_MBIT: f64 = 0.1;
/// The widest bandwidth the server accepts, in Mbit/s.
pub const MAX_MBIT: f64 = 100_000.0;

/// A network link: its round-trip time and its bandwidth each way (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub rtt_ms: f64,
    pub up_mbit: Option<f64>,
    pub down_mbit: Option<f64>,
}

impl Link {
    /// No link at all: the page and the server on one machine.
    pub const LOOPBACK: Link = Link {
        rtt_ms: 0.0,
        up_mbit: None,
        down_mbit: None,
    };

    /// Whether the link adds nothing.
    pub fn is_loopback(&self) -> bool {
        self.rtt_ms == 0.0 && self.up_mbit.is_none() && self.down_mbit.is_none()
    }

    /// `40 ms RTT, 20 Mbit/s up, 100 Mbit/s down`, `loopback (no delay, no limit)`.
    pub fn describe(&self) -> String {
        if self.is_loopback() {
            return "loopback (no delay, no limit)".to_string();
        }
        let way = |mbit: Option<f64>, dir: &str| match mbit {
            Some(mbit) => format!("{} Mbit/s {dir}", number(mbit)),
            None => format!("unlimited {dir}"),
        };
        format!(
            "{} ms RTT, {}, {}",
            number(self.rtt_ms),
            way(self.up_mbit, "up"),
            way(self.down_mbit, "down")
        )
    }

    /// Why the link cannot be asked for, if it cannot: the server's bounds.
    pub fn check(&self) -> Result<(), String> {
        if !(self.rtt_ms.is_finite() && (0.0..=MAX_RTT_MS).contains(&self.rtt_ms)) {
            return Err(format!(
                "the round-trip time must be from 0 to {} ms; got {}",
                number(MAX_RTT_MS),
                number(self.rtt_ms)
            ));
        }
        for (mbit, dir) in [(self.up_mbit, "up"), (self.down_mbit, "down")] {
            if let Some(mbit) = mbit
                && !(mbit.is_finite() && (MIN_MBIT..=MAX_MBIT).contains(&mbit))
            {
                return Err(format!(
                    "the bandwidth {dir} must be empty (unlimited) or from {} to {} Mbit/s; got {}",
                    number(MIN_MBIT),
                    number(MAX_MBIT),
                    number(mbit)
                ));
            }
        }
        Ok(())
    }
}

/// `40`, `0.5`, `100000`: a number as a person types it.
pub fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// `1000`, `0.1`, `100,000`: a bound in a sentence — as typed, but a whole number of five
/// digits or more grouped, as the docs write it.
pub fn bound(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() >= 10_000.0 {
        thousands(value)
    } else {
        number(value)
    }
}

/// `1 repetition`, `3 repetitions`: a count and its noun.
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The links the page offers, and a custom one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkPreset {
    #[default]
    Loopback,
    SameRegion,
    HomeUplink,
    OtherContinent,
    Custom,
}

impl LinkPreset {
    pub const ALL: [LinkPreset; 5] = [
        LinkPreset::Loopback,
        LinkPreset::SameRegion,
        LinkPreset::HomeUplink,
        LinkPreset::OtherContinent,
        LinkPreset::Custom,
    ];

    /// The stable name of the selector, the URL and the storage.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkPreset::Loopback => "loopback",
            LinkPreset::SameRegion => "same-region",
            LinkPreset::HomeUplink => "home-uplink",
            LinkPreset::OtherContinent => "other-continent",
            LinkPreset::Custom => "custom",
        }
    }

    pub fn parse(name: &str) -> Option<LinkPreset> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The preset's link; `None` for a custom one.
    pub fn link(self) -> Option<Link> {
        let link = |rtt_ms, up, down| Link {
            rtt_ms,
            up_mbit: Some(up),
            down_mbit: Some(down),
        };
        match self {
            LinkPreset::Loopback => Some(Link::LOOPBACK),
            LinkPreset::SameRegion => Some(link(10.0, 100.0, 100.0)),
            LinkPreset::HomeUplink => Some(link(40.0, 20.0, 100.0)),
            LinkPreset::OtherContinent => Some(link(150.0, 50.0, 50.0)),
            LinkPreset::Custom => None,
        }
    }

    /// What the menu says: the preset and its round trip, short enough for a phone's width
    /// (the three fields and the note under the menu have all its numbers).
    pub fn label(self) -> &'static str {
        match self {
            LinkPreset::Loopback => "Loopback (this machine)",
            LinkPreset::SameRegion => "Same region (10 ms)",
            LinkPreset::HomeUplink => "Home or office uplink (40 ms)",
            LinkPreset::OtherContinent => "Another continent (150 ms)",
            LinkPreset::Custom => "Custom (the values below)",
        }
    }
}

/// The hosted preset's parameters, in a phrase (their sources are [`ApiCosts::source`]'s).
pub const HOSTED_PARAMETERS: &str =
    "a safety classifier at 5.7 µs per scanned token, a 1 ms hop to the engine per call";

/// The API's costs: the `--api-costs` presets of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApiCosts {
    /// Whatever the server was started with (its `--api-costs`; `local` unless set).
    #[default]
    Server,
    /// Only the work the server really does, measured.
    Local,
    /// A hosted API's modelled services as well: its safety classifier and the hop to the
    /// engine.
    Hosted,
}

impl ApiCosts {
    pub const ALL: [ApiCosts; 3] = [ApiCosts::Server, ApiCosts::Local, ApiCosts::Hosted];

    pub fn as_str(self) -> &'static str {
        match self {
            ApiCosts::Server => "server",
            ApiCosts::Local => "local",
            ApiCosts::Hosted => "hosted",
        }
    }

    pub fn parse(name: &str) -> Option<ApiCosts> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    pub fn label(self) -> &'static str {
        match self {
            ApiCosts::Server => "The server's own (--api-costs)",
            ApiCosts::Local => "local (measured work only)",
            ApiCosts::Hosted => "hosted (classifier, engine hop)",
        }
    }

    /// Where the preset's numbers come from (`docs/pipeline.md`, "Modelled API services").
    pub fn source(self) -> &'static str {
        match self {
            ApiCosts::Server => {
                "The server's own setting: local (nothing modelled) unless it was started with \
                 --api-costs hosted."
            }
            ApiCosts::Local => {
                "Nothing is modelled: the API's time is what Tether's server measured doing the \
                 work — parsing, rendering into tokens, validating, classifying."
            }
            ApiCosts::Hosted => {
                "Classifier: a 1.12-billion-parameter model (the size of Meta's Llama Guard 3 1B) \
                 prefilling on one NVIDIA H100 at 40 % of its 989 TFLOP/s dense BF16 peak — \
                 2 × 1.12e9 FLOPs per token ÷ 3.96e14 FLOP/s = 5.7 µs per token, charged on \
                 every token the classify stage really scans (the whole conversation over HTTP, \
                 the new input on a WebSocket continuation). Engine hop: two round trips within \
                 a datacenter, 0.5 ms each (Jeff Dean's \"Numbers Everyone Should Know\"). Both \
                 fixed before anything was measured."
            }
        }
    }
}

/// The conditions a run asks the server for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conditions {
    pub link: Link,
    pub api_costs: ApiCosts,
}

impl Default for Conditions {
    fn default() -> Self {
        Conditions {
            link: Link::LOOPBACK,
            api_costs: ApiCosts::Server,
        }
    }
}

impl Conditions {
    /// The query parameters that ask the server for these conditions, as name and value (none
    /// when there is nothing to ask: loopback, and the server's own API costs).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        if !self.link.is_loopback() {
            pairs.push(("tether_rtt_ms", number(self.link.rtt_ms)));
            let mbit = |limit: Option<f64>| limit.map_or_else(|| "0".to_string(), number);
            pairs.push(("tether_up_mbit", mbit(self.link.up_mbit)));
            pairs.push(("tether_down_mbit", mbit(self.link.down_mbit)));
        }
        if self.api_costs != ApiCosts::Server {
            pairs.push(("tether_api_costs", self.api_costs.as_str().to_string()));
        }
        pairs
    }

    /// [`Conditions::pairs`] as a query string.
    pub fn query(&self) -> String {
        let pairs: Vec<String> = self
            .pairs()
            .into_iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        pairs.join("&")
    }

    /// `url` with [`Conditions::query`] added to its query string.
    pub fn on_url(&self, url: &str) -> String {
        let query = self.query();
        if query.is_empty() {
            url.to_string()
        } else if url.contains('?') {
            format!("{url}&{query}")
        } else {
            format!("{url}?{query}")
        }
    }
}

/// The conditions a server says it applied to a response (its timing summary's `conditions`).
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub link: Link,
    /// `local`, `hosted`, or `custom` (the server's own flags).
    pub api_costs: String,
    /// `client` when the request or connection asked for any condition, else `server`.
    pub chosen_by: String,
    pub model: Option<String>,
    /// The profile's decoding rate; `None` for one that does not pace (`instant`).
    pub tokens_per_second: Option<f64>,
}

impl Applied {
    /// `40 ms RTT, 20 Mbit/s up, 100 Mbit/s down · hosted API costs · spark at 1,000 tokens/s`.
    pub fn describe(&self) -> String {
        let model = match (&self.model, self.tokens_per_second) {
            (Some(model), Some(rate)) => format!(" · {model} at {} tokens/s", thousands(rate)),
            (Some(model), None) => format!(" · {model}, no model time"),
            (None, _) => String::new(),
        };
        format!("{}{model}", self.describe_link_and_costs())
    }

    /// `40 ms RTT, 20 Mbit/s up, 100 Mbit/s down · hosted API costs`: what every point of a
    /// sweep shares.
    pub fn describe_link_and_costs(&self) -> String {
        format!("{} · {} API costs", self.link.describe(), self.api_costs)
    }
}

/// `1,000`: a whole number with its thousands grouped.
pub fn thousands(value: f64) -> String {
    let whole = value.round().abs() as u64;
    let digits = whole.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0.0 {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_their_stated_numbers() {
        assert_eq!(LinkPreset::Loopback.link(), Some(Link::LOOPBACK));
        assert_eq!(
            LinkPreset::HomeUplink.link().unwrap().describe(),
            "40 ms RTT, 20 Mbit/s up, 100 Mbit/s down"
        );
        // Each label's round trip is its link's.
        for preset in [
            LinkPreset::SameRegion,
            LinkPreset::HomeUplink,
            LinkPreset::OtherContinent,
        ] {
            let link = preset.link().unwrap();
            let rtt = format!("({} ms)", number(link.rtt_ms));
            assert!(preset.label().ends_with(&rtt), "{preset:?}");
        }
        assert_eq!(
            LinkPreset::OtherContinent.link().unwrap().describe(),
            "150 ms RTT, 50 Mbit/s up, 50 Mbit/s down"
        );
        assert_eq!(LinkPreset::Loopback.label(), "Loopback (this machine)");
        assert_eq!(LinkPreset::Custom.link(), None);
        for preset in LinkPreset::ALL {
            assert_eq!(LinkPreset::parse(preset.as_str()), Some(preset));
            if let Some(link) = preset.link() {
                assert_eq!(link.check(), Ok(()), "{preset:?}");
            }
        }
        assert_eq!(LinkPreset::parse("moon"), None);
    }

    #[test]
    fn a_link_outside_the_servers_bounds_is_refused_with_a_reason() {
        let mut link = Link {
            rtt_ms: 1500.0,
            up_mbit: None,
            down_mbit: None,
        };
        assert_eq!(
            link.check().unwrap_err(),
            "the round-trip time must be from 0 to 1000 ms; got 1500"
        );
        link.rtt_ms = 40.0;
        link.up_mbit = Some(0.001);
        assert_eq!(
            link.check().unwrap_err(),
            "the bandwidth up must be empty (unlimited) or from 0.1 to 100000 Mbit/s; got 0.001"
        );
        link.up_mbit = Some(0.1);
        link.down_mbit = Some(f64::NAN);
        assert!(link.check().unwrap_err().contains("bandwidth down"));
        link.down_mbit = None;
        assert_eq!(link.check(), Ok(()));
        assert_eq!(link.describe(), "40 ms RTT, 0.1 Mbit/s up, unlimited down");
    }

    #[test]
    fn the_query_asks_for_what_differs_from_the_server() {
        assert_eq!(Conditions::default().query(), "");
        assert_eq!(
            Conditions::default().on_url("ws://h/v1/responses"),
            "ws://h/v1/responses"
        );
        let uplink = Conditions {
            link: LinkPreset::HomeUplink.link().unwrap(),
            api_costs: ApiCosts::Hosted,
        };
        assert_eq!(
            uplink.query(),
            "tether_rtt_ms=40&tether_up_mbit=20&tether_down_mbit=100&tether_api_costs=hosted"
        );
        assert_eq!(
            uplink.on_url("ws://h/v1/responses?tether_timing=1"),
            "ws://h/v1/responses?tether_timing=1&tether_rtt_ms=40&tether_up_mbit=20\
             &tether_down_mbit=100&tether_api_costs=hosted"
        );
        let delay_only = Conditions {
            link: Link {
                rtt_ms: 12.5,
                up_mbit: None,
                down_mbit: None,
            },
            api_costs: ApiCosts::Local,
        };
        assert_eq!(
            delay_only.on_url("http://h/v1/models"),
            "http://h/v1/models?tether_rtt_ms=12.5&tether_up_mbit=0&tether_down_mbit=0\
             &tether_api_costs=local"
        );
    }

    #[test]
    fn api_costs_state_their_sources() {
        for costs in ApiCosts::ALL {
            assert_eq!(ApiCosts::parse(costs.as_str()), Some(costs));
            assert!(!costs.source().is_empty());
        }
        assert!(ApiCosts::Hosted.source().contains("5.7 µs per token"));
        assert!(
            ApiCosts::Hosted
                .source()
                .contains("Numbers Everyone Should Know")
        );
    }

    #[test]
    fn applied_conditions_read_as_a_line() {
        let applied = Applied {
            link: LinkPreset::HomeUplink.link().unwrap(),
            api_costs: "hosted".into(),
            chosen_by: "client".into(),
            model: Some("spark".into()),
            tokens_per_second: Some(1000.0),
        };
        assert_eq!(
            applied.describe(),
            "40 ms RTT, 20 Mbit/s up, 100 Mbit/s down · hosted API costs · spark at 1,000 tokens/s"
        );
        assert_eq!(thousands(1234567.0), "1,234,567");
        assert_eq!(thousands(65.0), "65");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(100000.0), "100000");
        assert_eq!(counted(1, "repetition"), "1 repetition");
        assert_eq!(counted(3, "repetition"), "3 repetitions");
    }
}
