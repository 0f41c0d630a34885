//! Heap buffers aligned for O_DIRECT, and fast incompressible data.

use std::alloc::{Layout, alloc_zeroed, dealloc};

/// A zeroed heap buffer aligned to at least 4096 bytes (and to its size,
/// for sizes up to 4096), as O_DIRECT asks.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is plain memory owned by this value.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(size: usize) -> Self {
        let align = size.clamp(512, 4096).next_power_of_two();
        let layout = Layout::from_size_align(size.max(1), align).expect("valid buffer layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory");
        Self { ptr, layout }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in `new`.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Fills `buf` with pseudo-random bytes (xorshift64*: fast, and nothing a
/// compressor such as lz4 or zstd can shrink).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned() {
        for size in [512, 4096, 65536, 1 << 20] {
            let mut b = AlignedBuf::new(size);
            assert_eq!(b.as_mut_ptr() as usize % 4096.min(size), 0);
            assert_eq!(b.len(), size);
            assert!(b.as_slice().iter().all(|x| *x == 0));
        }
    }

    #[test]
    fn random_data_does_not_repeat() {
        let mut buf = vec![0u8; 1 << 16];
        fill_random(&mut buf, 42);
        let distinct: std::collections::BTreeSet<&[u8]> = buf.chunks(8).collect();
        assert_eq!(distinct.len(), buf.len() / 8);
        let zeros = buf.iter().filter(|b| **b == 0).count();
        assert!(
            zeros < buf.len() / 100,
            "about 1/256 of bytes are zero, not {zeros}"
        );
    }
}
