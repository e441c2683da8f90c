//! The purge on this machine, and the same with every outside party faked.

use super::{dev_path, device_name, execute, plan, refused, Env, Guard, Method, Request};
use crate::drive::ata;
use crate::drive::media::Media;
use crate::drive::nvme::NvmeAdmin;
use crate::drive::topology::{read_topology, DevKind};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// The engine's in-use guard (mounts, swap, holders, the running system) for a `/dev` path.
pub struct SystemGuard;

impl Guard for SystemGuard {
    fn in_use(&self, dev: &str) -> Option<String> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        match std::fs::metadata(dev) {
            Ok(md) if md.file_type().is_block_device() => {
                crate::engine::in_use_reason(Path::new(dev), md.rdev())
            }
            Ok(_) => Some(format!("refusing to purge {dev}: it is not a block device")),
            Err(e) => Some(format!(
                "refusing to purge {dev}: it cannot be examined ({e})"
            )),
        }
    }
}

/// Plans (and unless `plan_only`, runs) a purge of the device at `device` on this machine:
/// sysfs at `/`, the kernel's NVMe admin ioctl, `hdparm` from `PATH`, the engine's guard and
/// an `O_DIRECT` read-back. Returns the plan (plan only, or a TRIM/zero-fill fallback the
/// caller runs through the engine) or the record of the purge.
pub fn run_on_system(req: &Request, plan_only: bool) -> Result<Value> {
    let name = device_name(&req.device)?;
    let root = Path::new("/");
    let topo = read_topology(root, &name);
    let admin = match &topo.kind {
        DevKind::Nvme { controller, .. } => Some(crate::drive::nvme::IoctlAdmin::open(Path::new(
            &dev_path(controller),
        ))?),
        _ => None,
    };
    let hd = ata::Program("hdparm".into());
    let sleep = |d: Duration| std::thread::sleep(d);
    let env = Env {
        root,
        admin: admin.as_ref().map(|a| a as &dyn NvmeAdmin),
        hdparm: &hd,
        guard: &SystemGuard,
        media: None,
        sleep: &sleep,
    };
    let p = plan(&env, req)?;
    let native = p.chosen.is_some_and(Method::is_pts_purge);
    if plan_only || !native {
        if !plan_only {
            if let Some(r) = p.refusals.first() {
                return Err(refused(r.clone()));
            }
        }
        return Ok(serde_json::to_value(&p).unwrap_or(Value::Null));
    }
    let media = crate::drive::media::DirectReader::open(Path::new(&dev_path(&name)))?;
    let env = Env {
        media: Some(&media),
        ..env
    };
    execute(&env, req, &p)
}

/// The same with every outside party faked (the Python tests' entry): sysfs under `root`,
/// a [`crate::drive::fake::FakeController`] built from `spec` (None: no NVMe), `hdparm` from
/// `PATH`, devices in `busy` refused by the guard with the given sentence, and the read-back
/// from the regular file `media` (for the ATA path; the fake controller serves its own
/// otherwise).
pub fn run_with_fakes(
    req: &Request,
    plan_only: bool,
    root: &Path,
    spec: Option<&crate::drive::fake::CtrlSpec>,
    busy: &std::collections::BTreeMap<String, String>,
    media: Option<&Path>,
) -> Result<(Value, Vec<Value>)> {
    struct Busy<'a>(&'a std::collections::BTreeMap<String, String>);
    impl Guard for Busy<'_> {
        fn in_use(&self, dev: &str) -> Option<String> {
            self.0.get(dev).cloned()
        }
    }
    struct FileMedia(std::fs::File);
    impl Media for FileMedia {
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            use std::os::unix::fs::FileExt;
            self.0
                .read_exact_at(buf, offset)
                .map_err(|e| Error::io("reading the fake media failed", e))
        }
    }
    let ctrl = spec.map(crate::drive::fake::FakeController::from_spec);
    let file = match media {
        Some(p) => {
            Some(FileMedia(std::fs::File::open(p).map_err(|e| {
                Error::io(format!("opening {}", p.display()), e)
            })?))
        }
        None => None,
    };
    let hd = ata::Program("hdparm".into());
    let guard = Busy(busy);
    let env = Env {
        root,
        admin: ctrl.as_ref().map(|c| c as &dyn NvmeAdmin),
        hdparm: &hd,
        guard: &guard,
        media: match (&file, &ctrl) {
            (Some(f), _) => Some(f as &dyn Media),
            (None, Some(c)) => Some(c as &dyn Media),
            _ => None,
        },
        sleep: &|_| {},
    };
    let p = plan(&env, req)?;
    if let (false, Some(r)) = (plan_only, p.refusals.first()) {
        return Err(refused(r.clone()));
    }
    let out = if plan_only || !p.chosen.is_some_and(Method::is_pts_purge) {
        serde_json::to_value(&p).unwrap_or(Value::Null)
    } else {
        execute(&env, req, &p)?
    };
    let sent = ctrl
        .map(|c| {
            c.commands()
                .iter()
                .map(|c| json!({"opcode": c.opcode, "nsid": c.nsid, "cdw10": c.cdw10}))
                .collect()
        })
        .unwrap_or_default();
    Ok((out, sent))
}
