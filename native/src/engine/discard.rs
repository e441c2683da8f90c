//! Discard (TRIM/unmap): BLKDISCARD on a block device, hole punching on a regular file.

use super::open::Kind;
use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;

const BLKDISCARD: libc::c_ulong = 0x1277;

/// Largest range handed to the kernel in one call, so a huge discard does not sit in one
/// uninterruptible syscall for minutes.
const CHUNK: u64 = 1 << 30;

/// Discards `[offset, offset + len)` of `file` in one call: `BLKDISCARD` for a block device,
/// `fallocate(PUNCH_HOLE | KEEP_SIZE)` for a regular file (the size never changes).
#[inline]
pub fn discard_range(file: &File, kind: Kind, offset: u64, len: u64) -> io::Result<()> {
    let fd = file.as_raw_fd();
    let r = match kind {
        Kind::Block => {
            let range: [u64; 2] = [offset, len];
            // SAFETY: BLKDISCARD reads two u64 (start, length) through the pointer.
            unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
        }
        Kind::File => {
            // SAFETY: plain syscall on an owned descriptor.
            unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    offset as libc::off_t,
                    len as libc::off_t,
                )
            }
        }
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Discards a large span in chunks, aligned inwards to `align` bytes (the logical block size,
/// which BLKDISCARD requires). Returns the bytes actually discarded.
pub fn discard_span(file: &File, kind: Kind, offset: u64, len: u64, align: u64) -> io::Result<u64> {
    let align = align.max(1);
    let start = offset.div_ceil(align) * align;
    let end = (offset + len) / align * align;
    let mut pos = start;
    while pos < end {
        let n = (end - pos).min(CHUNK);
        discard_range(file, kind, pos, n)?;
        pos += n;
    }
    Ok(end.saturating_sub(start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn punching_a_file_frees_blocks_and_reads_zeros() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.bin");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        f.write_all(&vec![0xabu8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let before = f.metadata().unwrap().blocks();
        let n = discard_span(&f, Kind::File, 4096, (1 << 20) - 8192, 4096).unwrap();
        assert_eq!(n, (1 << 20) - 8192);
        let md = f.metadata().unwrap();
        assert_eq!(md.len(), 1 << 20, "size is kept");
        if before > 0 {
            assert!(md.blocks() < before / 2, "{} -> {}", before, md.blocks());
        }
        let mut buf = vec![0u8; 1 << 20];
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_exact(&mut buf).unwrap();
        assert!(buf[..4096].iter().all(|&b| b == 0xab));
        assert!(buf[4096..(1 << 20) - 4096].iter().all(|&b| b == 0));
        assert!(buf[(1 << 20) - 4096..].iter().all(|&b| b == 0xab));
    }

    #[test]
    fn alignment_rounds_inwards() {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(d.path().join("g")).unwrap();
        f.set_len(65536).unwrap();
        assert_eq!(discard_span(&f, Kind::File, 100, 9000, 4096).unwrap(), 4096);
        assert_eq!(discard_span(&f, Kind::File, 100, 100, 4096).unwrap(), 0);
    }
}
