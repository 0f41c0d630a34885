//! How loaded a node is, as the kernel says: `/proc/loadavg` and the
//! pressure stall information of `/proc/pressure/{cpu,io,memory}` (PSI,
//! Linux 4.20 on). A PSI file has a `some` line (the share of time at
//! least one task waited) and, for io and memory (cpu too from 5.13),
//! a `full` line (all non-idle tasks waited), each with averages over
//! 10, 60 and 300 s in percent and `total`, microseconds waited since
//! boot: the difference of two totals is the wait between two readings.

/// One line of a PSI file.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stall {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// Microseconds waited since boot.
    pub total_us: u64,
}

/// A PSI file: `some`, and `full` where the kernel gives it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pressure {
    pub some: Stall,
    pub full: Option<Stall>,
}

fn stall(fields: &str) -> Option<Stall> {
    let mut s = Stall::default();
    let (mut a10, mut a60, mut a300, mut total) = (false, false, false, false);
    for f in fields.split_whitespace() {
        let (k, v) = f.split_once('=')?;
        let pct = || v.parse::<f64>().ok().filter(|p| (0.0..=100.0).contains(p));
        match k {
            "avg10" => (s.avg10, a10) = (pct()?, true),
            "avg60" => (s.avg60, a60) = (pct()?, true),
            "avg300" => (s.avg300, a300) = (pct()?, true),
            "total" => (s.total_us, total) = (v.parse().ok()?, true),
            _ => {}
        }
    }
    (a10 && a60 && a300 && total).then_some(s)
}

/// `/proc/pressure/*`; `None` without a well-formed `some` line.
pub fn pressure(text: &str) -> Option<Pressure> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("some", rest)) => some = stall(rest),
            Some(("full", rest)) => full = stall(rest),
            _ => {}
        }
    }
    Some(Pressure { some: some?, full })
}

/// `/proc/loadavg`: the 1, 5 and 15 minute load averages.
pub fn loadavg(text: &str) -> Option<[f64; 3]> {
    let mut w = text.split_whitespace();
    let mut out = [0.0; 3];
    for slot in &mut out {
        *slot = w
            .next()?
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/hosts/this-vm/proc")
            .join(rel);
        std::fs::read_to_string(&path).unwrap()
    }

    #[test]
    fn the_kernels_files_as_this_vm_wrote_them() {
        let cpu = pressure(&fixture("pressure/cpu")).unwrap();
        assert_eq!(cpu.some.avg60, 18.05);
        assert_eq!(cpu.some.total_us, 3_220_575_679);
        assert_eq!(cpu.full.unwrap().avg10, 0.0);
        let io = pressure(&fixture("pressure/io")).unwrap();
        assert_eq!(io.full.unwrap().avg60, 3.25);
        assert_eq!(loadavg(&fixture("loadavg")), Some([1.78, 3.17, 3.06]));
    }

    #[test]
    fn before_5_13_cpu_has_no_full_line_and_bad_lines_are_none() {
        let old = pressure("some avg10=0.50 avg60=0.20 avg300=0.10 total=1234\n").unwrap();
        assert_eq!((old.some.avg10, old.full), (0.5, None));
        assert_eq!(
            pressure("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
            None
        );
        assert_eq!(pressure("some avg10=x avg60=0 avg300=0 total=0"), None);
        assert_eq!(pressure("some avg10=101 avg60=0 avg300=0 total=0"), None);
        assert_eq!(loadavg("1.0 2.0"), None);
        assert_eq!(loadavg("-1 2 3 1/2 3"), None);
    }
}
