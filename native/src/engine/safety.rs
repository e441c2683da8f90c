//! The safety rules for writing to a block device: the caller must name the device again, and
//! even then a device (or any of its partitions) that is mounted, used as swap, held by another
//! device (LVM, RAID, device-mapper) or backing the running system is refused.

use super::sysfs;
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A device and its partitions, by `(major, minor)` and kernel name.
struct Family {
    /// `(major, minor, name)`; the device itself first.
    members: Vec<(u32, u32, String)>,
    dirs: Vec<PathBuf>,
}

impl Family {
    fn of(rdev: u64) -> Family {
        let (ma, mi) = sysfs::split_dev(rdev);
        let mut members = vec![];
        let mut dirs = vec![];
        match sysfs::dir_of(rdev) {
            Some(dir) => {
                members.push((ma, mi, sysfs::name_of(&dir)));
                for p in sysfs::partitions(&dir) {
                    if let Some((a, b)) = sysfs::dev_of(&p) {
                        members.push((a, b, sysfs::name_of(&p)));
                    }
                    dirs.push(p);
                }
                dirs.insert(0, dir);
            }
            None => members.push((ma, mi, format!("{ma}:{mi}"))),
        }
        Family { members, dirs }
    }

    fn find(&self, ma: u32, mi: u32) -> Option<&str> {
        self.members
            .iter()
            .find(|m| m.0 == ma && m.1 == mi)
            .map(|m| m.2.as_str())
    }

    /// "/dev/loop3" or "its partition /dev/loop3p1".
    fn describe(&self, name: &str) -> String {
        if self.members.first().map(|m| m.2.as_str()) == Some(name) {
            "it".to_string()
        } else {
            format!("its partition /dev/{name}")
        }
    }
}

fn blk_rdev(p: &Path) -> Option<u64> {
    let md = fs::metadata(p).ok()?;
    md.file_type().is_block_device().then(|| md.rdev())
}

/// Unescapes the octal escapes (`\040`) of /proc/self/mountinfo paths.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = b[i + 1..i + 4]
                .iter()
                .fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
            out.push(v as u8);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Mounts as `(major, minor, mount point, source)` from /proc/self/mountinfo.
fn mounts() -> Vec<(u32, u32, String, String)> {
    let Ok(text) = fs::read_to_string("/proc/self/mountinfo") else {
        return vec![];
    };
    let mut v = vec![];
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() < 5 {
            continue;
        }
        let Some((a, b)) = f[2].split_once(':') else {
            continue;
        };
        let (Ok(a), Ok(b)) = (a.parse(), b.parse()) else {
            continue;
        };
        let source = f
            .iter()
            .position(|x| *x == "-")
            .and_then(|i| f.get(i + 2))
            .map(|s| unescape(s));
        v.push((a, b, unescape(f[4]), source.unwrap_or_default()));
    }
    v
}

/// Devices the running system stands on: those of `/`, `/usr`, `/boot`, `/var` and of this
/// program, and every device beneath them (their `slaves/`, recursively).
fn system_devices() -> BTreeSet<(u32, u32)> {
    let mut out = BTreeSet::new();
    let mut todo: Vec<PathBuf> = vec![];
    for p in ["/", "/usr", "/boot", "/var", "/proc/self/exe"] {
        if let Ok(md) = fs::metadata(p) {
            let dev = md.dev();
            out.insert(sysfs::split_dev(dev));
            if let Some(d) = sysfs::dir_of(dev) {
                todo.push(d);
            }
        }
    }
    let mut seen = BTreeSet::new();
    while let Some(d) = todo.pop() {
        if !seen.insert(d.clone()) {
            continue;
        }
        // the whole disk of a partition carries the system too
        let disk = sysfs::disk_dir(&d);
        if let Some(x) = sysfs::dev_of(&disk) {
            out.insert(x);
        }
        for s in sysfs::links(&d, "slaves") {
            let p = PathBuf::from(format!("/sys/class/block/{s}"));
            if let Ok(c) = fs::canonicalize(&p) {
                if let Some(x) = sysfs::dev_of(&c) {
                    out.insert(x);
                }
                todo.push(c);
            }
        }
    }
    out
}

/// Why writing to the block device `rdev` (at `path`) must be refused even with confirmation,
/// as one sentence; `None` when it is free to write.
pub fn in_use_reason(path: &Path, rdev: u64) -> Option<String> {
    let fam = Family::of(rdev);
    let shown = path.display();
    let sys = system_devices();
    for (a, b, name) in &fam.members {
        if sys.contains(&(*a, *b)) {
            return Some(format!(
                "refusing to write to {shown}: {} backs the running system; nothing was written",
                fam.describe(name)
            ));
        }
    }
    for (a, b, point, source) in mounts() {
        let hit = fam.find(a, b).map(str::to_string).or_else(|| {
            let src = blk_rdev(Path::new(&source))?;
            let (sa, sb) = sysfs::split_dev(src);
            fam.find(sa, sb).map(str::to_string)
        });
        if let Some(name) = hit {
            return Some(format!(
                "refusing to write to {shown}: {} is mounted at {point}; unmount it first (nothing was written)",
                fam.describe(&name)
            ));
        }
    }
    if let Ok(text) = fs::read_to_string("/proc/swaps") {
        for line in text.lines().skip(1) {
            let Some(file) = line.split_whitespace().next() else {
                continue;
            };
            let file = unescape(file);
            if let Some(r) = blk_rdev(Path::new(&file)) {
                let (sa, sb) = sysfs::split_dev(r);
                if let Some(name) = fam.find(sa, sb) {
                    return Some(format!(
                        "refusing to write to {shown}: {} is in use as swap; swapoff it first (nothing was written)",
                        fam.describe(name)
                    ));
                }
            }
        }
    }
    for d in &fam.dirs {
        let holders = sysfs::links(d, "holders");
        if !holders.is_empty() {
            let name = sysfs::name_of(d);
            return Some(format!(
                "refusing to write to {shown}: {} is held by {} (LVM, RAID or device-mapper); release it first (nothing was written)",
                fam.describe(&name),
                holders.join(", ")
            ));
        }
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_mountinfo_paths() {
        assert_eq!(unescape("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/end\\"), "/end\\");
    }

    #[test]
    fn root_device_backs_the_system() {
        let dev = fs::metadata("/").unwrap().dev();
        assert!(system_devices().contains(&sysfs::split_dev(dev)));
    }

    #[test]
    fn confirmation_must_name_the_same_device() {
        let e = confirm(Path::new("/dev/nonexistent-x"), 0, None).unwrap_err();
        assert!(e.contains("destroy="), "{e}");
        let e = confirm(
            Path::new("/dev/nonexistent-x"),
            0,
            Some("/dev/nonexistent-y"),
        )
        .unwrap_err();
        assert!(e.contains("does not name"), "{e}");
    }
}
