//! flashback's creation mark on a file: an extended attribute, or a sidecar file naming the
//! inode where the filesystem has no user xattrs.

use super::MARK_XATTR;
use crate::error::{Error, Result};
use std::ffi::CString;
use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

pub(super) fn sidecar_of(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.flashback-created"))
}

pub(super) fn identity(md: &fs::Metadata) -> String {
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
