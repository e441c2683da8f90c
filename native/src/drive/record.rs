//! The device and platform record a lab report needs, read from sysfs and procfs under a root
//! directory (`/` on a machine, a fixture tree in tests), plus what the drive itself says
//! (NVMe Identify through the admin ioctl when flashback may send it; for SATA the ATA
//! IDENTIFY data the SCSI layer exposes, without root, as VPD page 89h).

use super::identify::{self, IdController};
use super::nvme::{self, NvmeAdmin};
use super::topology::{read_topology, DevKind};
use serde_json::{json, Map, Value};
use std::fs;
use std::path::{Path, PathBuf};

/// The environment variable that redacts serial numbers in every record (`1`).
pub const REDACT_ENV: &str = "FLASHBACK_REDACT_SERIAL";

fn read(p: &Path) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn num(p: &Path) -> Option<u64> {
    read(p)?.parse().ok()
}

/// `[mq-deadline] kyber` → `mq-deadline` (the active choice of a sysfs list).
fn bracketed(s: &str) -> String {
    s.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(['[', ']']).to_string())
        .unwrap_or_else(|| s.to_string())
}

/// Queue settings of block device `name` (`sys/block/<name>/queue`).
pub fn queue_settings(root: &Path, name: &str) -> Value {
    let q = root.join("sys/block").join(name).join("queue");
    json!({
        "scheduler": read(&q.join("scheduler")).map(|s| bracketed(&s)),
        "nr_requests": num(&q.join("nr_requests")),
        "rotational": num(&q.join("rotational")).map(|r| r == 1),
        "max_sectors_kb": num(&q.join("max_sectors_kb")),
        "read_ahead_kb": num(&q.join("read_ahead_kb")),
        "nomerges": num(&q.join("nomerges")),
        "wbt_lat_usec": num(&q.join("wbt_lat_usec")),
        "write_cache": read(&q.join("write_cache")),
        "logical_block_size": num(&q.join("logical_block_size")),
        "physical_block_size": num(&q.join("physical_block_size")),
    })
}

/// The PCI function directory an NVMe controller hangs off (its `device` link, or found by
/// walking `sys/devices` for `.../nvme/<ctrl>`).
fn nvme_pci_dir(root: &Path, ctrl: &str) -> Option<PathBuf> {
    let dev = root.join("sys/class/nvme").join(ctrl).join("device");
    if dev.exists() {
        return fs::canonicalize(&dev).ok();
    }
    fn walk(d: &Path, ctrl: &str, depth: u32) -> Option<PathBuf> {
        if d.join("nvme").join(ctrl).is_dir() {
            return Some(d.to_path_buf());
        }
        if depth == 0 {
            return None;
        }
        let mut subs: Vec<PathBuf> = fs::read_dir(d)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir() && !p.is_symlink())
            .collect();
        subs.sort();
        subs.iter().find_map(|s| walk(s, ctrl, depth - 1))
    }
    walk(&root.join("sys/devices"), ctrl, 5)
}

/// `Some("redacted")` when redaction is on, else the serial.
fn serial_shown(serial: Option<String>, redact: bool) -> Value {
    match serial {
        Some(_) if redact => json!("redacted"),
        s => json!(s),
    }
}

/// An ATA string field: words byte-swapped, padded with spaces.
fn ata_string(id: &[u8], word: usize, words: usize) -> Option<String> {
    let mut v = Vec::with_capacity(words * 2);
    for w in 0..words {
        let o = (word + w) * 2;
        v.push(*id.get(o + 1)?);
        v.push(*id.get(o)?);
    }
    let s = String::from_utf8_lossy(&v)
        .trim()
        .trim_matches('\0')
        .to_string();
    (!s.is_empty()).then_some(s)
}

fn ata_word(id: &[u8], w: usize) -> u16 {
    u16::from_le_bytes([id[2 * w], id[2 * w + 1]])
}

