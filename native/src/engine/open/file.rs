//! Opening a regular file: created, locked, marked and preallocated when missing; an existing
//! one opened once without following links, checked on that descriptor.

use super::mark::{has_mark, set_mark, sidecar_of};
use super::{hooks, Kind, Opened};
use crate::engine::{safety, sysfs};
use crate::error::{Error, Result};
use crate::target::OpenOptions;
use std::ffi::CString;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Opens `path`, which was resolved once (canonical), without following any symbolic link on
/// the way (`openat2` with `RESOLVE_NO_SYMLINKS`; `O_NOFOLLOW` on the last component where
/// the kernel has no `openat2`): a link swapped in after the path was resolved is an error,
/// never followed.
fn open_resolved(path: &Path, write: bool) -> io::Result<File> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::FromRawFd;
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let acc = if write { libc::O_RDWR } else { libc::O_RDONLY };
    let flags = acc | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY;
    // SAFETY: open_how is plain data; all-zero is valid and then filled in.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: openat2 reads the path and `how` (of the size given) and returns a new fd.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd >= 0 {
        // SAFETY: a fresh descriptor this function owns.
        return Ok(unsafe { File::from_raw_fd(fd as i32) });
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOSYS) {
        return Err(e);
    }
    fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
}

/// A new descriptor on the very file `file` is open on (through `/proc/self/fd`, never by
/// its path), for writing when `write`, without the original's flags (e.g. `O_DIRECT`).
pub fn reopen(file: &File, write: bool) -> io::Result<File> {
    let again = fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_CLOEXEC)
        .open(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let (a, b) = (file.metadata()?, again.metadata()?);
    if (a.dev(), a.ino()) != (b.dev(), b.ino()) {
        return Err(io::Error::other("the file changed while being reopened"));
    }
    Ok(again)
}

/// Takes the run's advisory lock on a file target: exclusive for a run that may write, shared
/// for one that only reads. Refused in one sentence when another run holds it.
fn lock(file: &File, path: &Path, write: bool) -> Result<()> {
    let op = if write { libc::LOCK_EX } else { libc::LOCK_SH };
    // SAFETY: flock on an owned descriptor; the lock lives as long as the descriptor.
    let r = unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Err(Error::Refused(format!(
            "refusing to run on {}: another run or open target (of flashback, or a program holding a lock on it) is using it; wait for it to finish, close it, or give another target (nothing was written)",
            path.display()
        )));
    }
    Err(Error::io(format!("could not lock {}", path.display()), e))
}

