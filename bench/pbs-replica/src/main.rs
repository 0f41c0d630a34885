//! `test_crypt_speed` of proxmox-backup-client's benchmark, replayed call
//! for call: the same buffer, the same library calls in the same order,
//! the same windows and the same arithmetic, printed as PBS logs them.
//!
//! What PBS does (proxmox-backup-client/src/benchmark.rs and the
//! pbs-datastore code it calls):
//! - a key from scrypt of "test" (N 65536, r 8, p 1, empty salt);
//! - the buffer: 1 MiB, byte j of word i is `(i >> 8j) & 0xff`;
//! - each test loops until a call ends past its window (1 s; compression
//!   3 s) and divides the bytes by the time read after the loop;
//! - SHA256: `openssl::sha::sha256(&buffer)`;
//! - compression: `zstd::stream::encode_all(&mut reader, 1)`;
//! - decompression: the clock starts, the buffer is compressed once, then
//!   `zstd::stream::decode_all` of it, counting the bytes it returns;
//! - AES256/GCM: `DataBlob::encrypt_benchmark` into a fresh `Vec`: a
//!   16-byte IV from getrandom(2), an OpenSSL crypter with an empty AAD,
//!   the buffer fed in pieces of 32 KiB less one block, finalize, get_tag;
//! - verify: the clock starts, `DataChunkBuilder::new(&buffer)
//!   .compress(true).build()` (SHA-256 digest; a blob: 8-byte magic, CRC32
//!   of what follows, `zstd::stream::copy_encode` level 1), then
//!   `verify_unencrypted`: `decode_all` of the blob after its header,
//!   SHA-256 of the result against the digest, and its length.
//!
//! Usage: `pbs-replica [SECONDS_SCALE]`: 1 (the default) is PBS's windows;
//! 0.5 halves them, as pveprobe's `--duration 1.5` does.

use std::io::Write;
use std::time::{Duration, Instant};

use openssl::symm::{Cipher, Crypter, Mode};

type Error = Box<dyn std::error::Error>;

/// PBS's COMPRESSED_BLOB_MAGIC_1_0, as PBS defines it: the first eight
/// bytes of SHA-256 of "Proxmox Backup zstd compressed blob v1.0".
fn compressed_blob_magic() -> [u8; 8] {
    let digest = openssl::sha::sha256(b"Proxmox Backup zstd compressed blob v1.0");
    let mut magic = [0u8; 8];
    magic.copy_from_slice(&digest[..8]);
    magic
}

/// The loop PBS writes five times: calls until one ends past `window`.
fn timed(window: Duration, mut call: impl FnMut() -> Result<usize, Error>) -> Result<f64, Error> {
    let start = Instant::now();
    let mut bytes = 0;
    loop {
        bytes += call()?;
        if start.elapsed().as_micros() > window.as_micros() {
            break;
        }
    }
    Ok(bytes as f64 / start.elapsed().as_secs_f64())
}

fn getrandom(buffer: &mut [u8]) -> Result<(), Error> {
    // SAFETY: the pointer and length are the buffer's.
    let n = unsafe { libc::getrandom(buffer.as_mut_ptr().cast(), buffer.len(), 0) };
    if n < 0 || n as usize != buffer.len() {
        return Err(std::io::Error::last_os_error().into());
    }
    Ok(())
}

/// `DataBlob::encrypt_to` with `CryptConfig::data_crypter`.
fn encrypt_to<W: Write>(key: &[u8; 32], data: &[u8], mut output: W) -> Result<(), Error> {
    let mut iv = [0u8; 16];
    getrandom(&mut iv)?;
    let mut tag = [0u8; 16];
    let cipher = Cipher::aes_256_gcm();
    let mut c = Crypter::new(cipher, Mode::Encrypt, key, Some(&iv))?;
    c.aad_update(b"")?;
    const BUFFER_SIZE: usize = 32 * 1024;
    let mut encr_buf = [0u8; BUFFER_SIZE];
    let max_encoder_input = BUFFER_SIZE - cipher.block_size();
    let mut start = 0;
    loop {
        let end = (start + max_encoder_input).min(data.len());
        if end > start {
            let count = c.update(&data[start..end], &mut encr_buf)?;
            output.write_all(&encr_buf[..count])?;
            start = end;
        } else {
            break;
        }
    }
    let rest = c.finalize(&mut encr_buf)?;
    if rest > 0 {
        output.write_all(&encr_buf[..rest])?;
    }
    output.flush()?;
    c.get_tag(&mut tag)?;
    Ok(())
}