/// Decodes the 512-byte ATA IDENTIFY DEVICE data: full model, serial, firmware, security,
/// sanitize and write-cache bits, SATA link speeds, rotation rate.
pub fn decode_ata_identify(id: &[u8], redact: bool) -> Option<Value> {
    if id.len() < 512 {
        return None;
    }
    let sec = ata_word(id, 128);
    let san = ata_word(id, 59);
    let w76 = ata_word(id, 76);
    let w77 = ata_word(id, 77);
    let gen = |bit: u16| match bit {
        1 => "1.5 Gb/s",
        2 => "3.0 Gb/s",
        3 => "6.0 Gb/s",
        _ => "unknown",
    };
    let supported: Vec<&str> = (1..=3)
        .filter(|b| w76 != 0xffff && w76 & (1 << b) != 0)
        .map(gen)
        .collect();
    let current = (w76 != 0xffff && w77 != 0xffff).then(|| gen((w77 >> 1) & 0x7));
    let rot = ata_word(id, 217);
    Some(json!({
        "model": ata_string(id, 27, 20),
        "serial": serial_shown(ata_string(id, 10, 10), redact),
        "firmware": ata_string(id, 23, 4),
        "security": {
            "supported": sec & 1 != 0, "enabled": sec & 2 != 0, "locked": sec & 4 != 0,
            "frozen": sec & 8 != 0, "enhanced_erase": sec & 0x20 != 0,
        },
        "sanitize": {
            "supported": san & (1 << 12) != 0, "crypto_scramble": san & (1 << 13) != 0,
            "overwrite": san & (1 << 14) != 0, "block_erase": san & (1 << 15) != 0,
        },
        "write_cache_supported": ata_word(id, 82) & 0x20 != 0,
        "write_cache_enabled": ata_word(id, 85) & 0x20 != 0,
        "sata_speeds_supported": supported,
        "sata_speed_negotiated": current,
        "rotation_rate": match rot { 1 => json!("non-rotating (SSD)"), 0 => Value::Null, r => json!(r) },
    }))
}

/// The device record of block device `name`. `admin`, when given, adds what NVMe Identify and
/// Get Features say (power states, temperature limits, sanitize/format capabilities, the
/// volatile write cache state).
pub fn device_record(
    root: &Path,
    name: &str,
    admin: Option<&dyn NvmeAdmin>,
    redact: bool,
) -> Value {
    let topo = read_topology(root, name);
    let blk = root.join("sys/block").join(name);
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    m.insert(
        "size_bytes".into(),
        json!(num(&blk.join("size")).map(|s| s * 512)),
    );
    m.insert("queue".into(), queue_settings(root, name));
    m.insert("usb_bridge".into(), json!(topo.usb_bridge));
    match &topo.kind {
        DevKind::Nvme {
            controller,
            nsid,
            namespaces,
        } => {
            let c = root.join("sys/class/nvme").join(controller);
            m.insert("interface".into(), json!("nvme"));
            m.insert("model".into(), json!(read(&c.join("model"))));
            m.insert(
                "serial".into(),
                serial_shown(read(&c.join("serial")), redact),
            );
            m.insert("firmware".into(), json!(read(&c.join("firmware_rev"))));
            m.insert("controller".into(), json!(controller));
            m.insert("nsid".into(), json!(nsid));
            m.insert("namespaces".into(), json!(namespaces));
            let pci = nvme_pci_dir(root, controller);
            let link = pci.map(|p| {
                json!({
                    "current_speed": read(&p.join("current_link_speed")),
                    "current_width": num(&p.join("current_link_width")),
                    "max_speed": read(&p.join("max_link_speed")),
                    "max_width": num(&p.join("max_link_width")),
                })
            });
            m.insert("link".into(), json!(link));
            if let Some(a) = admin {
                nvme_identity(a, *nsid, redact, &mut m);
            } else {
                m.insert(
                    "nvme_identify".into(),
                    json!("not read: needs root (NVMe admin commands)"),
                );
            }
        }
        DevKind::Ata | DevKind::Other | DevKind::Loop => {
            let d = blk.join("device");
            m.insert(
                "interface".into(),
                json!(match topo.kind {
                    DevKind::Ata => "sata",
                    DevKind::Loop => "loop",
                    _ if read(&d.join("vendor")).as_deref() == Some("0x1af4") => "virtio",
                    _ => "scsi",
                }),
            );
            m.insert("vendor".into(), json!(read(&d.join("vendor"))));
            // the 16-character SCSI model is replaced below by IDENTIFY's 40-character one
            m.insert("model".into(), json!(read(&d.join("model"))));
            m.insert("firmware".into(), json!(read(&d.join("rev"))));
            m.insert(
                "serial".into(),
                serial_shown(read(&blk.join("serial")), redact),
            );
            if let Ok(pg) = fs::read(d.join("vpd_pg89")) {
                // SAT: the ATA IDENTIFY DEVICE data sits at byte 60 of VPD page 89h
                if let Some(ata) = pg
                    .get(60..572)
                    .and_then(|id| decode_ata_identify(id, redact))
                {
                    for k in ["model", "serial", "firmware"] {
                        if !ata[k].is_null() {
                            m.insert(k.into(), ata[k].clone());
                        }
                    }
                    m.insert("ata_identify".into(), ata);
                }
            }
            if topo.kind == DevKind::Ata {
                m.insert(
                    "link".into(),
                    json!({ "sata_spd": sata_link_speed(root, name) }),
                );
            }
            if topo.kind == DevKind::Loop {
                m.insert(
                    "loop_backing_file".into(),
                    json!(read(&blk.join("loop/backing_file"))),
                );
            }
        }
    }
    Value::Object(m)
}

