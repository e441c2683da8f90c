//! The one way flashback writes a file (captures, saves, datasets, replays, reports, figures).
//!
//! The rule, in one place:
//! 1. The destination is resolved once: its directory with every symlink resolved, and a
//!    symlink in the last component followed to what it names. The result must be absent or a
//!    regular file; device nodes, FIFOs, sockets and directories are refused in one sentence,
//!    and an existing file is replaced only with `overwrite`.
//! 2. The bytes go to a temporary created exclusively in the destination's directory:
//!    `O_TMPFILE` (nameless: a crash leaves nothing behind) where the file system supports it,
//!    else a random hidden name (`.NAME.<random>.tmp`) opened `O_CREAT|O_EXCL|O_NOFOLLOW`. Both
//!    are opened relative to the directory's descriptor, so a path swapped afterwards changes
//!    nothing, and created with mode 0644 less the umask.
//! 3. [`OutputFile::commit`] syncs the file, publishes it without replacing anything
//!    (`linkat` of the nameless file, or `renameat2(RENAME_NOREPLACE)`) unless `overwrite`
//!    (then a plain `rename`), and syncs the directory. Dropping an uncommitted
//!    [`OutputFile`] removes its temporary.
//! 4. Two flashback processes cannot write one output: an existing destination is opened and
//!    `flock`ed (exclusive, non-blocking) for the whole write and a second writer is refused.
//!    The lock lives on the destination itself rather than in a lock file beside it, so no
//!    lock file is ever left behind by a crash (the kernel drops a dead process's locks) and
//!    nothing else appears in the directory (a hive dataset stays clean). An absent
//!    destination has nothing to lock; two writers racing to create it are told apart by the
//!    no-replace publish: the second is refused and its temporary removed.
//!
//! A stream written in place (a capture streamed during a run, see [`open_stream`]) follows
//! the same checks, and holds the lock on its file for as long as it is open.
//!
//! `dest` resolves and checks a destination and holds its lock, `file` writes through a
//! temporary and publishes it; this module holds the helpers every writer shares.

mod dest;
mod file;
#[cfg(test)]
mod tests;

pub use dest::{check_output, resolve, Destination};
pub use file::{OutputFile, FORCE_NAMED_TEMPORARIES};

use crate::error::{Error, Result};
use dest::{cstr, errno, flock_exclusive, open_locked};
use file::MODE;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};

/// The error for a failed write of `path`: a full disk is one sentence that names the file
/// and says what was kept.
pub fn write_error(path: &Path, existed: bool, e: io::Error) -> Error {
    let kept = if existed {
        format!("the existing {} was kept unchanged", path.display())
    } else {
        "nothing was left there".to_string()
    };
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => Error::io(
            format!(
                "the disk holding {} is full, so it was not written ({kept}); free some space or write elsewhere",
                path.display()
            ),
            e,
        ),
        _ => Error::io(
            format!("could not write {} ({kept})", path.display()),
            e,
        ),
    }
}

/// Writes `data` to `path` through [`OutputFile`] (a small file written whole: a marker, a
/// sidecar); returns the resolved path.
pub fn write_file(path: &Path, data: &[u8], overwrite: bool) -> Result<PathBuf> {
    use std::io::Write;
    let mut o = OutputFile::create(path, overwrite)?;
    let existed = o.dest.existing.is_some();
    o.file()
        .write_all(data)
        .map_err(|e| write_error(path, existed, e))?;
    o.commit()
}

/// A file written in place as it grows (a capture streamed during a run): checked like any
/// output, created exclusively when absent, truncated only when `overwrite` allows it, and
/// locked for as long as the returned file is open, so a second run cannot stream into it.
pub fn open_stream(path: &Path, overwrite: bool) -> Result<(File, PathBuf)> {
    let dest = resolve(path, overwrite)?;
    let file = if dest.existing.is_some() {
        // Lock first, check identity, then truncate: a second writer never truncates a stream
        // that another run is writing.
        let f = open_locked(&dest, libc::O_RDWR)?;
        f.set_len(0)
            .map_err(|e| write_error(&dest.path, false, e))?;
        // SAFETY: valid fd; clear O_NONBLOCK (harmless on a regular file, but keep it plain).
        unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, 0) };
        f
    } else {
        let cname = cstr(&dest.name)?;
        let flags = libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY;
        // SAFETY: valid dir fd and NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                dest.dir.as_raw_fd(),
                cname.as_ptr(),
                flags | libc::O_CREAT | libc::O_EXCL,
                MODE,
            )
        };
        if fd < 0 {
            let e = errno();
            return Err(if e.raw_os_error() == Some(libc::EEXIST) {
                Error::Refused(format!(
                    "{} was created by another program while flashback was checking it; choose another name",
                    dest.path.display()
                ))
            } else {
                write_error(&dest.path, false, e)
            });
        }
        // SAFETY: fd was just returned by openat.
        let f = unsafe { File::from_raw_fd(fd) };
        flock_exclusive(&f, &dest.path)?;
        f
    };
    Ok((file, dest.path))
}

/// `(st_dev, st_ino)` of what `path` names (symlinks followed), if it exists.
pub fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Refuses an output that is the run's own target (the same file, compared by device and
/// inode, whatever the names or links): streaming there would overwrite what is measured.
pub fn check_not_target(output: &Path, target: &Path) -> Result<()> {
    match (identity(output), identity(target)) {
        (Some(a), Some(b)) if a == b => Err(Error::Refused(format!(
            "the capture file {} is the target {} itself; flashback will not write its capture over the file it is testing: give another capture file name",
            output.display(),
            target.display()
        ))),
        _ => Ok(()),
    }
}
