//! REGEX/SECOND as data: which engine ran the loop and how many iterations
//! it made in its window (see `probe::regex` for the loop).

use std::time::Duration;

use crate::model::choice::Choice;

/// Which regex engine ran the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegexEngine {
    /// Rust's `regex` crate, in process (3 to 7 × pveperf's figure).
    Rust,
    /// The host's Perl, the same engine pveperf uses: figures on pveperf's scale.
    Perl,
}

impl RegexEngine {
    pub const ALL: [RegexEngine; 2] = [RegexEngine::Rust, RegexEngine::Perl];

    pub fn name(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::Perl => "perl",
        }
    }
}

impl Choice for RegexEngine {
    const ALL: &'static [Self] = &RegexEngine::ALL;

    fn name(self) -> &'static str {
        RegexEngine::name(self)
    }

    fn help(self) -> &'static str {
        match self {
            Self::Rust => "Rust's `regex` crate, in process (3 to 7 × pveperf's figure)",
            Self::Perl => {
                "The host's Perl, the same engine pveperf uses: figures on pveperf's scale"
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RegexFigure {
    pub engine: RegexEngine,
    /// Iterations completed in the window.
    pub iterations: u64,
    /// The window the loop ran for.
    pub window: Duration,
}

impl RegexFigure {
    /// The printed figure: iterations per 3-second window.
    pub fn per_pveperf_window(&self) -> u64 {
        super::per_pveperf_window(self.iterations, self.window)
    }
}
