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

/// Bytes an unprivileged writer can still allocate on the filesystem holding `file`.
fn free_bytes(file: &File) -> Option<u64> {
    // SAFETY: fstatvfs fills the struct it is given.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
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

fn open_file(path: &Path, write: bool, excl: bool) -> io::Result<File> {
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
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(given)
        .map_err(|e| Error::io(format!("could not create {spec}"), e))?;
    let path =
        fs::canonicalize(given).map_err(|e| Error::io(format!("could not resolve {spec}"), e))?;
    let remove = |file: File| {
        drop(file);
        let _ = fs::remove_file(&path);
        let _ = fs::remove_file(sidecar_of(&path));
    };
    // Mark first: from here on the file is flashback's, and removed again if it cannot be
    // allocated (no file is left behind, no space kept).
    if let Err(e) = set_mark(&file, &path)
        .and_then(|()| preallocate(&file, &path, size, 0, "the new file was removed"))
    {
        remove(file);
        return Err(e);
    }
    finish_file(file, path, true, Ok(()))
}

fn open_existing_file(given: &Path, opts: &OpenOptions) -> Result<Opened> {
    let spec = given.display();
    let path =
        fs::canonicalize(given).map_err(|e| Error::io(format!("could not resolve {spec}"), e))?;
    let probe = File::open(&path)
        .map_err(|e| Error::io(format!("could not open {}", path.display()), e))?;
    let created = has_mark(&probe, &path);
    drop(probe);
    let writable = if created || opts.overwrite {
        Ok(())
    } else {
        Err(format!(
            "{} is a file flashback did not create; pass overwrite=True (--overwrite) to let flashback write over it (nothing was written)",
            path.display()
        ))
    };
    let file = open_file(&path, writable.is_ok(), false)
        .map_err(|e| Error::io(format!("could not open {}", path.display()), e))?;
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
    let file = match open_file(&path, writable.is_ok(), writable.is_ok()) {
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
        let msg = o.writable.unwrap_err();
        assert!(
            msg.contains("did not create") && msg.contains("overwrite"),
            "{msg}"
        );
        assert_eq!(o.size, 8192, "a foreign file is never grown");
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
