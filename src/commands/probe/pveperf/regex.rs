//! REGEX/SECOND: pveperf's CPU loop. Each iteration builds a random integer
//! below 1,000,000 followed by the Unix time, matches it against
//! `(.+)123.?123` and reads the clock; the figure is the number of
//! iterations in a 3-second window (not divided by seconds, as pveperf).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::RngExt;

use crate::error::ProbeError;
use crate::measure::window::Window;
use crate::model::regex::{RegexEngine, RegexFigure};
use crate::sys::child::ToolFailure;
use crate::sys::interrupt::Interrupt;

pub const PATTERN: &str = r"(.+)123.?123";

pub fn measure(
    engine: RegexEngine,
    window: Duration,
    interrupt: &Interrupt,
) -> Result<RegexFigure, ProbeError> {
    let iterations = match engine {
        RegexEngine::Rust => rust_loop(window, interrupt)?,
        RegexEngine::Perl => perl_loop(window, interrupt)?,
    };
    Ok(RegexFigure {
        engine,
        iterations,
        window,
    })
}

fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn rust_loop(length: Duration, interrupt: &Interrupt) -> Result<u64, ProbeError> {
    let re = regex::Regex::new(PATTERN).expect("the pattern is valid");
    let mut locations = re.capture_locations();
    let mut rng = rand::rng();
    let mut text = String::with_capacity(32);
    let window = Window::start(length);
    let mut count = 0u64;
    loop {
        text.clear();
        let _ = write!(
            text,
            "{}{}",
            rng.random_range(0..1_000_000u32),
            unix_seconds()
        );
        // Perl fills $1 on a match; ask for the capture too.
        std::hint::black_box(re.captures_read(&mut locations, &text));
        count += 1;
        if window.is_over() {
            return Ok(count);
        }
        if count.is_multiple_of(4096) {
            interrupt.check()?;
        }
    }
}

/// The engine a run uses when none is asked for: the host's Perl, as
/// pveperf, wherever it runs pveperf's loop; Rust's engine only where it
/// does not (the figure then says it is not on pveperf's scale).
pub fn default_engine() -> RegexEngine {
    if perl_runs() {
        RegexEngine::Perl
    } else {
        RegexEngine::Rust
    }
}

/// True when the host's Perl can run pveperf's loop (it needs Time::HiRes).
pub fn perl_runs() -> bool {
    use crate::sys::child::{self, ChildOptions};
    let opts = ChildOptions::limit(Duration::from_secs(10)).env(PERL_ENV);
    child::run("perl", &["-MTime::HiRes", "-e", "1"], &opts).is_ok()
}

/// The environment Perl runs the loop in: no module or option of the
/// caller's (`PERL5OPT=-d` would slow every iteration).
const PERL_ENV: &[(&str, &str)] = &[("PERL5OPT", ""), ("PERL5LIB", "")];

/// pveperf's own loop, run by the host's Perl. Its only argument is the window in seconds.
const PERL_LOOP: &str = r#"
use strict;
use warnings;
use Time::HiRes qw(gettimeofday tv_interval);
my $window = shift @ARGV;
my $start = [gettimeofday];
my $count = 0;
for (;;) {
    my $str = int(rand(1000000)) . time();
    if ($str =~ m/(.+)123.?123/) {
    }
    $count++;
    last if tv_interval($start) > $window;
}
print "$count\n";
"#;

fn perl_loop(length: Duration, interrupt: &Interrupt) -> Result<u64, ProbeError> {
    let window = format!("{:.6}", length.as_secs_f64());
    // The loop ends by itself after the window; a perl that hangs does not
    // hold the probe for longer than a minute past it.
    let limit = length + Duration::from_secs(60);
    let ran = crate::sys::child::run(
        "perl",
        &["-e", PERL_LOOP, &window],
        &crate::sys::child::ChildOptions::limit(limit)
            .interrupt(interrupt)
            .env(PERL_ENV),
    );
    interrupt.check()?;
    let done = ran.map_err(|f| match f {
        ToolFailure::NotStarted { missing: true, .. } => ProbeError::Unavailable(
            "--regex-engine perl needs the host's perl, which is not installed (Debian package perl)".into(),
        ),
        ToolFailure::NotStarted { why, .. } => {
            ProbeError::Unavailable(format!("cannot start perl: {why}"))
        }
        ToolFailure::TimedOut => ProbeError::Unavailable(format!(
            "perl's regex loop did not end within {} s",
            limit.as_secs()
        )),
        ToolFailure::Interrupted(sig) => {
            ProbeError::Unavailable(format!("perl's regex loop was interrupted (signal {sig})"))
        }
        ToolFailure::Failed { status, message } => ProbeError::Unavailable(format!(
            "perl's regex loop failed ({status}{})",
            match message {
                line if line.is_empty() => String::new(),
                line => format!(": {line}"),
            }
        )),
    })?;
    let out = String::from_utf8_lossy(&done.stdout);
    out.trim().parse().map_err(|_| {
        ProbeError::Unavailable(format!(
            "perl's regex loop printed {:?}, not a count",
            out.trim()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_matches_like_perl() {
        let re = regex::Regex::new(PATTERN).unwrap();
        assert!(re.is_match("4123x1231732900000"));
        assert!(
            !re.is_match("1231732900000"),
            "(.+) needs at least one character before 123"
        );
        assert_eq!(&re.captures("99123123").unwrap()[1], "99");
    }

    #[test]
    fn rust_loop_counts_and_stops() {
        let figure = measure(
            RegexEngine::Rust,
            Duration::from_millis(50),
            &Interrupt::default(),
        )
        .unwrap();
        assert!(figure.iterations > 0);
        assert_eq!(figure.per_pveperf_window(), figure.iterations * 60);
    }

    #[test]
    fn rust_loop_stops_on_interrupt() {
        let flag = Interrupt::default();
        flag.raise(libc::SIGINT);
        let err = measure(RegexEngine::Rust, Duration::from_secs(60), &flag).unwrap_err();
        assert!(matches!(err, ProbeError::Interrupted(2)));
    }
}
