//! Laying out never-written parts of a file before it is read, as fio does.
//!
//! A freshly created (preallocated) file, or a sparse one, has extents that were never written:
//! the filesystem answers reads of them with zeros without touching the drive, so a read
//! benchmark measures the filesystem's zero-fill instead of the drive. Before a
//! workload that reads a regular file, the never-written ranges of its span — what
//! `SEEK_HOLE`/`SEEK_DATA` report as holes, which on ext4 and XFS includes preallocated but
//! unwritten extents — are written once with incompressible data. A file flashback may not
//! write is refused with one sentence instead. Filesystems that report preallocated extents as
//! data (tmpfs) are read as they are.

use super::open::Opened;
use crate::error::{Error, Result};
use crate::run::Observer;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

const CHUNK: usize = 1 << 20;

/// The never-written ranges `(offset, len)` of `[offset, offset + len)` of `file`.
pub fn holes(file: &File, offset: u64, len: u64) -> io::Result<Vec<(u64, u64)>> {
    let end = offset + len;
    let fd = file.as_raw_fd();
    let seek = |at: u64, whence: libc::c_int| -> io::Result<Option<u64>> {
        // SAFETY: lseek on an owned descriptor; SEEK_DATA/SEEK_HOLE do not move data.
        let r = unsafe { libc::lseek(fd, at as libc::off_t, whence) };
        if r >= 0 {
            return Ok(Some(r as u64));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None), // no data at or after `at`
            _ => Err(e),
        }
    };
    let mut out = vec![];
    let mut at = offset;
    while at < end {
        let data = seek(at, libc::SEEK_DATA)?.unwrap_or(end).min(end);
        if data > at {
            out.push((at, data - at));
        }
        if data >= end {
            break;
        }
        at = seek(data, libc::SEEK_HOLE)?.unwrap_or(end).min(end);
    }
    Ok(out)
}

/// Writes the never-written ranges of `[offset, offset + len)` of the file target `t` with
/// incompressible data and syncs them. Returns the bytes written (0 when there were none).
/// Stops early, returning what it wrote, if the observer asks to stop (Ctrl-C).
///
/// Errors: [`Error::Refused`] when the file has never-written ranges but may not be written.
pub fn lay_out(t: &Opened, offset: u64, len: u64, obs: &mut dyn Observer) -> Result<u64> {
    let shown = t.path.display();
    let gaps = holes(&t.file, offset, len)
        .map_err(|e| Error::io(format!("could not map the written extents of {shown}"), e))?;
    let total: u64 = gaps.iter().map(|g| g.1).sum();
    if total == 0 {
        return Ok(0);
    }
    if let Err(why) = &t.writable {
        return Err(Error::Refused(format!(
            "{shown} has {total} bytes in the read span that were never written, and reading them measures nothing (the filesystem returns zeros without touching the drive); write them first, or let flashback lay them out ({why})"
        )));
    }
    // a second, buffered descriptor: the run's own may be O_DIRECT
    // (a reopening of the run's own file, never a lookup of its path)
    let f = super::open::reopen(&t.file, true)
        .map_err(|e| Error::io(format!("could not open {shown} to lay it out"), e))?;
    let mut buf = vec![0u8; CHUNK];
    let mut x: u64 = crate::rng::PHI ^ offset;
    let mut done = 0u64;
    'gaps: for (start, n) in gaps {
        let mut at = start;
        while at < start + n {
            if obs.should_stop() {
                break 'gaps;
            }
            let k = ((start + n - at) as usize).min(CHUNK);
            for w in buf[..k].chunks_mut(8) {
                // xorshift64*: incompressible, cheap
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
                w.copy_from_slice(&v[..w.len()]);
            }
            f.write_all_at(&buf[..k], at)
                .map_err(|e| Error::io(format!("could not lay out {shown} at byte {at}"), e))?;
            at += k as u64;
            done += k as u64;
        }
    }
    f.sync_data()
        .map_err(|e| Error::io(format!("could not sync {shown} after laying it out"), e))?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_of_a_sparse_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.bin");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        f.set_len(8 << 20).unwrap();
        f.write_all_at(&vec![1u8; 1 << 20], 2 << 20).unwrap();
        f.sync_all().unwrap();
        let h = holes(&f, 0, 8 << 20).unwrap();
        // filesystems without SEEK_HOLE report the whole file as data
        if h.is_empty() {
            return;
        }
        assert_eq!(h, vec![(0, 2 << 20), (3 << 20, 5 << 20)]);
        assert_eq!(holes(&f, 2 << 20, 1 << 20).unwrap(), vec![]);
        assert_eq!(
            holes(&f, (2 << 20) + 4096, 2 << 20).unwrap(),
            vec![(3 << 20, (1 << 20) + 4096)]
        );
    }
}
