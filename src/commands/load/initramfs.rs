//! A worker VM's initramfs, built on the node: a `newc` cpio archive (the
//! kernel's own initramfs format, uncompressed) holding the probe as
//! `/init`, the modules its virtual disks need with `/modules.order`
//! (their load order from the release's `modules.dep`), the directories
//! `/init` mounts on, and any further files (a dynamically linked probe's
//! libraries, at their own paths). Everything is read from the node; the
//! archive is written where the caller says.

use std::io::Write;
use std::path::{Path, PathBuf};

use pveprobe_parse::kmod;

/// The modules a worker's disks and their controller need, on a kernel
/// that builds them as modules: virtio's PCI transport, virtio-scsi (PVE's
/// `virtio-scsi-single` and `virtio-scsi-pci`), SCSI disks, and the
/// balloon (PVE gives every VM one: its memory figures and target).
pub const MODULES: [&str; 4] = ["virtio_pci", "virtio_scsi", "sd_mod", "virtio_balloon"];

/// Where `/init` finds its modules and their order.
pub const MODULE_DIR: &str = "lib/modules";
pub const ORDER_FILE: &str = "modules.order";

#[derive(Debug, thiserror::Error)]
pub enum InitramfsError {
    #[error("cannot read {}: {}", path.display(), crate::error::describe(source))]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    ModulesDep {
        path: PathBuf,
        source: kmod::ModulesDepError,
    },
    #[error("{}: modules compressed with {kind} are not read (uncompressed, or zstd)", path.display())]
    Compressed { path: PathBuf, kind: &'static str },
    #[error("cannot write the initramfs: {0}")]
    Write(std::io::Error),
}

/// What goes into a worker's initramfs.
#[derive(Debug, Clone)]
pub struct InitramfsSpec {
    /// The probe that becomes `/init` (the package's static one).
    pub probe: PathBuf,
    /// The kernel release's module directory: `/lib/modules/RELEASE`.
    pub modules: PathBuf,
    /// Further files, each at its own absolute path.
    pub extra: Vec<PathBuf>,
}

/// What was put in, for the caller to say.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    /// The module files, in load order.
    pub modules: Vec<String>,
    /// Of [`MODULES`], those the release builds in (no line of
    /// `modules.dep` has them).
    pub built_in: Vec<String>,
    pub bytes: u64,
}

fn read(path: &Path) -> Result<Vec<u8>, InitramfsError> {
    std::fs::read(path).map_err(|source| InitramfsError::Read {
        path: path.into(),
        source,
    })
}

/// A module's bytes as `finit_module(2)` takes them on any kernel:
/// uncompressed (zstd is undone here; xz and gzip are refused).
fn module_bytes(path: &Path) -> Result<Vec<u8>, InitramfsError> {
    let bytes = read(path)?;
    let name = path.to_string_lossy();
    if name.ends_with(".zst") {
        return zstd::decode_all(bytes.as_slice()).map_err(|source| InitramfsError::Read {
            path: path.into(),
            source,
        });
    }
    for (suffix, kind) in [(".xz", "xz"), (".gz", "gzip")] {
        if name.ends_with(suffix) {
            return Err(InitramfsError::Compressed {
                path: path.into(),
                kind,
            });
        }
    }
    Ok(bytes)
}

/// Writes the initramfs `spec` asks for to `out`.
pub fn build(spec: &InitramfsSpec, out: &mut impl Write) -> Result<Built, InitramfsError> {
    let dep_path = spec.modules.join("modules.dep");
    let text = read(&dep_path)?;
    let text = String::from_utf8_lossy(&text);
    let dep = kmod::parse(&text).map_err(|source| InitramfsError::ModulesDep {
        path: dep_path.clone(),
        source,
    })?;
    let (order, built_in) = dep.load_order(&MODULES);
    let mut archive = Cpio::new(out);
    for dir in ["dev", "proc", "sys", "tmp", "lib", MODULE_DIR] {
        archive.dir(dir)?;
    }
    archive.file("init", 0o755, &read(&spec.probe)?)?;
    let mut names = String::new();
    for file in &order {
        let bytes = module_bytes(&spec.modules.join(file))?;
        let name = format!("{}.ko", kmod::module_name(file));
        archive.file(&format!("{MODULE_DIR}/{name}"), 0o644, &bytes)?;
        names.push_str(&name);
        names.push('\n');
    }
    archive.file(ORDER_FILE, 0o644, names.as_bytes())?;
    for path in &spec.extra {
        let rel = path.strip_prefix("/").unwrap_or(path).to_string_lossy();
        let mut parent = String::new();
        for part in rel
            .split('/')
            .collect::<Vec<_>>()
            .split_last()
            .map_or(&[][..], |p| p.1)
        {
            parent = if parent.is_empty() {
                part.to_string()
            } else {
                format!("{parent}/{part}")
            };
            archive.dir(&parent)?;
        }
        archive.file(&rel, 0o755, &read(path)?)?;
    }
    let bytes = archive.finish()?;
    Ok(Built {
        modules: order,
        built_in,
        bytes,
    })
}

