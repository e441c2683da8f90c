//! Opening a block device: the confirmation and the in-use guard, then an exclusive open when
//! it may be written.

use super::{Kind, Opened};
use crate::engine::safety;
use crate::error::{Error, Result};
use crate::target::OpenOptions;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
const BLKSSZGET: libc::c_ulong = 0x1268;
const BLKPBSZGET: libc::c_ulong = 0x127b;

fn ioctl_u64(f: &File, req: libc::c_ulong) -> io::Result<u64> {
    let mut v: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), req as _, &mut v as *mut u64) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v)
}

fn ioctl_int(f: &File, req: libc::c_ulong) -> io::Result<u64> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKSSZGET / BLKPBSZGET write one int through the pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), req as _, &mut v as *mut libc::c_int) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v.max(0) as u64)
}

fn open_device(path: &Path, write: bool, excl: bool) -> io::Result<File> {
    let mut o = fs::OpenOptions::new();
    o.read(true).write(write);
    if excl {
        o.custom_flags(libc::O_EXCL);
    }
    o.open(path)
}

pub(super) fn open_block(given: &Path, rdev: u64, opts: &OpenOptions) -> Result<Opened> {
    let spec = given.display();
    let path =
        fs::canonicalize(given).map_err(|e| Error::io(format!("could not resolve {spec}"), e))?;
    let shown = path.display();
    let writable = match safety::confirm(&path, rdev, opts.destroy.as_deref()) {
        Err(msg) if opts.destroy.is_some() => return Err(Error::Refused(msg)),
        Err(msg) => Err(msg),
        Ok(()) => {
            if let Some(reason) = safety::in_use_reason(&path, rdev) {
                return Err(Error::Refused(reason));
            }
            Ok(())
        }
    };
    // Writable: exclusive open, so the kernel refuses if anything (a mount in another
    // namespace, a holder, another exclusive opener) claims the device, and nothing can claim
    // it while flashback holds it. Read-only otherwise: the kernel then refuses every write.
    let file = match open_device(&path, writable.is_ok(), writable.is_ok()) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            return Err(Error::Refused(format!(
                "refusing to write to {shown}: the kernel reports it busy (mounted, held or opened exclusively elsewhere); free it first (nothing was written)"
            )))
        }
        Err(e) => return Err(Error::io(format!("could not open {shown}"), e)),
    };
    let size = ioctl_u64(&file, BLKGETSIZE64)
        .map_err(|e| Error::io(format!("could not read the size of {shown}"), e))?;
    let lbs = ioctl_int(&file, BLKSSZGET).unwrap_or(512).max(512);
    let pbs = ioctl_int(&file, BLKPBSZGET).unwrap_or(lbs).max(lbs);
    Ok(Opened {
        file,
        path,
        kind: Kind::Block,
        size,
        writable,
        created: false,
        dev: rdev,
        logical_block: lbs,
        physical_block: pbs,
    })
}
