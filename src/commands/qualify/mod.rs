//! `pveprobe qualify DEVICE`: the one command that writes to a whole
//! device. It refuses a device in use before any write ([`checks`]), holds
//! it O_EXCL for the whole run, asks for the disk's identity, runs
//! Proxmox's Ceph benchmark paper's test and the others on it
//! ([`disk_tests`]), discards it afterwards, and places the disk per use
//! ([`verdict`]).

pub mod args;
pub mod run;

pub mod checks;
pub mod disk_tests;
pub mod guests;
pub mod openers;
pub mod report;
pub mod target;
pub mod verdict;

use std::path::PathBuf;
use std::time::Duration;

use crate::commands::common::work::Work;
use crate::error::ProbeError;
use crate::figure::Figure;
use crate::model::filesystem::FsInfo;
use crate::model::qualify::{DiskTest, QualifyMeasured, SYNC_JOBS};
use crate::model::storage::Storage;
use crate::model::sync::SyncResult;
use crate::sys::interrupt::Interrupt;

use crate::figure::projection::{Context, Project};
use crate::sys::host::Host;
use disk_tests::{Held, Tally};
use report::{QualifyReport, QualifySettings};
use target::Target;

/// What a qualification is asked (its output and `--plot` are its
/// session's).
#[derive(Debug, Clone)]
pub struct QualifyRequest {
    /// Each test, counted down as it runs.
    pub progress: crate::output::progress::Progress,
    /// The whole disk or partition, as given.
    pub device: PathBuf,
    /// `--destroy-data-on`: the disk's identity, typed.
    pub destroy_data_on: Option<String>,
    pub dry_run: bool,
    /// Each test's seconds.
    pub seconds: f64,
    /// DISK SUSTAINED WRITE's seconds; 0 skips it.
    pub sustained: f64,
    pub no_discard: bool,
    /// Where /proc and /sys are read (a fixture tree in tests).
    pub sysroot: Option<PathBuf>,
    /// PVE's configuration directory (`/etc/pve`).
    pub pve_config: PathBuf,
}

/// The tests' order and names, as the progress and the plan say them.
fn test_names() -> Vec<&'static str> {
    Figure::QUALIFY.iter().map(|f| f.label()).collect()
}

/// How long the run takes, in seconds.
fn planned_seconds(args: &QualifyRequest) -> f64 {
    (SYNC_JOBS.len() + DiskTest::ALL.len()) as f64 * args.seconds + args.sustained
}

/// Whether the device is to be discarded afterwards, and if not why.
fn discard_plan(args: &QualifyRequest, t: &Target) -> Result<(), String> {
    if args.no_discard {
        return Err("--no-discard".into());
    }
    if t.device.rotational != Some(false) {
        return Err("it is rotational (or does not say it is not)".into());
    }
    if t.device.discard_max_bytes == Some(0) {
        return Err("the device takes no discard (discard_max_bytes 0)".into());
    }
    Ok(())
}

fn describe(t: &Target) -> String {
    let d = &t.device;
    let mut out = format!(
        "/dev/{}: {}, {} ({} bytes)",
        d.name,
        d.model.as_deref().unwrap_or("no model"),
        crate::model::human::Size(d.size_bytes).decimals(1),
        d.size_bytes
    );
    if let Some(disk) = &d.partition_of {
        out.push_str(&format!(", a partition of {disk}"));
    }
    for (what, v) in [
        ("serial", &d.serial),
        ("WWN", &d.wwn),
        ("transport", &d.transport),
    ] {
        if let Some(v) = v {
            out.push_str(&format!(", {what} {v}"));
        }
    }
    out
}