/// The negotiated SATA speed of the port a disk hangs off (`.../ataN/...` in its sysfs
/// path → `sys/class/ata_link/linkN/sata_spd`, e.g. "6.0 Gbps").
fn sata_link_speed(root: &Path, name: &str) -> Option<String> {
    let link = fs::read_link(root.join("sys/class/block").join(name)).ok()?;
    let port = link.iter().find_map(|c| {
        let c = c.to_str()?;
        c.strip_prefix("ata")
            .filter(|n| n.chars().all(|ch| ch.is_ascii_digit()))
    })?;
    read(&root.join(format!("sys/class/ata_link/link{port}/sata_spd")))
}

fn nvme_identity(a: &dyn NvmeAdmin, nsid: u32, redact: bool, m: &mut Map<String, Value>) {
    let ctrl: Option<IdController> = nvme::identify_controller(a)
        .ok()
        .and_then(|b| identify::decode_controller(&b).ok());
    let Some(mut c) = ctrl else {
        m.insert("nvme_identify".into(), json!("Identify Controller failed"));
        return;
    };
    if redact {
        c.serial = "redacted".into();
    }
    let ns = nvme::identify_namespace(a, nsid)
        .ok()
        .and_then(|b| identify::decode_namespace(&b).ok());
    let vwc = nvme::get_features(a, nvme::feature::VOLATILE_WRITE_CACHE, 0).ok();
    m.insert("model".into(), json!(c.model));
    m.insert("serial".into(), json!(c.serial));
    m.insert("firmware".into(), json!(c.firmware));
    m.insert(
        "write_cache_enabled".into(),
        json!(if c.volatile_write_cache_present {
            vwc.map(|v| v & 1 == 1)
        } else {
            Some(false)
        }),
    );
    m.insert(
        "lba_format".into(),
        json!(ns.as_ref().and_then(|n| n.current().cloned())),
    );
    m.insert(
        "nvme_identify".into(),
        json!({"controller": c, "namespace": ns}),
    );
}

