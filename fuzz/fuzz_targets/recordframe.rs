//! `pveprobe record`'s shards: any bytes read as frames, never misread.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::recordframe::{self, FRAME_HEADER_LEN, MAX_PAYLOAD};

fuzz_target!(|data: &[u8]| {
    let s = recordframe::read(data);
    // Deterministic (compared as text: a summary's NaN is never equal to
    // itself).
    assert_eq!(format!("{:?}", recordframe::read(data)), format!("{s:?}"));
    let mut last_end = 0;
    for f in &s.frames {
        // In order, apart, inside the input, and each frame written again
        // is the same bytes.
        assert!(f.offset >= last_end);
        assert!(f.payload.end <= data.len());
        assert!(f.payload.len() <= MAX_PAYLOAD);
        assert_eq!(f.payload.start, f.offset + FRAME_HEADER_LEN);
        let again = recordframe::frame(f.time_us, f.summary, &data[f.payload.clone()]);
        assert_eq!(&again[..], &data[f.offset..f.payload.end]);
        last_end = f.payload.end;
    }
    assert!(s.good_end <= data.len());
    for d in &s.damage {
        assert!(d.bytes > 0 && d.offset + d.bytes <= data.len());
    }
});
