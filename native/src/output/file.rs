//! A file written through a temporary in the destination's directory and published whole.

use super::dest::{cstr, errno, lock_existing, open_dir, resolve, Destination};
use super::write_error;
use crate::error::{Error, Result};
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub(super) fn random_tmp_name(name: &OsStr) -> OsString {
    let mut s = OsString::from(".");
    s.push(name);
    s.push(format!(".{:016x}.tmp", rand::random::<u64>()));
    s
}

/// How the temporary was made.
pub(super) enum Tmp {
    /// `O_TMPFILE`: no name until published.
    Anonymous,
    /// A hidden random name in the destination directory.
    Named(OsString),
}

/// While set, temporaries are always named (never `O_TMPFILE`): the test suite uses it to
/// exercise the fallback taken on file systems without `O_TMPFILE`.
pub static FORCE_NAMED_TEMPORARIES: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// A file being written: a temporary in the destination's directory, published by
/// [`OutputFile::commit`], removed when dropped uncommitted.
pub struct OutputFile {
    pub(super) dest: Destination,
    file: File,
    pub(super) tmp: Tmp,
    /// Where a named temporary lives: the destination's directory, or a staging directory on
    /// the same file system (a dataset's writer keeps every name out of its tree).
    tmp_dir: Option<OwnedFd>,
    overwrite: bool,
    /// The destination's lock (an existing destination opened and `flock`ed).
    _lock: Option<File>,
    done: bool,
}

/// Mode of every file flashback writes (less the umask).
pub(super) const MODE: libc::c_uint = 0o644;

/// Whether the nameless temporary can be published: `linkat(AT_EMPTY_PATH)` needs
/// CAP_DAC_READ_SEARCH, otherwise the `/proc/self/fd` path is linked instead.
fn can_link_anonymous() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() == 0 };
    root || Path::new("/proc/self/fd").is_dir()
}

impl OutputFile {
    /// Starts writing `path` (see the module documentation for what is refused).
    pub fn create(path: &Path, overwrite: bool) -> Result<Self> {
        Self::create_staged(path, overwrite, None)
    }

    /// As [`OutputFile::create`]; where a named temporary is needed (no `O_TMPFILE`), it is
    /// made in `staging` (a directory on the same file system) instead of beside `path`, so
    /// no name ever appears in the destination's directory.
    pub fn create_staged(path: &Path, overwrite: bool, staging: Option<&Path>) -> Result<Self> {
        let dest = resolve(path, overwrite)?;
        let lock = lock_existing(&dest)?;
        let tmp_dir = match staging {
            Some(s) => Some(open_dir(s)?),
            None => None,
        };
        let (file, tmp) = Self::temporary(&dest, tmp_dir.as_ref())?;
        Ok(OutputFile {
            dest,
            file,
            tmp,
            tmp_dir,
            overwrite,
            _lock: lock,
            done: false,
        })
    }

    fn tmp_dirfd(&self) -> i32 {
        self.tmp_dir.as_ref().unwrap_or(&self.dest.dir).as_raw_fd()
    }