/// `DataChunkBuilder::new(data).compress(true).build()` without a crypt
/// config: the digest and a compressed blob (as `DataBlob::encode`).
fn build_chunk(data: &[u8], magic: &[u8; 8]) -> Result<(Vec<u8>, [u8; 32]), Error> {
    let digest = openssl::sha::sha256(data);
    let max_data_len = data.len() + 12;
    let mut blob = Vec::with_capacity(max_data_len);
    blob.extend_from_slice(magic);
    blob.extend_from_slice(&[0; 4]);
    zstd::stream::copy_encode(data, &mut blob, 1)?;
    if blob.len() >= max_data_len {
        return Err("the buffer did not compress: PBS would store it uncompressed".into());
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&blob[12..]);
    let crc = hasher.finalize();
    blob[8..12].copy_from_slice(&crc.to_le_bytes());
    Ok((blob, digest))
}

/// `DataBlob::verify_unencrypted` of a compressed blob.
fn verify_unencrypted(blob: &[u8], expected_len: usize, digest: &[u8; 32]) -> Result<(), Error> {
    let mut reader = &blob[12..];
    let data = zstd::stream::decode_all(&mut reader)?;
    if &openssl::sha::sha256(&data) != digest {
        return Err("detected chunk with wrong digest.".into());
    }
    if data.len() != expected_len {
        return Err("detected chunk with wrong length".into());
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let scale: f64 = match std::env::args().nth(1) {
        Some(s) => s.parse()?,
        None => 1.0,
    };
    let window = |seconds: f64| Duration::from_secs_f64(seconds * scale);

    let mut key = [0u8; 32];
    openssl::pkcs5::scrypt(b"test", b"", 65536, 8, 1, 1025 * 1024 * 1024, &mut key)?;

    let mut random_data = vec![];
    for i in 0..256 * 1024 {
        for j in 0..4 {
            let byte = ((i >> (j << 3)) & 0xff) as u8;
            random_data.push(byte);
        }
    }
    assert_eq!(random_data.len(), 1024 * 1024);
    let len = random_data.len();

    let speed = timed(window(1.0), || {
        openssl::sha::sha256(&random_data);
        Ok(len)
    })?;
    println!("SHA256 speed: {:.2} MB/s", speed / 1_000_000.0);

    let speed = timed(window(3.0), || {
        let mut reader = &random_data[..];
        zstd::stream::encode_all(&mut reader, 1)?;
        Ok(len)
    })?;
    println!("Compression speed: {:.2} MB/s", speed / 1_000_000.0);

    // The clock starts before the buffer is compressed once.
    let start = Instant::now();
    let compressed_data = {
        let mut reader = &random_data[..];
        zstd::stream::encode_all(&mut reader, 1)?
    };
    let mut bytes = 0;
    loop {
        let mut reader = &compressed_data[..];
        bytes += zstd::stream::decode_all(&mut reader)?.len();
        if start.elapsed().as_micros() > window(1.0).as_micros() {
            break;
        }
    }
    let speed = bytes as f64 / start.elapsed().as_secs_f64();
    println!("Decompress speed: {:.2} MB/s", speed / 1_000_000.0);

    let speed = timed(window(1.0), || {
        let mut out = Vec::new();
        encrypt_to(&key, &random_data, &mut out)?;
        Ok(len)
    })?;
    println!("AES256/GCM speed: {:.2} MB/s", speed / 1_000_000.0);

    // The clock starts before the chunk is built (PBS's magic is a constant).
    let magic = compressed_blob_magic();
    let start = Instant::now();
    let (chunk, digest) = build_chunk(&random_data, &magic)?;
    let mut bytes = 0;
    loop {
        verify_unencrypted(&chunk, len, &digest)?;
        bytes += len;
        if start.elapsed().as_micros() > window(1.0).as_micros() {
            break;
        }
    }
    let speed = bytes as f64 / start.elapsed().as_secs_f64();
    println!("Verify speed: {:.2} MB/s", speed / 1_000_000.0);
    Ok(())
}