/// The platform record: CPU model and counts, frequency governors, memory, kernel and its
/// command line, flashback's version.
pub fn platform_record(root: &Path) -> Value {
    let cpuinfo = read(&root.join("proc/cpuinfo")).unwrap_or_default();
    let field = |k: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().is_some_and(|n| n.trim() == k))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let logical = cpuinfo
        .lines()
        .filter(|l| l.split(':').next().is_some_and(|n| n.trim() == "processor"))
        .count();
    let mut physical: Vec<(String, String)> = cpuinfo
        .split("\n\n")
        .filter_map(|b| {
            let get = |k: &str| {
                b.lines()
                    .find(|l| l.starts_with(k))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            };
            Some((get("physical id")?, get("core id")?))
        })
        .collect();
    physical.sort();
    physical.dedup();
    let mut governors: Vec<String> = fs::read_dir(root.join("sys/devices/system/cpu"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| read(&e.path().join("cpufreq/scaling_governor")))
                .collect()
        })
        .unwrap_or_default();
    governors.sort();
    governors.dedup();
    let mem_kb = read(&root.join("proc/meminfo")).and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    });
    json!({
        "cpu_model": field("model name"),
        "cpus_logical": logical,
        "cpu_cores_physical": (!physical.is_empty()).then_some(physical.len()),
        "cpu_governors": governors,
        "memory_bytes": mem_kb.map(|k| k * 1024),
        "kernel": read(&root.join("proc/sys/kernel/osrelease")),
        "kernel_cmdline": read(&root.join("proc/cmdline")),
        "flashback_version": env!("CARGO_PKG_VERSION"),
    })
}

/// [`device_record`] with NVMe Identify added when `root` is `/` and the controller's admin
/// node opens (root); a fixture tree never gets it.
pub fn device_record_on(root: &Path, name: &str, redact: bool) -> Value {
    let admin = match read_topology(root, name).kind {
        DevKind::Nvme { controller, .. } if root == Path::new("/") => {
            nvme::IoctlAdmin::open(&Path::new("/dev").join(controller)).ok()
        }
        _ => None,
    };
    device_record(
        root,
        name,
        admin.as_ref().map(|a| a as &dyn NvmeAdmin),
        redact,
    )
}

