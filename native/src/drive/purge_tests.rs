//! The purge decision and guard against the fake controller, a fake `hdparm` and sysfs trees
//! laid out as the kernel lays them out: every row of the method table, every refusal, and
//! no destructive command in plan mode.

use super::ata::Tool;
use super::fake::{CtrlSpec, FakeController};
use super::nvme::{opcode, NSID_ALL};
use super::purge::{execute, plan, Env, Guard, Method, Request};
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

/// A sysfs tree: `names` block devices, NVMe namespaces grouped under their controller.
fn sys(root: &Path, names: &[&str], usb: bool) {
    let s = root.join("sys");
    for n in names {
        let (dev, parent) = if let Some(rest) = n.strip_prefix("nvme") {
            let c = rest.split('n').next().unwrap();
            let ctrl = format!("nvme{c}");
            let d = format!("devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/{ctrl}/{n}");
            std::fs::create_dir_all(s.join("class/nvme")).unwrap();
            let _ = symlink(
                format!("../../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/{ctrl}"),
                s.join("class/nvme").join(&ctrl),
            );
            (d, None)
        } else if n.starts_with("loop") {
            (format!("devices/virtual/block/{n}"), None)
        } else if usb {
            (
                format!("devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/{n}"),
                Some("uas"),
            )
        } else {
            (
                format!("devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/{n}"),
                Some("sd"),
            )
        };
        let d = s.join(&dev);
        std::fs::create_dir_all(d.join("queue")).unwrap();
        std::fs::write(d.join("size"), "2097152\n").unwrap();
        std::fs::write(d.join("queue/logical_block_size"), "512\n").unwrap();
        std::fs::write(d.join("queue/discard_max_bytes"), "2147450880\n").unwrap();
        if n.starts_with("loop") {
            std::fs::create_dir_all(d.join("loop")).unwrap();
        }
        if let Some(drv) = parent {
            let dd = d.join("../../");
            std::fs::create_dir_all(dd.join("drivers").join(drv)).unwrap();
            std::fs::write(dd.join("vendor"), "ATA     \n").unwrap();
            let _ = symlink("../..", d.join("device"));
            symlink(format!("drivers/{drv}"), dd.join("driver")).unwrap();
        }
        std::fs::create_dir_all(s.join("class/block")).unwrap();
        symlink(format!("../../{dev}"), s.join("class/block").join(n)).unwrap();
    }
}

#[derive(Default)]
struct FakeGuard(BTreeMap<String, String>);
impl Guard for FakeGuard {
    fn in_use(&self, dev: &str) -> Option<String> {
        self.0.get(dev).cloned()
    }
}

/// Replays recorded `hdparm` output: `-I` → `identify`; every call recorded.
struct FakeHdparm {
    identify: String,
    calls: RefCell<Vec<Vec<String>>>,
    erased: RefCell<bool>,
}
/// The disk behind the fake hdparm: old data until an erase or sanitize ran, zeros after.
impl super::media::Media for FakeHdparm {
    fn read_at(&self, _offset: u64, buf: &mut [u8]) -> Result<()> {
        buf.fill(if *self.erased.borrow() { 0 } else { 0x5a });
        Ok(())
    }
}
impl Tool for FakeHdparm {
    fn run(&self, args: &[String]) -> Result<String> {
        self.calls.borrow_mut().push(args.to_vec());
        if args.iter().any(|a| {
            a.starts_with("--sanitize-b")
                || a.starts_with("--sanitize-c")
                || a.starts_with("--security-erase")
        }) {
            *self.erased.borrow_mut() = true;
        }
        Ok(if args[0] == "-I" {
            self.identify.clone()
        } else if args[0] == "--sanitize-status" {
            "Sanitize status:\n    State:    SD0 Sanitize Idle\n    Last Sanitize Operation Completed Without Error\n".into()
        } else {
            String::new()
        })
    }
    fn name(&self) -> String {
        "fake hdparm".into()
    }
}
fn hdparm(identify: &str) -> FakeHdparm {
    FakeHdparm {
        identify: identify.into(),
        calls: RefCell::new(vec![]),
        erased: RefCell::new(false),
    }
}

