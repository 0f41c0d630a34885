//! Why a figure is what it is, end to end: the binary on a fixture host's
//! tree (`--sysroot`) with a stand-in `smartctl` on PATH answering for the
//! tree's device names with real captures, as an admin's host would. The
//! stand-in refuses any option that is not read-only and logs every call.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::pveprobe;
use crate::common::smartctl::Smartctl;

fn root(host: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/storage")
        .join(host)
        .join("root")
}

/// `pveprobe -v` (or `--output-format json`) of a short run on `host`'s
/// tree, whose PATH is `/`, with `path` as PATH.
fn probe(host: &str, path: &str, json: bool) -> Output {
    let mut cmd = pveprobe();
    cmd.args(["--tests", "regex", "--duration", "0.1", "--sysroot"])
        .arg(root(host))
        .env("PATH", path);
    if json {
        cmd.args(["--output-format", "json"]);
    } else {
        cmd.arg("-v");
    }
    cmd.arg("/").output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn codes(doc: &serde_json::Value) -> Vec<String> {
    crate::common::hint_codes(&doc["storage"]["hints"])
        .into_iter()
        .map(String::from)
        .collect()
}

/// Every call carried the read-only options, and none was refused.
fn only_read(s: &Smartctl) {
    assert_eq!(s.refused(), "", "smartctl was asked for more than reading");
    let calls = s.calls();
    assert!(!calls.is_empty());
    for call in &calls {
        assert!(
            call.starts_with("--scan-open --json=c")
                || call.starts_with("--json=c --nocheck=standby --xall "),
            "{call}"
        );
    }
}

/// A PCIe 3.0 drive on two lanes of four that heats up and throttles
/// during the run: -v names the link and the throttling, JSON keeps both
/// readings and the codes, stderr notes the throttling.
#[test]
fn nvme_on_two_lanes_that_throttles() {
    let s = Smartctl::new();
    let before = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/smartctl/nvme-null-SAMSUNG_MZQL21T9HCJR-00A07-nvme0.json"),
    )
    .unwrap();
    let mut hot: serde_json::Value = serde_json::from_str(&before).unwrap();
    hot["nvme_smart_health_information_log"]["warning_temp_time"] = 2.into();
    hot["nvme_smart_health_information_log"]["temperature"] = 81.into();
    hot["temperature"]["current"] = 81.into();
    s.answer_text("nvme0n1", &before, Some(&hot.to_string()));
    let out = probe("nvme-gen3-x2", &s.path(), false);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("REGEX/SECOND:"),
        "the figures first: {stdout}"
    );
    assert!(
        stdout.contains(
            "hint: [link-below-capability] nvme0n1: PCIe link at 8.0 GT/s x2, the device and its slot can do 8.0 GT/s x4: "
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "hint: [throttled] nvme0n1: throttled during the run (warning temperature time +2 min, 22 -> 81 °C)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("health: SMART passed, 13113 h powered on"),
        "{stdout}"
    );
    assert!(
        stderr.contains("pveprobe: nvme0n1: throttled during the run"),
        "{stderr}"
    );
    only_read(&s);

    let s = Smartctl::new();
    s.answer_text("nvme0n1", &before, Some(&hot.to_string()));
    let out = probe("nvme-gen3-x2", &s.path(), true);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::common::validate_schema(&doc);
    assert_eq!(codes(&doc), ["link-below-capability", "throttled"]);
    let disk = &doc["storage"]["disks"][0];
    assert_eq!(disk["heat"]["before"]["temperature_c"], 22.0);
    assert_eq!(disk["heat"]["after"]["temperature_c"], 81.0);
    assert_eq!(disk["heat"]["after"]["warning_minutes"], 2);
    assert_eq!(disk["health"]["wear_used_pct"], 3);
    assert_eq!(
        disk["links"][0]["ceiling_mb_s"].as_f64().unwrap().round(),
        1969.0
    );
}

/// A clean host: the same drive at full width and cool, no hint.
#[test]
fn nvme_at_full_width_has_no_hint() {
    let s = Smartctl::new();
    s.answer("nvme0n1", "nvme-null-SAMSUNG_MZQL21T9HCJR-00A07-nvme0.json");
    let out = probe("nvme", &s.path(), true);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(codes(&doc), Vec::<String>::new());
    assert!(
        doc["notes"].as_array().is_none_or(|n| n.is_empty()),
        "{}",
        doc["notes"]
    );
}