/// Whether serials are redacted by the environment ([`REDACT_ENV`] = `1`).
pub fn redact_from_env() -> bool {
    std::env::var(REDACT_ENV).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/sysfs")
            .join(name)
    }

    /// prometheus/procfs's fixture tree (tests/data/sysfs/SOURCES.md): a Samsung 970 PRO on
    /// a PCIe 3.0 x4 link, an SATA `sda` queue, 8 logical CPUs.
    #[test]
    fn nvme_identity_and_link_from_a_real_sysfs_tree() {
        let root = fixture("procfs");
        let d = device_record(&root, "nvme0n1", None, false);
        assert_eq!(d["interface"], "nvme");
        assert_eq!(d["model"], "Samsung SSD 970 PRO 512GB");
        assert_eq!(d["serial"], "S680HF8N190894I");
        assert_eq!(d["firmware"], "1B2QEXP7");
        assert_eq!(d["link"]["current_speed"], "8.0 GT/s PCIe");
        assert_eq!(d["link"]["current_width"], 4);
        let r = device_record(&root, "nvme0n1", None, true);
        assert_eq!(r["serial"], "redacted");
    }

    #[test]
    fn queue_settings_from_a_real_sysfs_tree() {
        let q = queue_settings(&fixture("procfs"), "sda");
        assert_eq!(q["scheduler"], "bfq");
        assert_eq!(q["write_cache"], "write back");
        assert_eq!(q["rotational"], true);
        assert_eq!(q["nr_requests"], 64);
        assert_eq!(q["max_sectors_kb"], 1280);
        assert_eq!(q["read_ahead_kb"], 128);
        assert_eq!(q["wbt_lat_usec"], 75000);
        // this machine's virtio disk, copied from its /sys
        let q = queue_settings(&fixture("thismachine"), "vda");
        assert_eq!(q["scheduler"], "mq-deadline");
        assert_eq!(q["write_cache"], "write back");
        assert_eq!(q["rotational"], true); // virtio-blk reports rotational 1
        let d = device_record(&fixture("thismachine"), "vda", None, false);
        assert_eq!(d["interface"], "virtio");
    }

    #[test]
    fn platform_from_a_real_procfs_tree() {
        let p = platform_record(&fixture("procfs"));
        assert_eq!(p["cpus_logical"], 8);
        assert_eq!(p["memory_bytes"], 15_666_184u64 * 1024);
        assert!(p["cpu_model"].as_str().unwrap().contains("Intel"), "{p}");
        assert!(!p["cpu_governors"].as_array().unwrap().is_empty(), "{p}");
        assert!(p["kernel_cmdline"].as_str().is_some());
    }

    #[test]
    fn sata_link_speed_is_read_from_the_disks_ata_port() {
        let d = tempfile::tempdir().unwrap();
        let s = d.path().join("sys");
        let dev = "devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sdc";
        std::fs::create_dir_all(s.join(dev).join("queue")).unwrap();
        std::fs::write(s.join(dev).join("../../vendor"), "ATA     \n").unwrap();
        std::os::unix::fs::symlink("../..", s.join(dev).join("device")).unwrap();
        std::fs::create_dir_all(s.join("class/block")).unwrap();
        std::os::unix::fs::symlink(format!("../../{dev}"), s.join("class/block/sdc")).unwrap();
        std::fs::create_dir_all(s.join("class/ata_link/link3")).unwrap();
        std::fs::write(s.join("class/ata_link/link3/sata_spd"), "6.0 Gbps\n").unwrap();
        std::fs::create_dir_all(s.join("class/ata_link/link1")).unwrap();
        std::fs::write(s.join("class/ata_link/link1/sata_spd"), "1.5 Gbps\n").unwrap();
        std::fs::create_dir_all(s.join("block")).unwrap();
        std::os::unix::fs::symlink(format!("../{dev}"), s.join("block/sdc")).unwrap();
        let r = device_record(d.path(), "sdc", None, false);
        assert_eq!(r["interface"], "sata");
        assert_eq!(r["link"]["sata_spd"], "6.0 Gbps");
    }

    #[test]
    fn ata_identify_strings_are_byte_swapped() {
        let mut id = vec![0u8; 512];
        let put = |id: &mut Vec<u8>, word: usize, s: &str, words: usize| {
            let b = format!("{s:<w$}", w = words * 2).into_bytes();
            for i in 0..words {
                id[2 * (word + i)] = b[2 * i + 1];
                id[2 * (word + i) + 1] = b[2 * i];
            }
        };
        put(&mut id, 27, "Samsung SSD 860 EVO 500GB", 20);
        put(&mut id, 10, "S3Z2NB0K123456A", 10);
        put(&mut id, 23, "RVT01B6Q", 4);
        id[2 * 128] = 0b10_1001; // supported, frozen, enhanced erase
        id[2 * 59 + 1] = 0b1011_0000; // sanitize, crypto, block erase
        id[2 * 76] = 0b1110;
        id[2 * 77] = 3 << 1;
        id[2 * 217] = 1;
        let a = decode_ata_identify(&id, false).unwrap();
        assert_eq!(a["model"], "Samsung SSD 860 EVO 500GB");
        assert_eq!(a["serial"], "S3Z2NB0K123456A");
        assert_eq!(a["firmware"], "RVT01B6Q");
        assert_eq!(a["security"]["frozen"], true);
        assert_eq!(a["security"]["enhanced_erase"], true);
        assert_eq!(a["sanitize"]["block_erase"], true);
        assert_eq!(a["sanitize"]["overwrite"], false);
        assert_eq!(a["sata_speed_negotiated"], "6.0 Gb/s");
        assert_eq!(a["rotation_rate"], "non-rotating (SSD)");
    }
}