fn req(dev: &str, destroy: &[&str], method: &str) -> Request {
    Request {
        device: dev.into(),
        destroy: destroy.iter().map(|s| s.to_string()).collect(),
        method: method.into(),
        verify_samples: 16,
    }
}

struct Rig {
    dir: tempfile::TempDir,
    ctrl: FakeController,
    hd: FakeHdparm,
    guard: FakeGuard,
}

impl Rig {
    fn nvme(spec: CtrlSpec, names: &[&str]) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        sys(dir.path(), names, false);
        Rig {
            dir,
            ctrl: FakeController::from_spec(&spec),
            hd: hdparm(""),
            guard: FakeGuard::default(),
        }
    }
    fn ata(identify: &str, usb: bool) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        sys(dir.path(), &["sdb"], usb);
        Rig {
            dir,
            ctrl: FakeController::new(),
            hd: hdparm(identify),
            guard: FakeGuard::default(),
        }
    }
    fn env(&self, nvme: bool) -> Env<'_> {
        Env {
            root: self.dir.path(),
            admin: nvme.then_some(&self.ctrl as _),
            hdparm: &self.hd,
            guard: &self.guard,
            media: Some(if nvme { &self.ctrl as _ } else { &self.hd as _ }),
            sleep: &|_: Duration| {},
        }
    }
    fn destructive(&self) -> Vec<u8> {
        self.ctrl
            .commands()
            .iter()
            .map(|c| c.opcode)
            .filter(|&o| o == opcode::FORMAT_NVM || o == opcode::SANITIZE)
            .collect()
    }
}

fn spec(sanicap: u32, fna: u8, oacs: u16) -> CtrlSpec {
    CtrlSpec {
        sanicap,
        fna,
        oacs,
        namespaces: 2,
        ..CtrlSpec::default()
    }
}

#[test]
fn nvme_method_table_in_order() {
    // (SANICAP, FNA, OACS) → the method auto picks
    let rows = [
        (0b011, 0, 0x17, Method::NvmeSanitizeBlock),
        (0b001, 0, 0x17, Method::NvmeSanitizeCrypto),
        (0b100, 0, 0x17, Method::NvmeFormatUserData), // overwrite only: not used
        (0, 0b100, 0x17, Method::NvmeFormatUserData),
    ];
    for (sanicap, fna, oacs, want) in rows {
        let r = Rig::nvme(spec(sanicap, fna, oacs), &["nvme0n1"]);
        let p = plan(
            &r.env(true),
            &req("/dev/nvme0n1", &["/dev/nvme0n1"], "auto"),
        )
        .unwrap();
        assert_eq!(p.method, want.name(), "sanicap {sanicap:#b}");
        assert!(p.pts_purge);
    }
    // no sanitize, no format: nothing native; a namespace still supports discard → TRIM, labelled
    let r = Rig::nvme(spec(0, 0, 0x0), &["nvme0n1"]);
    let p = plan(
        &r.env(true),
        &req("/dev/nvme0n1", &["/dev/nvme0n1"], "auto"),
    )
    .unwrap();
    assert_eq!(p.method, "trim");
    assert!(!p.pts_purge);
    assert!(p.label.contains("not a PTS purge"), "{}", p.label);
}

#[test]
fn plan_sends_no_destructive_command_and_prints_the_dwords() {
    let r = Rig::nvme(spec(0b010, 0, 0x17), &["nvme0n1", "nvme0n2"]);
    let p = plan(&r.env(true), &req("/dev/nvme0n1", &[], "auto")).unwrap();
    // only the three read-only Identify commands (controller, namespace, active list)
    let ops: Vec<u8> = r.ctrl.commands().iter().map(|c| c.opcode).collect();
    assert_eq!(ops, vec![opcode::IDENTIFY; 3]);
    assert!(r.destructive().is_empty());
    assert_eq!(r.ctrl.media_reads(), 0);
    assert!(
        p.commands[0].contains("Sanitize (84h) to /dev/nvme0"),
        "{:?}",
        p.commands
    );
    assert!(
        p.commands[0].contains("CDW10=0x00000002"),
        "{:?}",
        p.commands
    );
    // the missing confirmation is listed, naming both namespaces
    assert!(
        p.refusals[0].contains("destroy=\"/dev/nvme0n1,/dev/nvme0n2\""),
        "{:?}",
        p.refusals
    );
}

