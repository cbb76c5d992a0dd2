//! The page's URL parameters (an embedded demo, a shared link) and the links the page makes.
//! Each value goes through the form's own parser ([`Field::parse_into`]): one the page does not
//! understand is an error at its field, never the default in its place, and no run starts —
//! `autorun=1` included — until it is fixed. The API key and the server URL never come from a
//! URL: a crafted link must not be able to send a stored key to another server.

use super::fields::{Field, InputError, Inputs};
use super::{DEFAULT_TASK, Settings, TaskLength, TransportChoice};
use crate::conditions::{LinkPreset, number};

/// The page's URL parameters the playground reads. `None`: not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlParams {
    /// The settings' values, by field, in the order given.
    pub values: Vec<(Field, String)>,
    /// `long_running=1`: a comparison also runs the long-running design.
    pub long_running: bool,
    /// `autorun=1`: start the agent run on load.
    pub autorun: bool,
    /// `embed=1`: the compact layout for an iframe.
    pub embed: bool,
    /// What the page does not read, each said as `name=value: why` — a parameter it does not
    /// have (`repetition=1`, a typo of `repetitions`) or a flag's value that is not one
    /// (`long_running=maybe`). Nothing is guessed: an autorun does not start.
    pub unread: Vec<String>,
}

/// The fields a URL may set, in the order they are applied: the link's preset before its
/// numbers, which make it custom.
const URL_FIELDS: [Field; 12] = [
    Field::Transport,
    Field::Profile,
    Field::Scenario,
    Field::Task,
    Field::MaxTurns,
    Field::Repetitions,
    Field::TaskLength,
    Field::Link,
    Field::RttMs,
    Field::UpMbit,
    Field::DownMbit,
    Field::ApiCosts,
];

impl UrlParams {
    /// Parses `location.search` (with or without the leading `?`); a name or a flag's value
    /// the page does not read is kept in [`UrlParams::unread`].
    pub fn parse(search: &str) -> UrlParams {
        let mut params = UrlParams::default();
        for pair in search.trim_start_matches('?').split('&') {
            if pair.is_empty() {
                continue;
            }
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode_component(value);
            let name = decode_component(name);
            let flag_of = |params: &mut UrlParams| match flag(&value) {
                Some(on) => on,
                None => {
                    params
                        .unread
                        .push(format!("{name}={value}: takes 1 or 0 (true or false)"));
                    false
                }
            };
            match name.as_str() {
                "long_running" => params.long_running = flag_of(&mut params),
                "autorun" => params.autorun = flag_of(&mut params),
                "embed" => params.embed = flag_of(&mut params),
                _ => match URL_FIELDS.into_iter().find(|f| f.param() == Some(&name)) {
                    Some(field) => {
                        params.values.retain(|(f, _)| *f != field);
                        params.values.push((field, value));
                    }
                    // Never echoed: what a crafted link put there may be a secret.
                    None if matches!(name.as_str(), "api_key" | "server_url") => params
                        .unread
                        .push(format!("{name}: never taken from a URL")),
                    None => params.unread.push(format!(
                        "{}={}: not a parameter of this page",
                        shortened(&name),
                        shortened(&value)
                    )),
                },
            }
        }
        params
    }

    /// The value given for `field`.
    pub fn value(&self, field: Field) -> Option<&str> {
        self.values
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v.as_str())
    }
}

/// `text` as the page echoes it: at most 40 characters, the rest said by `…`.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A flag's value: `1`, `true` or none given (`?embed`) turn it on, `0` or `false` off.
fn flag(value: &str) -> Option<bool> {
    match value {
        "1" | "true" | "" => Some(true),
        "0" | "false" => Some(false),
        _ => None,
    }
}

