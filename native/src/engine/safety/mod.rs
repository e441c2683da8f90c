//! The safety rules for writing to a block device or file: the caller must name a device
//! again, and even then a device (or any of its partitions) that is mounted, used as swap,
//! held by another device (LVM, RAID, device-mapper) or backing the running system is refused.
//!
//! The guard covers what a target *carries*: every loop device backed by the target (a file,
//! a device or any of its partitions) or by a file living on it is followed, transitively,
//! and anything reached that is mounted (in any mount namespace), swap, held or opened
//! exclusively refuses the write with the chain named ("it backs /dev/loop4, which is
//! mounted at /mnt/x"). Where the kernel's views live is a parameter ([`Roots`]) so the chain
//! logic is tested on fixture trees.
//!
//! `views` reads the kernel's views (mounts in every namespace, swaps, loop backing files),
//! `guard` follows what a target carries through them; this module holds the entry points.

mod guard;
#[cfg(test)]
mod tests;
mod views;

pub use guard::Guard;

use super::sysfs;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What `stat` says about a path: the device holding it, its inode, and its device number
/// when it is a block device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub rdev: Option<u64>,
}

fn real_stat(p: &Path) -> Option<Stat> {
    let md = fs::metadata(p).ok()?;
    Some(Stat {
        dev: md.dev(),
        ino: md.ino(),
        rdev: md.file_type().is_block_device().then(|| md.rdev()),
    })
}

/// How the guard stats a path (the real `stat`, or a fixture's answers).
pub type StatFn = Box<dyn Fn(&Path) -> Option<Stat>>;

/// Where the guard reads the kernel's views: sysfs, procfs and the device nodes.
pub struct Roots {
    pub sys: PathBuf,
    pub proc_: PathBuf,
    /// Device nodes (`/dev`) for the exclusive-open probe and the loop status ioctl; `None`
    /// in fixture trees (then loop backing files are identified by `stat`).
    pub dev: Option<PathBuf>,
    pub stat: StatFn,
}

impl Roots {
    /// The running system's `/sys`, `/proc` and `/dev`.
    pub fn system() -> Roots {
        Roots {
            sys: PathBuf::from("/sys"),
            proc_: PathBuf::from("/proc"),
            dev: Some(PathBuf::from("/dev")),
            stat: Box::new(real_stat),
        }
    }
}

type Dev = (u32, u32);

fn split(rdev: u64) -> Dev {
    sysfs::split_dev(rdev)
}

/// Why writing to the block device `rdev` (at `path`) must be refused even with confirmation,
/// as one sentence; `None` when it is free to write.
pub fn in_use_reason(path: &Path, rdev: u64) -> Option<String> {
    Guard::new(Roots::system()).device_reason(rdev).map(|why| {
        format!(
            "refusing to write to {}: {why} (nothing was written)",
            path.display()
        )
    })
}

/// Why writing to the regular file `file` (at `path`) must be refused whatever the caller
/// allowed, as one sentence; `None` when nothing it backs is in use.
pub fn file_in_use_reason(path: &Path, file: &fs::File) -> Option<String> {
    let md = file.metadata().ok()?;
    let st = Stat {
        dev: md.dev(),
        ino: md.ino(),
        rdev: None,
    };
    Guard::new(Roots::system()).file_reason(st).map(|why| {
        format!(
            "refusing to write to {}: {why} (nothing was written)",
            path.display()
        )
    })
}

fn blk_rdev(p: &Path) -> Option<u64> {
    real_stat(p)?.rdev
}

/// Checks the `destroy` confirmation against the device at `canonical` (number `rdev`):
/// both sides are resolved through symlinks. Returns the refusal sentence when it does not match.
pub fn confirm(canonical: &Path, rdev: u64, destroy: Option<&str>) -> Result<(), String> {
    let shown = canonical.display();
    let Some(d) = destroy else {
        return Err(format!(
            "writing to block device {shown} destroys its data; confirm by naming it again with destroy=\"{shown}\" (--destroy {shown})"
        ));
    };
    let same = fs::canonicalize(d).ok().is_some_and(|c| c == canonical)
        && blk_rdev(Path::new(d)) == Some(rdev);
    if same {
        Ok(())
    } else {
        Err(format!(
            "destroy=\"{d}\" does not name the target device {shown}; to write to it pass destroy=\"{shown}\" (nothing was written)"
        ))
    }
}