#[test]
fn sanitize_reaches_every_namespace_and_needs_each_named() {
    let r = Rig::nvme(spec(0b010, 0, 0x17), &["nvme0n1", "nvme0n2"]);
    let e = r.env(true);
    let q = req("/dev/nvme0n1", &["/dev/nvme0n1"], "auto");
    let p = plan(&e, &q).unwrap();
    assert_eq!(p.reaches, vec!["/dev/nvme0n1", "/dev/nvme0n2"]);
    let err = execute(&e, &q, &p).unwrap_err();
    assert!(matches!(err, Error::Refused(_)));
    assert!(
        err.to_string().contains("does not name /dev/nvme0n2"),
        "{err}"
    );
    assert!(r.destructive().is_empty());

    let q = req("/dev/nvme0n1", &["/dev/nvme0n1", "/dev/nvme0n2"], "auto");
    let p = plan(&e, &q).unwrap();
    let rec = execute(&e, &q, &p).unwrap();
    assert_eq!(rec["method"], "nvme-sanitize-block");
    assert_eq!(rec["label"], "purged by nvme-sanitize-block");
    assert_eq!(rec["verification"]["passed"], true);
    assert_eq!(rec["verification"]["expected"], "zeros");
    assert_eq!(rec["sanitize_status"]["state"], "completed");
    let san: Vec<_> = r
        .ctrl
        .commands()
        .into_iter()
        .filter(|c| c.opcode == opcode::SANITIZE)
        .collect();
    assert_eq!(san.len(), 1);
    assert_eq!(san[0].cdw10, 0x2);
    assert_eq!(r.ctrl.media_reads(), 16);
}

#[test]
fn a_hidden_namespace_is_listed_in_the_blast_radius() {
    let mut s = spec(0b010, 0, 0x17);
    s.namespaces = 3; // the controller has 3; sysfs shows 2
    let r = Rig::nvme(s, &["nvme0n1", "nvme0n2"]);
    let p = plan(&r.env(true), &req("/dev/nvme0n1", &[], "auto")).unwrap();
    assert_eq!(p.reaches.len(), 3);
    assert!(
        p.reaches[2].contains("namespace 3 (no block device)"),
        "{:?}",
        p.reaches
    );
}

#[test]
fn a_busy_sibling_namespace_refuses_a_controller_wide_purge() {
    let mut r = Rig::nvme(spec(0b010, 0, 0x17), &["nvme0n1", "nvme0n2"]);
    r.guard.0.insert(
        "/dev/nvme0n2".into(),
        "refusing to write to /dev/nvme0n2: it is mounted at /srv; unmount it first (nothing was written)".into(),
    );
    let e = r.env(true);
    let q = req("/dev/nvme0n1", &["/dev/nvme0n1", "/dev/nvme0n2"], "auto");
    let p = plan(&e, &q).unwrap();
    let err = execute(&e, &q, &p).unwrap_err().to_string();
    assert!(
        err.contains("mounted at /srv") && err.contains("every namespace"),
        "{err}"
    );
    assert!(r.destructive().is_empty());
}

#[test]
fn format_reaches_one_namespace_unless_fna_says_all() {
    // FNA 0: per-namespace format, NSID = the namespace, SES 1, current LBA format kept
    let r = Rig::nvme(spec(0, 0, 0x17), &["nvme0n1", "nvme0n2"]);
    let e = r.env(true);
    let q = req("/dev/nvme0n1", &["/dev/nvme0n1"], "auto");
    let p = plan(&e, &q).unwrap();
    assert_eq!(p.reaches, vec!["/dev/nvme0n1"]);
    execute(&e, &q, &p).unwrap();
    let f = r
        .ctrl
        .commands()
        .into_iter()
        .find(|c| c.opcode == opcode::FORMAT_NVM)
        .unwrap();
    assert_eq!((f.nsid, f.cdw10), (1, 1 << 9));
    // FNA bit 0: the format reaches every namespace; NSID = all
    let r = Rig::nvme(spec(0, 0b001, 0x17), &["nvme0n1", "nvme0n2"]);
    let e = r.env(true);
    let q = req(
        "/dev/nvme0n2",
        &["/dev/nvme0n1", "/dev/nvme0n2"],
        "nvme-format-user-data",
    );
    let p = plan(&e, &q).unwrap();
    assert_eq!(p.reaches.len(), 2);
    execute(&e, &q, &p).unwrap();
    let f = r
        .ctrl
        .commands()
        .into_iter()
        .find(|c| c.opcode == opcode::FORMAT_NVM)
        .unwrap();
    assert_eq!(f.nsid, NSID_ALL);
    // crypto format, asked for by name: SES 2
    let r = Rig::nvme(spec(0, 0b100, 0x17), &["nvme0n1"]);
    let e = r.env(true);
    let q = req("/dev/nvme0n1", &["/dev/nvme0n1"], "nvme-format-crypto");
    execute(&e, &q, &plan(&e, &q).unwrap()).unwrap();
    let f = r
        .ctrl
        .commands()
        .into_iter()
        .find(|c| c.opcode == opcode::FORMAT_NVM)
        .unwrap();
    assert_eq!(f.cdw10 >> 9 & 7, 2);
}

