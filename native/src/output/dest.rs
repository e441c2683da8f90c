//! A destination resolved and checked once, and the lock on an existing one.

use crate::error::{Error, Result};
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A destination resolved and checked once: its directory (open), its file name there, and
/// whether a file exists under that name (with its identity).
pub struct Destination {
    /// The directory that will hold the file, opened (every symlink resolved).
    pub(super) dir: OwnedFd,
    /// The file's name in `dir`.
    pub(super) name: OsString,
    /// The resolved path, for messages.
    pub(super) path: PathBuf,
    /// `(st_dev, st_ino)` of the regular file already there, if any.
    pub(super) existing: Option<(u64, u64)>,
}

impl Destination {
    /// The resolved path (symlinks followed).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when a regular file already exists there (and `overwrite` allowed it).
    pub fn exists(&self) -> bool {
        self.existing.is_some()
    }
}

pub(super) fn cstr(s: &OsStr) -> Result<CString> {
    CString::new(s.as_bytes())
        .map_err(|_| Error::InvalidValue(format!("{s:?} contains a NUL byte; give another name")))
}

pub(super) fn errno() -> io::Error {
    io::Error::last_os_error()
}

fn lstat_at(dir: &OwnedFd, name: &CString) -> io::Result<libc::stat> {
    // SAFETY: libc::stat is plain data: all zero bytes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd, NUL-terminated name, st is a valid out-pointer.
    let r = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r == 0 {
        Ok(st)
    } else {
        Err(errno())
    }
}

fn fstat(fd: i32) -> io::Result<libc::stat> {
    // SAFETY: libc::stat is plain data: all zero bytes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid out-pointer; a bad fd only makes fstat fail.
    if unsafe { libc::fstat(fd, &mut st) } == 0 {
        Ok(st)
    } else {
        Err(errno())
    }
}

/// What a file type is called in a refusal, or `None` for a regular file.
fn refused_kind(mode: libc::mode_t) -> Option<&'static str> {
    match mode & libc::S_IFMT {
        libc::S_IFREG => None,
        libc::S_IFBLK => Some("a block device"),
        libc::S_IFCHR => Some("a character device"),
        libc::S_IFIFO => Some("a FIFO (named pipe)"),
        libc::S_IFSOCK => Some("a socket"),
        libc::S_IFDIR => Some("a directory"),
        libc::S_IFLNK => Some("a symbolic link"),
        _ => Some("not a regular file"),
    }
}

/// The refusal for an output that is not a regular file.
fn not_regular(shown: &Path, resolved: &Path, kind: &str) -> Error {
    let via = if shown != resolved {
        format!(" (it leads to {})", resolved.display())
    } else {
        String::new()
    };
    Error::Refused(format!(
        "flashback will not write its output to {}{via}: it is {kind}, not a regular file; give a file name in a directory",
        shown.display()
    ))
}

/// Opens a directory (symlinks followed) for `*at` calls and `fsync`.
pub(super) fn open_dir(dir: &Path) -> Result<OwnedFd> {
    let c = cstr(dir.as_os_str())?;
    // SAFETY: NUL-terminated path; the returned fd is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(Error::io(
            format!("could not open the directory {}", dir.display()),
            errno(),
        ));
    }
    // SAFETY: fd was just returned by open and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Resolves `path` once and checks it may be written: see the module documentation.
