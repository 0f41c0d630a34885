//! How a duration and a size are written for a person: the one way each,
//! read by every command's text.

use std::fmt;

/// Seconds as a person reads a duration: `48 s`, `3 min 12 s`, `1 h 4 min`.
pub fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// A size for people: MiB below a GiB, GiB from one. Written plainly
/// (`{}`) it is whole MiB or GiB with two decimals; with a precision
/// (`{:.1}`) both units take it; `{:#}` writes whole GiB where the size is
/// a whole number of them, else whole MiB (a size a person gave).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

const MIB: f64 = (1u64 << 20) as f64;
const GIB: u64 = 1 << 30;

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if f.alternate() {
            return match b >= GIB && b.is_multiple_of(GIB) {
                true => write!(f, "{} GiB", b / GIB),
                false => write!(f, "{} MiB", b >> 20),
            };
        }
        match (b < GIB, f.precision()) {
            (true, p) => write!(f, "{:.*} MiB", p.unwrap_or(0), b as f64 / MIB),
            (false, p) => write!(f, "{:.*} GiB", p.unwrap_or(2), b as f64 / GIB as f64),
        }
    }
}

impl Size {
    /// Both units to `decimals` places: `1.5 GiB`, `300.0 MiB`.
    pub fn decimals(self, decimals: usize) -> String {
        format!("{self:.decimals$}")
    }

    /// Whole GiB where it is a whole number of them, else whole MiB.
    pub fn whole(self) -> String {
        format!("{self:#}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration(0.4), "0 s");
        assert_eq!(duration(48.0), "48 s");
        assert_eq!(duration(104.0), "1 min 44 s");
        assert_eq!(duration(660.0), "11 min 0 s");
        assert_eq!(duration(3725.0), "1 h 2 min");
    }

    #[test]
    fn sizes_take_the_unit_and_precision_asked() {
        assert_eq!(Size(512 << 20).to_string(), "512 MiB");
        assert_eq!(Size(10 << 30).to_string(), "10.00 GiB");
        assert_eq!(format!("{:.1}", Size(1536 << 20)), "1.5 GiB");
        assert_eq!(format!("{:.1}", Size(300 << 20)), "300.0 MiB");
        assert_eq!(Size(4 << 30).whole(), "4 GiB");
        assert_eq!(Size(1536 << 20).whole(), "1536 MiB");
        assert_eq!(Size(1536 << 20).decimals(1), "1.5 GiB");
    }
}
