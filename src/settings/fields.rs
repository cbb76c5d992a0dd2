//! Every value a visitor types or a link carries, parsed in one place. A form field and its URL
//! parameter go through the same [`Field::parse_into`], so a value means the same from either,
//! and one that does not parse is an [`InputError`] naming the field and what it takes — never
//! a default put in its place. [`Inputs`] keeps, per field, what was given as it was given and
//! whether it parsed: the page shows each error at its field and where the run would start, and
//! starts nothing while one stands ([`Inputs::blocking`]).

use std::fmt;

use super::{LONG_SCENARIO, MAX_TURNS, Settings, TaskLength, TransportChoice, server_base};
use crate::agent::REPETITIONS;
use crate::conditions::{ApiCosts, LinkPreset, MAX_MBIT, MAX_RTT_MS, MIN_MBIT, bound, number};

/// A value of the settings that is typed or chosen on the page, or given in its URL. In the
/// order the page shows them: the first of several errors is the first the visitor meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    Task,
    TaskLength,
    Profile,
    Link,
    RttMs,
    UpMbit,
    DownMbit,
    ApiCosts,
    Transport,
    Scenario,
    MaxTurns,
    Repetitions,
    ServerUrl,
}

impl Field {
    /// Its name on the page, as its label says it.
    pub fn label(self) -> &'static str {
        match self {
            Field::Task => "Task",
            Field::TaskLength => "Task length",
            Field::Profile => "Model speed (profile)",
            Field::Link => "Network link",
            Field::RttMs => "RTT",
            Field::UpMbit => "Up",
            Field::DownMbit => "Down",
            Field::ApiCosts => "API costs",
            Field::Transport => "Transport",
            Field::Scenario => "Scenario",
            Field::MaxTurns => "Max turns",
            Field::Repetitions => "Repetitions",
            Field::ServerUrl => "Server URL",
        }
    }

    /// Its URL parameter; `None` for one a link must not set (the server URL: a crafted link
    /// must not send the stored key elsewhere).
    pub fn param(self) -> Option<&'static str> {
        Some(match self {
            Field::Task => "task",
            Field::TaskLength => "task_length",
            Field::Profile => "profile",
            Field::Link => "link",
            Field::RttMs => "rtt_ms",
            Field::UpMbit => "up_mbit",
            Field::DownMbit => "down_mbit",
            Field::ApiCosts => "api_costs",
            Field::Transport => "transport",
            Field::Scenario => "scenario",
            Field::MaxTurns => "max_turns",
            Field::Repetitions => "repetitions",
            Field::ServerUrl => return None,
        })
    }

    /// Its control's `data-testid` (and, prefixed, its id).
    pub fn testid(self) -> &'static str {
        match self {
            Field::Task => "task",
            Field::TaskLength => "task-length",
            Field::Profile => "profile",
            Field::Link => "link",
            Field::RttMs => "rtt-ms",
            Field::UpMbit => "up-mbit",
            Field::DownMbit => "down-mbit",
            Field::ApiCosts => "api-costs",
            Field::Transport => "transport",
            Field::Scenario => "scenario",
            Field::MaxTurns => "max-turns",
            Field::Repetitions => "repetitions",
            Field::ServerUrl => "server-url",
        }
    }

    /// What it takes, to finish "RTT must be …".
    pub fn takes(self) -> String {
        // "short or long"; "server, local, or hosted".
        let names = |names: &[&str]| match names {
            [only] => (*only).to_string(),
            [first, second] => format!("{first} or {second}"),
            _ => {
                let (last, rest) = names.split_last().expect("a choice has names");
                format!("one of {}, or {last}", rest.join(", "))
            }
        };
        match self {
            Field::Task => "what the agent should do, in words".into(),
            Field::TaskLength => names(&TaskLength::ALL.map(TaskLength::as_str)),
            Field::Profile => "the name of a model profile".into(),
            Field::Link => names(&LinkPreset::ALL.map(LinkPreset::as_str)),
            Field::RttMs => format!("a number of milliseconds from 0 to {}", bound(MAX_RTT_MS)),
            Field::UpMbit | Field::DownMbit => format!(
                "empty or 0 for unlimited, or a number of Mbit/s from {} to {}",
                bound(MIN_MBIT),
                bound(MAX_MBIT)
            ),
            Field::ApiCosts => names(&ApiCosts::ALL.map(ApiCosts::as_str)),
            Field::Transport => {
                let mut all = vec!["http"];
                all.extend(TransportChoice::ALL.map(TransportChoice::as_str));
                names(&all)
            }
            Field::Scenario => "a scenario's name, or empty for the echo generator".into(),
            Field::MaxTurns => format!(
                "a whole number from {} to {}",
                MAX_TURNS.start(),
                MAX_TURNS.end()
            ),
            Field::Repetitions => format!(
                "a whole number from {} to {}",
                REPETITIONS.start(),
                REPETITIONS.end()
            ),
            Field::ServerUrl => "empty (this page's server) or http(s)://host:port".into(),
        }
    }

    /// The short hint of its bounds, shown under a number field.
    pub fn bounds(self) -> Option<String> {
        match self {
            Field::RttMs => Some(format!("0–{} ms", bound(MAX_RTT_MS))),
            Field::UpMbit | Field::DownMbit => Some(format!(
                "{}–{} Mbit/s; empty: unlimited",
                bound(MIN_MBIT),
                bound(MAX_MBIT)
            )),
            Field::MaxTurns => Some(format!("{}–{}", MAX_TURNS.start(), MAX_TURNS.end())),
            Field::Repetitions => Some(format!("{}–{}", REPETITIONS.start(), REPETITIONS.end())),
            _ => None,
        }
    }

    /// Whether a run of `settings` uses the field: the long rollout has its own task, scenario
    /// and turns, so those fields are locked and do not count.
    pub fn applies(self, settings: &Settings) -> bool {
        match self {
            Field::Task | Field::Scenario | Field::MaxTurns => {
                settings.task_length == TaskLength::Short
            }
            _ => true,
        }
    }

    /// The fields whose given text a value of this one replaces once it parses: choosing a
    /// preset shows its numbers, typing a number makes the link custom.
    fn replaces(self) -> &'static [Field] {
        match self {
            Field::Link => &[Field::RttMs, Field::UpMbit, Field::DownMbit],
            Field::RttMs | Field::UpMbit | Field::DownMbit => &[Field::Link],
            _ => &[],
        }
    }

    /// The value `settings` hold, as the field shows it.
    pub fn text(self, settings: &Settings) -> String {
        let mbit = |limit: Option<f64>| limit.map(number).unwrap_or_default();
        match self {
            Field::Task => settings.run_task().to_string(),
            Field::TaskLength => settings.task_length.as_str().into(),
            Field::Profile => settings.profile.clone(),
            Field::Link => settings.link.as_str().into(),
            Field::RttMs => number(settings.link().rtt_ms),
            Field::UpMbit => mbit(settings.link().up_mbit),
            Field::DownMbit => mbit(settings.link().down_mbit),
            Field::ApiCosts => settings.api_costs.as_str().into(),
            Field::Transport => settings.transport.as_str().into(),
            Field::Scenario => match settings.task_length {
                TaskLength::Long => LONG_SCENARIO.into(),
                TaskLength::Short => settings.scenario.clone(),
            },
            Field::MaxTurns => settings.max_turns.to_string(),
            Field::Repetitions => settings.repetitions.to_string(),
            Field::ServerUrl => settings.server_url.clone(),
        }
    }

    /// Parses `text` into `settings`; if it does not parse, `settings` are left as they were
    /// and the error says what the field takes.
    pub fn parse_into(self, settings: &mut Settings, text: &str) -> Result<(), InputError> {
        let refused = || InputError::new(self, text);
        let trimmed = text.trim();
        match self {
            Field::Task => {
                if trimmed.is_empty() {
                    return Err(refused());
                }
                settings.task = text.to_string();
            }
            Field::TaskLength => {
                settings.task_length = TaskLength::parse(trimmed).ok_or_else(refused)?
            }
            Field::Profile => {
                if trimmed.is_empty() {
                    return Err(refused());
                }
                settings.profile = trimmed.to_string();
            }
            Field::Link => {
                let preset = LinkPreset::parse(trimmed).ok_or_else(refused)?;
                if preset == LinkPreset::Custom {
                    // The custom link starts from the numbers shown.
                    settings.custom_link = settings.link();
                }
                settings.link = preset;
            }
            Field::RttMs => {
                let rtt = number_within(trimmed, 0.0, MAX_RTT_MS).ok_or_else(refused)?;
                settings.edit_link(|link| link.rtt_ms = rtt);
            }
            Field::UpMbit => {
                let up = bandwidth(trimmed).ok_or_else(refused)?;
                settings.edit_link(|link| link.up_mbit = up);
            }
            Field::DownMbit => {
                let down = bandwidth(trimmed).ok_or_else(refused)?;
                settings.edit_link(|link| link.down_mbit = down);
            }
            Field::ApiCosts => settings.api_costs = ApiCosts::parse(trimmed).ok_or_else(refused)?,
            Field::Transport => {
                settings.transport = TransportChoice::parse(trimmed).ok_or_else(refused)?;
            }
            Field::Scenario => settings.scenario = trimmed.to_string(),
            Field::MaxTurns => {
                settings.max_turns = whole_within(trimmed, &MAX_TURNS).ok_or_else(refused)?;
            }
            Field::Repetitions => {
                settings.repetitions = whole_within(trimmed, &REPETITIONS).ok_or_else(refused)?;
            }
            Field::ServerUrl => {
                if !trimmed.is_empty() {
                    server_base(trimmed).map_err(|_| refused())?;
                }
                settings.server_url = trimmed.to_string();
            }
        }
        Ok(())
    }
}