/// The plan `--dry-run` prints, and a terminal is shown before it asks.
fn plan(args: &QualifyRequest, t: &Target, checked: &checks::Checked) -> String {
    let mut out = format!("{}\nchecked, nothing in use found:\n", describe(t));
    for c in &checked.looked_at {
        out.push_str(&format!("  - {c}\n"));
    }
    out.push_str(&format!(
        "plan: {} tests of {} s each ({}), then {}; about {} in all, writing over all of /dev/{} and destroying its data\n",
        SYNC_JOBS.len() + DiskTest::ALL.len(),
        args.seconds,
        test_names()[..9].join(", "),
        if args.sustained > 0.0 {
            format!("DISK SUSTAINED WRITE for {} s", args.sustained)
        } else {
            "no sustained write".into()
        },
        crate::model::human::duration(planned_seconds(args)),
        t.device.name
    ));
    out.push_str(&match discard_plan(args, t) {
        Ok(()) => "afterwards: discard all of it (BLKDISCARD)\n".to_string(),
        Err(why) => format!("afterwards: no discard: {why}\n"),
    });
    out.push_str(&format!(
        "confirm with: --destroy-data-on {}\n",
        t.device.confirmation()
    ));
    out
}

/// Why a disk was not written to, or its tests ended early. Every
/// refusal comes before the first write ([`run::exit_of`]: status 2); an
/// interrupt after the writes began says what became of the device.
#[derive(Debug, thiserror::Error)]
pub enum QualifyError {
    #[error(transparent)]
    Target(#[from] target::TargetError),
    #[error("{}", refusal(device, findings))]
    InUse {
        device: String,
        findings: Vec<crate::model::qualify::Finding>,
    },
    #[error(
        "--destroy-data-on {typed:?} is not /dev/{device}'s identity ({what}); nothing was written\n{disk}"
    )]
    NotItsIdentity {
        typed: String,
        device: String,
        what: &'static str,
        disk: String,
    },
    #[error(
        "refusing to write to /dev/{device} without --destroy-data-on (no terminal to ask on); `pveprobe qualify --dry-run {}` shows the disk and its identity; nothing was written",
        path.display()
    )]
    NoTerminal { device: String, path: PathBuf },
    #[error("that is not /dev/{device}'s identity; nothing was written")]
    NotConfirmed { device: String },
    #[error("interrupted by signal {signal}: the writes stopped; {afterwards}")]
    Interrupted { signal: i32, afterwards: String },
}

/// Asks for the disk's identity; `Err` refuses (exit 2).
fn confirm(
    args: &QualifyRequest,
    t: &Target,
    checked: &checks::Checked,
) -> Result<(), QualifyError> {
    let d = &t.device;
    let what = if d.serial.is_some() {
        "its serial number"
    } else if d.wwn.is_some() {
        "its WWN"
    } else {
        "NAME:SIZE (it has no serial number or WWN)"
    };
    if let Some(typed) = &args.destroy_data_on {
        return if d.confirmed_by(typed) {
            Ok(())
        } else {
            Err(QualifyError::NotItsIdentity {
                typed: typed.clone(),
                device: d.name.clone(),
                what,
                disk: describe(t),
            })
        };
    }
    let asked = format!(
        "{}THIS DESTROYS EVERYTHING ON /dev/{}.\n",
        plan(args, t, checked),
        d.name
    );
    let Some(line) = args.progress.ask(&asked, &format!("Type {what} to go on:")) else {
        return Err(QualifyError::NoTerminal {
            device: d.name.clone(),
            path: args.device.clone(),
        });
    };
    if d.confirmed_by(&line) {
        Ok(())
    } else {
        Err(QualifyError::NotConfirmed {
            device: d.name.clone(),
        })
    }
}

/// A device in use, and what was found using it.
fn refusal(device: &str, findings: &[crate::model::qualify::Finding]) -> String {
    let mut message =
        format!("refusing to write to /dev/{device}: it is in use, or could not be shown free:");
    for f in findings {
        message.push_str(&format!("\n  {}: {}", f.device, f.what));
    }
    message.push_str("\nnothing was written");
    message
}

