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

use super::sysfs;
use std::collections::{BTreeSet, VecDeque};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
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

/// One mount: the device, where it is mounted and its source.
struct Mount {
    dev: Dev,
    point: String,
    source: String,
    /// The device the source path names, when it is a block device (set by [`Guard::new`]).
    source_dev: Option<Dev>,
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
fn mounts(proc_: &Path) -> Vec<Mount> {
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
fn swaps(proc_: &Path) -> Vec<PathBuf> {
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
fn loop_backing(node: &Path) -> Option<Stat> {
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

/// A device reached by following what the target carries, with the words that name it.
struct Node {
    dev: Dev,
    /// Subject naming the whole device: "it", or "it backs /dev/loop4, which".
    head: String,
    /// Prefix naming one of its partitions: "its partition", or "… whose partition".
    part: String,
    start: bool,
}

/// What the guard found: the one-sentence refusal.
pub struct Guard {
    roots: Roots,
    mounts: Vec<Mount>,
    swaps: Vec<(PathBuf, Option<Stat>)>,
    loops: Vec<(String, Option<Dev>, Option<Stat>, PathBuf)>,
}

impl Guard {
    /// Reads mounts (every namespace), swaps and loop devices once.
    pub fn new(roots: Roots) -> Guard {
        let mut mounts = mounts(&roots.proc_);
        for m in &mut mounts {
            if m.source.starts_with('/') {
                m.source_dev = (roots.stat)(Path::new(&m.source))
                    .and_then(|s| s.rdev)
                    .map(split);
            }
        }
        let swaps = swaps(&roots.proc_)
            .into_iter()
            .map(|p| {
                let st = (roots.stat)(&p);
                (p, st)
            })
            .collect();
        let loops = sysfs::loop_devices(&roots.sys)
            .into_iter()
            .map(|(name, file)| {
                let dir = roots.sys.join("block").join(&name);
                let dev = sysfs::dev_of(&dir);
                let id = roots
                    .dev
                    .as_ref()
                    .and_then(|d| loop_backing(&d.join(&name)))
                    .or_else(|| (roots.stat)(&file));
                (name, dev, id, file)
            })
            .collect();
        Guard {
            roots,
            mounts,
            swaps,
            loops,
        }
    }

    /// Devices the running system stands on: those of `/`, `/usr`, `/boot`, `/var` and of
    /// this program, and every device beneath them (their `slaves/`, recursively).
    fn system_devices(&self) -> BTreeSet<Dev> {
        let mut out = BTreeSet::new();
        if self.roots.dev.is_none() {
            return out; // a fixture tree carries no running system
        }
        let sys = &self.roots.sys;
        let mut todo: Vec<PathBuf> = vec![];
        for p in ["/", "/usr", "/boot", "/var", "/proc/self/exe"] {
            if let Ok(md) = fs::metadata(p) {
                let dev = split(md.dev());
                out.insert(dev);
                if let Some(d) = sysfs::dir_in(sys, dev) {
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
            if let Some(x) = sysfs::dev_of(&sysfs::disk_dir(&d)) {
                out.insert(x);
            }
            for s in sysfs::links(&d, "slaves") {
                if let Ok(c) = fs::canonicalize(sys.join("class/block").join(&s)) {
                    if let Some(x) = sysfs::dev_of(&c) {
                        out.insert(x);
                    }
                    todo.push(c);
                }
            }
        }
        out
    }

    fn mounted_at(&self, dev: Dev) -> Option<&str> {
        self.mounts
            .iter()
            .find(|m| m.dev == dev || m.source_dev == Some(dev))
            .map(|m| m.point.as_str())
    }

    fn is_swap(&self, dev: Dev) -> bool {
        self.swaps
            .iter()
            .any(|(_, st)| st.and_then(|s| s.rdev).map(split) == Some(dev))
    }

    /// True when the kernel refuses an exclusive open of the device (something claims it in
    /// some namespace). Only for devices beyond the target: the target's own exclusive open
    /// is the one that keeps it.
    fn busy(&self, name: &str, dev: Dev) -> bool {
        let Some(root) = &self.roots.dev else {
            return false;
        };
        let node = root.join(name);
        if (self.roots.stat)(&node).and_then(|s| s.rdev).map(split) != Some(dev) {
            return false;
        }
        let r = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
            .open(&node);
        matches!(r, Err(e) if e.raw_os_error() == Some(libc::EBUSY))
    }

    /// The refusal for what `node` (and its partitions) is or carries, or the loop devices it
    /// backs, queued for the same checks.
    fn visit(
        &self,
        node: &Node,
        sys_devs: &BTreeSet<Dev>,
        todo: &mut VecDeque<Node>,
    ) -> Option<String> {
        let sys = &self.roots.sys;
        let dir = sysfs::dir_in(sys, node.dev);
        let mut members: Vec<(Dev, String, String)> = vec![];
        let head_name = dir.as_deref().map(sysfs::name_of);
        members.push((
            node.dev,
            head_name.clone().unwrap_or_default(),
            node.head.clone(),
        ));
        let mut dirs: Vec<PathBuf> = vec![];
        if let Some(d) = &dir {
            dirs.push(d.clone());
            for p in sysfs::partitions(d) {
                if let Some(x) = sysfs::dev_of(&p) {
                    let name = sysfs::name_of(&p);
                    members.push((x, name.clone(), format!("{} /dev/{name}", node.part)));
                }
                dirs.push(p);
            }
        }
        for (dev, name, who) in &members {
            if sys_devs.contains(dev) {
                return Some(format!("{who} backs the running system"));
            }
            if let Some(point) = self.mounted_at(*dev) {
                return Some(format!("{who} is mounted at {point}; unmount it first"));
            }
            if self.is_swap(*dev) {
                return Some(format!("{who} is in use as swap; swapoff it first"));
            }
            let holders = dirs
                .iter()
                .find(|d| sysfs::dev_of(d) == Some(*dev))
                .map(|d| sysfs::links(d, "holders"))
                .unwrap_or_default();
            if !holders.is_empty() {
                return Some(format!(
                    "{who} is held by {} (LVM, RAID or device-mapper); release it first",
                    holders.join(", ")
                ));
            }
            if !node.start && !name.is_empty() && self.busy(name, *dev) {
                return Some(format!(
                    "{who} is opened exclusively (mounted in another namespace, or held); free it first"
                ));
            }
        }
        for (dev, _, who) in &members {
            for (lname, ldev, id, file) in &self.loops {
                let (Some(ldev), Some(id)) = (ldev, id) else {
                    continue;
                };
                let subject = if id.rdev.map(split) == Some(*dev) {
                    format!("{who} backs /dev/{lname}")
                } else if split(id.dev) == *dev {
                    format!(
                        "{who} holds {}, the backing file of /dev/{lname}",
                        file.display()
                    )
                } else {
                    continue;
                };
                todo.push_back(Node {
                    dev: *ldev,
                    head: format!("{subject}, which"),
                    part: format!("{subject}, whose partition"),
                    start: false,
                });
            }
        }
        None
    }

    fn walk(&self, mut todo: VecDeque<Node>) -> Option<String> {
        let sys_devs = self.system_devices();
        let mut seen = BTreeSet::new();
        while let Some(node) = todo.pop_front() {
            if !seen.insert(node.dev) {
                continue;
            }
            if let Some(r) = self.visit(&node, &sys_devs, &mut todo) {
                return Some(r);
            }
        }
        None
    }

    /// Why the block device `rdev` must not be written, as the end of a sentence ("it is
    /// mounted at /mnt; unmount it first"); `None` when nothing it is or carries is in use.
    pub fn device_reason(&self, rdev: u64) -> Option<String> {
        self.walk(VecDeque::from([Node {
            dev: split(rdev),
            head: "it".into(),
            part: "its partition".into(),
            start: true,
        }]))
    }

    /// Why the regular file with identity `st` must not be written: it is swap, or backs a
    /// loop device (directly or down a chain) with something mounted or in use.
    pub fn file_reason(&self, st: Stat) -> Option<String> {
        if self
            .swaps
            .iter()
            .any(|(_, s)| s.is_some_and(|s| s.dev == st.dev && s.ino == st.ino))
        {
            return Some("it is in use as swap; swapoff it first".into());
        }
        let todo: VecDeque<Node> = self
            .loops
            .iter()
            .filter(|(_, _, id, _)| id.is_some_and(|i| i.dev == st.dev && i.ino == st.ino))
            .filter_map(|(lname, ldev, _, _)| {
                Some(Node {
                    dev: (*ldev)?,
                    head: format!("it backs /dev/{lname}, which"),
                    part: format!("it backs /dev/{lname}, whose partition"),
                    start: false,
                })
            })
            .collect();
        self.walk(todo)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_mountinfo_paths() {
        assert_eq!(unescape("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/end\\"), "/end\\");
    }

    /// A fixture sysfs/procfs: block devices `(name, major, minor, backing file)` with
    /// optional partitions and holders, and a mountinfo.
    struct Tree {
        dir: tempfile::TempDir,
    }

    impl Tree {
        fn new() -> Tree {
            let t = Tree {
                dir: tempfile::tempdir().unwrap(),
            };
            for d in [
                "sys/devices/virtual/block",
                "sys/dev/block",
                "sys/block",
                "proc/self",
            ] {
                fs::create_dir_all(t.dir.path().join(d)).unwrap();
            }
            fs::write(t.proc("swaps"), "Filename Type Size Used Priority\n").unwrap();
            t.mounts("");
            t
        }
        fn sys(&self, p: &str) -> PathBuf {
            self.dir.path().join("sys").join(p)
        }
        fn proc(&self, p: &str) -> PathBuf {
            self.dir.path().join("proc").join(p)
        }
        fn mounts(&self, text: &str) {
            fs::write(self.proc("self/mountinfo"), text).unwrap();
        }
        /// Adds a device; `parent` is the whole disk for a partition.
        fn dev(&self, name: &str, ma: u32, mi: u32, parent: Option<&str>, backing: Option<&str>) {
            let dir = match parent {
                Some(p) => self.sys(&format!("devices/virtual/block/{p}/{name}")),
                None => self.sys(&format!("devices/virtual/block/{name}")),
            };
            fs::create_dir_all(dir.join("holders")).unwrap();
            fs::write(dir.join("dev"), format!("{ma}:{mi}\n")).unwrap();
            if parent.is_some() {
                fs::write(dir.join("partition"), "1\n").unwrap();
            } else {
                std::os::unix::fs::symlink(&dir, self.sys(&format!("block/{name}"))).unwrap();
            }
            std::os::unix::fs::symlink(&dir, self.sys(&format!("dev/block/{ma}:{mi}"))).unwrap();
            if let Some(b) = backing {
                fs::create_dir_all(dir.join("loop")).unwrap();
                fs::write(dir.join("loop/backing_file"), format!("{b}\n")).unwrap();
            }
        }
        fn hold(&self, name: &str, holder: &str) {
            fs::write(
                self.sys(&format!("devices/virtual/block/{name}/holders/{holder}")),
                "",
            )
            .unwrap();
        }
        /// A guard over the tree; `stat` answers for the paths named in it.
        fn guard(&self, stats: Vec<(&'static str, Stat)>) -> Guard {
            Guard::new(Roots {
                sys: self.dir.path().join("sys"),
                proc_: self.dir.path().join("proc"),
                dev: None,
                stat: Box::new(move |p: &Path| {
                    stats
                        .iter()
                        .find(|(q, _)| Path::new(q) == p)
                        .map(|(_, s)| *s)
                }),
            })
        }
    }

    fn blk(ma: u32, mi: u32) -> Stat {
        Stat {
            dev: 5,
            ino: u64::from(mi) + 1000,
            rdev: Some(libc::makedev(ma, mi)),
        }
    }

    fn file_on(ma: u32, mi: u32, ino: u64) -> Stat {
        Stat {
            dev: libc::makedev(ma, mi),
            ino,
            rdev: None,
        }
    }

    /// Issue 23 item 3: a loop device backing another loop device whose filesystem is mounted
    /// was written with --destroy (only the device's own holders and mounts were looked at).
    #[test]
    fn a_device_backing_a_mounted_loop_device_is_refused_with_the_chain() {
        let t = Tree::new();
        t.dev("loop3", 7, 3, None, None);
        t.dev("loop4", 7, 4, None, Some("/dev/loop3"));
        let stats = vec![("/dev/loop3", blk(7, 3)), ("/dev/loop4", blk(7, 4))];
        assert_eq!(
            t.guard(stats.clone()).device_reason(libc::makedev(7, 3)),
            None
        );
        t.mounts("36 25 7:4 / /mnt/x rw,relatime - ext4 /dev/loop4 rw\n");
        let why = t
            .guard(stats.clone())
            .device_reason(libc::makedev(7, 3))
            .unwrap();
        assert_eq!(
            why,
            "it backs /dev/loop4, which is mounted at /mnt/x; unmount it first"
        );
        // the mounted device itself is refused as before
        let why = t.guard(stats).device_reason(libc::makedev(7, 4)).unwrap();
        assert_eq!(why, "it is mounted at /mnt/x; unmount it first");
    }

    #[test]
    fn chains_are_followed_through_files_living_on_a_device_and_partitions() {
        let t = Tree::new();
        t.dev("loop3", 7, 3, None, None);
        t.dev("loop4", 7, 4, None, Some("/dev/loop3"));
        t.dev("loop4p1", 259, 0, Some("loop4"), None);
        t.dev("loop5", 7, 5, None, Some("/m/img"));
        t.mounts("40 25 7:5 / /mnt/y rw - ext4 /dev/loop5 rw\n");
        let stats = vec![
            ("/dev/loop3", blk(7, 3)),
            ("/dev/loop4", blk(7, 4)),
            ("/dev/loop5", blk(7, 5)),
            ("/m/img", file_on(259, 0, 12)),
        ];
        let why = t
            .guard(stats.clone())
            .device_reason(libc::makedev(7, 3))
            .unwrap();
        assert_eq!(
            why,
            "it backs /dev/loop4, whose partition /dev/loop4p1 holds /m/img, the backing file of /dev/loop5, which is mounted at /mnt/y; unmount it first"
        );
        // a regular file target backing the chain: compared by device and inode, not by path
        let why = t
            .guard(stats.clone())
            .file_reason(file_on(259, 0, 12))
            .unwrap();
        assert_eq!(
            why,
            "it backs /dev/loop5, which is mounted at /mnt/y; unmount it first"
        );
        assert_eq!(
            t.guard(stats.clone()).file_reason(file_on(259, 0, 13)),
            None
        );
        // a holder down the chain refuses as well
        t.mounts("");
        assert_eq!(
            t.guard(stats.clone()).device_reason(libc::makedev(7, 3)),
            None
        );
        t.hold("loop5", "dm-0");
        let why = t.guard(stats).device_reason(libc::makedev(7, 3)).unwrap();
        assert!(
            why.ends_with(
                "/dev/loop5, which is held by dm-0 (LVM, RAID or device-mapper); release it first"
            ),
            "{why}"
        );
    }

    #[test]
    fn a_loop_chain_that_comes_back_to_itself_ends() {
        let t = Tree::new();
        t.dev("loop6", 7, 6, None, Some("/dev/loop7"));
        t.dev("loop7", 7, 7, None, Some("/dev/loop6"));
        let stats = vec![("/dev/loop6", blk(7, 6)), ("/dev/loop7", blk(7, 7))];
        assert_eq!(t.guard(stats).device_reason(libc::makedev(7, 6)), None);
    }

    #[test]
    fn root_device_backs_the_system() {
        let dev = fs::metadata("/").unwrap().dev();
        let g = Guard::new(Roots::system());
        assert!(g.system_devices().contains(&sysfs::split_dev(dev)));
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