/// Bytes an unprivileged writer can still allocate on the filesystem holding `file`.
fn free_bytes(file: &File) -> Option<u64> {
    // SAFETY: fstatvfs fills the struct it is given.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid out-pointer; a bad fd only makes fstatvfs fail.
    let r = unsafe { libc::fstatvfs(file.as_raw_fd(), &mut st) };
    (r == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Allocates `[0, size)` of `file` (preallocating real blocks when the filesystem can).
///
/// The file holds `keep` bytes of its own before the call. When the filesystem has too little
/// room, nothing is allocated; when allocation fails part way, the file is cut back to `keep`
/// bytes so the space is returned. `after` says in the error what became of the file.
fn preallocate(file: &File, path: &Path, size: u64, keep: u64, after: &str) -> Result<()> {
    let shown = path.display();
    let allocated = file.metadata().map(|m| m.blocks() * 512).unwrap_or(0);
    if let Some(free) = free_bytes(file) {
        let need = size.saturating_sub(allocated.max(keep));
        if need > free {
            return Err(Error::Target(format!(
                "{shown} needs {need} more bytes to hold {size} bytes but its filesystem has {free} bytes free; give a smaller size or another filesystem ({after})"
            )));
        }
    }
    // SAFETY: plain syscall on an owned descriptor.
    let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
        return file.set_len(size).map_err(|e| {
            let _ = file.set_len(keep);
            Error::io(
                format!("could not size {shown} to {size} bytes ({after})"),
                e,
            )
        });
    }
    // Give back whatever was allocated before the failure.
    let _ = file.set_len(keep);
    Err(Error::io(
        format!("could not preallocate {size} bytes for {shown} ({after})"),
        e,
    ))
}

pub(super) fn create(given: &Path, opts: &OpenOptions) -> Result<Opened> {
    let spec = given.display();
    // Under /dev (but not the /dev/shm tmpfs) a missing path is a device typo, never a file.
    if given.starts_with("/dev") && !given.starts_with("/dev/shm") {
        return Err(Error::Target(format!(
            "{spec} does not exist; give an existing block device"
        )));
    }
    let Some(size) = opts.create_size else {
        return Err(Error::Target(format!(
            "{spec} does not exist; give the workload a size (size=...) so flashback can create it"
        )));
    };
    if size == 0 {
        return Err(Error::Target(format!(
            "{spec} would be created empty; give a positive size"
        )));
    }
    // The directory resolved once; the file created in it exclusively, never through a link.
    let (Some(name), Some(parent)) = (given.file_name(), given.parent()) else {
        return Err(Error::Target(format!(
            "{spec} names no file; give a file path (created if missing) or a block device"
        )));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let dir = fs::canonicalize(parent)
        .map_err(|e| Error::io(format!("could not resolve the directory of {spec}"), e))?;
    let path = dir.join(name);
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| Error::io(format!("could not create {spec}"), e))?;
    let remove = |file: File| {
        drop(file);
        let _ = fs::remove_file(&path);
        let _ = fs::remove_file(sidecar_of(&path));
    };
    // Locked at once, marked next: from here on the file is flashback's, and removed again if
    // it cannot be allocated (no file is left behind, no space kept).
    if let Err(e) = lock(&file, &path, true)
        .and_then(|()| set_mark(&file, &path))
        .and_then(|()| preallocate(&file, &path, size, 0, "the new file was removed"))
    {
        remove(file);
        return Err(e);
    }
    finish_file(file, path, true, Ok(()))
}

/// Opens an existing regular file once: the path resolved once and opened without following
/// links; the mark, the identity and the guard checked on that descriptor; every write made
/// through it (or through a reopening of that very descriptor), under the run's lock.
pub(super) fn open_existing_file(given: &Path, opts: &OpenOptions) -> Result<Opened> {
    let spec = given.display();
    let path =
        fs::canonicalize(given).map_err(|e| Error::io(format!("could not resolve {spec}"), e))?;
    let shown = path.display();
    hooks::run("resolved", &path);
    let changed = || {
        Error::Refused(format!(
            "{shown} changed while flashback was opening it (replaced by a link or another file); nothing was written, try again"
        ))
    };
    let probe = open_resolved(&path, false).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => changed(),
        _ => Error::io(format!("could not open {shown}"), e),
    })?;
    let md = probe
        .metadata()
        .map_err(|e| Error::io(format!("could not stat {shown}"), e))?;
    if !md.is_file() {
        return Err(changed());
    }
    let created = has_mark(&probe, &path);
    let mut writable = if created || opts.overwrite {
        Ok(())
    } else {
        Err(format!(
            "{shown} is a file flashback did not create; pass overwrite=True (--overwrite) to let flashback write over it (nothing was written)"
        ))
    };
    hooks::run("checked", &path);
    if writable.is_ok() {
        if let Some(why) = safety::file_in_use_reason(&path, &probe) {
            writable = Err(why);
        }
    }
    let file = match &writable {
        Ok(()) => {
            reopen(&probe, true).map_err(|e| Error::io(format!("could not open {shown}"), e))?
        }
        Err(_) => probe,
    };
    lock(&file, &path, writable.is_ok())?;
    if let (Ok(()), Some(want)) = (&writable, opts.create_size) {
        let have = file.metadata().map(|m| m.len()).unwrap_or(0);
        if want > have {
            preallocate(
                &file,
                &path,
                want,
                have,
                &format!("the file was left at its size of {have} bytes"),
            )?;
        }
    }
    finish_file(file, path, created, writable)
}

fn finish_file(
    file: File,
    path: PathBuf,
    created: bool,
    writable: std::result::Result<(), String>,
) -> Result<Opened> {
    let md = file
        .metadata()
        .map_err(|e| Error::io(format!("could not stat {}", path.display()), e))?;
    let dev = md.dev();
    let (lbs, pbs) = match sysfs::dir_of(dev) {
        Some(d) => {
            let q = sysfs::disk_dir(&d).join("queue");
            let r = |n: &str| {
                fs::read_to_string(q.join(n))
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
            };
            (
                r("logical_block_size").unwrap_or(512),
                r("physical_block_size").unwrap_or(4096),
            )
        }
        None => (512, md.blksize().max(512)),
    };
    Ok(Opened {
        file,
        path,
        kind: Kind::File,
        size: md.len(),
        writable,
        created,
        dev,
        logical_block: lbs,
        physical_block: pbs,
    })
}
