//! The projection of SUSTAINED WRITE: the mean over its window, its first
//! and last ten seconds, its slowest second and the series.

use serde::{Deserialize, Serialize};

use super::{Context, Entry, Facet, Facts, Project, Projection};
use crate::figure::{Field, Figure, Method};
use crate::model::sustained::{STRETCH, SustainedFigure};

/// SUSTAINED WRITE's facts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SustainedFacts {
    /// Always `incompressible`.
    pub data: String,
    pub block_size: usize,
    pub direct: bool,
    pub file_bytes: u64,
    /// `--sustained`'s seconds.
    pub window_s: f64,
    /// MiB/s of each second.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub series_mib_per_s: Vec<f64>,
    /// The mean of its first and last ten seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_10s_mib_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_10s_mib_per_s: Option<f64>,
    /// Its slowest second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest_second: Option<SlowestSecond>,
    /// `qualify`: where the write fell off its cache's cliff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cliff: Option<crate::model::qualify::Cliff>,
}

/// SUSTAINED WRITE's slowest second: which (from 0), and its MiB/s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SlowestSecond {
    pub second: usize,
    pub mib_per_s: f64,
}

impl Facet for SustainedFacts {
    fn number(&self, field: Field) -> Option<f64> {
        match field {
            Field::First10s => self.first_10s_mib_per_s,
            Field::Last10s => self.last_10s_mib_per_s,
            Field::SlowestSecond => self.slowest_second.map(|s| s.mib_per_s),
            _ => None,
        }
    }

    fn method(&self, method: Method) -> Option<String> {
        match method {
            Method::Data => Some(self.data.clone()),
            Method::Sustained => Some(format!("{} s", self.window_s)),
            _ => None,
        }
    }
}

impl Project for SustainedFigure {
    fn project(&self, _: Figure, _: &Context) -> Projection {
        let facts = SustainedFacts {
            data: "incompressible".into(),
            block_size: crate::model::sustained::CHUNK,
            direct: self.direct,
            file_bytes: self.file_bytes,
            window_s: self.window.as_secs_f64(),
            series_mib_per_s: self.series(),
            first_10s_mib_per_s: self.first(),
            last_10s_mib_per_s: self.last(),
            slowest_second: self
                .slowest()
                .map(|(second, mib_per_s)| SlowestSecond { second, mib_per_s }),
            cliff: None,
        };
        let line = (|| {
            let (second, slowest) = self.slowest()?;
            let how = if self.direct {
                "1 MiB O_DIRECT writes"
            } else {
                "1 MiB buffered writes: the filesystem refuses O_DIRECT"
            };
            let secs = self.bytes_per_second.len();
            let stretch = STRETCH.min(secs);
            Some(format!(
                "{:.2} MB/sec over {secs} s (first {stretch} s {:.2}, last {stretch} s {:.2}, slowest second {:.2} at {second} s; {how} cycling over a {} MiB file)",
                self.mean(),
                self.first()?,
                self.last()?,
                slowest,
                self.file_bytes >> 20
            ))
        })();
        Projection {
            entries: vec![Entry::once(self.mean(), Facts::Sustained(facts))],
            line,
            ..Projection::default()
        }
    }
}
