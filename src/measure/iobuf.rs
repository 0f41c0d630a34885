//! Buffers aligned for O_DIRECT, and fast incompressible data.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::ptr::NonNull;

use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise, mmap_anonymous, munmap};

/// A transparent huge page on x86-64, and the alignment of a
/// [`AlignedBuf::contiguous`] buffer.
pub const HUGE_PAGE: usize = 2 << 20;

/// A zeroed buffer aligned to at least 4096 bytes (and to its size, for
/// sizes up to 4096), as O_DIRECT asks: on the heap, or mapped in huge
/// pages ([`AlignedBuf::contiguous`]).
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
    backing: Backing,
}

enum Backing {
    Heap(Layout),
    /// Its own mapping of this many bytes from `ptr`.
    Mapped(usize),
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
        Self {
            ptr,
            len: layout.size(),
            backing: Backing::Heap(layout),
        }
    }

    /// A buffer in memory that is physically contiguous where the kernel
    /// can make it so: its own anonymous mapping, aligned to [`HUGE_PAGE`]
    /// and advised `MADV_HUGEPAGE`, so a transparent huge page backs each
    /// 2 MiB of it (with THP `madvise` or `always`; with `never`, 4 KiB
    /// pages as the heap's). For O_DIRECT blocks larger than a page: the
    /// block layer splits an I/O into segments of physically adjacent
    /// pages, and a 1 MiB block on scattered 4 KiB pages is 256 segments,
    /// over the 128 many devices take: split in two, and io_uring's
    /// non-blocking submission refuses a split and hands the I/O to a
    /// worker thread. On a loop device over RAM that cost 4.4x the
    /// process's CPU per 1 MiB write (83 µs against 19), and SEQ WRITE 1M
    /// QD8 moved with how the page allocator happened to hand out pages,
    /// 3,700 to 7,500 MiB/s in seven rounds (fio's default buffers alike;
    /// fio `--mem=mmaphuge` is as this).
    pub fn contiguous(size: usize) -> Self {
        let len = size.max(1).next_multiple_of(HUGE_PAGE);
        let reserve = NonZeroUsize::new(len + HUGE_PAGE).expect("non-zero");
        // SAFETY: a new private anonymous mapping, touching no other memory.
        let Ok(base) = (unsafe {
            mmap_anonymous(
                None,
                reserve,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE,
            )
        }) else {
            return Self::new(size);
        };
        let start = (base.as_ptr() as usize).next_multiple_of(HUGE_PAGE);
        let head = start - base.as_ptr() as usize;
        let tail = reserve.get() - head - len;
        // SAFETY: the head and tail lie inside the mapping just made and
        // outside [start, start + len), which is kept.
        unsafe {
            if head > 0 {
                let _ = munmap(base, head);
            }
            if tail > 0 {
                let _ = munmap(at(start + len), tail);
            }
            // THP disabled says EINVAL: the buffer is then on 4 KiB pages.
            let _ = madvise(at(start), len, MmapAdvise::MADV_HUGEPAGE);
        }
        Self {
            ptr: start as *mut u8,
            len: size.max(1),
            backing: Backing::Mapped(len),
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match self.backing {
            // SAFETY: allocated with this layout in `new`.
            Backing::Heap(layout) => unsafe { dealloc(self.ptr, layout) },
            // SAFETY: the mapping `contiguous` kept, whole.
            Backing::Mapped(len) => unsafe {
                let _ = munmap(at(self.ptr as usize), len);
            },
        }
    }
}

/// A mapping's address as nix takes it (never null: it lies in a mapping).
fn at(addr: usize) -> NonNull<c_void> {
    NonNull::new(addr as *mut c_void).expect("a mapped address")
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

    /// The mapping holding `addr`, from /proc/self/smaps: its first line
    /// and its VmFlags.
    fn mapping_of(addr: usize) -> Option<(String, String)> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut current: Option<(String, bool)> = None;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                current = Some((line.to_string(), (lo..hi).contains(&addr)));
            } else if let Some(flags) = line.strip_prefix("VmFlags:")
                && let Some((head, true)) = &current
            {
                return Some((head.clone(), flags.to_string()));
            }
        }
        None
    }

    #[test]
    fn a_contiguous_buffer_is_its_own_huge_page_mapping_gone_when_dropped() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|s| !s.contains("[never]"));
        for size in [1 << 20, 3 << 20] {
            let mut b = AlignedBuf::contiguous(size);
            let addr = b.as_mut_ptr() as usize;
            assert_eq!(addr % HUGE_PAGE, 0);
            assert_eq!(b.len(), size);
            assert!(b.as_slice().iter().all(|x| *x == 0));
            fill_random(b.as_mut_slice(), 7);
            let (head, flags) = mapping_of(addr).expect("the buffer is mapped");
            let (lo, hi) = head
                .split_whitespace()
                .next()
                .unwrap()
                .split_once('-')
                .unwrap();
            let (lo, hi) = (
                usize::from_str_radix(lo, 16).unwrap(),
                usize::from_str_radix(hi, 16).unwrap(),
            );
            assert_eq!(lo, addr, "the mapping starts at the buffer: {head}");
            assert_eq!(hi - lo, size.next_multiple_of(HUGE_PAGE), "{head}");
            if thp {
                assert!(
                    flags.split_whitespace().any(|f| f == "hg"),
                    "not advised MADV_HUGEPAGE: {flags}"
                );
            }
            drop(b);
            assert!(mapping_of(addr).is_none_or(|(h, _)| !h.starts_with(&format!("{addr:x}-"))));
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
