//! The times `top --at`, `--between` and `--since` take, as an admin
//! writes them the morning after: `03:00` (the last 3 a.m., local time),
//! `yesterday 03:00`, `2026-12-06 03:00`, an RFC 3339 time, `-2h` (that
//! long ago), `now`; and spans (`24h`, `7d`, `1h30m`).

use jiff::civil::{Date, Time};
use jiff::{SignedDuration, Span, SpanRelativeTo, Timestamp, ZonedDateTime};

/// Why a time or span was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?}: not a time (03:00, yesterday 03:00, 2026-12-06 03:00, an RFC 3339 time, -2h or now)"
)]
pub struct BadTime(pub String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: not a span (24h, 7d, 90m, 1h30m)")]
pub struct BadSpan(pub String);

/// A span as a duration (days of 24 hours).
pub fn span(text: &str) -> Result<SignedDuration, BadSpan> {
    let bad = || BadSpan(text.to_string());
    let s: Span = text.trim().parse().map_err(|_| bad())?;
    let d = s
        .to_duration(SpanRelativeTo::days_are_24_hours())
        .map_err(|_| bad())?;
    if d.is_negative() || d.is_zero() {
        return Err(bad());
    }
    Ok(d)
}

/// `text` as a time, against `now` in its time zone.
pub fn parse(text: &str, now: &ZonedDateTime) -> Result<Timestamp, BadTime> {
    let bad = || BadTime(text.to_string());
    let t = text.trim();
    if t == "now" {
        return Ok(now.timestamp());
    }
    if let Some(ago) = t.strip_prefix('-') {
        let d = span(ago).map_err(|_| bad())?;
        return now.timestamp().checked_sub(d).map_err(|_| bad());
    }
    if let Ok(ts) = t.parse::<Timestamp>() {
        return Ok(ts);
    }
    let at = |date: Date, time: Time| {
        date.to_datetime(time)
            .to_zoned_datetime(now.time_zone().clone())
            .map(|z| z.timestamp())
            .map_err(|_| bad())
    };
    let (day, clock) = match t.split_once(char::is_whitespace) {
        Some((d, c)) => (Some(d.trim()), c.trim()),
        None => (None, t),
    };
    let time: Time = clock.parse().map_err(|_| bad())?;
    let today = now.date();
    match day {
        None => {
            // The last such time: today's, or yesterday's if today's is
            // still to come.
            let ts = at(today, time)?;
            if ts > now.timestamp() {
                at(today.yesterday().map_err(|_| bad())?, time)
            } else {
                Ok(ts)
            }
        }
        Some("today") => at(today, time),
        Some("yesterday") => at(today.yesterday().map_err(|_| bad())?, time),
        Some(d) => at(d.parse().map_err(|_| bad())?, time),
    }
}

/// An RFC 3339 time as local time, to the second.
pub fn local(rfc: &str) -> String {
    rfc.parse::<jiff::Timestamp>()
        .map(|t| {
            t.to_zoned_datetime(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| rfc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> ZonedDateTime {
        "2026-12-06T10:30:00+01:00[Europe/Vienna]".parse().unwrap()
    }

    fn at(text: &str) -> String {
        parse(text, &now()).unwrap().to_string()
    }

    #[test]
    fn the_times_an_admin_writes_mean_what_they_say() {
        assert_eq!(at("03:00"), "2026-12-06T02:00:00Z");
        assert_eq!(
            at("11:00"),
            "2026-12-05T10:00:00Z",
            "still to come: yesterday's"
        );
        assert_eq!(at("yesterday 03:00"), "2026-12-05T02:00:00Z");
        assert_eq!(at("today 03:00:30"), "2026-12-06T02:00:30Z");
        assert_eq!(at("2026-12-01 03:00"), "2026-12-01T02:00:00Z");
        assert_eq!(at("2026-12-06T03:00:00Z"), "2026-12-06T03:00:00Z");
        assert_eq!(at("-2h"), "2026-12-06T07:30:00Z");
        assert_eq!(at("-1d"), "2026-12-05T09:30:00Z");
        assert_eq!(at("now"), "2026-12-06T09:30:00Z");
        for bad in [
            "",
            "3 a.m.",
            "yesterday",
            "25:00",
            "-",
            "-x",
            "tomorrow 03:00",
        ] {
            assert!(parse(bad, &now()).is_err(), "{bad}");
        }
    }

    #[test]
    fn spans_are_positive_and_days_are_24_hours() {
        assert_eq!(span("24h").unwrap(), SignedDuration::from_hours(24));
        assert_eq!(span("7d").unwrap(), SignedDuration::from_hours(168));
        assert_eq!(span("1h30m").unwrap(), SignedDuration::from_mins(90));
        for bad in ["", "0s", "-1h", "x", "7"] {
            assert!(span(bad).is_err(), "{bad}");
        }
    }
}
