//! Opening a real target: a regular file (created and preallocated when missing, and marked as
//! flashback's own) or a block device. Whether the target may be written is decided here, once,
//! and a target that may not be written is opened read-only so the kernel enforces it too.
//!
//! `file` opens (or creates) a regular file, `mark` reads and sets flashback's creation mark,
//! `block` opens a block device; [`open`] chooses between them.

mod block;
mod file;
mod mark;

pub use file::reopen;

use crate::error::{Error, Result};
use crate::target::OpenOptions;
use block::open_block;
use file::{create, open_existing_file};
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
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

#[cfg(test)]
mod tests;
