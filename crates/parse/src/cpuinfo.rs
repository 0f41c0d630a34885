//! `/proc/cpuinfo`: the BogoMIPS sum pveperf prints.

/// Sums every `bogomips : N` value, the key matched case-insensitively
/// (x86 writes `bogomips`, arm64 `BogoMIPS`). Architectures without such a
/// line (s390x, ppc64le) give 0.0, as pveperf prints.
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

/// The CPU model name as the kernel reports it, for reports and hints.
pub fn model_name(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| {
            let key = key.trim();
            key.eq_ignore_ascii_case("model name") || key == "cpu" || key == "Hardware"
        })
        .map(|(_, value)| value.trim().to_string())
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

/// The first processor's [`CRYPTO_FLAGS`], in `/proc/cpuinfo`'s order.
pub fn crypto_flags(cpuinfo: &str) -> Vec<String> {
    let Some(list) = cpuinfo
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| {
            let key = key.trim();
            key == "flags" || key.eq_ignore_ascii_case("features")
        })
        .map(|(_, value)| value)
    else {
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
        assert!(crypto_flags("vmx flags\t: aes\nflags aes\n").is_empty());
        assert_eq!(crypto_flags("flags : aes aes sse aesni\n"), ["aes"]);
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