/// A SATA HDD that came up at 3.0 Gb/s of its 6.0 and has CRC errors:
/// smartctl's maximum joins the port's ("the disk and the port").
#[test]
fn sata_link_at_half_speed_with_crc_errors() {
    let s = Smartctl::new();
    s.answer("sda", "HGST_HUS724020ALE640_28.json");
    let out = probe("sata-link-3g", &s.path(), false);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains(
            "hint: [link-below-capability] sda: SATA link at 3.0 Gb/s, the disk and the port can do 6.0 Gb/s: a cable, a backplane or \
             the port's setting; reads cannot pass about 300 MB/s"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("hint: [crc-errors] sda: 12 interface CRC errors"),
        "{stdout}"
    );
    only_read(&s);
}

/// Disks behind a MegaRAID volume: smartctl's scan lists them on the
/// volume's SCSI host, and -v shows each.
#[test]
fn physical_disks_behind_a_megaraid_volume() {
    let s = Smartctl::new();
    s.answer_text(
        "scan",
        r#"{"devices": [
            {"name": "/dev/sda", "info_name": "/dev/sda", "type": "scsi", "protocol": "SCSI"},
            {"name": "/dev/bus/0", "info_name": "/dev/bus/0 [megaraid_disk_01]", "type": "megaraid,1", "protocol": "SCSI"},
            {"name": "/dev/bus/0", "info_name": "/dev/bus/0 [megaraid_disk_02]", "type": "megaraid,2", "protocol": "SCSI"},
            {"name": "/dev/bus/1", "info_name": "/dev/bus/1 [megaraid_disk_00]", "type": "megaraid,0", "protocol": "SCSI"}]}"#,
        None,
    );
    s.answer("megaraid,1", "megaraid,1-null-TOSHIBA_MG08SCA16TEY-0.json");
    s.answer("megaraid,2", "megaraid,2-null-TOSHIBA_MG08SCA16TEY-0.json");
    let out = probe("hwraid-megaraid", &s.path(), false);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let behind: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("behind it:"))
        .collect();
    assert_eq!(behind.len(), 2, "{stdout}");
    assert!(
        behind[0].contains("TOSHIBA MG08SCA16TEY")
            && behind[0].ends_with("(smartctl -d megaraid,1 /dev/bus/0)")
    );
    assert!(
        !s.calls().iter().any(|c| c.contains("megaraid,0")),
        "another controller's disk was asked"
    );
    assert!(
        !stdout.contains("unknown: smartctl"),
        "the volume itself answers through its disks: {stdout}"
    );
    only_read(&s);
}

/// No smartctl: the figures, and one line saying what to install.
#[test]
fn without_smartctl_one_line_and_the_figures() {
    let empty = crate::common::workdir();
    let out = probe("lvm-sata-ahci", &empty.path().display().to_string(), false);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("REGEX/SECOND:"));
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("smartmontools"))
        .collect();
    assert_eq!(
        lines,
        [
            "  unknown: smartctl is not installed: install smartmontools to see the disks' health (SMART); the figures are unaffected"
        ]
    );
}

/// smartctl that prints garbage, and one that hangs: a line each, the
/// figures unaffected, the hanging one killed after its limit.
#[test]
fn smartctl_that_misbehaves() {
    let s = Smartctl::new();
    s.misbehave("garbage");
    let out = probe("lvm-sata-ahci", &s.path(), false);
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    assert!(
        stdout.contains("  unknown: smartctl /dev/sda: smartctl's output is not its JSON"),
        "{stdout}"
    );
    let s = Smartctl::new();
    s.misbehave("hang");
    let start = std::time::Instant::now();
    let out = probe("lvm-sata-ahci", &s.path(), false);
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    assert!(stdout.starts_with("REGEX/SECOND:"));
    assert!(
        stdout
            .contains("  unknown: smartctl did not answer within 10 s (/dev/sda): health not read"),
        "{stdout}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
}
