//! The CPU figures of `proxmox-backup-client benchmark`, done as PBS does
//! them (proxmox-backup's `proxmox-backup-client/src/benchmark.rs` and the
//! chunk code it calls), with the same libraries: OpenSSL (libssl3) for
//! SHA256 and AES-256-GCM, zstd (Debian's libzstd1) for compression.
//!
//! - The buffer: 1 MiB, word i (little-endian u32 bytes) being i.
//! - Each operation loops over the whole buffer until the first call that
//!   ends past its window (1 s, compression 3 s) and counts bytes in;
//!   speed is bytes over the time read after the loop.
//! - SHA256: `openssl::sha::sha256` of the buffer.
//! - ZSTD COMPRESS: `zstd::stream::encode_all(buffer, 1)`, a new encoder
//!   each call. ZSTD DECOMPRESS: `decode_all` of that compressed form (its
//!   window, as PBS's, includes compressing it once).
//! - AES-256-GCM: PBS's `DataBlob::encrypt_benchmark`: a random 16-byte IV
//!   from getrandom(2), a new OpenSSL crypter with an empty AAD, the buffer
//!   fed in pieces of 32 KiB less one block into a 32 KiB buffer appended
//!   to a fresh `Vec`, finalise, read the tag. PBS's key comes from scrypt
//!   of "test"; the speed does not depend on the key, so ours is fixed.
//! - VERIFY: PBS's `verify_unencrypted` of a compressed chunk: decompress
//!   the chunk's zstd stream (`decode_all`), SHA256 it, compare the digest
//!   and the length. Its window, as PBS's, includes building the chunk
//!   once (digest and compression).
//! - What a loop made (the compressed buffer, the chunk) stays alive until
//!   the last loop ends, as in PBS's function: it decides where later
//!   loops' outputs grow on the heap (see `measure`).
//!
//! `--cpu-threads N` runs each loop on N threads at once, started
//! together, each over the same (read-only) buffer.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use openssl::symm::{Cipher, Crypter, Mode};

use crate::error::ProbeError;
use crate::model::cpubench::{CpuBench, CpuOp, CpuOpFigure, CpuThroughput};
use crate::sys::interrupt::Interrupt;

/// The buffer's size.
pub const BUFFER_BYTES: usize = 1 << 20;

/// PBS's "pseudo random" buffer: byte j of word i is `(i >> 8j) & 0xff`.
pub fn buffer() -> Vec<u8> {
    (0..(BUFFER_BYTES / 4) as u32)
        .flat_map(u32::to_le_bytes)
        .collect()
}

/// What the loops work on, made before any window starts.
struct Workload {
    data: Vec<u8>,
    key: [u8; 32],
}

/// What one loop works on besides the buffer, made inside its window as
/// PBS makes it (PBS's clock starts before it compresses what it
/// decompresses and before it builds the chunk it verifies).
enum Input {
    Buffer,
    /// `encode_all(data, 1)`: what ZSTD DECOMPRESS decodes.
    Compressed(Vec<u8>),
    /// A compressed chunk's zstd stream (`copy_encode`, as
    /// `DataBlob::encode`) and the buffer's digest.
    Chunk(Vec<u8>, [u8; 32]),
}

impl Workload {
    fn new() -> Self {
        Workload {
            data: buffer(),
            key: [0x5a; 32],
        }
    }

    /// What `op`'s loop works on, made as PBS makes it.
    fn input(&self, op: CpuOp) -> Result<Input, ProbeError> {
        Ok(match op {
            CpuOp::Decompress => Input::Compressed(compress(&self.data)?),
            CpuOp::Verify => {
                let digest = openssl::sha::sha256(&self.data);
                let mut chunk = Vec::with_capacity(self.data.len());
                zstd::stream::copy_encode(&self.data[..], &mut chunk, 1)
                    .map_err(|e| ProbeError::io("zstd: compressing the chunk", e))?;
                Input::Chunk(chunk, digest)
            }
            _ => Input::Buffer,
        })
    }

    /// One call of `op` on `input`: the bytes it counts.
    fn call(&self, op: CpuOp, input: &Input) -> Result<usize, ProbeError> {
        match (op, input) {
            (CpuOp::Sha256, _) => {
                std::hint::black_box(openssl::sha::sha256(&self.data));
            }
            (CpuOp::Compress, _) => {
                std::hint::black_box(compress(&self.data)?);
            }
            (CpuOp::Decompress, Input::Compressed(c)) => return Ok(decompress(c)?.len()),
            (CpuOp::Aes256Gcm, _) => {
                std::hint::black_box(encrypt(&self.key, &self.data)?);
            }
            (CpuOp::Verify, Input::Chunk(chunk, digest)) => self.verify(chunk, digest)?,
            (CpuOp::Decompress | CpuOp::Verify, _) => {
                unreachable!("{op:?}'s input is made by Workload::input")
            }
        }
        Ok(self.data.len())
    }

