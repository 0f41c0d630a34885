//! `/proc/cpuinfo` by procfs-core's `CpuInfo`: the BogoMIPS sum pveperf
//! prints, the CPU's model and its AES and SHA flags. procfs-core keeps
//! each processor's block (a value every CPU shares among its common
//! fields) and passes over what comes before the first `processor` line;
//! the thin adapters here are pveperf's rule for BOGOMIPS (every line of
//! the key, in any case) and s390x's header, where that architecture
//! writes its `features` before the `processor N:` lines procfs-core does
//! not read.

use procfs_core::CpuInfo;

fn cpus(cpuinfo: &str) -> Option<CpuInfo> {
    crate::procfs::read(cpuinfo)
}

/// The value of `key` (in any case) for CPU `n`: its own, else the one
/// every CPU shares.
fn field<'a>(info: &'a CpuInfo, n: usize, key: &str) -> Option<&'a str> {
    let find = |map: &'a std::collections::HashMap<String, String>| {
        map.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    };
    find(info.cpus.get(n)?).or_else(|| find(&info.fields))
}

/// Sums every `bogomips : N` line, the key matched case-insensitively
/// (x86 writes `bogomips`, arm64 `BogoMIPS`): pveperf's rule, kept as a
/// line scan because procfs-core reads only whole processor blocks, and a
/// truncated or damaged capture (`tests/it/safety/hostile.rs`) keeps lines
/// outside them that pveperf counts. Architectures without such a line
/// (s390x, ppc64le) give 0.0, as pveperf prints.
pub fn bogomips_sum(cpuinfo: &str) -> f64 {
    cpuinfo
        .lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(key, _)| key.trim().eq_ignore_ascii_case("bogomips"))
        .filter_map(|(_, value)| value.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        // Not `.sum()`: a float sum of nothing is -0.0, printed "-0.00".
        .fold(0.0, |sum, v| sum + v)
}

/// What the host fingerprint reads of `/proc/cpuinfo` (besides
/// BOGOMIPS), from one parse.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuFacts {
    /// [`processors`].
    pub processors: usize,
    /// [`model_name`].
    pub model: Option<String>,
    /// [`crypto_flags`].
    pub crypto_flags: Vec<String>,
}

/// [`processors`], [`model_name`] and [`crypto_flags`] from one parse.
pub fn facts(cpuinfo: &str) -> CpuFacts {
    let info = cpus(cpuinfo);
    CpuFacts {
        processors: info.as_ref().map_or(0, processors_in),
        model: info.as_ref().and_then(model_in),
        crypto_flags: flags_in(info.as_ref(), cpuinfo),
    }
}

/// How many processors `/proc/cpuinfo` lists (procfs-core's blocks that
/// begin with `processor`).
pub fn processors(cpuinfo: &str) -> usize {
    cpus(cpuinfo).as_ref().map_or(0, processors_in)
}

fn processors_in(info: &CpuInfo) -> usize {
    info.cpus
        .iter()
        .filter(|cpu| cpu.contains_key("processor"))
        .count()
}

/// The CPU model name as the kernel reports it, for reports and hints
/// (x86's `model name`, ppc64le's `cpu`).
pub fn model_name(cpuinfo: &str) -> Option<String> {
    model_in(&cpus(cpuinfo)?)
}

fn model_in(info: &CpuInfo) -> Option<String> {
    info.model_name(0)
        .or_else(|| info.get_field(0, "cpu"))
        .map(str::to_string)
        .filter(|v| !v.is_empty())
}

/// The instruction-set flags that speed up SHA256, AES-GCM and their
/// kin, as `/proc/cpuinfo` names them: x86's `flags`, arm64's `Features`,
/// s390x's `features` (its CPACF is `msa`).
pub const CRYPTO_FLAGS: [&str; 13] = [
    // x86: AES-NI, its vector form, carry-less multiply (GCM's GHASH),
    // SHA extensions, and the vector units OpenSSL's GCM and SHA use.
    "aes",
    "vaes",
    "pclmulqdq",
    "vpclmulqdq",
    "sha_ni",
    "avx2",
    "avx512f",
    // arm64: the Cryptography Extension.
    "pmull",
    "sha1",
    "sha2",
    "sha3",
    "sha512",
    // s390x: the Message-Security Assist (CPACF). ppc64le lists no
    // flags; POWER8 and later have vector AES and SHA-2 in the ISA.
    "msa",
];