#[test]
fn a_drive_that_acknowledges_but_keeps_the_data_fails_verification() {
    let r = Rig::nvme(spec(0b010, 0, 0x17), &["nvme0n1"]);
    r.ctrl.ignore_erases();
    let e = r.env(true);
    let q = req("/dev/nvme0n1", &["/dev/nvme0n1"], "auto");
    let err = execute(&e, &q, &plan(&e, &q).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("16 of 16 sampled blocks do not read back as zeros"),
        "{err}"
    );
}

#[test]
fn a_rejected_sanitize_is_an_error_naming_the_status() {
    let r = Rig::nvme(spec(0b010, 0, 0x17), &["nvme0n1"]);
    r.ctrl.reject(opcode::SANITIZE, 0x0023);
    let e = r.env(true);
    let q = req("/dev/nvme0n1", &["/dev/nvme0n1"], "auto");
    let err = execute(&e, &q, &plan(&e, &q).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Sanitize (84h)") && err.contains("0x023"),
        "{err}"
    );
}

#[test]
fn asking_for_a_method_the_drive_lacks_is_refused_naming_what_it_offers() {
    let r = Rig::nvme(spec(0b001, 0, 0x17), &["nvme0n1"]);
    let p = plan(
        &r.env(true),
        &req("/dev/nvme0n1", &["/dev/nvme0n1"], "nvme-sanitize-block"),
    )
    .unwrap();
    assert!(
        p.refusals[0].contains("SANICAP block erase not set"),
        "{:?}",
        p.refusals
    );
    assert!(
        p.refusals[0].contains("nvme-sanitize-crypto"),
        "{:?}",
        p.refusals
    );
    let e = plan(&r.env(true), &req("/dev/nvme0n1", &[], "shred")).unwrap_err();
    assert!(matches!(e, Error::InvalidValue(_)));
}

const HDPARM_SEC: &str = "\n/dev/sdb:\n\nATA device, with non-removable media\n\tModel Number:       Samsung SSD 860 EVO 500GB\n\tSerial Number:      S3Z2NB0K123456A\n\tFirmware Revision:  RVT01B6Q\nCommands/features:\n\tEnabled\tSupported:\n\t   *\tSMART feature set\n\t    \tSecurity Mode feature set\nSecurity: \n\tMaster password revision code = 65534\n\t\tsupported\n\tnot\tenabled\n\tnot\tlocked\n\tnot\tfrozen\n\tnot\texpired: security count\n\t\tsupported: enhanced erase\n\t2min for SECURITY ERASE UNIT. 8min for ENHANCED SECURITY ERASE UNIT.\n";

#[test]
fn ata_secure_erase_sets_a_password_then_erases() {
    let r = Rig::ata(HDPARM_SEC, false);
    let e = r.env(false);
    let q = req("/dev/sdb", &["/dev/sdb"], "auto");
    let p = plan(&e, &q).unwrap();
    assert_eq!(p.method, "ata-secure-erase-enhanced");
    let a = p.capabilities.ata.as_ref().unwrap();
    assert_eq!(
        (a.erase_minutes, a.enhanced_erase_minutes),
        (Some(2), Some(8))
    );
    assert_eq!(a.model.as_deref(), Some("Samsung SSD 860 EVO 500GB"));
    execute(&e, &q, &p).unwrap();
    let calls = r.hd.calls.borrow();
    assert_eq!(calls[0], vec!["-I", "/dev/sdb"]);
    assert_eq!(
        calls[1],
        vec![
            "--user-master",
            "u",
            "--security-set-pass",
            "flashback",
            "/dev/sdb"
        ]
    );
    assert_eq!(
        calls[2],
        vec![
            "--user-master",
            "u",
            "--security-erase-enhanced",
            "flashback",
            "/dev/sdb"
        ]
    );
}

