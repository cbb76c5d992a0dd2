//! Client-chosen conditions: the network link (round-trip time, bandwidth each way) and the
//! API-cost preset a request or a WebSocket connection asks to be served under, so a page can
//! show what WebSocket mode saves on a real link with a hosted API's costs without the machine
//! being either. The model profile is chosen as always, by the model name.
//!
//! Asked for on the URL of any `/v1/...` request — the WebSocket upgrade included, since a
//! browser cannot set headers on one — or, over HTTP, as headers (a header wins):
//!
//! | query               | header               | value                                  |
//! |---------------------|----------------------|----------------------------------------|
//! | `tether_rtt_ms`     | `x-tether-rtt-ms`    | 0 – [`MAX_RTT_MS`]                     |
//! | `tether_up_mbit`    | `x-tether-up-mbit`   | 0 (unlimited) or [`MIN_MBIT`] – [`MAX_MBIT`] |
//! | `tether_down_mbit`  | `x-tether-down-mbit` | the same                               |
//! | `tether_api_costs`  | `x-tether-api-costs` | `local` or `hosted`                    |
//!
//! The server accepts them only with `--allow-client-conditions` (`cargo xtask run` passes it):
//! a deployment's clients must not slow its sockets down at will. Within the bounds, a link is
//! further held to [`LINK_BUDGET`] of serialisation per request or connection (`tether-link`'s
//! budget): past it the bandwidth limit is lifted, so asking for the slowest link allowed cannot
//! hold a connection open for ever. Every refusal is a 400 naming the parameter.
//!
//! The transport applies the link to the socket (`transport/link.rs`); the pipeline charges the
//! preset's modelled services and reports what applied in the timing summary.

use std::time::Duration;

use axum::http::HeaderMap;
use tether_link::{LinkConfig, LinkHandle};

use crate::costs::{ApiCostPreset, ApiCosts};
use crate::error::ApiFailure;
use crate::timing::{Applied, LinkAccount};

/// The longest round-trip time a client may ask for, in milliseconds.
pub const MAX_RTT_MS: f64 = 1_000.0;
/// The slowest bandwidth a client may ask for (other than 0, unlimited), in Mbit/s.
pub const MIN_MBIT: f64 = 0.1;
/// The fastest bandwidth a client may ask for, in Mbit/s.
pub const MAX_MBIT: f64 = 100_000.0;
/// The serialisation time a link may spend on one HTTP request (both ways) or one WebSocket
/// connection; past it the bandwidth limit is lifted and only the delay remains.
pub const LINK_BUDGET: Duration = Duration::from_secs(120);

/// Every `tether_` parameter a `/v1/...` URL may carry: these and `tether_timing`.
const PARAMETERS: [(&str, &str); 4] = [
    ("tether_rtt_ms", "x-tether-rtt-ms"),
    ("tether_up_mbit", "x-tether-up-mbit"),
    ("tether_down_mbit", "x-tether-down-mbit"),
    ("tether_api_costs", "x-tether-api-costs"),
];
/// The other `tether_` URL parameter (`transport/options.rs`).
const TIMING_PARAMETER: &str = "tether_timing";

/// The link a client asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkAsked {
    pub rtt_ms: f64,
    /// `None`: unlimited.
    pub up_mbit: Option<f64>,
    pub down_mbit: Option<f64>,
}

impl LinkAsked {
    /// The link model's configuration for it.
    pub fn config(&self) -> LinkConfig {
        LinkConfig::new(
            Duration::from_secs_f64(self.rtt_ms / 1000.0),
            self.up_mbit,
            self.down_mbit,
            None,
        )
    }
}

/// What a request (or a WebSocket connection) asked to be served under.
#[derive(Debug, Clone, Default)]
pub struct Conditions {
    /// `None`: no link (nothing asked, or a zero RTT with unlimited bandwidths).
    pub link: Option<LinkAsked>,
    pub api_costs: Option<ApiCostPreset>,
    /// Whether the client asked for any condition at all.
    pub chosen: bool,
    /// The socket's link, once the transport has applied `link` to it.
    pub meter: Option<LinkHandle>,
}