/// The first processor's [`CRYPTO_FLAGS`], in `/proc/cpuinfo`'s order:
/// x86's `flags`, arm64's `Features`, and s390x's `features` of the header
/// before its processors (which procfs-core does not read).
pub fn crypto_flags(cpuinfo: &str) -> Vec<String> {
    flags_in(cpus(cpuinfo).as_ref(), cpuinfo)
}

fn flags_in(info: Option<&CpuInfo>, cpuinfo: &str) -> Vec<String> {
    let from_cpu = info.and_then(|info| {
        ["flags", "features"]
            .iter()
            .find_map(|key| field(info, 0, key).map(str::to_string))
    });
    let Some(list) = from_cpu.or_else(|| s390x_features(cpuinfo)) else {
        return Vec::new();
    };
    let mut found: Vec<String> = Vec::new();
    for flag in list.split_whitespace() {
        if CRYPTO_FLAGS.contains(&flag) && !found.iter().any(|f| f == flag) {
            found.push(flag.to_string());
        }
    }
    found
}

/// s390x's `features` line, in the header before the first processor.
fn s390x_features(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .take_while(|l| !l.starts_with("processor"))
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| key.trim() == "features")
        .map(|(_, value)| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(host: &str) -> String {
        let path = format!(
            "{}/../../fixtures/hosts/{host}/proc/cpuinfo",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn crypto_flags_of_real_hosts() {
        assert_eq!(
            crypto_flags(&fixture("x86_64-epyc")),
            [
                "pclmulqdq",
                "aes",
                "avx2",
                "avx512f",
                "sha_ni",
                "vaes",
                "vpclmulqdq"
            ]
        );
        assert_eq!(
            crypto_flags(&fixture("arm64-ampere")),
            ["aes", "pmull", "sha1", "sha2"]
        );
        assert_eq!(crypto_flags(&fixture("s390x-z15")), ["msa"]);
        assert!(crypto_flags(&fixture("ppc64le-power9")).is_empty());
        // "vmx flags" is not "flags"; a line without a colon is no list.
        assert!(crypto_flags("processor : 0\nvmx flags\t: aes\nflags aes\n").is_empty());
        assert_eq!(
            crypto_flags("processor : 0\nflags : aes aes sse aesni\n"),
            ["aes"]
        );
    }

    #[test]
    fn facts_are_the_single_reads_of_one_parse() {
        for host in [
            "x86_64-epyc",
            "arm64-ampere",
            "ppc64le-power9",
            "s390x-z15",
            "pve-lvm",
        ] {
            let text = fixture(host);
            assert_eq!(
                facts(&text),
                CpuFacts {
                    processors: processors(&text),
                    model: model_name(&text),
                    crypto_flags: crypto_flags(&text),
                },
                "{host}"
            );
        }
    }

    #[test]
    fn processors_of_real_hosts() {
        assert_eq!(processors(&fixture("arm64-ampere")), 4);
        assert_eq!(processors(""), 0);
        assert_eq!(
            model_name(&fixture("ppc64le-power9")).as_deref(),
            Some("POWER9 (architected), altivec supported")
        );
    }

    #[test]
    fn sums_lowercase_and_mixed_case_keys() {
        let text = "processor\t: 0\nbogomips\t: 4800.00\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\n";
        assert_eq!(bogomips_sum(text), 4850.0);
    }

    #[test]
    fn ignores_lookalike_keys_and_garbage() {
        let text =
            "bogomips per cpu: 3241.00\nbogomips : abc\nbogomips\nbogomips: -5\nbogomips: NaN\n";
        assert_eq!(bogomips_sum(text), 0.0);
        assert_eq!(bogomips_sum(""), 0.0);
    }

    #[test]
    fn no_bogomips_prints_as_zero_not_minus_zero() {
        for text in ["", "processor : 0\n", "bogomips : -0\n"] {
            let sum = bogomips_sum(text);
            assert!(sum.is_sign_positive(), "{text:?}");
            assert_eq!(format!("{sum:.2}"), "0.00");
        }
    }
}
