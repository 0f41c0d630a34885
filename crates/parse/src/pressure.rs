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

/// A `some` or `full` line by procfs-core's record parser, its averages
/// checked to be percentages. Only a line of the kernel's form reaches it
/// (the word, a space, then `key=value`s): procfs-core slices the line
/// after its fifth byte unchecked.
fn stall(line: &str) -> Option<Stall> {
    let r = procfs_core::parse_pressure_record(line).ok()?;
    let pct = |v: f32| Some(crate::procfs::widen(v)).filter(|p| (0.0..=100.0).contains(p));
    Some(Stall {
        avg10: pct(r.avg10)?,
        avg60: pct(r.avg60)?,
        avg300: pct(r.avg300)?,
        total_us: r.total,
    })
}

/// `/proc/pressure/*`; `None` without a well-formed `some` line. Read a
/// line at a time, not as procfs-core's `IoPressure` (which wants `some`
/// then `full`): the cpu file has no `full` line before Linux 5.13.
pub fn pressure(text: &str) -> Option<Pressure> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        if line.starts_with("some ") {
            some = stall(line);
        } else if line.starts_with("full ") {
            full = stall(line);
        }
    }
    Some(Pressure { some: some?, full })
}

/// `/proc/loadavg` by procfs-core: the 1, 5 and 15 minute load averages.
pub fn loadavg(text: &str) -> Option<[f64; 3]> {
    let l: procfs_core::LoadAverage = crate::procfs::read(text)?;
    let v = [l.one, l.five, l.fifteen].map(crate::procfs::widen);
    v.iter().all(|v| v.is_finite() && *v >= 0.0).then_some(v)
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
        assert_eq!(loadavg("1.5 2.25 3 1/2 3"), Some([1.5, 2.25, 3.0]));
        // What procfs-core would slice past: a bare word, a multi-byte one.
        assert_eq!(pressure("some"), None);
        assert_eq!(pressure("some\u{e9}x"), None);
        assert_eq!(pressure("full\n"), None);
    }
}