impl Conditions {
    /// The conditions a request's URL `query` and `headers` ask for, if the server `allows`
    /// client-chosen ones; a 400 for a value out of bounds, a parameter given twice or an
    /// unknown `tether_` parameter, and for any condition at all when not allowed.
    pub fn parse(
        query: Option<&str>,
        headers: &HeaderMap,
        allowed: bool,
    ) -> Result<Conditions, ApiFailure> {
        let mut given: [Option<String>; 4] = Default::default();
        for pair in query.unwrap_or("").split('&') {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !name.starts_with("tether_") || name == TIMING_PARAMETER {
                continue;
            }
            let Some(index) = PARAMETERS.iter().position(|(query, _)| *query == name) else {
                let known: Vec<&str> = PARAMETERS.iter().map(|(query, _)| *query).collect();
                return Err(invalid(
                    name,
                    format!(
                        "Unknown parameter '{name}'. The conditions a client may ask for are {}.",
                        known.join(", ")
                    ),
                ));
            };
            if given[index].is_some() {
                return Err(invalid(name, format!("{name} is given twice.")));
            }
            let value = percent_encoding::percent_decode_str(value)
                .decode_utf8_lossy()
                .into_owned();
            given[index] = Some(value);
        }
        for (index, (_, header)) in PARAMETERS.iter().enumerate() {
            if let Some(value) = headers.get(*header) {
                given[index] = Some(value.to_str().unwrap_or("\u{fffd}").to_string());
            }
        }
        let Some(first) = given.iter().position(Option::is_some) else {
            return Ok(Conditions::default());
        };
        if !allowed {
            let asked: Vec<&str> = PARAMETERS
                .iter()
                .zip(&given)
                .filter(|(_, value)| value.is_some())
                .map(|((query, _), _)| *query)
                .collect();
            return Err(ApiFailure::bad_request(
                Some("conditions_not_allowed"),
                format!(
                    "This server does not accept client-chosen conditions ({}); start it with \
                     --allow-client-conditions (cargo xtask run does) or leave them out.",
                    asked.join(", ")
                ),
                Some(PARAMETERS[first].0),
            ));
        }
        let [rtt, up, down, costs] = given;
        let rtt_ms = match rtt {
            Some(text) => number(&text)
                .filter(|ms| (0.0..=MAX_RTT_MS).contains(ms))
                .ok_or_else(|| {
                    invalid(
                        PARAMETERS[0].0,
                        format!(
                            "tether_rtt_ms must be between 0 and {MAX_RTT_MS} (milliseconds); \
                             got '{text}'."
                        ),
                    )
                })?,
            None => 0.0,
        };
        let up_mbit = bandwidth(PARAMETERS[1].0, up)?;
        let down_mbit = bandwidth(PARAMETERS[2].0, down)?;
        let api_costs = match costs.as_deref() {
            None => None,
            Some("local") => Some(ApiCostPreset::Local),
            Some("hosted") => Some(ApiCostPreset::Hosted),
            Some(other) => {
                return Err(invalid(
                    PARAMETERS[3].0,
                    format!("tether_api_costs must be 'local' or 'hosted'; got '{other}'."),
                ));
            }
        };
        let link =
            (rtt_ms > 0.0 || up_mbit.is_some() || down_mbit.is_some()).then_some(LinkAsked {
                rtt_ms,
                up_mbit,
                down_mbit,
            });
        Ok(Conditions {
            link,
            api_costs,
            chosen: true,
            meter: None,
        })
    }

    /// The modelled API services to charge: the asked preset's, else the server's.
    pub fn api_costs(&self, server: &ApiCosts) -> ApiCosts {
        self.api_costs.map_or(*server, ApiCosts::preset)
    }

    /// What applied, for the timing summary: the link, the costs (named: a preset, or `custom`
    /// when the server's flags changed one), the model and its decoding rate.
    pub fn applied(
        &self,
        server: &ApiCosts,
        model: &str,
        tokens_per_second: Option<f64>,
    ) -> Applied {
        let costs = self.api_costs(server);
        let api_costs = [ApiCostPreset::Local, ApiCostPreset::Hosted]
            .into_iter()
            .find(|preset| ApiCosts::preset(*preset) == costs)
            .map_or("custom", ApiCostPreset::name);
        let link = self.link.unwrap_or(LinkAsked {
            rtt_ms: 0.0,
            up_mbit: None,
            down_mbit: None,
        });
        Applied {
            rtt_ms: link.rtt_ms,
            up_mbit: link.up_mbit,
            down_mbit: link.down_mbit,
            api_costs,
            chosen_by_client: self.chosen,
            model: model.to_string(),
            tokens_per_second,
        }
    }

    /// What the request's bytes cost on the link since it began (or since the previous
    /// request of its WebSocket connection); `None` without a link.
    pub fn take_upload(&self) -> Option<LinkAccount> {
        let meter = self.meter.as_ref()?;
        let upload = meter.take_upload()?;
        Some(LinkAccount {
            up_bytes: upload.bytes,
            up: upload.lag,
        })
    }
}

fn invalid(param: &str, message: String) -> ApiFailure {
    ApiFailure::bad_request(Some("invalid_condition"), message, Some(param))
}

/// `text` as a finite number.
fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|n| n.is_finite())
}

