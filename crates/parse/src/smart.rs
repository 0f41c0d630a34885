//! What `smartctl --json` says of a disk's health: the overall status,
//! power-on hours and temperature, and per protocol the counters that
//! explain slow reads or a risk (smartmontools' JSON, `json_format_version`
//! 1.0; the field names are smartctl's: `ataprint.cpp`, `nvmeprint.cpp`,
//! `scsiprint.cpp`).
//!
//! - ATA: attributes 5 (reallocated sectors), 197 (pending), 198 (offline
//!   uncorrectable), 199 (interface CRC errors) by raw value; wear from the
//!   device statistics' "Percentage Used Endurance Indicator" (ACS-3,
//!   General Statistics... Solid State Device Statistics page), else from
//!   the normalized value of the vendor's wear attribute (177 Samsung
//!   Wear_Leveling_Count, 233 Intel Media_Wearout_Indicator, 231
//!   SSD_Life_Left: 100 new, falling), as 100 minus it; the SATA link's
//!   negotiated and maximum speed (`interface_speed`).
//! - NVMe: the SMART / Health Information log (NVMe Base Specification
//!   5.16.1.3): critical warning bits, percentage used, available spare and
//!   its threshold, media errors, unsafe shutdowns, data units written
//!   (1000 512-byte units each), warning and critical temperature time
//!   (minutes). The thermal management transition counts and times are in
//!   the same log, but smartctl up to 7.4 prints them as text only
//!   (`print_smart_log`); they are read under `thermal_temp{1,2}_
//!   transition_count` and `_total_time` if a version adds them to JSON.
//! - SCSI/SAS: the grown defect list and the uncorrected read and write
//!   errors of the error counter log.

use serde::Deserialize;
use serde_json::Value;

