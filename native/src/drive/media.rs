//! Reading a drive's blocks back after a purge, bypassing the page cache, and the verdict on a
//! sample of them.

use crate::error::{Error, Result};
use serde::Serialize;
use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Something whose blocks can be read: a block device opened with `O_DIRECT`, or a fake.
pub trait Media {
    /// Reads `buf.len()` bytes at `offset` (both multiples of the logical block size).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
}

/// A block device read with `O_DIRECT`, so what is read is what the drive returns now, not
/// what the page cache kept from before the purge.
pub struct DirectReader {
    file: File,
    path: String,
}

impl DirectReader {
    pub fn open(path: &Path) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .map_err(|e| {
                Error::io(
                    format!("opening {} to verify the purge failed", path.display()),
                    e,
                )
            })?;
        Ok(DirectReader {
            file,
            path: path.display().to_string(),
        })
    }
}

impl Media for DirectReader {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        // O_DIRECT needs an aligned buffer: read through a 4 KiB-aligned bounce buffer.
        let layout = std::alloc::Layout::from_size_align(buf.len().max(4096), 4096)
            .map_err(|e| Error::Internal(e.to_string()))?;
        // SAFETY: layout has non-zero size; the memory is freed below on every path.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        if p.is_null() {
            return Err(Error::Internal(
                "out of memory for a verification buffer".into(),
            ));
        }
        // SAFETY: p points to layout.size() >= buf.len() initialised bytes.
        let tmp = unsafe { std::slice::from_raw_parts_mut(p, buf.len()) };
        let r = self.file.read_exact_at(tmp, offset);
        buf.copy_from_slice(tmp);
        // SAFETY: allocated above with the same layout.
        unsafe { std::alloc::dealloc(p, layout) };
        r.map_err(|e| {
            Error::io(
                format!("reading back {} at byte {offset} failed", self.path),
                e,
            )
        })
    }
}

/// What a sample of blocks read back as.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verification {
    /// What the method promises: "zeros", "ones" (0xFF), "zeros or ones", or "unspecified".
    pub expected: String,
    pub blocks_read: u64,
    pub block_bytes: u32,
    pub blocks_matching: u64,
    /// Byte offsets of the first few blocks that did not match.
    pub mismatched_offsets: Vec<u64>,
    pub passed: bool,
}

/// Reads `samples` blocks of `block_bytes` spread evenly over `size_bytes` (first and last
/// included) and checks each is all `0x00` / all `0xFF` as `expected` allows.
pub fn verify_sample(
    media: &dyn Media,
    size_bytes: u64,
    block_bytes: u32,
    samples: u64,
    expected: &str,
) -> Result<Verification> {
    let bb = u64::from(block_bytes.max(512));
    let blocks = size_bytes / bb;
    if blocks == 0 {
        return Err(Error::InvalidValue(format!(
            "cannot verify a device of {size_bytes} bytes with {bb}-byte blocks; it holds no whole block"
        )));
    }
    let n = samples.clamp(1, blocks);
    let ok = |b: &[u8]| match expected {
        "zeros" => b.iter().all(|&x| x == 0),
        "ones" => b.iter().all(|&x| x == 0xff),
        "zeros or ones" => b.iter().all(|&x| x == 0) || b.iter().all(|&x| x == 0xff),
        _ => true,
    };
    let mut buf = vec![0u8; bb as usize];
    let mut matching = 0;
    let mut bad = vec![];
    for i in 0..n {
        let lba = if n == 1 {
            0
        } else {
            i * (blocks - 1) / (n - 1)
        };
        media.read_at(lba * bb, &mut buf)?;
        if ok(&buf) {
            matching += 1;
        } else if bad.len() < 8 {
            bad.push(lba * bb);
        }
    }
    Ok(Verification {
        expected: expected.into(),
        blocks_read: n,
        block_bytes: bb as u32,
        blocks_matching: matching,
        passed: matching == n && expected != "unspecified",
        mismatched_offsets: bad,
    })
}
