//! The projections of pveperf's lines that read no device and ask no
//! name server: CPU BOGOMIPS, REGEX/SECOND, HD SIZE, FSYNCS/SECOND.

use serde::{Deserialize, Serialize};

use super::{Context, Facet, Facts, Project, Projection, Sample, Seen, runs};
use crate::figure::Figure;
use crate::model::filesystem::FsInfo;
use crate::model::fsync::FsyncFigure;
use crate::model::host::Bogomips;
use crate::model::latency::{LatencySummary, merged};
use crate::model::printable;
use crate::model::regex::{RegexEngine, RegexFigure};

impl Project for Bogomips {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        runs(figure, vec![self.0], Facts::None, |v| format!("{v:.2}"))
    }
}

impl Sample for RegexFigure {
    fn value(&self) -> f64 {
        self.per_pveperf_window() as f64
    }
}

/// REGEX/SECOND's facts: the engine that ran pveperf's loop.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RegexFacts {
    pub engine: String,
}

impl Facet for RegexFacts {
    fn details(&self, seen: &Seen) -> String {
        let guidance = if self.engine == "perl" {
            let verdict = if seen.value > 300_000.0 {
                "good"
            } else {
                "low"
            };
            format!("pve-docs: above 300000: {verdict}")
        } else {
            "pve-docs: above 300000 on pveperf's Perl scale; this rust-engine figure is 3 to 7 times that \
             scale (use --regex-engine perl to check it)"
                .to_string()
        };
        format!("      engine: {}\n      {guidance}\n", self.engine)
    }
}

impl Project for Vec<RegexFigure> {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        let Some(first) = self.first() else {
            return Projection::default();
        };
        let facts = Facts::Regex(RegexFacts {
            engine: first.engine.name().to_string(),
        });
        let samples = self.iter().map(Sample::value).collect();
        let mut projection = runs(figure, samples, facts, |v| format!("{}", v.round() as u64));
        // Only Perl's figure sits beside pveperf's: say so of any other.
        if first.engine != RegexEngine::Perl {
            projection.diagnostic = Some(format!(
                "{}: from Rust's regex engine, 3 to 7 times pveperf's Perl figure: not on pveperf's scale \
                 (the default engine is the host's perl, as pveperf's; --regex-engine perl needs it installed)",
                figure.label()
            ));
        }
        projection
    }
}

/// HD SIZE: the filesystem's size in GiB, and its source.
impl Project for FsInfo {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        let source = printable(&self.source);
        runs(figure, vec![self.size_gib()], Facts::None, |v| {
            format!("{v:.2} GB ({source})")
        })
    }
}

impl Sample for FsyncFigure {
    fn value(&self) -> f64 {
        self.per_sec()
    }
}

/// FSYNCS/SECOND's facts: the loop's latency over all runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FsyncFacts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
}

impl Facet for FsyncFacts {
    fn details(&self, seen: &Seen) -> String {
        let mut out = String::new();
        if let Some(l) = &self.latency {
            out.push_str(&format!("      latency: {}\n", super::latency_ms(l)));
        }
        out.push_str(&format!("      {}\n", fsync_meaning(seen.filesystem)));
        let verdict = if seen.value > 200.0 {
            "good"
        } else {
            "low: a write-back cache with battery (BBWC) or SSDs with power-loss protection help"
        };
        out.push_str(&format!("      pve-docs: above 200: {verdict}\n"));
        out
    }
}

/// What FSYNCS/SECOND measures on a filesystem (its type and mount
/// options), in one line.
pub fn fsync_meaning(fs: Option<(&str, &str)>) -> String {
    let mut text = String::from(
        "measures: pveperf's loop (open with truncate, fsync, write 4001 bytes, close): \
         the fsync commits a file its open just emptied, not the data written after it",
    );
    let fstype = fs.map_or("", |f| f.0);
    let has = |opt: &str| fs.is_some_and(|f| f.1.split(',').any(|o| o == opt));
    match fstype {
        "ext4" if has("data=ordered") && !has("noauto_da_alloc") => text.push_str(
            "; on ext4 (data=ordered) closing a truncated file starts its writeback and the \
             next fsync's journal commit waits for it, so part of the data is synced too",
        ),
        "tmpfs" | "ramfs" => text.push_str(&format!(
            "; on {fstype} fsync does nothing: the figure measures the CPU"
        )),
        _ => {}
    }
    text.push_str("; synced writes as a database makes them: SYNC WRITE 4K (-x)");
    text
}

impl Project for Vec<FsyncFigure> {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        let latency = merged(self.iter().map(|r| r.latency.as_ref())).and_then(|l| l.summary());
        let samples = self.iter().map(Sample::value).collect();
        runs(figure, samples, Facts::Fsync(FsyncFacts { latency }), |v| {
            format!("{v:.2}")
        })
    }
}