/// The health `smartctl --json` reported for one device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Smart {
    /// `ATA`, `NVMe` or `SCSI`.
    pub protocol: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    /// The overall assessment: `Some(false)` is FAILED.
    pub passed: Option<bool>,
    pub power_on_hours: Option<u64>,
    pub temperature_c: Option<i64>,
    pub ata: Option<Ata>,
    pub nvme: Option<Nvme>,
    pub scsi: Option<Scsi>,
    /// smartctl's exit status as it reports it (a bit mask, smartctl(8)).
    pub exit_status: Option<u64>,
    /// smartctl's own messages (`Device is in STANDBY mode`), errors first.
    pub messages: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ata {
    pub reallocated: Option<u64>,
    pub pending: Option<u64>,
    pub offline_uncorrectable: Option<u64>,
    pub crc_errors: Option<u64>,
    /// Percent of rated endurance used.
    pub wear_used_pct: Option<u64>,
    /// Where `wear_used_pct` came from: `device statistics` or the attribute.
    pub wear_source: Option<String>,
    /// `3.0 Gb/s`: the SATA link now, and the most the disk can do.
    pub link_current: Option<String>,
    pub link_max: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Nvme {
    pub critical_warning: Option<u64>,
    pub percentage_used: Option<u64>,
    pub available_spare: Option<u64>,
    pub available_spare_threshold: Option<u64>,
    pub media_errors: Option<u64>,
    pub unsafe_shutdowns: Option<u64>,
    /// In units of 512,000 bytes.
    pub data_units_written: Option<u64>,
    /// Minutes above the warning and the critical composite temperature.
    pub warning_temp_time: Option<u64>,
    pub critical_comp_time: Option<u64>,
    /// Thermal management: times the drive slowed itself (1: light, 2:
    /// heavy) and seconds spent so.
    pub thermal_transitions: [Option<u64>; 2],
    pub thermal_seconds: [Option<u64>; 2],
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scsi {
    pub grown_defects: Option<u64>,
    pub uncorrected_read: Option<u64>,
    pub uncorrected_write: Option<u64>,
}

/// The output is not smartctl's JSON.
#[derive(Debug, thiserror::Error)]
#[error("smartctl's output is not its JSON: {0}")]
pub struct SmartError(String);

fn u(v: &Value, path: &[&str]) -> Option<u64> {
    let mut v = v;
    for key in path {
        v = v.get(key)?;
    }
    v.as_u64()
}

fn text(v: &Value, path: &[&str]) -> Option<String> {
    let mut v = v;
    for key in path {
        v = v.get(key)?;
    }
    v.as_str().map(|s| s.trim().to_string())
}

#[derive(Deserialize)]
struct Attribute {
    id: u64,
    #[serde(default)]
    value: Option<u64>,
    #[serde(default)]
    raw: Option<Raw>,
}

#[derive(Deserialize)]
struct Raw {
    value: Option<u64>,
}

fn ata(doc: &Value) -> Option<Ata> {
    let table: Vec<Attribute> = doc
        .get("ata_smart_attributes")
        .and_then(|a| a.get("table"))
        .and_then(|t| serde_json::from_value(t.clone()).ok())
        .unwrap_or_default();
    let link_current = text(doc, &["interface_speed", "current", "string"]);
    if table.is_empty() && link_current.is_none() {
        return None;
    }
    let attr = |id: u64| table.iter().find(|a| a.id == id);
    let raw = |id: u64| attr(id).and_then(|a| a.raw.as_ref()).and_then(|r| r.value);
    let endurance = doc
        .get("ata_device_statistics")
        .and_then(|s| s.get("pages"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("table").and_then(Value::as_array))
        .flatten()
        .find(|row| {
            row.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.contains("Percentage Used Endurance Indicator"))
        })
        .and_then(|row| row.get("value").and_then(Value::as_u64));
    let (wear_used_pct, wear_source) = match endurance {
        Some(v) => (Some(v), Some("device statistics".to_string())),
        None => [177, 233, 231]
            .into_iter()
            .find_map(|id| {
                let value = attr(id)?.value?;
                (value <= 100).then(|| (Some(100 - value), Some(format!("attribute {id}"))))
            })
            .unwrap_or((None, None)),
    };
    Some(Ata {
        reallocated: raw(5),
        pending: raw(197),
        offline_uncorrectable: raw(198),
        crc_errors: raw(199),
        wear_used_pct,
        wear_source,
        link_current,
        link_max: text(doc, &["interface_speed", "max", "string"]),
    })
}

fn nvme(doc: &Value) -> Option<Nvme> {
    let log = doc.get("nvme_smart_health_information_log")?;
    let f = |key: &str| u(log, &[key]);
    Some(Nvme {
        critical_warning: f("critical_warning"),
        percentage_used: f("percentage_used"),
        available_spare: f("available_spare"),
        available_spare_threshold: f("available_spare_threshold"),
        media_errors: f("media_errors"),
        unsafe_shutdowns: f("unsafe_shutdowns"),
        data_units_written: f("data_units_written"),
        warning_temp_time: f("warning_temp_time"),
        critical_comp_time: f("critical_comp_time"),
        thermal_transitions: [
            f("thermal_temp1_transition_count"),
            f("thermal_temp2_transition_count"),
        ],
        thermal_seconds: [f("thermal_temp1_total_time"), f("thermal_temp2_total_time")],
    })
}

fn scsi(doc: &Value) -> Option<Scsi> {
    let grown = u(doc, &["scsi_grown_defect_list"]);
    let log = doc.get("scsi_error_counter_log");
    if grown.is_none() && log.is_none() {
        return None;
    }
    let uncorrected = |dir: &str| log.and_then(|l| u(l, &[dir, "total_uncorrected_errors"]));
    Some(Scsi {
        grown_defects: grown,
        uncorrected_read: uncorrected("read"),
        uncorrected_write: uncorrected("write"),
    })
}

/// Parses one device's `smartctl --json` output.
pub fn parse(json: &str) -> Result<Smart, SmartError> {
    let doc: Value = serde_json::from_str(json).map_err(|e| SmartError(e.to_string()))?;
    if !doc.is_object() || doc.get("smartctl").is_none() {
        return Err(SmartError("no \"smartctl\" object".into()));
    }
    let messages = doc
        .get("smartctl")
        .and_then(|s| s.get("messages"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("string").and_then(Value::as_str))
        .map(|s| s.trim().to_string())
        .collect();
    let temperature_c = doc
        .get("temperature")
        .and_then(|t| t.get("current"))
        .and_then(Value::as_i64);
    Ok(Smart {
        protocol: text(&doc, &["device", "protocol"]),
        model: text(&doc, &["model_name"]).or_else(|| text(&doc, &["scsi_model_name"])),
        serial: text(&doc, &["serial_number"]),
        passed: doc
            .get("smart_status")
            .and_then(|s| s.get("passed"))
            .and_then(Value::as_bool),
        power_on_hours: u(&doc, &["power_on_time", "hours"]),
        temperature_c,
        ata: ata(&doc),
        nvme: nvme(&doc),
        scsi: scsi(&doc),
        exit_status: u(&doc, &["smartctl", "exit_status"]),
        messages,
    })
}

/// One device `smartctl --scan-open --json` lists: its name and the `-d`
/// type that reaches it (`/dev/bus/0`, `megaraid,3`).
#[derive(Debug, Clone, PartialEq)]
pub struct Scanned {
    pub name: String,
    pub kind: String,
}

/// `smartctl --scan-open --json`'s devices.
pub fn parse_scan(json: &str) -> Result<Vec<Scanned>, SmartError> {
    let doc: Value = serde_json::from_str(json).map_err(|e| SmartError(e.to_string()))?;
    Ok(doc
        .get("devices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| {
            Some(Scanned {
                name: d.get("name")?.as_str()?.to_string(),
                kind: d.get("type")?.as_str()?.to_string(),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(name: &str) -> Smart {
        let path = format!(
            "{}/../../fixtures/smartctl/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        parse(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    #[test]
    fn nvme_health_log() {
        let s = capture("nvme-null-SAMSUNG_MZQL21T9HCJR-00A07-nvme0.json");
        assert_eq!(s.protocol.as_deref(), Some("NVMe"));
        assert_eq!(s.model.as_deref(), Some("SAMSUNG MZQL21T9HCJR-00A07"));
        assert_eq!(s.passed, Some(true));
        assert_eq!(s.power_on_hours, Some(13113));
        assert_eq!(s.temperature_c, Some(22));
        let n = s.nvme.unwrap();
        assert_eq!(n.percentage_used, Some(3));
        assert_eq!(
            (n.available_spare, n.available_spare_threshold),
            (Some(100), Some(10))
        );
        assert_eq!(n.unsafe_shutdowns, Some(34));
        assert_eq!(n.data_units_written, Some(267_397_176));
        assert_eq!(
            (n.warning_temp_time, n.critical_comp_time),
            (Some(0), Some(0))
        );
        assert_eq!(n.critical_warning, Some(0));
        assert!(s.ata.is_none() && s.scsi.is_none());
        let warned = capture("nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json");
        assert_eq!(warned.nvme.unwrap().critical_warning, Some(16));
    }

    #[test]
    fn ata_counters_wear_and_link() {
        let hgst = capture("HGST_HUS724020ALE640_28.json");
        let a = hgst.ata.unwrap();
        assert_eq!(a.crc_errors, Some(12));
        assert_eq!(a.link_current.as_deref(), Some("3.0 Gb/s"));
        assert_eq!(a.link_max.as_deref(), Some("6.0 Gb/s"));
        assert_eq!((a.reallocated, a.pending), (Some(0), Some(0)));
        let seagate = capture("ST3500418AS_12.json").ata.unwrap();
        assert_eq!(seagate.reallocated, Some(304));
        let intel = capture(
            "sat-Intel_730_and_DC_S35x0_3610_3700_Series_SSDs-INTEL_SSDSC2BB016T4-sdf.json",
        )
        .ata
        .unwrap();
        assert_eq!(intel.wear_used_pct, Some(85));
        assert_eq!(intel.wear_source.as_deref(), Some("attribute 233"));
        let samsung = capture("sat-Samsung_based_SSDs-SAMSUNG_MZ7LH480HAHQ-00005-sda.json")
            .ata
            .unwrap();
        assert_eq!(samsung.wear_used_pct, Some(1));
        assert_eq!(samsung.wear_source.as_deref(), Some("attribute 177"));
    }

    #[test]
    fn scsi_defects_and_errors() {
        let s = capture("SEAGATE_ST373453LC_26.json");
        assert_eq!(s.model.as_deref(), Some("SEAGATE ST373453LC"));
        let c = s.scsi.unwrap();
        assert_eq!(c.grown_defects, Some(260));
        assert_eq!(
            (c.uncorrected_read, c.uncorrected_write),
            (Some(1), Some(535))
        );
        let behind_raid = capture("megaraid,1-null-TOSHIBA_MG08SCA16TEY-0.json");
        assert_eq!(behind_raid.model.as_deref(), Some("TOSHIBA MG08SCA16TEY"));
        assert!(behind_raid.scsi.is_some());
    }

    #[test]
    fn not_smartctls_json_is_an_error() {
        assert!(parse("").is_err());
        assert!(parse("[]").is_err());
        assert!(parse("{\"device\": {}}").is_err());
        assert!(parse("garbage").is_err());
        let standby = parse(
            r#"{"smartctl": {"exit_status": 2, "messages": [{"string": "Device is in STANDBY mode, exit(2)", "severity": "information"}]}}"#,
        )
        .unwrap();
        assert_eq!(standby.exit_status, Some(2));
        assert_eq!(standby.messages, ["Device is in STANDBY mode, exit(2)"]);
        assert_eq!(standby.passed, None);
    }

    #[test]
    fn scan_lists_devices_and_their_types() {
        let scan = parse_scan(
            r#"{"devices": [{"name": "/dev/sda", "info_name": "/dev/sda", "type": "scsi", "protocol": "SCSI"},
                {"name": "/dev/bus/0", "info_name": "/dev/bus/0 [megaraid_disk_01]", "type": "megaraid,1", "protocol": "SCSI"}]}"#,
        )
        .unwrap();
        assert_eq!(scan.len(), 2);
        assert_eq!(scan[1].kind, "megaraid,1");
        assert!(parse_scan("{").is_err());
    }
}