/// `text` as a finite number from `low` to `high`.
fn number_within(text: &str, low: f64, high: f64) -> Option<f64> {
    let value: f64 = text.parse().ok()?;
    (value.is_finite() && (low..=high).contains(&value)).then_some(value)
}

/// `text` as a whole number within `range`.
fn whole_within(text: &str, range: &std::ops::RangeInclusive<usize>) -> Option<usize> {
    text.parse().ok().filter(|n| range.contains(n))
}

/// A bandwidth as the server reads it: empty or 0 is unlimited (`Some(None)`).
fn bandwidth(text: &str) -> Option<Option<f64>> {
    if text.is_empty() {
        return Some(None);
    }
    let value: f64 = text.parse().ok()?;
    if value == 0.0 {
        return Some(None);
    }
    number_within(text, MIN_MBIT, MAX_MBIT).map(Some)
}

/// A value that did not parse: the field, what was given, where from, and what it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub field: Field,
    /// What was typed or linked, as given.
    pub given: String,
    /// Given by the page's URL (an embedded demo, a shared link), not typed.
    pub from_url: bool,
    takes: String,
}

impl InputError {
    /// `given` is not a value of `field`.
    pub fn new(field: Field, given: &str) -> Self {
        InputError {
            field,
            given: given.to_string(),
            from_url: false,
            takes: field.takes(),
        }
    }

