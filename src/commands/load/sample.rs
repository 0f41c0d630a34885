//! A `load` report for the unit tests: two worker VMs on two nodes, one
//! phase of `hci-70-30`, pve2's VM at a tenth of pve1's.

use std::time::Duration;

use super::profile::{JobChanges, LoadProfile, phases};
use super::report::{LoadReport, PhaseResult, VmRecord, WorkerFigures};
use crate::model::latency::Latency;

/// The report; `existing`: a `--vms` run (no storage).
pub fn report(existing: bool) -> LoadReport {
    let phase = &phases(LoadProfile::Hci7030, &JobChanges::default(), 2, 1.0, 2.0)[0];
    let worker = |node: &str, vmid: u32, ops: u64| {
        let mut l = Latency::default();
        for _ in 0..ops {
            l.record(Duration::from_micros(500));
        }
        WorkerFigures {
            node: node.into(),
            vmid,
            reads: ops,
            seconds: 2.0,
            read_latency: l,
            per_second: vec![ops / 2; 2],
            ..WorkerFigures::default()
        }
    };
    let workers = vec![worker("pve1", 101, 2000), worker("pve2", 102, 200)];
    LoadReport {
        schema_version: 1,
        kind: "load".into(),
        pveprobe_version: "0".into(),
        timestamp: "2026-12-05T00:00:00Z".into(),
        storage: if existing {
            String::new()
        } else {
            "ceph-vm".into()
        },
        profile: LoadProfile::Hci7030,
        disks_per_vm: 2,
        disk_bytes: 1 << 30,
        fill: "random".into(),
        existing,
        settings: crate::pvevm::VmSettings {
            scsihw: "virtio-scsi-single".into(),
            iothread: true,
            cache: "none".into(),
            aio: None,
            memory_mib: 1024,
            cores: 4,
        },
        vms: [("pve1", 101), ("pve2", 102)]
            .iter()
            .map(|(n, v)| VmRecord {
                node: n.to_string(),
                vmid: *v,
                disks: 2,
                filled_bytes: 2 << 30,
                fill_seconds: 3.0,
                failed: None,
            })
            .collect(),
        phases: vec![PhaseResult::new(phase, workers)],
        target: None,
        one_at_a_time: Vec::new(),
        left_behind: Vec::new(),
        problems: Vec::new(),
        interrupted_by: None,
    }
}