    fn temporary(dest: &Destination, staging: Option<&OwnedFd>) -> Result<(File, Tmp)> {
        let dirfd = dest.dir.as_raw_fd();
        let oserr = |e: io::Error| {
            Error::io(
                format!(
                    "could not create a temporary file in {} to write {}",
                    dest.path.parent().unwrap_or(Path::new("/")).display(),
                    dest.path.display()
                ),
                e,
            )
        };
        if can_link_anonymous()
            && !FORCE_NAMED_TEMPORARIES.load(std::sync::atomic::Ordering::Relaxed)
        {
            // SAFETY: valid dir fd, "." path.
            let fd = unsafe {
                libc::openat(
                    dirfd,
                    c".".as_ptr(),
                    libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC,
                    MODE,
                )
            };
            if fd >= 0 {
                // SAFETY: fd was just returned by openat.
                return Ok((unsafe { File::from_raw_fd(fd) }, Tmp::Anonymous));
            }
            let e = errno();
            match e.raw_os_error() {
                Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL) => {}
                _ => return Err(oserr(e)),
            }
        }
        let tmp_dirfd = staging.unwrap_or(&dest.dir).as_raw_fd();
        loop {
            let name = random_tmp_name(&dest.name);
            let c = cstr(&name)?;
            // SAFETY: valid dir fd and NUL-terminated name.
            let fd = unsafe {
                libc::openat(
                    tmp_dirfd,
                    c.as_ptr(),
                    libc::O_CREAT
                        | libc::O_EXCL
                        | libc::O_NOFOLLOW
                        | libc::O_RDWR
                        | libc::O_CLOEXEC
                        | libc::O_NOCTTY,
                    MODE,
                )
            };
            if fd >= 0 {
                // SAFETY: fd was just returned by openat.
                return Ok((unsafe { File::from_raw_fd(fd) }, Tmp::Named(name)));
            }
            let e = errno();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(oserr(e));
            }
        }
    }

    /// The temporary file to write into.
    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// The temporary's descriptor (for writers that take one, e.g. Python's `os.fdopen`).
    pub fn raw_fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    /// The resolved destination.
    pub fn path(&self) -> &Path {
        &self.dest.path
    }

    /// Syncs the file, publishes it under the destination's name and syncs the directory.
    /// Returns the resolved path. On error the temporary is removed and the destination is as
    /// it was (what was kept is named in the message).
    pub fn commit(mut self) -> Result<PathBuf> {
        let path = self.dest.path.clone();
        if let Err(e) = self.file.sync_all() {
            return Err(write_error(&path, self.dest.existing.is_some(), e));
        }
        self.publish()?;
        self.done = true;
        // SAFETY: valid dir fd.
        if unsafe { libc::fsync(self.dest.dir.as_raw_fd()) } != 0 {
            let e = errno();
            return Err(Error::io(
                format!(
                    "{} was written but its directory could not be synced",
                    path.display()
                ),
                e,
            ));
        }
        Ok(path)
    }

    fn publish(&mut self) -> Result<()> {
        let dirfd = self.dest.dir.as_raw_fd();
        let cname = cstr(&self.dest.name)?;
        // Give a nameless temporary a name first: the destination itself when nothing may be
        // replaced (linkat never replaces), a hidden random one to rename from otherwise.
        if let Tmp::Anonymous = self.tmp {
            let name = if self.overwrite {
                random_tmp_name(&self.dest.name)
            } else {
                self.dest.name.clone()
            };
            let c = cstr(&name)?;
            // The hidden name is only ever given in the destination's directory when the
            // nameless file is linked for a replacing rename; a staged writer uses staging.
            let at = if self.overwrite {
                self.tmp_dirfd()
            } else {
                dirfd
            };
            self.link_anonymous(at, &c)
                .map_err(|e| self.publish_error(e))?;
            if !self.overwrite {
                return Ok(());
            }
            self.tmp = Tmp::Named(name);
        }
        let Tmp::Named(tmp) = &self.tmp else {
            unreachable!()
        };
        let ctmp = cstr(tmp)?;
        let tdir = self.tmp_dirfd();
        let r = if self.overwrite {
            // SAFETY: valid fds and NUL-terminated names.
            unsafe { libc::renameat(tdir, ctmp.as_ptr(), dirfd, cname.as_ptr()) }
        } else {
            // SAFETY: as above.
            let r = unsafe {
                libc::renameat2(
                    tdir,
                    ctmp.as_ptr(),
                    dirfd,
                    cname.as_ptr(),
                    libc::RENAME_NOREPLACE,
                )
            };
            if r != 0 && errno().raw_os_error() == Some(libc::EINVAL) {
                // A file system without RENAME_NOREPLACE: link (never replaces), then unlink.
                // SAFETY: as above.
                let l = unsafe { libc::linkat(tdir, ctmp.as_ptr(), dirfd, cname.as_ptr(), 0) };
                if l == 0 {
                    // SAFETY: as above.
                    unsafe { libc::unlinkat(tdir, ctmp.as_ptr(), 0) };
                }
                l
            } else {
                r
            }
        };
        if r != 0 {
            return Err(self.publish_error(errno()));
        }
        self.tmp = Tmp::Anonymous; // nothing left to remove
        Ok(())
    }

    fn link_anonymous(&self, dirfd: i32, name: &CString) -> io::Result<()> {
        // SAFETY: valid fds, empty path with AT_EMPTY_PATH.
        let r = unsafe {
            libc::linkat(
                self.file.as_raw_fd(),
                c"".as_ptr(),
                dirfd,
                name.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = errno();
        if e.raw_os_error() != Some(libc::ENOENT) && e.raw_os_error() != Some(libc::EPERM) {
            return Err(e);
        }
        let proc = CString::new(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
            .expect("a formatted number holds no NUL");
        // SAFETY: NUL-terminated paths.
        let r = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc.as_ptr(),
                dirfd,
                name.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(errno())
        }
    }

    fn publish_error(&self, e: io::Error) -> Error {
        if e.raw_os_error() == Some(libc::EEXIST) {
            Error::Refused(format!(
                "{} was created by another program while flashback was writing it; flashback kept that file and discarded its own",
                self.dest.path.display()
            ))
        } else {
            write_error(&self.dest.path, self.dest.existing.is_some(), e)
        }
    }

    /// Discards the temporary; the destination is untouched.
    pub fn abort(mut self) {
        self.cleanup();
        self.done = true;
    }

    pub(super) fn cleanup(&mut self) {
        if let Tmp::Named(n) = &self.tmp {
            if let Ok(c) = CString::new(n.as_bytes()) {
                // SAFETY: valid dir fd and NUL-terminated name.
                unsafe { libc::unlinkat(self.tmp_dirfd(), c.as_ptr(), 0) };
            }
        }
        self.tmp = Tmp::Anonymous;
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.done {
            self.cleanup();
        }
    }
}
