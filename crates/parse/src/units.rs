//! Seconds and sizes as an admin types them on the command line and PVE
//! writes them in its configs: the one parser of each, with one error
//! text each. A command's bounds (at least 1 MiB, at most an hour) are
//! checked here too, so every option says its range the same way.

/// Why a number of seconds or a size was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UnitError {
    #[error("{0:?} is not a number of seconds")]
    NotSeconds(String),
    #[error("{text} s: the seconds must be from {min} to {max}")]
    SecondsOutOfRange { text: String, min: f64, max: f64 },
    #[error("{0:?} is not a size like 1G, 256M or 64K")]
    NotSize(String),
    #[error("{text}: the size must be at least {min}")]
    SizeTooSmall { text: String, min: String },
    #[error("{0}: the size is too large")]
    SizeTooLarge(String),
}

/// A finite number of seconds from `min` to `max` (`0.5`, `60`).
pub fn seconds(text: &str, min: f64, max: f64) -> Result<f64, UnitError> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| UnitError::NotSeconds(crate::quote(text)))?;
    if !(secs.is_finite() && (min..=max).contains(&secs)) {
        return Err(UnitError::SecondsOutOfRange {
            text: crate::quote(text),
            min,
            max,
        });
    }
    Ok(secs)
}

/// [`seconds`] as an option's value parser (clap's `value_parser`).
pub fn seconds_between(
    min: f64,
    max: f64,
) -> impl Fn(&str) -> Result<f64, UnitError> + Clone + Send + Sync + 'static {
    move |text: &str| seconds(text, min, max)
}

/// A size in bytes with a binary unit, as `qm config` writes a disk's and
/// an admin types one: `32G`, `256m`, `104858K`, `1.5G`, `1T`, or plain
/// bytes. A fraction is taken where a unit makes whole bytes of it.
pub fn size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let not = || UnitError::NotSize(crate::quote(text));
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 10),
        Some((i, 'M' | 'm')) => (&t[..i], 20),
        Some((i, 'G' | 'g')) => (&t[..i], 30),
        Some((i, 'T' | 't')) => (&t[..i], 40),
        _ => (t, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(not());
    }
    let too_large = || UnitError::SizeTooLarge(crate::quote(text));
    match digits.parse::<u64>() {
        Ok(n) => n
            .checked_shl(shift)
            .filter(|b| b >> shift == n)
            .ok_or_else(too_large),
        Err(_) => {
            let n: f64 = digits.parse().map_err(|_| not())?;
            let bytes = n * (1u64 << shift) as f64;
            if !bytes.is_finite() || bytes >= u64::MAX as f64 {
                return Err(too_large());
            }
            Ok(bytes as u64)
        }
    }
}

/// [`size`], at least `min` bytes.
pub fn size_at_least(text: &str, min: u64) -> Result<u64, UnitError> {
    let bytes = size(text)?;
    if bytes < min {
        return Err(UnitError::SizeTooSmall {
            text: crate::quote(text),
            min: size_words(min),
        });
    }
    Ok(bytes)
}

/// [`size_at_least`] as an option's value parser (clap's `value_parser`).
pub fn size_from(
    min: u64,
) -> impl Fn(&str) -> Result<u64, UnitError> + Clone + Send + Sync + 'static {
    move |text: &str| size_at_least(text, min)
}

/// A size as [`size`] reads it back: the largest binary unit it is a
/// whole number of (`1M`, `64K`, `1536`).
pub fn size_words(bytes: u64) -> String {
    for (shift, unit) in [(40, 'T'), (30, 'G'), (20, 'M'), (10, 'K')] {
        if bytes != 0 && bytes.trailing_zeros() >= shift {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_a_finite_number_within_the_range() {
        assert_eq!(seconds("2.5", 0.0, 10.0), Ok(2.5));
        assert_eq!(seconds(" 60 ", 1.0, 60.0), Ok(60.0));
        for bad in ["", "x", "1s", "inf", "NaN"] {
            assert!(seconds(bad, 0.0, 10.0).is_err(), "{bad}");
        }
        assert_eq!(
            seconds("0.05", 0.1, 3600.0).unwrap_err().to_string(),
            "0.05 s: the seconds must be from 0.1 to 3600"
        );
        assert_eq!(
            seconds("soon", 0.1, 3600.0).unwrap_err().to_string(),
            "\"soon\" is not a number of seconds"
        );
    }

    #[test]
    fn sizes_take_binary_units_as_pve_writes_them() {
        assert_eq!(size("1G"), Ok(1 << 30));
        assert_eq!(size("256m"), Ok(256 << 20));
        assert_eq!(size("104858K"), Ok(104858 << 10));
        assert_eq!(size("1T"), Ok(1 << 40));
        assert_eq!(size("4096"), Ok(4096));
        assert_eq!(size("1.5G"), Ok(3 << 29));
        for bad in ["", "G", "12Q", "-1G", "1 G", "1e3", "x"] {
            assert!(size(bad).is_err(), "{bad}");
        }
        assert!(matches!(
            size("99999999999T"),
            Err(UnitError::SizeTooLarge(_))
        ));
        assert_eq!(
            size("lots").unwrap_err().to_string(),
            "\"lots\" is not a size like 1G, 256M or 64K"
        );
    }

    #[test]
    fn a_minimum_is_said_in_the_same_units() {
        assert_eq!(size_at_least("2097152", 1 << 20), Ok(2 << 20));
        assert_eq!(
            size_at_least("512K", 1 << 20).unwrap_err().to_string(),
            "512K: the size must be at least 1M"
        );
        assert_eq!(size_words(1536), "1536");
        assert_eq!(size_words(64 << 10), "64K");
        assert_eq!(size_words(0), "0");
    }
}
