//! Which device a purge reaches, read from sysfs under a root directory (`/` on a machine,
//! a fixture tree in tests): the kind of device, its NVMe controller and sibling namespaces,
//! and whether it sits behind a USB bridge.

use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};

/// What kind of device a block device name is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DevKind {
    /// An NVMe namespace: its controller (`nvme0`), namespace id and every namespace
    /// block device of that controller (itself included), sorted.
    Nvme {
        controller: String,
        nsid: u32,
        namespaces: Vec<String>,
    },
    /// A SCSI disk that says its vendor is "ATA" (SATA through libata).
    Ata,
    Loop,
    Other,
}

/// A block device as a purge sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Topology {
    pub name: String,
    pub kind: DevKind,
    /// Set when the device sits behind a USB bridge: the driver or path that says so.
    pub usb_bridge: Option<String>,
    pub discard_max_bytes: Option<u64>,
    pub logical_block_bytes: Option<u64>,
    pub size_bytes: Option<u64>,
}

fn read(p: &Path) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn link_name(p: &Path) -> Option<String> {
    fs::read_link(p)
        .ok()
        .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
}

/// `nvme0n1` → `(0, 1)`; `nvme0c1n1` (a multipath path) and partitions → `None`.
fn nvme_ns_name(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("nvme")?;
    let (c, n) = rest.split_once('n')?;
    Some((c.parse().ok()?, n.parse().ok()?))
}

/// Reads the topology of block device `name` (e.g. `nvme0n1`, `sda`, `loop3`) under `root`.
pub fn read_topology(root: &Path, name: &str) -> Topology {
    let blk = root.join("sys/class/block").join(name);
    let link = fs::read_link(&blk).unwrap_or_default();
    let path_s = link.to_string_lossy().into_owned();
    let driver = link_name(&blk.join("device/driver"));
    let usb_bridge = match driver.as_deref() {
        Some(d @ ("uas" | "usb-storage")) => Some(format!("driver {d}")),
        _ if path_s.contains("/usb") => Some(format!("sysfs path {path_s}")),
        _ => None,
    };
    let kind = if let Some((c, _)) = nvme_ns_name(name) {
        let controller = format!("nvme{c}");
        let nsid = read(&blk.join("nsid"))
            .and_then(|s| s.parse().ok())
            .or_else(|| nvme_ns_name(name).map(|x| x.1))
            .unwrap_or(1);
        let mut namespaces: Vec<String> =
            fs::read_dir(root.join("sys/class/nvme").join(&controller))
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| nvme_ns_name(n).is_some_and(|(cc, _)| cc == c))
                        .collect()
                })
                .unwrap_or_default();
        if !namespaces.iter().any(|n| n == name) {
            namespaces.push(name.to_string());
        }
        namespaces.sort_by_key(|n| nvme_ns_name(n).map(|x| x.1));
        DevKind::Nvme {
            controller,
            nsid,
            namespaces,
        }
    } else if name.starts_with("loop") || blk.join("loop").exists() {
        DevKind::Loop
    } else if read(&blk.join("device/vendor")).as_deref() == Some("ATA") {
        DevKind::Ata
    } else {
        DevKind::Other
    };
    let q = blk.join("queue");
    let num = |p: PathBuf| read(&p).and_then(|s| s.parse::<u64>().ok());
    Topology {
        name: name.to_string(),
        kind,
        usb_bridge,
        discard_max_bytes: num(q.join("discard_max_bytes")),
        logical_block_bytes: num(q.join("logical_block_size")),
        size_bytes: num(blk.join("size")).map(|s| s * 512),
    }
}
