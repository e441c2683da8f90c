use super::views::unescape;
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