impl Settings {
    /// Applies the page's URL parameters; a value that does not parse leaves its setting as it
    /// was and is an error at its field.
    pub fn apply(&mut self, params: &UrlParams) -> Inputs {
        let mut inputs = Inputs::default();
        // A preset and the link's numbers both set the link: which was meant is not for the
        // page to guess (`link=custom` with numbers is the one way to give both).
        let numbers = [Field::RttMs, Field::UpMbit, Field::DownMbit]
            .into_iter()
            .filter(|f| params.value(*f).is_some())
            .filter_map(Field::param)
            .collect::<Vec<_>>();
        let conflict = params
            .value(Field::Link)
            .and_then(|link| LinkPreset::parse(link.trim()).map(|preset| (link, preset)))
            .filter(|(_, preset)| *preset != LinkPreset::Custom && !numbers.is_empty());
        if let Some((link, _)) = conflict {
            let takes = format!(
                "custom or left out when the URL also gives the link's numbers ({})",
                numbers.join(", ")
            );
            inputs.refuse(InputError::taking(Field::Link, link, takes).in_url());
        }
        // The link's numbers make a custom link, one in error too: no preset's name stands
        // beside a number it does not have (as when the number is typed). The link's own
        // numbers are kept; a `link` given beside them is checked below.
        if !numbers.is_empty() && params.value(Field::Link).is_none() {
            self.edit_link(|_| {});
        }
        for field in URL_FIELDS {
            if field == Field::Link && conflict.is_some() {
                continue;
            }
            if let Some(value) = params.value(field)
                && let Err(error) = field.parse_into(self, value)
            {
                inputs.refuse(error.in_url());
            }
        }
        if params.long_running {
            self.compare_long_running = true;
        }
        inputs
    }

