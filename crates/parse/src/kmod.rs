//! `/lib/modules/RELEASE/modules.dep`, as depmod writes it and modprobe
//! reads it: a line per module, `PATH: DEP DEP ...`, the path relative to
//! the release's directory, the dependencies every module the first needs,
//! directly or not, listed so that the last is loaded first. A module
//! built into the kernel is in no line (`modules.builtin` names it).

/// The most of modules.dep read (a PVE kernel's is about 0.5 MiB).
pub const MAX_BYTES: usize = 8 << 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModulesDepError {
    #[error("line {line} of modules.dep is no `PATH: DEPENDENCIES` line: {quoted:?}")]
    Line { line: usize, quoted: String },
    #[error("modules.dep is over {MAX_BYTES} bytes")]
    TooLarge,
}

/// The modules of one kernel release and what each needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModulesDep {
    entries: Vec<(String, Vec<String>)>,
}

/// A module's name as the kernel knows it: its file's name without
/// `.ko` (and a compression suffix), `-` read as `_`.
pub fn module_name(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split(".ko").next().unwrap_or(file);
    stem.replace('-', "_")
}

pub fn parse(text: &str) -> Result<ModulesDep, ModulesDepError> {
    if text.len() > MAX_BYTES {
        return Err(ModulesDepError::TooLarge);
    }
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || ModulesDepError::Line {
            line: i + 1,
            quoted: crate::quote(line),
        };
        let (path, deps) = line.split_once(':').ok_or_else(bad)?;
        let path = path.trim();
        if path.is_empty() || path.contains(char::is_whitespace) || !path.contains(".ko") {
            return Err(bad());
        }
        let deps: Vec<String> = deps.split_whitespace().map(str::to_string).collect();
        // depmod lists modules, never one twice in a line, never a
        // module as its own dependency.
        if deps
            .iter()
            .any(|d| !d.contains(".ko") || d.contains(':') || d == path)
        {
            return Err(bad());
        }
        entries.push((path.to_string(), deps));
    }
    Ok(ModulesDep { entries })
}

impl ModulesDep {
    /// The file of module `name` and what it needs, if a line has it.
    fn entry(&self, name: &str) -> Option<&(String, Vec<String>)> {
        let name = name.replace('-', "_");
        self.entries.iter().find(|(p, _)| module_name(p) == name)
    }

    /// The files to load, in order, for the modules `names`: each one's
    /// dependencies (the last listed first) before it, each file once;
    /// and the names no line has (built into the kernel, or absent).
    pub fn load_order(&self, names: &[&str]) -> (Vec<String>, Vec<String>) {
        let (mut order, mut missing) = (Vec::<String>::new(), Vec::new());
        for name in names {
            let Some((path, deps)) = self.entry(name) else {
                missing.push(name.to_string());
                continue;
            };
            for file in deps.iter().rev().chain(std::iter::once(path)) {
                if !order.contains(file) {
                    order.push(file.clone());
                }
            }
        }
        (order, missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/modules/modules.dep"
        ))
        .unwrap()
    }

    #[test]
    fn a_worker_s_disks_load_after_what_they_need() {
        let dep = parse(&fixture()).unwrap();
        let (order, missing) = dep.load_order(&["virtio_pci", "virtio-scsi", "sd_mod", "8250"]);
        let names: Vec<String> = order.iter().map(|p| module_name(p)).collect();
        assert_eq!(
            names,
            [
                "virtio_ring",
                "virtio",
                "virtio_pci_modern_dev",
                "virtio_pci_legacy_dev",
                "virtio_pci",
                "scsi_common",
                "scsi_mod",
                "virtio_scsi",
                "sd_mod"
            ]
        );
        assert_eq!(missing, ["8250"]);
        assert!(order[0].starts_with("kernel/drivers/virtio/"));
    }

    #[test]
    fn names_and_refusals() {
        assert_eq!(module_name("kernel/fs/ext4/ext4.ko.zst"), "ext4");
        assert_eq!(module_name("kernel/drivers/scsi/sd-mod.ko"), "sd_mod");
        assert!(matches!(
            parse("kernel/a.ko kernel/b.ko\n"),
            Err(ModulesDepError::Line { line: 1, .. })
        ));
        assert!(parse(": kernel/b.ko\n").is_err());
        assert!(parse("kernel/a.ko: notamodule\n").is_err());
        // A module that needs itself, or a second colon (the fuzzer's).
        assert!(parse("kernel/a.ko: kernel/b.ko kernel/a.ko\n").is_err());
        assert!(parse("kernel/a.ko: kernel/b.ko: kernel/c.ko\n").is_err());
        assert_eq!(parse("\n# comment\n").unwrap(), ModulesDep::default());
        assert_eq!(
            parse(&"x".repeat(MAX_BYTES + 1)),
            Err(ModulesDepError::TooLarge)
        );
    }
}
