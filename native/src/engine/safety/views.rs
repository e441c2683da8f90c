//! The kernel's views the guard reads: mounts (every mount namespace), swap areas and the
//! backing file of a bound loop device.

use super::{Dev, Stat};
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Unescapes the octal escapes (`\040`) of /proc/self/mountinfo paths.
pub(super) fn unescape(s: &str) -> String {
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

/// One mount: the device, where it is mounted and its source.
pub(super) struct Mount {
    pub(super) dev: Dev,
    pub(super) point: String,
    pub(super) source: String,
    /// The device the source path names, when it is a block device (set by
    /// [`Guard::new`](super::Guard::new)).
    pub(super) source_dev: Option<Dev>,
}

fn parse_mountinfo(text: &str, out: &mut Vec<Mount>) {
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
        out.push(Mount {
            dev: (a, b),
            point: unescape(f[4]),
            source: source.unwrap_or_default(),
            source_dev: None,
        });
    }
}

/// Mounts of this process's mount namespace and of every other namespace a process under
/// `proc_` is in (one `mountinfo` read per namespace).
pub(super) fn mounts(proc_: &Path) -> Vec<Mount> {
    let mut v = vec![];
    let mut seen = BTreeSet::new();
    if let Ok(ns) = fs::read_link(proc_.join("self/ns/mnt")) {
        seen.insert(ns);
    }
    if let Ok(text) = fs::read_to_string(proc_.join("self/mountinfo")) {
        parse_mountinfo(&text, &mut v);
    }
    let Ok(rd) = fs::read_dir(proc_) else {
        return v;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Ok(ns) = fs::read_link(e.path().join("ns/mnt")) else {
            continue;
        };
        if seen.insert(ns) {
            if let Ok(text) = fs::read_to_string(e.path().join("mountinfo")) {
                parse_mountinfo(&text, &mut v);
            }
        }
    }
    v
}

/// Swap areas: each entry's path as /proc/swaps lists it.
pub(super) fn swaps(proc_: &Path) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string(proc_.join("swaps")) else {
        return vec![];
    };
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|f| PathBuf::from(unescape(f)))
        .collect()
}

/// `struct loop_info64` of <linux/loop.h>.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// The identity of a bound loop device's backing file, from the kernel (`LOOP_GET_STATUS64`,
/// which holds even when the file was renamed or deleted).
pub(super) fn loop_backing(node: &Path) -> Option<Stat> {
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(node)
        .ok()?;
    // SAFETY: an all-zero loop_info64 is valid; the ioctl fills it.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 through the pointer.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
    (r == 0).then_some(Stat {
        dev: info.lo_device,
        ino: info.lo_inode,
        rdev: (info.lo_rdevice != 0).then_some(info.lo_rdevice),
    })
}
