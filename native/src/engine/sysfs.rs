//! What sysfs says about a block device: its identity, geometry and discard support, and how
//! it relates to other devices (partitions, holders, slaves).

use serde_json::{json, Map, Value};
use std::fs;
use std::path::{Path, PathBuf};

/// Device number → `(major, minor)`.
pub fn split_dev(rdev: u64) -> (u32, u32) {
    (libc::major(rdev), libc::minor(rdev))
}

/// The sysfs directory of the block device `rdev` (e.g. `/sys/devices/.../block/sda/sda1`).
pub fn dir_of(rdev: u64) -> Option<PathBuf> {
    dir_in(Path::new("/sys"), split_dev(rdev))
}

/// The device directory of `(major, minor)` under the sysfs tree at `sys` (`/sys`, or a
/// fixture tree in tests).
pub fn dir_in(sys: &Path, (ma, mi): (u32, u32)) -> Option<PathBuf> {
    fs::canonicalize(sys.join(format!("dev/block/{ma}:{mi}"))).ok()
}

/// Kernel names of the bound loop devices under `sys` with their backing file's path as
/// sysfs prints it (` (deleted)` removed).
pub fn loop_devices(sys: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = fs::read_dir(sys.join("block")) else {
        return vec![];
    };
    let mut v: Vec<(String, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("loop") {
                return None;
            }
            let b = fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
            let b = b.trim_end_matches('\n');
            let b = b.strip_suffix(" (deleted)").unwrap_or(b);
            (!b.is_empty()).then(|| (name, PathBuf::from(b)))
        })
        .collect();
    v.sort();
    v
}

fn read_trim(p: &Path) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn read_u64(p: &Path) -> Option<u64> {
    read_trim(p)?.parse().ok()
}

/// The whole-disk directory for a device directory (itself unless it is a partition).
pub fn disk_dir(dev_dir: &Path) -> PathBuf {
    if dev_dir.join("partition").exists() {
        if let Some(parent) = dev_dir.parent() {
            return parent.to_path_buf();
        }
    }
    dev_dir.to_path_buf()
}

/// Kernel name (`sda1`) of a device directory.
pub fn name_of(dev_dir: &Path) -> String {
    dev_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `major:minor` of a device directory.
pub fn dev_of(dev_dir: &Path) -> Option<(u32, u32)> {
    let s = read_trim(&dev_dir.join("dev"))?;
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Partition directories of a whole-disk directory.
pub fn partitions(disk: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(disk) else {
        return vec![];
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.join("partition").exists())
        .collect();
    v.sort();
    v
}

/// Names listed in a device's `holders/` (or `slaves/`) directory.
pub fn links(dev_dir: &Path, which: &str) -> Vec<String> {
    let Ok(rd) = fs::read_dir(dev_dir.join(which)) else {
        return vec![];
    };
    let mut v: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Serial from a SCSI VPD page 0x80 (unit serial number), when the kernel exposes it.
fn vpd_serial(dev: &Path) -> Option<String> {
    let b = fs::read(dev.join("device/vpd_pg80")).ok()?;
    if b.len() <= 4 {
        return None;
    }
    let s = String::from_utf8_lossy(&b[4..])
        .trim()
        .trim_matches('\0')
        .to_string();
    (!s.is_empty()).then_some(s)
}

/// Identity, geometry and discard support of the device `rdev` as metadata fields.
pub fn device_meta(rdev: u64) -> Map<String, Value> {
    let mut m = Map::new();
    let Some(dir) = dir_of(rdev) else { return m };
    let disk = disk_dir(&dir);
    let q = disk.join("queue");
    let s = |p: PathBuf| read_trim(&p).map(Value::from).unwrap_or(Value::Null);
    m.insert("device_name".into(), json!(name_of(&dir)));
    m.insert("disk_name".into(), json!(name_of(&disk)));
    m.insert("model".into(), s(disk.join("device/model")));
    m.insert("vendor".into(), s(disk.join("device/vendor")));
    let serial = read_trim(&disk.join("device/serial"))
        .or_else(|| read_trim(&disk.join("serial")))
        .or_else(|| vpd_serial(&disk));
    m.insert("serial".into(), json!(serial));
    m.insert("firmware".into(), s(disk.join("device/firmware_rev")));
    m.insert(
        "rotational".into(),
        json!(read_u64(&q.join("rotational")).map(|r| r == 1)),
    );
    let dmax = read_u64(&q.join("discard_max_bytes"));
    m.insert("discard_supported".into(), json!(dmax.map(|d| d > 0)));
    m.insert("discard_max_bytes".into(), json!(dmax));
    m.insert(
        "discard_granularity_bytes".into(),
        json!(read_u64(&q.join("discard_granularity"))),
    );
    m.insert("scheduler".into(), s(q.join("scheduler")));
    if let Some(b) = read_trim(&disk.join("loop/backing_file")) {
        m.insert("loop_backing_file".into(), json!(b));
    }
    m
}

/// `discard_max_bytes` of the disk holding `rdev` (0 = no discard), when sysfs knows.
pub fn discard_max_bytes(rdev: u64) -> Option<u64> {
    let dir = dir_of(rdev)?;
    read_u64(&disk_dir(&dir).join("queue/discard_max_bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn root_filesystem_device_has_a_sysfs_entry_or_none() {
        // Works on any machine: the device of `/` either has a sysfs directory with a name,
        // or (overlay, tmpfs) none at all; it never panics.
        let dev = fs::metadata("/").unwrap().dev();
        if let Some(d) = dir_of(dev) {
            assert!(!name_of(&d).is_empty());
            assert!(dev_of(&d).is_some());
            let m = device_meta(dev);
            assert!(m.contains_key("rotational"));
        }
    }
}