    /// `given` is not a value of `field`, which takes `takes`.
    pub fn taking(field: Field, given: &str, takes: String) -> Self {
        InputError {
            takes,
            ..InputError::new(field, given)
        }
    }

    /// The same error, said of the page's URL.
    pub fn in_url(self) -> Self {
        InputError {
            from_url: true,
            ..self
        }
    }
}

impl fmt::Display for InputError {
    /// `RTT must be a number of milliseconds from 0 to 1000; got "-3"`, and from a URL
    /// `The URL's rtt_ms: RTT must be …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let (true, Some(param)) = (self.from_url, self.field.param()) {
            write!(f, "The URL's {param}: ")?;
        }
        write!(
            f,
            "{} must be {}; got {:?}",
            self.field.label(),
            self.takes,
            self.given
        )
    }
}

/// What was given per field, as given, and whether it parsed: the form shows the text the
/// visitor typed (`1.` stays `1.` while they type `1.5`), and an error stays at its field until
/// a value that parses replaces it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    given: Vec<Given>,
}

#[derive(Debug, Clone, PartialEq)]
struct Given {
    field: Field,
    text: String,
    error: Option<InputError>,
}

impl Inputs {
    /// The visitor typed or chose `text` in `field`: parsed into `settings` when it can be,
    /// kept as typed either way.
    pub fn edit(&mut self, settings: &mut Settings, field: Field, text: &str) {
        let error = field.parse_into(settings, text).err();
        // A link's number typed, even one in error, is the link made custom (from the values
        // it had): the preset's name beside a number it does not have would say otherwise —
        // the preset chosen before it included, which no longer shows.
        let link_number = matches!(field, Field::RttMs | Field::UpMbit | Field::DownMbit);
        if error.is_some() && link_number {
            settings.edit_link(|_| {});
        }
        let replaced = if error.is_none() || link_number {
            field.replaces()
        } else {
            &[]
        };
        self.given
            .retain(|g| g.field != field && !replaced.contains(&g.field));
        self.keep(Given {
            field,
            text: text.to_string(),
            error,
        });
    }

