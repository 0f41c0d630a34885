//! A stand-in `smartctl` on PATH for the tests: it answers for the fixture
//! host's device names with real captures (fixtures/smartctl/), logs every
//! call, refuses any option outside the read-only ones pveprobe may use
//! (and records the refusal, which the tests assert never happened), and
//! can hang or print garbage.
//!
//! Answers live in its directory: `<name>.json` for `/dev/<name>`,
//! `<type>.json` for `-d <type>` (`megaraid,1.json`), `scan.json` for
//! `--scan-open`; `<name>.after.json`, when present, answers the second
//! and later calls for that device (the heat after the run). A file
//! `hang` makes it sleep; `garbage` makes it print something else.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The read-only options pveprobe's smartctl calls may carry.
const SCRIPT: &str = r#"#!/bin/sh
dir=$(dirname "$0")
echo "$*" >> "$dir/calls.log"
dev= type= scan=
while [ $# -gt 0 ]; do
  case "$1" in
    --json|--json=c|--nocheck=standby|--xall) ;;
    --scan-open) scan=1 ;;
    -d) shift; type=$1 ;;
    /dev/*) dev=$1 ;;
    *) echo "$1" >> "$dir/refused.log"; echo "smartctl stand-in: refused option $1" >&2; exit 1 ;;
  esac
  shift
done
[ -e "$dir/hang" ] && exec sleep 600
if [ -e "$dir/garbage" ]; then echo '<html>not json'; exit 0; fi
if [ -n "$scan" ]; then cat "$dir/scan.json" 2>/dev/null || echo '{"devices": []}'; exit 0; fi
if [ -n "$type" ]; then key=$type; else key=$(basename "$dev"); fi
count="$dir/$key.count"
n=$(cat "$count" 2>/dev/null || echo 0); echo $((n + 1)) > "$count"
if [ "$n" -gt 0 ] && [ -e "$dir/$key.after.json" ]; then cat "$dir/$key.after.json"; exit 0; fi
if [ -e "$dir/$key.json" ]; then cat "$dir/$key.json"; exit 0; fi
printf '{"smartctl": {"exit_status": 2, "messages": [{"string": "%s: Unable to detect device type", "severity": "error"}]}}\n' "$dev"
exit 2
"#;

/// A directory on PATH holding the stand-in and its answers.
pub struct Smartctl {
    _dir: tempfile::TempDir,
    pub bin: PathBuf,
}

impl Smartctl {
    pub fn new() -> Self {
        let dir = super::workdir();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let file = bin.join("smartctl");
        std::fs::write(&file, SCRIPT).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { _dir: dir, bin }
    }

    /// Answers for `key` (a device's kernel name or a `-d` type) with the
    /// capture `fixtures/smartctl/<capture>`.
    pub fn answer(&self, key: &str, capture: &str) -> &Self {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/smartctl")
            .join(capture);
        std::fs::copy(from, self.bin.join(format!("{key}.json"))).unwrap();
        self
    }

    /// Answers for `key` with `json`; `after` for the calls after the first.
    pub fn answer_text(&self, key: &str, json: &str, after: Option<&str>) -> &Self {
        std::fs::write(self.bin.join(format!("{key}.json")), json).unwrap();
        if let Some(after) = after {
            std::fs::write(self.bin.join(format!("{key}.after.json")), after).unwrap();
        }
        self
    }

    /// Makes every call hang, or print something that is not JSON.
    pub fn misbehave(&self, how: &str) -> &Self {
        std::fs::write(self.bin.join(how), "").unwrap();
        self
    }

    /// Every call's arguments, one line each.
    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.bin.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Options it refused (must stay empty).
    pub fn refused(&self) -> String {
        std::fs::read_to_string(self.bin.join("refused.log")).unwrap_or_default()
    }

    /// PATH with the stand-in first.
    pub fn path(&self) -> String {
        format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", self.bin.display())
    }
}
