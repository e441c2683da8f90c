//! The guard: what a target is and carries, followed through loop devices and partitions.

use super::views::{loop_backing, mounts, swaps, Mount};
use super::{split, Dev, Roots, Stat};
use crate::engine::sysfs;
use std::collections::{BTreeSet, VecDeque};
use std::fs;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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
    pub(super) fn system_devices(&self) -> BTreeSet<Dev> {
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