/// A `newc` cpio archive being written (the format of
/// Documentation/driver-api/early-userspace/buffer-format.rst).
struct Cpio<'a, W: Write> {
    out: &'a mut W,
    ino: u32,
    written: u64,
    dirs: std::collections::BTreeSet<String>,
}

impl<'a, W: Write> Cpio<'a, W> {
    fn new(out: &'a mut W) -> Self {
        Cpio {
            out,
            ino: 0,
            written: 0,
            dirs: Default::default(),
        }
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), InitramfsError> {
        self.out.write_all(bytes).map_err(InitramfsError::Write)?;
        self.written += bytes.len() as u64;
        let pad = (4 - (self.written % 4) as usize) % 4;
        self.out
            .write_all(&[0u8; 3][..pad])
            .map_err(InitramfsError::Write)?;
        self.written += pad as u64;
        Ok(())
    }

    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) -> Result<(), InitramfsError> {
        self.ino += 1;
        let nlink = if mode & 0o040000 != 0 { 2 } else { 1 };
        let header = format!(
            "070701{:08X}{mode:08X}{:08X}{:08X}{nlink:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
            self.ino,
            0,
            0,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            name.len() + 1,
            0
        );
        let mut head = header.into_bytes();
        head.extend_from_slice(name.as_bytes());
        head.push(0);
        self.put(&head)?;
        self.put(data)
    }

    fn dir(&mut self, name: &str) -> Result<(), InitramfsError> {
        if self.dirs.insert(name.to_string()) {
            self.entry(name, 0o040755, &[])?;
        }
        Ok(())
    }

    fn file(&mut self, name: &str, perm: u32, data: &[u8]) -> Result<(), InitramfsError> {
        self.entry(name, 0o100000 | perm, data)
    }

    /// The trailer; the archive's size.
    fn finish(mut self) -> Result<u64, InitramfsError> {
        self.ino = 0;
        self.entry("TRAILER!!!", 0, &[])?;
        self.out.flush().map_err(InitramfsError::Write)?;
        Ok(self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_is_newc_with_its_names_and_files_aligned() {
        let mut out = Vec::new();
        let mut a = Cpio::new(&mut out);
        a.dir("lib").unwrap();
        a.dir("lib").unwrap();
        a.file("init", 0o755, b"#!x").unwrap();
        let size = a.finish().unwrap();
        assert_eq!(size as usize, out.len());
        assert_eq!(out.len() % 4, 0);
        // Three entries (the directory once), each a 110-byte header.
        let text = String::from_utf8_lossy(&out);
        assert_eq!(text.matches("070701").count(), 3);
        assert!(text.starts_with("07070100000001000041ED"), "{text}");
        let init = text.find("init\0").unwrap();
        // The name and its NUL, padded so the data starts on 4 bytes.
        assert_eq!((init + 5 + (4 - (init + 5) % 4) % 4) % 4, 0);
        assert!(text.contains("#!x"));
        assert!(text.contains("TRAILER!!!\0"));
    }

    #[test]
    fn modules_in_their_order_from_a_captured_modules_dep() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/modules/modules.dep");
        std::fs::copy(&fixture, dir.path().join("modules.dep")).unwrap();
        let text = std::fs::read_to_string(&fixture).unwrap();
        for line in text.lines() {
            let file = dir.path().join(line.split(':').next().unwrap());
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, format!("module {}", file.display())).unwrap();
        }
        let probe = dir.path().join("probe");
        std::fs::write(&probe, b"probe").unwrap();
        let mut out = Vec::new();
        let built = build(
            &InitramfsSpec {
                probe,
                modules: dir.path().into(),
                extra: vec![],
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(built.modules.len(), 10);
        assert!(built.built_in.is_empty());
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains(
            "virtio_ring.ko\nvirtio.ko\nvirtio_pci_modern_dev.ko\nvirtio_pci_legacy_dev.ko\nvirtio_pci.ko\nscsi_common.ko\nscsi_mod.ko\nvirtio_scsi.ko\nsd_mod.ko\nvirtio_balloon.ko\n"
        ));
        assert!(text.contains("lib/modules/sd_mod.ko\0"));
        // A module compressed with xz is refused by name.
        std::fs::write(dir.path().join("modules.dep"), "kernel/sd_mod.ko.xz:\n").unwrap();
        std::fs::create_dir_all(dir.path().join("kernel")).unwrap();
        std::fs::write(dir.path().join("kernel/sd_mod.ko.xz"), b"xz").unwrap();
        let spec = InitramfsSpec {
            probe: dir.path().join("probe"),
            modules: dir.path().into(),
            extra: vec![],
        };
        assert!(matches!(
            build(&spec, &mut Vec::new()),
            Err(InitramfsError::Compressed { kind: "xz", .. })
        ));
    }
}