#[test]
fn sata_sanitize_comes_before_secure_erase() {
    let text = HDPARM_SEC.replace(
        "\t    \tSecurity Mode feature set\n",
        "\t    \tSecurity Mode feature set\n\t   *\tSANITIZE feature set\n\t   *\tCRYPTO_SCRAMBLE_EXT command\n\t   *\tBLOCK_ERASE_EXT command\n",
    );
    let r = Rig::ata(&text, false);
    let e = r.env(false);
    let q = req("/dev/sdb", &["/dev/sdb"], "auto");
    let p = plan(&e, &q).unwrap();
    assert_eq!(p.method, "sata-sanitize-block");
    execute(&e, &q, &p).unwrap();
    let calls = r.hd.calls.borrow();
    assert_eq!(
        calls[1],
        vec![
            "--yes-i-know-what-i-am-doing",
            "--sanitize-block-erase",
            "/dev/sdb"
        ]
    );
    assert_eq!(calls[2], vec!["--sanitize-status", "/dev/sdb"]);
    drop(calls);
    let p = plan(&e, &req("/dev/sdb", &["/dev/sdb"], "sata-sanitize-crypto")).unwrap();
    assert!(p.commands[0].contains("--sanitize-crypto-scramble"));
}

#[test]
fn a_frozen_drive_is_refused_not_trimmed() {
    let r = Rig::ata(&HDPARM_SEC.replace("\tnot\tfrozen", "\t\tfrozen"), false);
    let e = r.env(false);
    let q = req("/dev/sdb", &["/dev/sdb"], "auto");
    let p = plan(&e, &q).unwrap();
    let err = execute(&e, &q, &p).unwrap_err().to_string();
    assert!(err.contains("security-frozen"), "{err}");
    assert_eq!(r.hd.calls.borrow().len(), 1, "only hdparm -I ran");
}

#[test]
fn a_usb_bridge_is_refused_and_not_queried() {
    let r = Rig::ata(HDPARM_SEC, true);
    let e = r.env(false);
    let q = req("/dev/sdb", &["/dev/sdb"], "auto");
    let p = plan(&e, &q).unwrap();
    assert!(
        p.topology.usb_bridge.as_deref() == Some("driver uas"),
        "{:?}",
        p.topology
    );
    let err = execute(&e, &q, &p).unwrap_err().to_string();
    assert!(err.contains("USB bridge"), "{err}");
    assert!(r.hd.calls.borrow().is_empty());
}

#[test]
fn a_loop_device_gets_trim_labelled_and_refuses_native_methods() {
    let dir = tempfile::tempdir().unwrap();
    sys(dir.path(), &["loop7"], false);
    let ctrl = FakeController::new();
    let hd = hdparm("");
    let g = FakeGuard::default();
    let e = Env {
        root: dir.path(),
        admin: None,
        hdparm: &hd,
        guard: &g,
        media: Some(&ctrl),
        sleep: &|_| {},
    };
    let p = plan(&e, &req("/dev/loop7", &["/dev/loop7"], "auto")).unwrap();
    assert_eq!((p.method, p.pts_purge), ("trim", false));
    assert_eq!(p.label, "not purged (TRIM only): not a PTS purge");
    assert!(p.refusals.is_empty());
    let p = plan(
        &e,
        &req("/dev/loop7", &["/dev/loop7"], "nvme-sanitize-block"),
    )
    .unwrap();
    assert!(
        p.refusals[0].contains("offers no PTS purge"),
        "{:?}",
        p.refusals
    );
    assert!(
        p.refusals[0].contains("not a PTS purge"),
        "{:?}",
        p.refusals
    );
    assert!(hd.calls.borrow().is_empty());
}