    /// Keeps `given` in the page's order of the fields, so the errors come out in it unsorted
    /// (a sort would instantiate the standard library's, kilobytes of wasm, for a handful).
    fn keep(&mut self, given: Given) {
        let at = self.given.partition_point(|g| g.field < given.field);
        self.given.insert(at, given);
    }

    /// Records a value that did not parse (from the URL, or the server's list of profiles).
    pub fn refuse(&mut self, error: InputError) {
        self.given.retain(|g| g.field != error.field);
        self.keep(Given {
            field: error.field,
            text: error.given.clone(),
            error: Some(error),
        });
    }

    /// Drops the error standing at `field`, and what was given there with it (the field shows
    /// the settings' value again); whether there was one.
    pub fn forget_error(&mut self, field: Field) -> bool {
        let before = self.given.len();
        self.given.retain(|g| g.field != field || g.error.is_none());
        self.given.len() != before
    }

    /// The error standing at `field`.
    pub fn error(&self, field: Field) -> Option<&InputError> {
        self.given
            .iter()
            .find(|g| g.field == field)
            .and_then(|g| g.error.as_ref())
    }

    /// What `field` shows: the text given, or the value of `settings`. A field the run does not
    /// use shows what the run uses (the long rollout's own task), unless the URL gave it a value
    /// in error: that stays in sight until it is corrected.
    pub fn shown(&self, field: Field, settings: &Settings) -> String {
        match self.given.iter().find(|g| g.field == field) {
            Some(given)
                if field.applies(settings) || given.error.as_ref().is_some_and(|e| e.from_url) =>
            {
                given.text.clone()
            }
            _ => field.text(settings),
        }
    }

    /// The error standing at `field` that counts for a run of `settings`: a field the run does
    /// not use counts only for a value the URL gave it (a link is never run on a value the page
    /// did not understand, used or not); one the visitor typed there before choosing the long
    /// task does not.
    pub fn standing(&self, field: Field, settings: &Settings) -> Option<&InputError> {
        self.error(field)
            .filter(|e| e.from_url || field.applies(settings))
    }

    /// The errors that keep a run of `settings` from starting, in the page's order.
    pub fn blocking(&self, settings: &Settings) -> Vec<&InputError> {
        self.given
            .iter()
            .filter_map(|g| g.error.as_ref())
            .filter(|e| e.from_url || e.field.applies(settings))
            .collect()
    }

