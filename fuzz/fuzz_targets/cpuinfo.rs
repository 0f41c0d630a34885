//! /proc/cpuinfo: the BogoMIPS sum and the model name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::cpuinfo;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let sum = cpuinfo::bogomips_sum(&text);
    // What CPU BOGOMIPS prints: a finite, non-negative figure.
    assert!(!sum.is_nan(), "{sum}");
    assert!(sum.is_sign_positive(), "{sum}");
    if let Some(model) = cpuinfo::model_name(&text) {
        assert!(!model.is_empty() && !model.contains('\n'));
    }
});