/// A bandwidth in Mbit/s: `None` for absent or 0 (unlimited).
fn bandwidth(param: &str, text: Option<String>) -> Result<Option<f64>, ApiFailure> {
    let Some(text) = text else {
        return Ok(None);
    };
    match number(&text) {
        Some(0.0) => Ok(None),
        Some(mbit) if (MIN_MBIT..=MAX_MBIT).contains(&mbit) => Ok(Some(mbit)),
        _ => Err(invalid(
            param,
            format!(
                "{param} must be 0 (unlimited) or between {MIN_MBIT} and {MAX_MBIT} Mbit/s; \
                 got '{text}'."
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn parse(query: &str) -> Result<Conditions, ApiFailure> {
        Conditions::parse(Some(query), &HeaderMap::new(), true)
    }

    fn refusal(result: Result<Conditions, ApiFailure>) -> (Option<String>, Option<String>) {
        let failure = result.expect_err("refused");
        assert_eq!(failure.status, 400);
        (failure.error.code, failure.error.param)
    }

    #[test]
    fn a_link_and_a_preset_come_from_the_url_or_the_headers() {
        let asked = parse(
            "tether_timing=1&tether_rtt_ms=40&tether_up_mbit=20&tether_down_mbit=100\
             &tether_api_costs=hosted&model=spark",
        )
        .unwrap();
        assert_eq!(
            asked.link,
            Some(LinkAsked {
                rtt_ms: 40.0,
                up_mbit: Some(20.0),
                down_mbit: Some(100.0)
            })
        );
        assert_eq!(asked.api_costs, Some(ApiCostPreset::Hosted));
        assert!(asked.chosen);
        let config = asked.link.unwrap().config();
        assert_eq!(config.up.delay, Duration::from_millis(20));
        assert_eq!(config.up.bytes_per_second, Some(2_500_000.0));

        let mut headers = HeaderMap::new();
        headers.insert("x-tether-rtt-ms", HeaderValue::from_static("150"));
        headers.insert("x-tether-api-costs", HeaderValue::from_static("local"));
        let from_headers = Conditions::parse(Some("tether_rtt_ms=40"), &headers, true).unwrap();
        assert_eq!(from_headers.link.unwrap().rtt_ms, 150.0, "a header wins");
        assert_eq!(from_headers.api_costs, Some(ApiCostPreset::Local));

        // Nothing asked, or only zeros: no link.
        let none = parse("tether_timing=1").unwrap();
        assert!(none.link.is_none() && !none.chosen);
        let zeros = parse("tether_rtt_ms=0&tether_up_mbit=0").unwrap();
        assert!(zeros.link.is_none() && zeros.chosen);
    }

    #[test]
    fn out_of_bounds_unknown_repeated_and_unallowed_conditions_are_refused() {
        for (query, param) in [
            ("tether_rtt_ms=1001", "tether_rtt_ms"),
            ("tether_rtt_ms=-1", "tether_rtt_ms"),
            ("tether_rtt_ms=NaN", "tether_rtt_ms"),
            ("tether_rtt_ms=fast", "tether_rtt_ms"),
            ("tether_up_mbit=0.01", "tether_up_mbit"),
            ("tether_down_mbit=1e9", "tether_down_mbit"),
            ("tether_down_mbit=inf", "tether_down_mbit"),
            ("tether_api_costs=cheap", "tether_api_costs"),
            ("tether_rtt=40", "tether_rtt"),
            ("tether_rtt_ms=40&tether_rtt_ms=50", "tether_rtt_ms"),
        ] {
            let (code, named) = refusal(parse(query));
            assert_eq!(code.as_deref(), Some("invalid_condition"), "{query}");
            assert_eq!(named.as_deref(), Some(param), "{query}");
        }
        let (code, param) = refusal(Conditions::parse(
            Some("tether_timing=1&tether_up_mbit=20"),
            &HeaderMap::new(),
            false,
        ));
        assert_eq!(code.as_deref(), Some("conditions_not_allowed"));
        assert_eq!(param.as_deref(), Some("tether_up_mbit"));
        // A server that refuses them still serves requests that ask for none.
        assert!(
            Conditions::parse(Some("tether_timing=1"), &HeaderMap::new(), false)
                .unwrap()
                .link
                .is_none()
        );
    }

    #[test]
    fn the_summary_names_the_preset_that_applied() {
        let hosted = ApiCosts::preset(ApiCostPreset::Hosted);
        let local = ApiCosts::preset(ApiCostPreset::Local);
        let asked = parse("tether_api_costs=hosted").unwrap();
        assert_eq!(asked.api_costs(&local), hosted);
        let applied = asked.applied(&local, "spark", Some(1000.0));
        assert_eq!(applied.api_costs, "hosted");
        assert!(applied.chosen_by_client);
        assert_eq!(applied.rtt_ms, 0.0);
        let custom = ApiCosts {
            engine_hop_seconds: 0.005,
            ..hosted
        };
        let server = Conditions::default().applied(&custom, "instant", None);
        assert_eq!(server.api_costs, "custom");
        assert!(!server.chosen_by_client);
    }
}