///
/// Errors: [`Error::Refused`] for a device node, FIFO, socket, directory, a dangling or looping
/// symlink, or an existing file without `overwrite`; [`Error::Io`] when the directory cannot be
/// opened.
pub fn resolve(path: &Path, overwrite: bool) -> Result<Destination> {
    if path.as_os_str().is_empty() {
        return Err(Error::InvalidValue(
            "the output path is empty; give a file name".into(),
        ));
    }
    let abs = std::path::absolute(path)
        .map_err(|e| Error::io(format!("could not resolve {}", path.display()), e))?;
    // Follow a symlink in the last component (to any depth) to the path it names.
    let target = match std::fs::symlink_metadata(&abs) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(&abs) {
            Ok(p) => p,
            Err(_) => {
                return Err(Error::Refused(format!(
                    "flashback will not write its output through {}: it is a symbolic link to a path that does not exist (or a loop of links); remove the link or give the real file name",
                    path.display()
                )))
            }
        },
        _ => abs.clone(),
    };
    let (parent, name) = match (target.parent(), target.file_name()) {
        (Some(p), Some(n)) => (p.to_path_buf(), n.to_os_string()),
        _ => return Err(not_regular(path, &target, "a directory")),
    };
    let parent = std::fs::canonicalize(&parent).map_err(|_| {
        Error::Refused(format!(
            "cannot write {}: the directory {} does not exist; create it first",
            path.display(),
            parent.display()
        ))
    })?;
    let resolved = parent.join(&name);
    let dir = open_dir(&parent).map_err(|e| match e {
        Error::Io { source, .. } if source.raw_os_error() == Some(libc::ENOTDIR) => {
            not_regular(path, &resolved, "inside something that is not a directory")
        }
        e => e,
    })?;
    let cname = cstr(&name)?;
    let existing = match lstat_at(&dir, &cname) {
        Ok(st) => {
            if let Some(kind) = refused_kind(st.st_mode) {
                return Err(not_regular(path, &resolved, kind));
            }
            if !overwrite {
                return Err(Error::Refused(format!(
                    "{} already exists; flashback will not replace it: choose another name or pass --overwrite (overwrite=True)",
                    path.display()
                )));
            }
            Some((st.st_dev, st.st_ino))
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
        Err(e) => {
            return Err(Error::io(
                format!("could not examine {}", resolved.display()),
                e,
            ))
        }
    };
    Ok(Destination {
        dir,
        name,
        path: resolved,
        existing,
    })
}

/// Checks, before any long work, that `path` could be written (see [`resolve`]) and that its
/// directory accepts new files; returns the resolved path. Nothing is created.
pub fn check_output(path: &Path, overwrite: bool) -> Result<PathBuf> {
    let d = resolve(path, overwrite)?;
    // SAFETY: valid fd; "." relative to it.
    let ok =
        unsafe { libc::faccessat(d.dir.as_raw_fd(), c".".as_ptr(), libc::W_OK | libc::X_OK, 0) };
    if ok != 0 {
        let e = errno();
        return Err(Error::Refused(format!(
            "cannot write {}: the directory {} is not writable ({e})",
            path.display(),
            d.path.parent().unwrap_or(Path::new("/")).display()
        )));
    }
    if d.existing.is_some() {
        // Fails now, not hours later, when another flashback process holds it.
        lock_existing(&d)?;
    }
    Ok(d.path)
}

/// Opens the existing destination and takes the exclusive lock on it; refuses when another
/// process holds it or the name no longer leads to the file that was checked.
pub(super) fn lock_existing(d: &Destination) -> Result<Option<File>> {
    if d.existing.is_none() {
        return Ok(None);
    }
    open_locked(d, libc::O_RDONLY).map(Some)
}

/// Opens the existing destination (`access`: `O_RDONLY` or `O_RDWR`, never following a link,
/// non-blocking), checks it is still the regular file that was checked and takes the
/// exclusive lock on it.
pub(super) fn open_locked(d: &Destination, access: libc::c_int) -> Result<File> {
    let cname = cstr(&d.name)?;
    // SAFETY: valid dir fd and NUL-terminated name; the fd is owned below.
    let fd = unsafe {
        libc::openat(
            d.dir.as_raw_fd(),
            cname.as_ptr(),
            access | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
        )
    };
    if fd < 0 {
        return Err(changed(d));
    }
    // SAFETY: fd was just returned by openat.
    let f = unsafe { File::from_raw_fd(fd) };
    let st = fstat(f.as_raw_fd())
        .map_err(|e| Error::io(format!("could not examine {}", d.path.display()), e))?;
    if Some((st.st_dev, st.st_ino)) != d.existing || refused_kind(st.st_mode).is_some() {
        return Err(changed(d));
    }
    flock_exclusive(&f, &d.path)?;
    Ok(f)
}

fn changed(d: &Destination) -> Error {
    Error::Refused(format!(
        "{} changed while flashback was checking it (another program replaced it); nothing was written; try again",
        d.path.display()
    ))
}

pub(super) fn flock_exclusive(f: &File, path: &Path) -> Result<()> {
    // SAFETY: valid fd.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = errno();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Err(Error::Refused(format!(
                "{} is being written by another flashback process; wait for it to finish or choose another name",
                path.display()
            )));
        }
        return Err(Error::io(format!("could not lock {}", path.display()), e));
    }
    Ok(())
}
