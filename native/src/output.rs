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
    dir: OwnedFd,
    /// The file's name in `dir`.
    name: OsString,
    /// The resolved path, for messages.
    path: PathBuf,
    /// `(st_dev, st_ino)` of the regular file already there, if any.
    existing: Option<(u64, u64)>,
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

fn cstr(s: &OsStr) -> Result<CString> {
    CString::new(s.as_bytes())
        .map_err(|_| Error::InvalidValue(format!("{s:?} contains a NUL byte; give another name")))
}

fn errno() -> io::Error {
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
fn open_dir(dir: &Path) -> Result<OwnedFd> {
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
fn lock_existing(d: &Destination) -> Result<Option<File>> {
    if d.existing.is_none() {
        return Ok(None);
    }
    open_locked(d, libc::O_RDONLY).map(Some)
}

/// Opens the existing destination (`access`: `O_RDONLY` or `O_RDWR`, never following a link,
/// non-blocking), checks it is still the regular file that was checked and takes the
/// exclusive lock on it.
fn open_locked(d: &Destination, access: libc::c_int) -> Result<File> {
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

fn flock_exclusive(f: &File, path: &Path) -> Result<()> {
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

fn random_tmp_name(name: &OsStr) -> OsString {
    let mut s = OsString::from(".");
    s.push(name);
    s.push(format!(".{:016x}.tmp", rand::random::<u64>()));
    s
}

/// How the temporary was made.
enum Tmp {
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
    dest: Destination,
    file: File,
    tmp: Tmp,
    /// Where a named temporary lives: the destination's directory, or a staging directory on
    /// the same file system (a dataset's writer keeps every name out of its tree).
    tmp_dir: Option<OwnedFd>,
    overwrite: bool,
    /// The destination's lock (an existing destination opened and `flock`ed).
    _lock: Option<File>,
    done: bool,
}

/// Mode of every file flashback writes (less the umask).
const MODE: libc::c_uint = 0o644;

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

    fn cleanup(&mut self) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_and_publishes_without_leftovers() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.bin");
        let mut o = OutputFile::create(&p, false).unwrap();
        o.file().write_all(b"hello").unwrap();
        assert_eq!(names(d.path()), Vec::<String>::new());
        o.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"hello");
        assert_eq!(names(d.path()), vec!["x.bin"]);
    }

    #[test]
    fn named_fallback_leaves_nothing_on_abort_or_drop() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.bin");
        let dest = resolve(&p, false).unwrap();
        let name = random_tmp_name(&dest.name);
        assert!(name.to_string_lossy().starts_with(".x.bin."));
        let mut o = OutputFile::create(&p, false).unwrap();
        o.cleanup();
        o.tmp = Tmp::Named(name.clone());
        std::fs::write(d.path().join(&name), b"x").unwrap();
        drop(o);
        assert_eq!(names(d.path()), Vec::<String>::new());
    }

    #[test]
    fn refuses_existing_without_overwrite_and_replaces_with_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.bin");
        std::fs::write(&p, b"old").unwrap();
        let e = OutputFile::create(&p, false).err().unwrap();
        assert!(matches!(e, Error::Refused(_)), "{e}");
        assert!(e.to_string().contains("already exists"));
        let mut o = OutputFile::create(&p, true).unwrap();
        o.file().write_all(b"new").unwrap();
        o.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(names(d.path()), vec!["x.bin"]);
    }

    #[test]
    fn refuses_fifo_directory_and_symlink_to_fifo() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: c is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let link = d.path().join("link.arrow");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for (p, what) in [
            (&fifo, "FIFO"),
            (&link, "FIFO"),
            (&d.path().to_path_buf(), "directory"),
        ] {
            let e = OutputFile::create(p, true).err().unwrap();
            assert!(matches!(e, Error::Refused(_)), "{e}");
            assert!(e.to_string().contains(what), "{e}");
        }
        let e = OutputFile::create(Path::new("/dev/null"), true)
            .err()
            .unwrap();
        assert!(e.to_string().contains("character device"), "{e}");
    }

    #[test]
    fn second_writer_is_refused_while_the_first_holds_the_output() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.arrow");
        let (_f, _) = open_stream(&p, false).unwrap();
        let e = open_stream(&p, true).err().unwrap();
        assert!(e.to_string().contains("another flashback process"), "{e}");
        let e = OutputFile::create(&p, true).err().unwrap();
        assert!(e.to_string().contains("another flashback process"), "{e}");
    }

    #[test]
    fn racing_creator_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.bin");
        let mut o = OutputFile::create(&p, false).unwrap();
        o.file().write_all(b"mine").unwrap();
        std::fs::write(&p, b"theirs").unwrap();
        let e = o.commit().err().unwrap();
        assert!(e.to_string().contains("kept that file"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        assert_eq!(names(d.path()), vec!["x.bin"]);
    }
}