    /// [`Settings::apply`], and the profile the URL asked for, to check once the server's model
    /// list is known ([`UrlProfile::check`]): a profile no server lists would silently run as
    /// the default one.
    pub fn apply_url(&mut self, params: &UrlParams) -> (Inputs, Option<UrlProfile>) {
        let kept = self.profile.clone();
        let inputs = self.apply(params);
        let asked = params
            .value(Field::Profile)
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty() && *p == self.profile)
            .map(|asked| UrlProfile { asked, kept });
        (inputs, asked)
    }

    /// The query string of a link that reproduces these settings, the conditions spelt out (so
    /// a link means the same when the defaults change): it opens the page on them, and the
    /// visitor starts the run. Never the API key or the server URL.
    pub fn share_query(&self) -> String {
        let mut pairs = vec![
            ("transport", self.transport.as_str().to_string()),
            ("profile", self.profile.clone()),
        ];
        // The long task has its own scenario, turns and text: a link to it carries none.
        let short = self.task_length == TaskLength::Short;
        if short {
            pairs.push(("scenario", self.scenario.clone()));
        }
        if short && self.max_turns != Settings::default().max_turns {
            pairs.push(("max_turns", self.max_turns.to_string()));
        }
        if self.transport == TransportChoice::Compare {
            pairs.push(("repetitions", self.repetitions.to_string()));
            if self.compare_long_running {
                pairs.push(("long_running", "1".to_string()));
            }
        }
        if short && self.task != DEFAULT_TASK {
            pairs.push(("task", self.task.clone()));
        }
        pairs.push(("task_length", self.task_length.as_str().to_string()));
        match self.link {
            LinkPreset::Custom => {
                let link = self.custom_link;
                let mbit = |m: Option<f64>| m.map_or_else(|| "0".to_string(), number);
                pairs.push(("rtt_ms", number(link.rtt_ms)));
                pairs.push(("up_mbit", mbit(link.up_mbit)));
                pairs.push(("down_mbit", mbit(link.down_mbit)));
            }
            preset => pairs.push(("link", preset.as_str().to_string())),
        }
        pairs.push(("api_costs", self.api_costs.as_str().to_string()));
        pairs
            .iter()
            .map(|(name, value)| format!("{name}={}", encode_component(value)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// The profile a page's URL asked for, and the one the settings had before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlProfile {
    pub asked: String,
    pub kept: String,
}

impl UrlProfile {
    /// Once the server's models are known: if it does not offer the profile the URL asked for
    /// (and the settings still hold it), the settings go back to the profile they had and the
    /// error is the profile field's, as for any other bad URL value.
    pub fn check(&self, settings: &mut Settings, offered: &[String]) -> Option<InputError> {
        if settings.profile != self.asked || offered.contains(&self.asked) {
            return None;
        }
        settings.profile = self.kept.clone();
        let takes = format!("one this server offers: {}", offered.join(", "));
        Some(InputError::taking(Field::Profile, &self.asked, takes).in_url())
    }
}

/// Percent-encodes everything but the unreserved characters of RFC 3986.
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Decodes `%XX` escapes and `+` (a space in query strings); a broken escape stays as written.
pub fn decode_component(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("ASCII hex digits");
                out.push(u8::from_str_radix(hex, 16).expect("two hex digits"));
                i += 2;
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::DEFAULT_REPETITIONS;
    use crate::conditions::ApiCosts;
    use crate::settings::{LONG_SCENARIO, LONG_TURNS, SHORT_TURNS, TaskLength};

    /// The blocking errors of `inputs`, as the page says them.
    fn said(inputs: &Inputs, settings: &Settings) -> Vec<String> {
        inputs
            .blocking(settings)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn url_parameters_parse_and_decode() {
        let params = UrlParams::parse(
            "?scenario=fix-sample-project&transport=compare&profile=spark&autorun=1&embed=1\
             &task=Fix+it%3A%20now&max_turns=7&repetitions=5&other=x",
        );
        assert_eq!(
            params,
            UrlParams {
                values: vec![
                    (Field::Scenario, "fix-sample-project".into()),
                    (Field::Transport, "compare".into()),
                    (Field::Profile, "spark".into()),
                    (Field::Task, "Fix it: now".into()),
                    (Field::MaxTurns, "7".into()),
                    (Field::Repetitions, "5".into()),
                ],
                long_running: false,
                autorun: true,
                embed: true,
                unread: vec!["other=x: not a parameter of this page".into()],
            }
        );
        assert_eq!(UrlParams::parse(""), UrlParams::default());
        let off = UrlParams::parse("autorun=0&embed=false&long_running");
        assert!(!off.autorun && !off.embed && off.long_running && off.unread.is_empty());
        // A flag's value that is not one is not guessed, nor is a name the page lacks.
        let unread = UrlParams::parse("autorun=yes&long_running=maybe&repetition=1");
        assert!(!unread.autorun && !unread.long_running);
        assert_eq!(
            unread.unread,
            [
                "autorun=yes: takes 1 or 0 (true or false)",
                "long_running=maybe: takes 1 or 0 (true or false)",
                "repetition=1: not a parameter of this page",
            ]
        );
        // The server URL and the key never come from a URL.
        let crafted = UrlParams::parse("server_url=http://evil&api_key=x");
        assert!(crafted.values.is_empty(), "{crafted:?}");
        assert_eq!(
            crafted.unread,
            [
                "server_url: never taken from a URL",
                "api_key: never taken from a URL"
            ],
            "said, the key not echoed"
        );
        let long = UrlParams::parse(&format!("note={}", "x".repeat(100)));
        assert_eq!(
            long.unread,
            [format!(
                "note={}…: not a parameter of this page",
                "x".repeat(40)
            )]
        );
        assert_eq!(decode_component("100%"), "100%");
        assert_eq!(decode_component("%zz%4%g1"), "%zz%4%g1");
        assert_eq!(decode_component("caf%C3%A9"), "café");
    }

    #[test]
    fn url_parameters_override_stored_settings() {
        let mut settings = Settings {
            profile: "flagship".into(),
            transport: TransportChoice::HttpChained,
            api_key: "sk-stored".into(),
            ..Settings::default()
        };
        let inputs = settings.apply(&UrlParams::parse("transport=http&profile=spark&scenario="));
        assert!(inputs.runnable(&settings), "{inputs:?}");
        assert_eq!(settings.transport, TransportChoice::HttpStateless);
        assert_eq!(settings.profile, "spark");
        assert_eq!(settings.scenario, "");
        assert_eq!(settings.api_key, "sk-stored", "the URL never sets the key");
    }

    #[test]
    fn a_url_value_the_page_does_not_understand_is_an_error_at_its_field() {
        let mut settings = Settings {
            task_length: TaskLength::Short,
            ..Settings::default()
        };
        let before = settings.clone();
        let inputs = settings.apply(&UrlParams::parse(
            "transport=carrier-pigeon&max_turns=0&repetitions=99&link=mars&rtt_ms=-3\
             &up_mbit=abc&api_costs=free&task_length=huge",
        ));
        assert_eq!(settings, before, "nothing that did not parse is applied");
        assert_eq!(
            said(&inputs, &settings),
            [
                "The URL's task_length: Task length must be short or long; got \"huge\"",
                "The URL's link: Network link must be one of loopback, same-region, \
                 home-uplink, other-continent, or custom; got \"mars\"",
                "The URL's rtt_ms: RTT must be a number of milliseconds from 0 to 1000; got \"-3\"",
                "The URL's up_mbit: Up must be empty or 0 for unlimited, or a number of Mbit/s \
                 from 0.1 to 100,000; got \"abc\"",
                "The URL's api_costs: API costs must be one of server, local, or hosted; got \
                 \"free\"",
                "The URL's transport: Transport must be one of http, ws, ws-append, \
                 http-chained, http-stateless, or compare; got \"carrier-pigeon\"",
                "The URL's max_turns: Max turns must be a whole number from 1 to 100; got \"0\"",
                "The URL's repetitions: Repetitions must be a whole number from 1 to 9; got \
                 \"99\"",
            ]
        );
        assert_eq!(
            inputs.shown(Field::RttMs, &settings),
            "-3",
            "the field shows it"
        );
        assert_eq!(settings.repetitions, DEFAULT_REPETITIONS);
    }

    #[test]
    fn a_profile_the_server_does_not_offer_is_an_error_like_any_bad_url_value() {
        let offered: Vec<String> = ["tether-sim", "flagship", "instant"]
            .map(String::from)
            .into();
        let mut settings = Settings {
            profile: "flagship".into(),
            ..Settings::default()
        };
        let (inputs, asked) = settings.apply_url(&UrlParams::parse("profile=turbo"));
        assert!(inputs.runnable(&settings));
        assert_eq!(settings.profile, "turbo", "until the model list is known");
        let asked = asked.expect("a profile to check");
        let error = asked.check(&mut settings, &offered).unwrap();
        assert_eq!(
            error.to_string(),
            "The URL's profile: Model speed (profile) must be one this server offers: \
             tether-sim, flagship, instant; got \"turbo\""
        );
        assert_eq!(settings.profile, "flagship");

        // A profile the server offers is kept; one the user changed since is not touched.
        let mut settings = Settings::default();
        let (_, asked) = settings.apply_url(&UrlParams::parse("profile=instant"));
        assert_eq!(asked.unwrap().check(&mut settings, &offered), None);
        assert_eq!(settings.profile, "instant");
        let (_, asked) = settings.apply_url(&UrlParams::parse("profile=turbo"));
        settings.profile = "flagship".into();
        assert_eq!(asked.unwrap().check(&mut settings, &offered), None);
        let (_, none) = Settings::default().apply_url(&UrlParams::parse("transport=ws"));
        assert_eq!(none, None);
        let (inputs, none) = Settings::default().apply_url(&UrlParams::parse("profile=%20"));
        assert_eq!(none, None);
        assert!(inputs.error(Field::Profile).is_some(), "an empty profile");
    }

    #[test]
    fn the_share_link_reproduces_the_settings_without_the_key_and_does_not_start_a_run() {
        let settings = Settings {
            api_key: "sk-secret".into(),
            server_url: "http://elsewhere:1".into(),
            profile: "spark".into(),
            transport: TransportChoice::Compare,
            task: "a b&c".into(),
            repetitions: 5,
            task_length: TaskLength::Short,
            link: LinkPreset::Loopback,
            api_costs: ApiCosts::Server,
            ..Settings::default()
        };
        let query = settings.share_query();
        assert_eq!(
            query,
            "transport=compare&profile=spark&scenario=fix-sample-project&repetitions=5\
             &task=a%20b%26c&task_length=short&link=loopback&api_costs=server"
        );
        assert!(!query.contains("secret") && !query.contains("elsewhere"));
        assert!(
            !UrlParams::parse(&query).autorun,
            "a shared link starts nothing"
        );
        let mut restored = Settings {
            api_key: "sk-secret".into(),
            ..Settings::default()
        };
        assert!(
            restored
                .apply(&UrlParams::parse(&query))
                .runnable(&restored)
        );
        assert_eq!(
            restored,
            Settings {
                server_url: String::new(),
                ..settings
            }
        );
    }

    #[test]
    fn a_comparison_with_the_long_running_leg_is_shared_as_such() {
        let settings = Settings {
            transport: TransportChoice::Compare,
            compare_long_running: true,
            ..Settings::default()
        };
        let query = settings.share_query();
        assert!(query.contains("&long_running=1&"), "{query}");
        let mut restored = Settings::default();
        assert!(
            restored
                .apply(&UrlParams::parse(&query))
                .runnable(&restored)
        );
        assert!(restored.compare_long_running);
        let single = Settings {
            transport: TransportChoice::WsAppend,
            ..Settings::default()
        };
        assert!(single.share_query().starts_with("transport=ws-append&"));
    }

    #[test]
    fn the_conditions_come_from_the_url_and_go_into_the_share_link() {
        let mut settings = Settings {
            task_length: TaskLength::Short,
            link: LinkPreset::Loopback,
            api_costs: ApiCosts::Server,
            ..Settings::default()
        };
        let inputs = settings.apply(&UrlParams::parse(
            "link=home-uplink&api_costs=hosted&task_length=long",
        ));
        assert!(inputs.runnable(&settings), "{inputs:?}");
        assert_eq!(settings.link, LinkPreset::HomeUplink);
        let conditions = settings.conditions().unwrap();
        assert_eq!(
            conditions.query(),
            "tether_rtt_ms=40&tether_up_mbit=20&tether_down_mbit=100&tether_api_costs=hosted"
        );
        assert_eq!(settings.run_scenario().as_deref(), Some(LONG_SCENARIO));
        assert_eq!(settings.run_task(), tether_sandbox::LONG_TASK_PROMPT);
        assert_eq!(settings.run_max_turns(), LONG_TURNS + 5);
        assert_eq!(settings.expected_turns(), Some(LONG_TURNS));
        let query = settings.share_query();
        assert!(
            query.ends_with("&task_length=long&link=home-uplink&api_costs=hosted"),
            "{query}"
        );
        // The long task's own scenario, turns and text are not the link's to say.
        assert!(
            !query.contains("scenario=")
                && !query.contains("max_turns=")
                && !query.contains("task="),
            "{query}"
        );
        let mut shared = Settings::default();
        assert!(shared.apply(&UrlParams::parse(&query)).runnable(&shared));
        assert_eq!(shared, settings);

        // A number in error makes the link custom too, the preset's numbers kept.
        let mut wrong = Settings::default();
        let inputs = wrong.apply(&UrlParams::parse("rtt_ms=-3"));
        assert!(inputs.error(Field::RttMs).is_some());
        assert_eq!(wrong.link, LinkPreset::Custom);
        assert_eq!(wrong.link(), Settings::default().link());

        // The link's numbers make a custom link; 0 is unlimited, as the server reads it.
        let mut custom = Settings::default();
        let inputs = custom.apply(&UrlParams::parse("rtt_ms=150&up_mbit=5&down_mbit=0"));
        assert!(inputs.runnable(&custom), "{inputs:?}");
        assert_eq!(custom.link, LinkPreset::Custom);
        assert_eq!(
            custom.link().describe(),
            "150 ms RTT, 5 Mbit/s up, unlimited down"
        );
        let query = custom.share_query();
        assert!(
            query.contains("&rtt_ms=150&up_mbit=5&down_mbit=0&"),
            "{query}"
        );
        // A preset and numbers both set the link: an error at the link, not a silent choice;
        // `link=custom` with numbers is fine.
        let mut both = Settings::default();
        let inputs = both.apply(&UrlParams::parse("link=loopback&rtt_ms=5"));
        assert!(!inputs.runnable(&both));
        assert_eq!(
            inputs.error(Field::Link).unwrap().to_string(),
            "The URL's link: Network link must be custom or left out when the URL also gives \
             the link's numbers (rtt_ms); got \"loopback\""
        );
        let mut custom = Settings::default();
        let inputs = custom.apply(&UrlParams::parse("link=custom&rtt_ms=5"));
        assert!(inputs.runnable(&custom), "{inputs:?}");
        assert_eq!(
            custom.link().describe(),
            "5 ms RTT, 20 Mbit/s up, 100 Mbit/s down"
        );
        assert_eq!(
            Settings {
                task_length: TaskLength::Short,
                ..Settings::default()
            }
            .expected_turns(),
            Some(SHORT_TURNS)
        );
    }
}