    /// `verify_unencrypted`: decompress, check digest and length.
    fn verify(&self, chunk: &[u8], digest: &[u8; 32]) -> Result<(), ProbeError> {
        let data = decompress(chunk)?;
        if &openssl::sha::sha256(&data) != digest {
            return Err(ProbeError::Unavailable(
                "VERIFY: the chunk's digest differs after decompression".into(),
            ));
        }
        if data.len() != self.data.len() {
            return Err(ProbeError::Unavailable(format!(
                "VERIFY: the chunk decompressed to {} bytes, not {}",
                data.len(),
                self.data.len()
            )));
        }
        Ok(())
    }

    /// PBS's loop: calls until one ends past `window`, the clock started
    /// before the loop's input is made. The input is returned, not
    /// dropped: see `measure`.
    fn run(
        &self,
        op: CpuOp,
        window: Duration,
        interrupt: &Interrupt,
    ) -> Result<(CpuThroughput, Input), ProbeError> {
        let start = Instant::now();
        let input = self.input(op)?;
        let mut bytes = 0u64;
        loop {
            bytes += self.call(op, &input)? as u64;
            interrupt.check()?;
            if start.elapsed() > window {
                break;
            }
        }
        let elapsed = start.elapsed();
        Ok((CpuThroughput { bytes, elapsed }, input))
    }

    /// `threads` loops at once, started together.
    fn run_threads(
        &self,
        op: CpuOp,
        window: Duration,
        threads: u32,
        interrupt: &Interrupt,
    ) -> Result<Vec<CpuThroughput>, ProbeError> {
        let start = Barrier::new(threads as usize);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        self.run(op, window, interrupt).map(|(t, _)| t)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a CPU benchmark thread panicked"))
                .collect()
        })
    }
}

fn compress(data: &[u8]) -> Result<Vec<u8>, ProbeError> {
    zstd::stream::encode_all(data, 1).map_err(|e| ProbeError::io("zstd: compressing", e))
}

fn decompress(data: &[u8]) -> Result<Vec<u8>, ProbeError> {
    zstd::stream::decode_all(data).map_err(|e| ProbeError::io("zstd: decompressing", e))
}

fn openssl_error(what: &str, e: openssl::error::ErrorStack) -> ProbeError {
    ProbeError::Unavailable(format!("AES-256-GCM: {what}: {e}"))
}

/// 16 bytes from getrandom(2), as PBS takes each chunk's IV.
fn random_iv() -> Result<[u8; 16], ProbeError> {
    let mut iv = [0u8; 16];
    // SAFETY: the pointer and length are iv's; getrandom writes at most that.
    let n = unsafe { libc::getrandom(iv.as_mut_ptr().cast(), iv.len(), 0) };
    if n != iv.len() as isize {
        return Err(ProbeError::io("getrandom", std::io::Error::last_os_error()));
    }
    Ok(iv)
}

/// An encrypted chunk's parts.
#[derive(Debug)]
pub struct Encrypted {
    pub ciphertext: Vec<u8>,
    pub iv: [u8; 16],
    pub tag: [u8; 16],
}

/// PBS's `DataBlob::encrypt_to`.
pub fn encrypt(key: &[u8; 32], data: &[u8]) -> Result<Encrypted, ProbeError> {
    const BUFFER_SIZE: usize = 32 * 1024;
    let iv = random_iv()?;
    let cipher = Cipher::aes_256_gcm();
    let mut c = Crypter::new(cipher, Mode::Encrypt, key, Some(&iv))
        .map_err(|e| openssl_error("new crypter", e))?;
    c.aad_update(b"").map_err(|e| openssl_error("AAD", e))?;
    let mut out = Vec::new();
    let mut buf = [0u8; BUFFER_SIZE];
    for piece in data.chunks(BUFFER_SIZE - cipher.block_size()) {
        let n = c
            .update(piece, &mut buf)
            .map_err(|e| openssl_error("update", e))?;
        out.extend_from_slice(&buf[..n]);
    }
    let n = c
        .finalize(&mut buf)
        .map_err(|e| openssl_error("finalize", e))?;
    out.extend_from_slice(&buf[..n]);
    let mut tag = [0u8; 16];
    c.get_tag(&mut tag).map_err(|e| openssl_error("tag", e))?;
    Ok(Encrypted {
        ciphertext: out,
        iv,
        tag,
    })
}

