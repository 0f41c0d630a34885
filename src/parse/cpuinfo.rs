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

#[cfg(test)]
mod tests {
    use super::*;

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
