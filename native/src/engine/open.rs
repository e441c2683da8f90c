//! Opening a real target: a regular file (created and preallocated when missing, and marked as
//! flashback's own) or a block device. Whether the target may be written is decided here, once,
//! and a target that may not be written is opened read-only so the kernel enforces it too.

use super::{safety, sysfs};
use crate::error::{Error, Result};
use crate::target::OpenOptions;
use std::ffi::CString;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The extended attribute marking a file flashback created.
pub const MARK_XATTR: &str = "user.flashback.created";

/// What kind of real target this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Block,
}

/// An opened real target.
pub struct Opened {
    pub file: File,
    /// The path as resolved (symlinks followed).
    pub path: PathBuf,
    pub kind: Kind,
    pub size: u64,
    /// `Ok` when writes are allowed, else the one-sentence refusal.
    pub writable: std::result::Result<(), String>,
    /// For files: flashback created it (now or earlier).
    pub created: bool,
    /// Device number of the block device (block) or of the device holding the file (file).
    pub dev: u64,
    pub logical_block: u64,
    pub physical_block: u64,
}

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

fn sidecar_of(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.flashback-created"))
}

fn identity(md: &fs::Metadata) -> String {
    format!("{}:{}", md.dev(), md.ino())
}

/// True when `file` (at `path`) carries flashback's creation mark: the extended attribute, or,
/// where the filesystem has no user xattrs, a sidecar file naming the same inode.
pub fn has_mark(file: &File, path: &Path) -> bool {
    let name = CString::new(MARK_XATTR).expect("no NUL in the xattr name");
    let mut buf = [0u8; 64];
    // SAFETY: reads at most buf.len() bytes into buf.
    let n = unsafe {
        libc::fgetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n >= 0 {
        return true;
    }
    let Ok(md) = file.metadata() else {
        return false;
    };
    fs::read_to_string(sidecar_of(path)).is_ok_and(|s| s.trim() == identity(&md))
}

/// Marks `file` (at `path`) as created by flashback.
pub fn set_mark(file: &File, path: &Path) -> Result<()> {
    let name = CString::new(MARK_XATTR).expect("no NUL in the xattr name");
    let val = b"1";
    // SAFETY: passes a valid buffer of val.len() bytes.
    let r = unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            val.as_ptr().cast(),
            val.len(),
            0,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let md = file
        .metadata()
        .map_err(|e| Error::io(format!("could not stat {}", path.display()), e))?;
    let side = sidecar_of(path);
    crate::output::write_file(&side, identity(&md).as_bytes(), true).map(|_| ())
}

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

/// Test hooks at the points where a path could be swapped under flashback: after the path
/// was resolved, and after the mark was checked.
#[cfg(test)]
pub mod hooks {
    use std::cell::RefCell;
    use std::path::Path;

    type Hook = Box<dyn Fn(&str, &Path)>;
    thread_local! {
        pub static AT: RefCell<Option<Hook>> = const { RefCell::new(None) };
    }

    pub fn run(stage: &str, path: &Path) {
        AT.with(|h| {
            if let Some(f) = h.borrow().as_ref() {
                f(stage, path)
            }
        });
    }
}

#[cfg(not(test))]
mod hooks {
    #[inline(always)]
    pub fn run(_stage: &str, _path: &std::path::Path) {}
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

fn open_device(path: &Path, write: bool, excl: bool) -> io::Result<File> {
    let mut o = fs::OpenOptions::new();
    o.read(true).write(write);
    if excl {
        o.custom_flags(libc::O_EXCL);
    }
    o.open(path)
}

/// Opens `spec` as a regular file or block device under the safety rules.
pub fn open(spec: &str, opts: &OpenOptions) -> Result<Opened> {
    let given = Path::new(spec);
    match fs::metadata(given) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => create(given, opts),
        Err(e) => Err(Error::io(format!("could not inspect {spec}"), e)),
        Ok(md) if md.file_type().is_block_device() => open_block(given, md.rdev(), opts),
        Ok(md) if md.is_file() => open_existing_file(given, opts),
        Ok(md) if md.is_dir() => Err(Error::Target(format!(
            "{spec} is a directory; give a file path (created if missing) or a block device"
        ))),
        Ok(_) => Err(Error::Target(format!(
            "{spec} is neither a regular file nor a block device; give a file path or /dev/... block device"
        ))),
    }
}

fn create(given: &Path, opts: &OpenOptions) -> Result<Opened> {
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
fn open_existing_file(given: &Path, opts: &OpenOptions) -> Result<Opened> {
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

fn open_block(given: &Path, rdev: u64, opts: &OpenOptions) -> Result<Opened> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(size: Option<u64>) -> OpenOptions {
        OpenOptions {
            create_size: size,
            ..Default::default()
        }
    }

    #[test]
    fn creates_marks_and_preallocates() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.bin");
        let o = open(p.to_str().unwrap(), &opts(Some(1 << 20))).unwrap();
        assert_eq!(o.kind, Kind::File);
        assert_eq!(o.size, 1 << 20);
        assert!(o.created && o.writable.is_ok());
        drop(o);
        // reopened later: still ours
        let o = open(p.to_str().unwrap(), &opts(None)).unwrap();
        assert!(o.created && o.writable.is_ok());
    }

    #[test]
    fn foreign_file_is_read_only_unless_overwrite() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("foreign.bin");
        fs::write(&p, vec![7u8; 8192]).unwrap();
        let o = open(p.to_str().unwrap(), &opts(Some(1 << 20))).unwrap();
        let msg = o.writable.clone().unwrap_err();
        assert!(
            msg.contains("did not create") && msg.contains("overwrite"),
            "{msg}"
        );
        assert_eq!(o.size, 8192, "a foreign file is never grown");
        drop(o); // (a run still holding it would refuse the next one)
        let o = open(
            p.to_str().unwrap(),
            &OpenOptions {
                overwrite: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(o.writable.is_ok() && !o.created);
    }

    #[test]
    fn missing_file_without_size_and_directories_are_target_errors() {
        let d = tempfile::tempdir().unwrap();
        let e = open(d.path().join("nope").to_str().unwrap(), &opts(None))
            .err()
            .unwrap();
        assert!(matches!(e, Error::Target(_)), "{e}");
        let e = open(d.path().to_str().unwrap(), &opts(None)).err().unwrap();
        assert!(e.to_string().contains("directory"), "{e}");
    }

    /// Issue 23 item 4: the mark was checked on one open and the writes went through another
    /// open of the path; a link swapped in between overwrote a foreign file. The swap is made
    /// deterministically at each point between resolving and writing: the foreign file is
    /// never opened for writing.
    #[test]
    fn a_link_swapped_in_while_opening_never_reaches_a_foreign_file() {
        use std::io::Write;
        for stage in ["resolved", "checked"] {
            let d = tempfile::tempdir().unwrap();
            let ours = d.path().join("t.bin");
            let foreign = d.path().join("foreign.bin");
            fs::write(&foreign, b"foreign data").unwrap();
            drop(open(ours.to_str().unwrap(), &opts(Some(1 << 16))).unwrap());
            let (o2, f2) = (ours.clone(), foreign.clone());
            hooks::AT.with(|h| {
                *h.borrow_mut() = Some(Box::new(move |at, _| {
                    if at == stage {
                        fs::rename(&o2, o2.with_extension("moved")).unwrap();
                        std::os::unix::fs::symlink(&f2, &o2).unwrap();
                    }
                }))
            });
            let r = open(ours.to_str().unwrap(), &opts(None));
            hooks::AT.with(|h| *h.borrow_mut() = None);
            match (stage, r) {
                // swapped before the open: the link is not followed
                ("resolved", Err(e)) => {
                    assert!(matches!(e, Error::Refused(_)), "{e}");
                    assert!(e.to_string().contains("changed while"), "{e}");
                }
                // swapped after the mark was checked: the writes reach the marked file only
                ("checked", Ok(mut o)) => {
                    assert!(o.writable.is_ok());
                    o.file.write_all(b"XXXX").unwrap();
                    let moved = fs::read(ours.with_extension("moved")).unwrap();
                    assert_eq!(&moved[..4], b"XXXX");
                }
                (s, r) => panic!("stage {s}: {:?}", r.err()),
            }
            assert_eq!(
                fs::read(&foreign).unwrap(),
                b"foreign data",
                "stage {stage}"
            );
        }
    }

    #[test]
    fn a_second_run_on_the_same_file_is_refused_while_the_first_holds_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.bin");
        let first = open(p.to_str().unwrap(), &opts(Some(1 << 16))).unwrap();
        let e = open(p.to_str().unwrap(), &opts(None)).err().unwrap();
        assert!(matches!(e, Error::Refused(_)), "{e}");
        assert!(e.to_string().contains("another run"), "{e}");
        drop(first);
        assert!(open(p.to_str().unwrap(), &opts(None)).is_ok());
        // a foreign file is opened read-only: readers share it
        let f = d.path().join("f.bin");
        fs::write(&f, vec![1u8; 8192]).unwrap();
        let a = open(f.to_str().unwrap(), &opts(None)).unwrap();
        let b = open(f.to_str().unwrap(), &opts(None)).unwrap();
        assert!(a.writable.is_err() && b.writable.is_err());
    }

    #[test]
    fn the_sidecar_mark_is_never_written_through_a_planted_link() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.bin");
        let victim = d.path().join("victim");
        fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, sidecar_of(&p)).unwrap();
        fs::write(&p, b"x").unwrap();
        let f = File::open(&p).unwrap();
        // whether or not the filesystem takes the xattr, the victim is untouched
        let _ = set_mark(&f, &p);
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn sidecar_mark_is_tied_to_the_inode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.bin");
        fs::write(&p, b"x").unwrap();
        let f = File::open(&p).unwrap();
        let md = f.metadata().unwrap();
        fs::write(sidecar_of(&p), identity(&md)).unwrap();
        assert!(has_mark(&f, &p));
        fs::write(sidecar_of(&p), "1:2").unwrap();
        // xattr absent and the sidecar names another inode: not ours
        assert!(!has_mark(&f, &p));
    }
}