/// The figures' projections in print order, with the placement and verdicts.
fn judged(measured: &QualifyMeasured, report: &mut QualifyReport) {
    let ctx = Context::default();
    for figure in Figure::QUALIFY {
        let p = measured.project(figure, &ctx);
        if let Some(line) = p.line.clone() {
            report.lines.push((figure, line));
        }
        if let Some(d) = p.diagnostic {
            report.notes.push(d);
        }
        report.figures.extend(
            p.entries
                .into_iter()
                .map(|e| crate::output::result::XFigure::of(figure, e)),
        );
    }
    report.placement = measured
        .sync_one
        .as_ref()
        .map(|r| verdict::place(r.figure.iops()));
    let doc = report.as_result();
    report.verdicts = verdict::RULES
        .iter()
        .map(|rule| {
            let value = doc.reading(&rule.figure.spec().values[rule.value]);
            verdict::judge(rule, value.map(|r| r.value))
        })
        .collect();
}

/// The flushes' verdict, band and published rows of the one-job figure.
fn judge_sync(t: &Target, figure: crate::model::sync::SyncWriteFigure) -> SyncResult {
    let storage = Storage {
        source: format!("/dev/{}", t.device.name),
        device: Some(t.device.name.clone()),
        disks: vec![t.info.clone()],
        ..Storage::default()
    };
    let fs = FsInfo {
        total_bytes: t.device.size_bytes,
        avail_bytes: 0,
        source: storage.source.clone(),
        fstype: "none (the raw device)".into(),
        mount_point: Default::default(),
        read_only: false,
        dev: t.dev,
        options: String::new(),
    };
    let iops = figure.iops();
    SyncResult {
        verdict: crate::syncverdict::judge(&fs, Some(&storage), iops),
        reference: crate::syncverdict::reference(Some(&storage), None, iops),
        published: crate::syncverdict::published::of(Some(&storage), iops),
        figure,
    }
}

/// Runs the tests in order; stops at a signal or an error.
fn run_tests(
    args: &QualifyRequest,
    t: &Target,
    held: &Held,
    interrupt: &Interrupt,
    tally: &Tally,
) -> (QualifyMeasured, Option<ProbeError>) {
    let window = Duration::from_secs_f64(args.seconds);
    let mut m = QualifyMeasured::default();
    let total = SYNC_JOBS.len() + DiskTest::ALL.len() + usize::from(args.sustained > 0.0);
    let mut step = 0;
    let mut say = |figure: Figure, secs: f64| {
        step += 1;
        args.progress.timed(
            &format!("[{step}/{total}] {}", figure.label()),
            Duration::from_secs_f64(secs),
        );
    };
    for (jobs, figure) in SYNC_JOBS.into_iter().zip(Figure::QUALIFY) {
        say(figure, args.seconds);
        match disk_tests::sync_writes(held, jobs, window, interrupt, tally) {
            Ok(f) if jobs == 1 => m.sync_one = Some(judge_sync(t, f)),
            Ok(f) => m.sync_more.push(f),
            Err(e) => return (m, Some(e)),
        }
    }
    for (test, figure) in DiskTest::ALL
        .into_iter()
        .zip(&Figure::QUALIFY[SYNC_JOBS.len()..])
    {
        say(*figure, args.seconds);
        match disk_tests::io_test(held, test, window, interrupt, tally) {
            Ok(s) => m.io.push((test, s)),
            Err(e) => return (m, Some(e)),
        }
    }
    if args.sustained > 0.0 {
        say(Figure::DiskSustained, args.sustained);
        let budget = Duration::from_secs_f64(args.sustained);
        match disk_tests::sustained(held, budget, interrupt, tally) {
            Ok(s) => m.sustained = Some(s),
            Err(e) => return (m, Some(e)),
        }
    }
    (m, None)
}

/// A device checked free, held O_EXCL, its identity confirmed: ready to
/// be written. It is the request of qualify's [`Work`].
pub struct Confirmed<'a> {
    req: &'a QualifyRequest,
    host: Host,
    target: Target,
    checked: checks::Checked,
    held: Held,
}

