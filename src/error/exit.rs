//! The exit statuses (see `--help`), one enum for every command.

use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every requested line that applies was measured.
    Ok,
    /// A line could not be measured (the reason is on stderr).
    NotMeasured,
    /// Bad usage or input: nothing was measured or created.
    BadInput,
    /// `--baseline`: a figure is worse than the baseline by more than `--tolerance`.
    WorseThanBaseline,
    /// `cluster`: a node did not answer.
    NodeDidNotAnswer,
    /// Interrupted by this signal, after removing what the probe made.
    Signal(i32),
    /// Run as `pveperf`: pveperf's usage error, its `exit(-1)`.
    PveperfUsage,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::NotMeasured => 1,
            Exit::BadInput => 2,
            Exit::WorseThanBaseline => 3,
            Exit::NodeDidNotAnswer => 4,
            Exit::Signal(sig) => 128u8.saturating_add(sig.clamp(0, 127) as u8),
            Exit::PveperfUsage => 255,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_ones() {
        let all = [
            (Exit::Ok, 0),
            (Exit::NotMeasured, 1),
            (Exit::BadInput, 2),
            (Exit::WorseThanBaseline, 3),
            (Exit::NodeDidNotAnswer, 4),
            (Exit::Signal(2), 130),
            (Exit::Signal(15), 143),
            (Exit::Signal(1), 129),
            (Exit::PveperfUsage, 255),
        ];
        for (exit, code) in all {
            assert_eq!(exit.code(), code, "{exit:?}");
        }
    }
}
