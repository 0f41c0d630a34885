//! `pveprobe record`'s shards: any bytes read as frames, never misread.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pveprobe_parse::recordframe::{
    self, FRAME_HEADER_LEN, FRAME_HEADER_LEN_V2, FRAME_MAGIC, MAX_PAYLOAD,
};

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
        // Either version, each written again as its own.
        let v1 = &data[f.offset..f.offset + 4] == FRAME_MAGIC;
        let header = if v1 { FRAME_HEADER_LEN } else { FRAME_HEADER_LEN_V2 };
        assert_eq!(f.payload.start, f.offset + header);
        let write = if v1 {
            recordframe::frame_v1
        } else {
            recordframe::frame
        };
        let again = write(f.time_us, f.summary, &data[f.payload.clone()]);
        assert_eq!(&again[..], &data[f.offset..f.payload.end]);
        last_end = f.payload.end;
    }
    assert!(s.good_end <= data.len());
    for d in &s.damage {
        assert!(d.bytes > 0 && d.offset + d.bytes <= data.len());
    }
});