    /// Whether nothing keeps a run of `settings` from starting.
    pub fn runnable(&self, settings: &Settings) -> bool {
        self.blocking(settings).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short task, whose every field counts.
    fn short() -> Settings {
        Settings {
            task_length: TaskLength::Short,
            ..Settings::default()
        }
    }

    fn edited(field: Field, text: &str) -> (Settings, Inputs) {
        let mut settings = short();
        let mut inputs = Inputs::default();
        inputs.edit(&mut settings, field, text);
        (settings, inputs)
    }

    #[test]
    fn a_number_that_does_not_parse_leaves_the_values_and_names_the_field_and_its_bounds() {
        for (field, text) in [
            (Field::RttMs, "-5"),
            (Field::RttMs, "abc"),
            (Field::RttMs, "1001"),
            (Field::RttMs, ""),
            (Field::RttMs, "NaN"),
            (Field::RttMs, "inf"),
            (Field::UpMbit, "abc"),
            (Field::UpMbit, "-1"),
            (Field::UpMbit, "0.01"),
            (Field::DownMbit, "200000"),
            (Field::MaxTurns, "0"),
            (Field::MaxTurns, "3.5"),
            (Field::MaxTurns, "101"),
            (Field::Repetitions, "99"),
            (Field::Repetitions, "abc"),
            (Field::Repetitions, "-1"),
        ] {
            let (settings, inputs) = edited(field, text);
            // A link's number in error makes the link custom, with the numbers it had: the
            // preset's name no longer stands beside a number it does not have.
            let mut expected = short();
            if matches!(field, Field::RttMs | Field::UpMbit | Field::DownMbit) {
                expected.edit_link(|_| {});
                assert_eq!(settings.link, LinkPreset::Custom);
                assert_eq!(settings.link(), short().link());
            }
            assert_eq!(settings, expected, "{field:?} {text:?}");
            let error = inputs.error(field).expect("an error");
            assert_eq!(error.given, text);
            assert_eq!(inputs.shown(field, &settings), text, "shown as typed");
            assert_eq!(inputs.blocking(&settings), [error]);
            assert!(!inputs.runnable(&settings));
        }
        // A preset chosen, then a number in error typed: the link shows custom, not the preset.
        let mut settings = short();
        let mut inputs = Inputs::default();
        inputs.edit(&mut settings, Field::Link, "same-region");
        inputs.edit(&mut settings, Field::RttMs, "abc");
        assert_eq!(settings.link, LinkPreset::Custom);
        assert_eq!(inputs.shown(Field::Link, &settings), "custom");
        assert_eq!(inputs.shown(Field::RttMs, &settings), "abc");
        let (_, inputs) = edited(Field::RttMs, "-5");
        assert_eq!(
            inputs.error(Field::RttMs).unwrap().to_string(),
            "RTT must be a number of milliseconds from 0 to 1000; got \"-5\""
        );
        let (_, inputs) = edited(Field::UpMbit, "abc");
        assert_eq!(
            inputs.error(Field::UpMbit).unwrap().to_string(),
            "Up must be empty or 0 for unlimited, or a number of Mbit/s from 0.1 to 100,000; \
             got \"abc\""
        );
        let (_, inputs) = edited(Field::Repetitions, "99");
        assert_eq!(
            inputs.error(Field::Repetitions).unwrap().to_string(),
            "Repetitions must be a whole number from 1 to 9; got \"99\""
        );
    }

    #[test]
    fn a_number_that_parses_goes_into_the_settings_and_stays_as_typed() {
        let (settings, inputs) = edited(Field::RttMs, " 12.");
        assert_eq!(settings.link, LinkPreset::Custom);
        assert_eq!(settings.link().rtt_ms, 12.0);
        assert_eq!(inputs.shown(Field::RttMs, &settings), " 12.");
        assert!(inputs.runnable(&settings));
        // Empty and 0 are unlimited, as the server reads them.
        let (settings, _) = edited(Field::UpMbit, "");
        assert_eq!(settings.link().up_mbit, None);
        let (settings, _) = edited(Field::DownMbit, "0");
        assert_eq!(settings.link().down_mbit, None);
        let (settings, _) = edited(Field::DownMbit, "0.1");
        assert_eq!(settings.link().down_mbit, Some(0.1));
        let (settings, _) = edited(Field::Repetitions, "9");
        assert_eq!(settings.repetitions, 9);
    }

    #[test]
    fn a_value_that_parses_replaces_an_error_and_a_preset_replaces_the_typed_numbers() {
        let mut settings = Settings::default();
        let mut inputs = Inputs::default();
        inputs.edit(&mut settings, Field::RttMs, "abc");
        inputs.edit(&mut settings, Field::UpMbit, "5");
        assert!(inputs.error(Field::RttMs).is_some());
        inputs.edit(&mut settings, Field::RttMs, "30");
        assert_eq!(inputs.error(Field::RttMs), None);
        assert!(inputs.runnable(&settings));
        assert_eq!(
            settings.link().describe(),
            "30 ms RTT, 5 Mbit/s up, 100 Mbit/s down"
        );
        inputs.edit(&mut settings, Field::RttMs, "-1");
        inputs.edit(&mut settings, Field::Link, "same-region");
        assert!(
            inputs.runnable(&settings),
            "the preset's numbers replace it"
        );
        assert_eq!(inputs.shown(Field::RttMs, &settings), "10");
        // A link the URL named wrongly is replaced by a number typed (the link is custom).
        inputs.refuse(InputError::new(Field::Link, "mars").in_url());
        assert!(!inputs.runnable(&settings));
        inputs.edit(&mut settings, Field::DownMbit, "7");
        assert!(inputs.runnable(&settings));
        assert_eq!(settings.link, LinkPreset::Custom);
    }

    #[test]
    fn the_long_task_does_not_count_the_fields_it_does_not_use() {
        let mut settings = short();
        let mut inputs = Inputs::default();
        inputs.edit(&mut settings, Field::MaxTurns, "500");
        inputs.edit(&mut settings, Field::Task, "  ");
        let blocking: Vec<Field> = inputs.blocking(&settings).iter().map(|e| e.field).collect();
        assert_eq!(blocking, [Field::Task, Field::MaxTurns]);
        inputs.edit(&mut settings, Field::TaskLength, "long");
        assert!(inputs.runnable(&settings));
        assert_eq!(inputs.shown(Field::MaxTurns, &settings), "20");
        assert_eq!(
            inputs.shown(Field::Task, &settings),
            tether_sandbox::LONG_TASK_PROMPT
        );
    }

    #[test]
    fn a_link_is_not_run_on_a_value_in_error_even_where_the_long_task_does_not_use_it() {
        let mut settings = short();
        let inputs = settings.apply(&crate::settings::UrlParams::parse(
            "task_length=long&scenario=fix-sample-project&max_turns=999",
        ));
        let blocking: Vec<Field> = inputs.blocking(&settings).iter().map(|e| e.field).collect();
        assert_eq!(blocking, [Field::MaxTurns]);
        assert_eq!(inputs.shown(Field::MaxTurns, &settings), "999");
        assert!(inputs.standing(Field::MaxTurns, &settings).is_some());
        // What the visitor typed before choosing the long task does not count (above); what
        // the link gave counts until it is corrected.
        let mut inputs = inputs;
        inputs.edit(&mut settings, Field::MaxTurns, "30");
        assert!(inputs.runnable(&settings));
        assert_eq!(inputs.shown(Field::MaxTurns, &settings), "30");
    }

    #[test]
    fn choices_parse_by_name_and_say_what_they_take() {
        let (settings, inputs) = edited(Field::Link, "mars");
        assert_eq!(settings.link, Settings::default().link);
        assert_eq!(
            inputs
                .error(Field::Link)
                .unwrap()
                .clone()
                .in_url()
                .to_string(),
            "The URL's link: Network link must be one of loopback, same-region, home-uplink, \
             other-continent, or custom; got \"mars\""
        );
        let (_, inputs) = edited(Field::Transport, "pigeon");
        assert!(
            inputs
                .error(Field::Transport)
                .unwrap()
                .to_string()
                .contains("one of http, ws, ws-append, http-chained, http-stateless, or compare")
        );
        let (settings, inputs) = edited(Field::ApiCosts, "local");
        assert!(inputs.runnable(&settings));
        assert_eq!(settings.api_costs, ApiCosts::Local);
        let (_, inputs) = edited(Field::ServerUrl, "ftp://x");
        assert!(inputs.error(Field::ServerUrl).is_some());
        let (settings, inputs) = edited(Field::ServerUrl, " http://h:1/ ");
        assert!(inputs.runnable(&settings));
        assert_eq!(settings.server_url, "http://h:1/");
        // Every field says its name, and what it takes.
        for field in [
            Field::Profile,
            Field::Task,
            Field::TaskLength,
            Field::MaxTurns,
        ] {
            let error = InputError::new(field, "?").to_string();
            assert!(error.starts_with(field.label()), "{error}");
        }
    }
}
