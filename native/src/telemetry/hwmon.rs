//! The drive's temperature through hwmon in sysfs (the kernel's `nvme` hwmon for NVMe
//! controllers, `drivetemp` for SATA disks). Every path is taken under a root directory
//! (`/sys` in use), so tests run on fixture trees.
//!
//! Where the hwmon directory of a block device lives:
//! - NVMe: `block/nvme0n1/device` is the controller (`nvme0`); the kernel registers its
//!   hwmon on the controller (`…/nvme0/hwmonN`, since Linux 5.12) or, before that, on the
//!   PCI function (`…/nvme0/device/hwmon/hwmonN`);
//! - SATA/SCSI with `drivetemp` loaded: `block/sda/device/hwmon/hwmonN`.
//!
//! Values are millidegrees Celsius (`temp*_input`, `temp*_max`, `temp*_crit`).

use super::{DriveSample, Source};
use crate::{Error, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a block device has no hwmon temperature, or its hwmon directory.
#[derive(Debug, PartialEq)]
pub enum Found {
    Dir(PathBuf),
    None(String),
}

fn hwmon_children(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|it| {
            it.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("hwmon") && n != "hwmon")
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The hwmon directory of block device `dev` (`nvme0n1`, `sda`; a partition's disk is
/// looked up through `class/block/<part>/..`) under `sys_root`.
pub fn find_for_block(sys_root: &Path, dev: &str) -> Found {
    let mut block = sys_root.join("block").join(dev);
    if !block.exists() {
        // a partition: class/block/sda1 is a child of its disk's directory
        let part = sys_root.join("class/block").join(dev);
        match fs::canonicalize(&part)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
        {
            Some(disk) if disk.join("device").exists() => block = disk,
            _ => {
                return Found::None(format!(
                    "{dev}: no such block device in {}",
                    sys_root.display()
                ))
            }
        }
    }
    let device = block.join("device");
    if !device.exists() {
        let why = if dev.starts_with("loop") {
            "loop device: no drive".to_string()
        } else {
            format!("{dev} has no device directory (a virtual block device): no drive")
        };
        return Found::None(why);
    }
    for cand in [
        device.clone(),
        device.join("hwmon"),
        device.join("device"),
        device.join("device/hwmon"),
    ] {
        if let Some(d) = hwmon_children(&cand).into_iter().next() {
            return Found::Dir(d);
        }
    }
    Found::None(format!(
        "{dev}: its device has no hwmon temperature (for SATA load the drivetemp module)"
    ))
}

fn read_milli(path: &Path) -> Result<Option<f64>> {
    match fs::read_to_string(path) {
        Ok(s) => s
            .trim()
            .parse::<i64>()
            .map(|v| Some(v as f64 / 1000.0))
            .map_err(|_| {
                Error::Parse(format!(
                    "{}: {:?} is not millidegrees",
                    path.display(),
                    s.trim()
                ))
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// A drive's hwmon temperature sensor.
pub struct Hwmon {
    dir: PathBuf,
    index: u32,
}

impl Hwmon {
    /// The sensor in `dir`: the one labelled `Composite` (NVMe) or else `temp1`.
    pub fn open(dir: PathBuf) -> Result<Self> {
        let mut index = 1;
        for i in 1..=9 {
            if fs::read_to_string(dir.join(format!("temp{i}_label")))
                .is_ok_and(|l| l.trim() == "Composite")
            {
                index = i;
                break;
            }
        }
        if !dir.join(format!("temp{index}_input")).exists() {
            return Err(Error::Target(format!(
                "{} has no temp{index}_input: not a temperature hwmon",
                dir.display()
            )));
        }
        Ok(Hwmon { dir, index })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Source for Hwmon {
    fn name(&self) -> &'static str {
        "hwmon"
    }
    fn cadence(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn read(&mut self) -> Result<DriveSample> {
        let f = |s: &str| self.dir.join(format!("temp{}_{s}", self.index));
        Ok(DriveSample {
            temp_c: read_milli(&f("input"))?,
            temp_warning_c: read_milli(&f("max"))?,
            temp_critical_c: read_milli(&f("crit"))?,
            ..DriveSample::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn write(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    /// The layout of a Linux ≥ 5.12 NVMe drive: block/nvme0n1/device → the controller,
    /// whose hwmon child carries a `Composite` sensor (values as `sensors -j` printed them
    /// for the pinned buonviri/HJS chip nvme-pci-0500: 29.85 / 109.85 / 114.85 °C).
    fn nvme_tree(root: &Path) {
        let ctrl = root.join("devices/pci0000:00/0000:00:1d.0/0000:05:00.0/nvme/nvme0");
        let hw = ctrl.join("hwmon3");
        write(&hw.join("name"), "nvme\n");
        write(&hw.join("temp1_label"), "Composite\n");
        write(&hw.join("temp1_input"), "29850\n");
        write(&hw.join("temp1_max"), "109850\n");
        write(&hw.join("temp1_crit"), "114850\n");
        write(&hw.join("temp2_label"), "Sensor 1\n");
        write(&hw.join("temp2_input"), "31850\n");
        fs::create_dir_all(root.join("block/nvme0n1")).unwrap();
        symlink(&ctrl, root.join("block/nvme0n1/device")).unwrap();
    }

    #[test]
    fn nvme_controller_hwmon_is_found_and_read() {
        let t = tempfile::tempdir().unwrap();
        nvme_tree(t.path());
        let Found::Dir(d) = find_for_block(t.path(), "nvme0n1") else {
            panic!()
        };
        let mut h = Hwmon::open(d).unwrap();
        let s = h.read().unwrap();
        assert_eq!(s.temp_c, Some(29.85));
        assert_eq!(s.temp_warning_c, Some(109.85));
        assert_eq!(s.temp_critical_c, Some(114.85));
        assert_eq!(s.host_written_bytes, None);
    }

    #[test]
    fn sata_drivetemp_and_partition() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let disk =
            r.join("devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda");
        let scsi = r.join("devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0");
        write(&scsi.join("hwmon/hwmon5/temp1_input"), "36000\n");
        write(&scsi.join("hwmon/hwmon5/temp1_crit"), "70000\n");
        fs::create_dir_all(disk.join("sda1")).unwrap();
        symlink(&scsi, disk.join("device")).unwrap();
        fs::create_dir_all(r.join("block")).unwrap();
        fs::create_dir_all(r.join("class/block")).unwrap();
        symlink(&disk, r.join("block/sda")).unwrap();
        symlink(disk.join("sda1"), r.join("class/block/sda1")).unwrap();
        for dev in ["sda", "sda1"] {
            let Found::Dir(d) = find_for_block(r, dev) else {
                panic!("{dev}")
            };
            let s = Hwmon::open(d).unwrap().read().unwrap();
            assert_eq!(
                (s.temp_c, s.temp_warning_c, s.temp_critical_c),
                (Some(36.0), None, Some(70.0))
            );
        }
    }

    #[test]
    fn loop_device_has_no_drive_and_no_hwmon_is_explained() {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("block/loop0")).unwrap();
        assert_eq!(
            find_for_block(t.path(), "loop0"),
            Found::None("loop device: no drive".into())
        );
        fs::create_dir_all(t.path().join("block/sdb/device")).unwrap();
        let Found::None(why) = find_for_block(t.path(), "sdb") else {
            panic!()
        };
        assert!(why.contains("drivetemp"), "{why}");
    }

    #[test]
    fn garbage_value_is_a_parse_error() {
        let t = tempfile::tempdir().unwrap();
        write(&t.path().join("hwmon0/temp1_input"), "hot\n");
        let mut h = Hwmon::open(t.path().join("hwmon0")).unwrap();
        assert!(h.read().is_err());
    }

    #[test]
    fn this_machines_loop_devices_have_no_drive() {
        // The real /sys: a loop device (if any exist) has no drive behind it.
        if Path::new("/sys/block/loop0").exists() {
            assert_eq!(
                find_for_block(Path::new("/sys"), "loop0"),
                Found::None("loop device: no drive".into())
            );
        }
    }
}
