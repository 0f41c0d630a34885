//! The projection of PBS's CPU figures (SHA256 to VERIFY, in
//! `proxmox-backup-client benchmark`'s order), and `-v`'s CPU section.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{Context, Entry, Facet, Facts, Project, Projection};
use crate::figure::{Field, Figure, Method};
use crate::model::cpubench::{CpuBench, CpuOp, CpuOpFigure, MB};
use crate::model::host::HostInfo;
use crate::model::printable;

/// PBS's reference machine for its CPU figures.
pub const PBS_REFERENCE_MACHINE: &str = "AMD Ryzen 7 2700X (proxmox-backup-client benchmark, 2020)";

/// A CPU figure's facts: its window, PBS's rating, and the threads' figure.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuFacts {
    /// The seconds its loop ran for (PBS's, scaled with `--duration`).
    pub window_s: f64,
    /// Against PBS's reference machine.
    pub pbs_reference: PbsReference,
    /// On `--cpu-threads` threads at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<CpuThreads>,
}

/// A CPU figure as `proxmox-backup-client benchmark` rates it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PbsReference {
    /// The machine PBS compares with.
    pub machine: String,
    /// Its figure, in MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// This figure as a percentage of it (PBS prints it rounded).
    pub percent: f64,
}

/// A CPU figure on several threads at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuThreads {
    pub count: u32,
    /// All threads together, in MB/s.
    pub mb_per_s: f64,
    pub per_thread_mb_per_s: f64,
    /// `mb_per_s` over `count` times the one-thread figure.
    pub scaling: f64,
    /// Each thread's MB/s.
    pub each_mb_per_s: Vec<f64>,
}

impl Facet for CpuFacts {
    fn number(&self, field: Field) -> Option<f64> {
        match field {
            Field::PbsPercent => Some(self.pbs_reference.percent),
            Field::ThreadsMbPerS => self.threads.as_ref().map(|t| t.mb_per_s),
            Field::ThreadScaling => self.threads.as_ref().map(|t| t.scaling),
            _ => None,
        }
    }

    fn method(&self, method: Method) -> Option<String> {
        match method {
            Method::CpuThreads => self.threads.as_ref().map(|t| t.count.to_string()),
            _ => None,
        }
    }
}

impl CpuFacts {
    fn of(f: &CpuOpFigure) -> CpuFacts {
        CpuFacts {
            window_s: f.window.as_secs_f64(),
            pbs_reference: PbsReference {
                machine: PBS_REFERENCE_MACHINE.into(),
                mb_per_s: f.op.reference_bytes_per_s() / MB,
                percent: f.percent(),
            },
            threads: f.thread_count().map(|count| CpuThreads {
                count,
                mb_per_s: f.threads_mb_per_s().unwrap_or(0.0),
                per_thread_mb_per_s: f.per_thread_mb_per_s().unwrap_or(0.0),
                scaling: f.scaling().unwrap_or(0.0),
                each_mb_per_s: f.threads.iter().map(|t| t.mb_per_s()).collect(),
            }),
        }
    }
}

/// A CPU figure as PBS prints it, `2022.00 MB/s (100%)`, then the
/// threads' figures.
fn line(f: &CpuOpFigure) -> String {
    let mut text = format!("{:.2} MB/s ({:.0}%)", f.mb_per_s(), f.percent());
    if let (Some(n), Some(total), Some(each), Some(scaling)) = (
        f.thread_count(),
        f.threads_mb_per_s(),
        f.per_thread_mb_per_s(),
        f.scaling(),
    ) {
        let threads = if n == 1 { "thread" } else { "threads" };
        let _ = write!(
            text,
            "; {n} {threads} at once: {total:.2} MB/s, {each:.2} per thread, {scaling:.2} of {n} x 1 thread"
        );
    }
    text
}

/// The operation a CPU figure measures.
pub fn op(figure: Figure) -> Option<CpuOp> {
    Some(CpuOp::ALL[Figure::CPU_BENCH.iter().position(|f| *f == figure)?])
}

impl Project for CpuBench {
    fn project(&self, figure: Figure, _: &Context) -> Projection {
        let Some(f) = op(figure).and_then(|op| self.get(op)) else {
            return Projection::default();
        };
        Projection {
            entries: vec![Entry::once(f.mb_per_s(), Facts::Cpu(CpuFacts::of(f)))],
            line: Some(line(f)),
            ..Projection::default()
        }
    }
}

/// `-v`'s CPU section under PBS's figures (each with its label): model
/// and topology, the AES and SHA flags, the frequency governor, the
/// windows and each thread's figure. `None` without a CPU figure.
pub fn section(figures: &[(&str, &CpuFacts)], h: &HostInfo) -> Option<String> {
    let (_, first) = figures.first()?;
    let mut topology = Vec::new();
    if let Some(n) = h.sockets {
        topology.push(format!("{n} socket{}", if n == 1 { "" } else { "s" }));
    }
    topology.extend(h.cores.map(|n| format!("{n} cores")));
    topology.extend(h.threads.map(|n| format!("{n} threads")));
    let mut head = format!(
        "  CPU: {}",
        h.cpu_model.as_deref().unwrap_or("model unknown")
    );
    if !topology.is_empty() {
        let _ = write!(head, ", {}", topology.join(", "));
    }
    // The model comes from /proc/cpuinfo: one line, whatever it holds.
    let mut out = printable(&head);
    out.push('\n');
    let mut detail = |text: String| {
        let _ = writeln!(out, "      {}", printable(&text));
    };
    detail(if h.cpu_crypto_flags.is_empty() {
        "AES/SHA instructions: none listed in /proc/cpuinfo (OpenSSL then hashes and encrypts without them)".into()
    } else {
        format!(
            "AES/SHA instructions (/proc/cpuinfo): {}",
            h.cpu_crypto_flags.join(" ")
        )
    });
    detail(match &h.cpu_governor {
        Some(g) => format!("frequency governor: {g}"),
        None => {
            "frequency governor: none (no cpufreq: a VM, or the firmware sets the frequency)".into()
        }
    });
    // To the millisecond: 1 s, 0.1 s, 0.333 s.
    let window = |f: &CpuFacts| format!("{} s", (f.window_s * 1000.0).round() / 1000.0);
    let compress = figures
        .iter()
        .find(|(label, _)| *label == Figure::ZstdCompress.label())
        .map(|(_, f)| format!(", ZSTD COMPRESS {}", window(f)))
        .unwrap_or_default();
    detail(format!(
        "windows: {} each{compress} (proxmox-backup-client's: 1 s, 3 s at --duration 3)",
        window(first)
    ));
    detail(format!("100% is {}", first.pbs_reference.machine));
    for (label, f) in figures {
        if let Some(t) = &f.threads {
            let each: Vec<String> = t.each_mb_per_s.iter().map(|v| format!("{v:.2}")).collect();
            detail(format!(
                "{label} on {} threads at once: {} MB/s",
                t.count,
                each.join(", ")
            ));
        }
    }
    Some(out)
}
