//! Modelled API services: time the hosted API spends in services Tether does not run — a
//! safety classifier that scans the request's text, the network hop to the inference service —
//! charged by the same formula on both transports, applied to the work each really does:
//! the classifier per token the classify stage really scans (the whole history over HTTP, the
//! new input on a WebSocket cache hit), the hop once per engine call. The pipeline waits that
//! long and reports it apart from measured work.
//!
//! `local` (the default) models nothing: only real, measured work. `hosted` states its
//! assumptions, fixed before anything was measured:
//!
//! - **classifier: 5.7 µs per token.** A 1.12-billion-parameter safety classifier (the size of
//!   Meta's Llama Guard 3 1B, a published safety classifier) prefilling on one NVIDIA H100 at
//!   40 % of its 989 TFLOP/s dense BF16 peak: 2 × 1.12e9 FLOPs per token ÷ 3.96e14 FLOP/s.
//! - **engine hop: 1 ms per engine call.** Two round trips within one datacenter (API →
//!   inference router → engine), 0.5 ms each (the "round trip within same datacenter" of Jeff
//!   Dean's *Numbers Everyone Should Know*).

use std::time::Duration;

/// The presets of `--api-costs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ApiCostPreset {
    /// Nothing modelled: only real, measured work.
    #[default]
    Local,
    /// A hosted API's classifier and engine hop, as stated in `docs/pipeline.md`.
    Hosted,
}

impl ApiCostPreset {
    /// The preset's name, as `--api-costs` and `tether_api_costs` spell it.
    pub fn name(self) -> &'static str {
        match self {
            ApiCostPreset::Local => "local",
            ApiCostPreset::Hosted => "hosted",
        }
    }
}

/// The modelled services' parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApiCosts {
    /// Seconds the safety classifier takes per token it scans.
    pub classifier_seconds_per_token: f64,
    /// Seconds the API → engine hop adds to each engine call.
    pub engine_hop_seconds: f64,
}

impl ApiCosts {
    pub fn preset(preset: ApiCostPreset) -> Self {
        match preset {
            ApiCostPreset::Local => ApiCosts {
                classifier_seconds_per_token: 0.0,
                engine_hop_seconds: 0.0,
            },
            ApiCostPreset::Hosted => ApiCosts {
                classifier_seconds_per_token: 2.0 * 1.12e9 / (0.4 * 989e12),
                engine_hop_seconds: 0.001,
            },
        }
    }

    /// Why the parameters cannot be used, if they cannot.
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in [
            (
                "--classifier-us-per-token",
                self.classifier_seconds_per_token,
            ),
            ("--engine-hop-ms", self.engine_hop_seconds),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{name} must be a non-negative number"));
            }
        }
        Ok(())
    }

    /// The classifier's time for `tokens` scanned.
    pub fn classifier(&self, tokens: u64) -> Duration {
        Duration::from_secs_f64(self.classifier_seconds_per_token * tokens as f64)
    }

    /// The hop's time for one engine call.
    pub fn engine_hop(&self) -> Duration {
        Duration::from_secs_f64(self.engine_hop_seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_models_nothing_and_hosted_states_its_parameters() {
        let local = ApiCosts::preset(ApiCostPreset::Local);
        assert_eq!(local.classifier(1_000_000), Duration::ZERO);
        assert_eq!(local.engine_hop(), Duration::ZERO);
        let hosted = ApiCosts::preset(ApiCostPreset::Hosted);
        // 5.66 µs a token: 125,000 tokens of history take ~0.71 s to scan.
        let scan = hosted.classifier(125_000).as_secs_f64();
        assert!((0.70..0.72).contains(&scan), "{scan}");
        assert_eq!(hosted.engine_hop(), Duration::from_millis(1));
        assert!(hosted.validate().is_ok());
        let broken = ApiCosts {
            engine_hop_seconds: -1.0,
            ..hosted
        };
        assert!(broken.validate().is_err());
    }
}