/// Resolves and checks the device, holds it, and asks for its identity;
/// `None` after a dry run (its plan printed). Nothing is written here.
pub fn prepare(args: &QualifyRequest) -> Result<Option<Confirmed<'_>>, QualifyError> {
    let host = args
        .sysroot
        .as_ref()
        .map_or_else(Host::real, Host::with_root);
    let t = target::resolve(&host, &args.device)?;
    let mut checked = checks::check(&host, &t, &checks::RealTools, &args.pve_config);
    // Held from here to the end: the kernel refuses mounts and other
    // exclusive openers meanwhile.
    let held = match Held::open(&t.device.name, t.dev) {
        Ok(held) => Some(held),
        Err(why) => {
            checked.findings.push(crate::model::qualify::Finding {
                device: t.device.name.clone(),
                what: why,
            });
            None
        }
    };
    if !checked.findings.is_empty() {
        return Err(QualifyError::InUse {
            device: t.device.name.clone(),
            findings: checked.findings,
        });
    }
    let held = held.expect("held when nothing was found");
    checked
        .looked_at
        .push("held open O_EXCL: no other exclusive opener".into());
    if args.dry_run {
        print!("{}", plan(args, &t, &checked));
        println!("dry run: nothing was written");
        return Ok(None);
    }
    confirm(args, &t, &checked)?;
    Ok(Some(Confirmed {
        req: args,
        host,
        target: t,
        checked,
        held,
    }))
}

/// What happened to the device afterwards: discarded, or why not.
fn afterwards(args: &QualifyRequest, t: &Target, held: &Held, written: u64) -> String {
    match discard_plan(args, t) {
        Err(why) => format!("not discarded: {why}"),
        Ok(()) if written == 0 => "nothing to discard".into(),
        Ok(()) => match disk_tests::discard(held) {
            Ok(()) => "discarded all of it afterwards (BLKDISCARD)".into(),
            Err(e) => format!("the discard failed: {e}"),
        },
    }
}

/// Runs the tests on a ready device, discards it and judges the disk:
/// the report, with the error that stopped the tests early. An interrupt
/// is [`QualifyError::Interrupted`] (the device discarded first).
impl Work for Confirmed<'_> {
    type Report = QualifyReport;
    type Error = QualifyError;

    fn run(&self, interrupt: &Interrupt) -> Result<QualifyReport, QualifyError> {
        let Confirmed {
            req: args,
            host,
            target: t,
            checked,
            held,
        } = self;
        let tally = Tally::default();
        let started = jiff::Timestamp::now().round(jiff::Unit::Second).ok();
        let (measured, failure) = run_tests(args, t, held, interrupt, &tally);
        args.progress.done();
        let mut written = tally.written();
        written.afterwards = afterwards(args, t, held, written.bytes);
        let signal = match &failure {
            Some(ProbeError::Interrupted(sig)) => Some(*sig),
            _ => interrupt.signal(),
        };
        let mut report = QualifyReport {
            kind: report::KIND.into(),
            schema_version: report::SCHEMA_VERSION,
            pveprobe_version: env!("CARGO_PKG_VERSION").into(),
            timestamp: started.map(|t| t.to_string()).unwrap_or_default(),
            hostname: host
                .read_value(crate::sys::host::PROC_HOSTNAME)
                .filter(|h| !h.is_empty()),
            device: t.device.clone(),
            settings: QualifySettings {
                seconds: args.seconds,
                sustained_s: args.sustained,
                discard: discard_plan(args, t).is_ok(),
            },
            checked: checked.looked_at.clone(),
            written,
            interrupted_by_signal: signal,
            sustained_seconds: measured.sustained.as_ref().map(|s| s.series()),
            stopped_early: failure.map(|e| e.to_string()),
            ..QualifyReport::default()
        };
        judged(&measured, &mut report);
        args.progress
            .say(&report::written_words(&report.device, &report.written));
        if let Some(signal) = signal {
            return Err(QualifyError::Interrupted {
                signal,
                afterwards: report.written.afterwards,
            });
        }
        Ok(report)
    }
}
