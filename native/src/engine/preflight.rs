//! What a run checks and settles before anything is set up: the span, sizes and alignment
//! ([`check`]), discard support, the descriptor's direct-I/O flag and the engine.

use super::open::{Kind, Opened};
use super::{sysfs, uring};
use crate::error::{Error, Result};
use crate::workload::{EngineKind, Workload};
use std::os::unix::io::AsRawFd;

/// Largest single I/O.
const MAX_BS: u64 = 1 << 30;
/// Largest buffer memory of a run (iodepth × bs × jobs).
const MAX_BUFFERS: u64 = 8 << 30;

/// The engine a run uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Engine {
    IoUring,
    Psync,
}

impl Engine {
    pub(super) fn name(self) -> &'static str {
        match self {
            Engine::IoUring => "io_uring",
            Engine::Psync => "psync",
        }
    }
}

/// Refuses discards on a block device whose queue reports no discard support.
pub fn check_discard(t: &Opened) -> Result<()> {
    if t.kind == Kind::Block && sysfs::discard_max_bytes(t.dev) == Some(0) {
        return Err(Error::Target(format!(
            "{} does not support discard (TRIM); use a device that does, or a write workload",
            t.path.display()
        )));
    }
    Ok(())
}

/// Turns O_DIRECT on or off on the target's descriptor, and O_NOATIME on where allowed (reads
/// then skip the access-time check and update; fio leaves it, but it is pure overhead here).
pub(super) fn set_direct(t: &Opened, direct: bool) -> Result<()> {
    let fd = t.file.as_raw_fd();
    // SAFETY: fcntl on an owned descriptor.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(Error::io(
            format!("could not read the flags of {}", t.path.display()),
            std::io::Error::last_os_error(),
        ));
    }
    let want = if direct {
        flags | libc::O_DIRECT
    } else {
        flags & !libc::O_DIRECT
    };
    // SAFETY: as above. O_NOATIME needs the file's owner or CAP_FOWNER: without, no change.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, want | libc::O_NOATIME) } == 0 {
        return Ok(());
    }
    // SAFETY: as above.
    if want != flags && unsafe { libc::fcntl(fd, libc::F_SETFL, want) } < 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::InvalidValue(format!(
            "the filesystem holding {} refuses direct I/O ({e}); use direct=false",
            t.path.display()
        )));
    }
    Ok(())
}

/// Checks span, sizes and alignment; returns `(offset, length)` of the span.
pub(super) fn check(t: &Opened, w: &Workload) -> Result<(u64, u64)> {
    let shown = t.path.display();
    if w.offset >= t.size {
        return Err(Error::InvalidValue(format!(
            "offset={} lies beyond the end of {shown} ({} bytes); use a smaller offset",
            w.offset, t.size
        )));
    }
    let len = w.size.unwrap_or(t.size - w.offset);
    let end = w.offset.checked_add(len);
    if end.is_none_or(|end| end > t.size) {
        let end = end.map_or("more than 2^64".to_string(), |e| e.to_string());
        return Err(Error::InvalidValue(format!(
            "offset + size = {end} bytes runs past the end of {shown} ({} bytes); use a smaller size or offset",
            t.size
        )));
    }
    if len / w.bs < w.jobs as u64 {
        return Err(Error::InvalidValue(format!(
            "the span of {len} bytes holds fewer than jobs={} blocks of bs={}; use a larger size or fewer jobs",
            w.jobs, w.bs
        )));
    }
    if w.bs > MAX_BS {
        return Err(Error::InvalidValue(format!(
            "bs={} is larger than 1 GiB; use a smaller block size",
            w.bs
        )));
    }
    let depth = if w.engine == EngineKind::Psync {
        1
    } else {
        w.iodepth as u64
    };
    let buffers = u128::from(depth) * u128::from(w.bs) * u128::from(w.jobs);
    if buffers > u128::from(MAX_BUFFERS) {
        return Err(Error::InvalidValue(format!(
            "iodepth × bs × jobs = {buffers} bytes of buffers is more than 8 GiB; lower iodepth, bs or jobs"
        )));
    }
    let lbs = t.logical_block;
    if w.direct && (!w.bs.is_multiple_of(lbs) || !w.offset.is_multiple_of(lbs)) {
        return Err(Error::InvalidValue(format!(
            "direct I/O on {shown} needs bs and offset in multiples of its {lbs}-byte logical blocks (bs={}, offset={}); align them or use direct=false",
            w.bs, w.offset
        )));
    }
    Ok((w.offset, len))
}

/// The engine to use, and a note when `auto` fell back to psync.
pub(super) fn select_engine(w: &Workload) -> Result<(Engine, Option<String>)> {
    match w.engine {
        EngineKind::Psync => Ok((Engine::Psync, None)),
        EngineKind::IoUring => match uring::build_ring(2) {
            Ok(_) => Ok((Engine::IoUring, None)),
            Err(e) => Err(Error::InvalidValue(format!(
                "io_uring is not available here ({e}); use engine=psync or engine=auto"
            ))),
        },
        EngineKind::Auto => match uring::build_ring(2) {
            Ok(_) => Ok((Engine::IoUring, None)),
            Err(e) => Ok((
                Engine::Psync,
                Some(format!("io_uring unavailable ({e}); fell back to psync")),
            )),
        },
    }
}