/// Keeps the heap's memory in the process for the CPU loops. Each call
/// allocates its 1 MiB result (decompression, encryption) and frees it:
/// with glibc's default thresholds, where the probe's own buffers sit on
/// the heap decides whether that memory goes back to the kernel after
/// every call (brk down, brk up, 256 pages faulted in and zeroed again),
/// and the figure then measures the kernel's page zeroing, not the CPU
/// work: VERIFY was 0.70 of bench/pbs-replica's (a fresh process doing
/// PBS's calls, whose heap did not churn) with twice its brk calls and
/// 1.7 times its page faults, and 1.0 with the heap kept. Set once, for
/// the rest of the process (a probe run ends soon after).
fn keep_heap() {
    // SAFETY: mallopt only changes glibc's allocator parameters.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

/// `window` scaled as `--duration` scales pveperf's 3 s.
pub fn scaled_window(op: CpuOp, duration: Duration) -> Duration {
    op.pbs_window()
        .mul_f64(duration.as_secs_f64() / crate::model::PVEPERF_WINDOW.as_secs_f64())
}

/// Every operation in PBS's order, on one thread, then on `threads` at
/// once where given; `duration` scales PBS's windows (3 s: PBS's own).
pub fn measure(
    duration: Duration,
    threads: Option<u32>,
    interrupt: &Interrupt,
) -> Result<CpuBench, ProbeError> {
    keep_heap();
    let work = Workload::new();
    let mut bench = CpuBench::default();
    // PBS's `test_crypt_speed` keeps what it made (the compressed buffer,
    // the chunk) until it returns, and the figures depend on it: where
    // they sit on the heap decides whether a later loop's growing output
    // (AES-256-GCM's Vec, doubling to 2 MiB) is copied on its last growth
    // or grows in place, a 1 MiB memcpy per call. Dropped at the end.
    let mut kept = Vec::new();
    for op in CpuOp::ALL {
        let window = scaled_window(op, duration);
        let (single, input) = work.run(op, window, interrupt)?;
        kept.push(input);
        bench.ops.push(CpuOpFigure {
            op,
            window,
            single,
            threads: Vec::new(),
        });
    }
    if let Some(n) = threads {
        for figure in &mut bench.ops {
            figure.threads = work.run_threads(figure.op, figure.window, n, interrupt)?;
        }
    }
    Ok(bench)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn the_buffer_is_pbss() {
        let data = buffer();
        assert_eq!(data.len(), 1024 * 1024);
        assert_eq!(&data[..12], &[0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]);
        // Word 0x3ffff, the last: ff ff 03 00.
        assert_eq!(&data[data.len() - 4..], &[0xff, 0xff, 0x03, 0x00]);
        // Pinned: the same bytes as PBS's loop make, hashed by sha256sum.
        assert_eq!(
            hex(&openssl::sha::sha256(&data)),
            "21b9bf484e8bb6ca346d2cd113f24594cadb15c31c3e6ea4bd99897b1e728282"
        );
    }

    #[test]
    fn encryption_is_aes_256_gcm_that_decrypts_back() {
        let key = [7u8; 32];
        let data = buffer();
        let e = encrypt(&key, &data).unwrap();
        assert_eq!(e.ciphertext.len(), data.len(), "GCM adds no padding");
        assert_ne!(e.ciphertext, data);
        let plain = openssl::symm::decrypt_aead(
            Cipher::aes_256_gcm(),
            &key,
            Some(&e.iv),
            b"",
            &e.ciphertext,
            &e.tag,
        )
        .unwrap();
        assert_eq!(plain, data);
        assert_ne!(
            e.iv,
            encrypt(&key, &data).unwrap().iv,
            "a fresh IV each call"
        );
    }

    #[test]
    fn each_call_does_its_work_and_verify_checks() {
        let work = Workload::new();
        // About 1.5:1. PBS keeps a chunk compressed only when that is
        // shorter, so its VERIFY decompresses.
        let Input::Chunk(chunk, digest) = work.input(CpuOp::Verify).unwrap() else {
            panic!("VERIFY works on a chunk");
        };
        assert!(chunk.len() < work.data.len(), "the buffer compresses");
        let Input::Compressed(compressed) = work.input(CpuOp::Decompress).unwrap() else {
            panic!("ZSTD DECOMPRESS works on the compressed buffer");
        };
        assert_eq!(decompress(&compressed).unwrap(), work.data);
        for op in CpuOp::ALL {
            let input = work.input(op).unwrap();
            assert_eq!(work.call(op, &input).unwrap(), BUFFER_BYTES, "{op:?}");
        }
        let mut wrong = digest;
        wrong[0] ^= 1;
        assert!(
            work.call(CpuOp::Verify, &Input::Chunk(chunk, wrong))
                .is_err()
        );
    }

    #[test]
    fn a_loop_ends_after_its_window_and_threads_each_report() {
        let work = Workload::new();
        let interrupt = Interrupt::default();
        let window = Duration::from_millis(20);
        let (t, _) = work.run(CpuOp::Sha256, window, &interrupt).unwrap();
        assert!(t.elapsed > window && t.bytes >= BUFFER_BYTES as u64);
        assert_eq!(t.bytes % BUFFER_BYTES as u64, 0);
        let each = work
            .run_threads(CpuOp::Sha256, window, 3, &interrupt)
            .unwrap();
        assert_eq!(each.len(), 3);
        assert!(each.iter().all(|t| t.elapsed > window && t.bytes > 0));
        interrupt.raise(libc::SIGINT);
        assert!(matches!(
            work.run(CpuOp::Compress, window, &interrupt),
            Err(ProbeError::Interrupted(_))
        ));
    }

    #[test]
    fn windows_scale_with_duration() {
        let d = Duration::from_millis(300);
        assert_eq!(scaled_window(CpuOp::Sha256, d), Duration::from_millis(100));
        assert_eq!(
            scaled_window(CpuOp::Compress, d),
            Duration::from_millis(300)
        );
        assert_eq!(
            scaled_window(CpuOp::Compress, crate::model::PVEPERF_WINDOW),
            Duration::from_secs(3)
        );
    }
}
