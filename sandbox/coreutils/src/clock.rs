//! The sandbox's calendar: a fixed "now" and the conversions `date`, awk's `systime()` and
//! `strftime()` need. The commands do no I/O and read no clock — the shell's injected clock
//! measures budgets, not the date — so every run sees the same instant, [`NOW`], in UTC.
//! Dates are proleptic Gregorian, from days since 1970-01-01 (Howard Hinnant's algorithms).

/// The sandbox's "now": 2025-01-01 00:00:00 UTC, in seconds since the epoch.
pub const NOW: i64 = 1_735_689_600;

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    /// 1–12.
    pub month: u32,
    /// 1–31.
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

/// Days since 1970-01-01 of a date.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl Civil {
    pub fn from_timestamp(t: i64) -> Civil {
        let days = t.div_euclid(86_400);
        let secs = t.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: (secs / 3600) as u32,
            minute: (secs / 60 % 60) as u32,
            second: (secs % 60) as u32,
        }
    }

    /// 0 = Sunday.
    fn weekday(&self) -> usize {
        (days_from_civil(self.year, self.month, self.day) + 4).rem_euclid(7) as usize
    }

    /// 1-based day of the year.
    fn yearday(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day) - days_from_civil(self.year, 1, 1) + 1
    }
}

/// `strftime(3)` in UTC and the C locale.
pub fn strftime(format: &str, t: i64) -> String {
    let c = Civil::from_timestamp(t);
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let Some(conv) = chars.next() else {
            out.push('%');
            break;
        };
        let hour12 = if c.hour.is_multiple_of(12) {
            12
        } else {
            c.hour % 12
        };
        let piece = match conv {
            'Y' => c.year.to_string(),
            'C' => format!("{:02}", c.year.div_euclid(100)),
            'y' => format!("{:02}", c.year.rem_euclid(100)),
            'm' => format!("{:02}", c.month),
            'd' => format!("{:02}", c.day),
            'e' => format!("{:2}", c.day),
            'H' => format!("{:02}", c.hour),
            'k' => format!("{:2}", c.hour),
            'I' => format!("{hour12:02}"),
            'l' => format!("{hour12:2}"),
            'M' => format!("{:02}", c.minute),
            'S' => format!("{:02}", c.second),
            'p' => if c.hour < 12 { "AM" } else { "PM" }.into(),
            'P' => if c.hour < 12 { "am" } else { "pm" }.into(),
            'j' => format!("{:03}", c.yearday()),
            'a' => DAYS[c.weekday()][..3].into(),
            'A' => DAYS[c.weekday()].into(),
            'u' => (if c.weekday() == 0 { 7 } else { c.weekday() }).to_string(),
            'w' => c.weekday().to_string(),
            'b' | 'h' => MONTHS[c.month as usize - 1][..3].into(),
            'B' => MONTHS[c.month as usize - 1].into(),
            's' => t.to_string(),
            'Z' => "UTC".into(),
            'z' => "+0000".into(),
            'n' => "\n".into(),
            't' => "\t".into(),
            '%' => "%".into(),
            'F' => strftime("%Y-%m-%d", t),
            'T' => strftime("%H:%M:%S", t),
            'R' => strftime("%H:%M", t),
            'D' | 'x' => strftime("%m/%d/%y", t),
            'X' => strftime("%H:%M:%S", t),
            'r' => strftime("%I:%M:%S %p", t),
            'c' => strftime("%a %b %e %H:%M:%S %Y", t),
            'N' => "000000000".into(),
            other => format!("%{other}"),
        };
        out.push_str(&piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_and_dates_round_trip() {
        let c = Civil::from_timestamp(NOW);
        assert_eq!((c.year, c.month, c.day, c.hour), (2025, 1, 1, 0));
        let leap = Civil::from_timestamp(951_782_400);
        assert_eq!((leap.year, leap.month, leap.day), (2000, 2, 29));
        assert_eq!(Civil::from_timestamp(-1).year, 1969);
    }

    #[test]
    fn formats_follow_strftime() {
        assert_eq!(strftime("%Y-%m-%d %H:%M:%S", NOW), "2025-01-01 00:00:00");
        assert_eq!(
            strftime("%a %b %e %T %Z %Y", NOW),
            "Wed Jan  1 00:00:00 UTC 2025"
        );
        assert_eq!(
            strftime("%j %u %w %s %%", NOW + 86_400 * 40),
            "041 1 1 1739145600 %"
        );
        assert_eq!(strftime("%I:%M %p", NOW + 13 * 3600), "01:00 PM");
    }
}
