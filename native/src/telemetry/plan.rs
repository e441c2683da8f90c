//! Which telemetry a run's target gets, and what the capture's metadata says about it: a
//! block device with a drive behind it gets a sampler (hwmon, and `smartctl -j` for the
//! write counters at a slow cadence when smartctl is installed); a file or a loop device
//! gets none, with the reason. SMART snapshots are taken at the start and end of the run.

use super::hwmon::{self, Found, Hwmon};
use super::sampler::Sampler;
use super::slot::Reader;
use super::smartctl::Smartctl;
use super::{sim, Source};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// The telemetry of one run.
pub struct Plan {
    /// `telemetry` metadata: source(s), counter units, or the reason there is none.
    pub meta: Value,
    sampler: Option<Sampler>,
    smartctl: Option<Smartctl>,
}

fn smartctl_on_path() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("smartctl").is_file()))
}

impl Plan {
    /// No telemetry, for `reason`.
    pub fn none(reason: &str) -> Plan {
        Plan {
            meta: json!({"source": "none", "reason": reason}),
            sampler: None,
            smartctl: None,
        }
    }

    /// The simulated drive: its counters through [`sim::sample`] every interval.
    pub fn sim_meta() -> Value {
        json!({
            "source": "sim",
            "host_unit_bytes": sim::HOST_UNIT_BYTES,
            "nand_unit_bytes": sim::NAND_UNIT_BYTES,
            "temp_reason": sim::NO_TEMP_REASON,
            "throttle_reason": sim::NO_TEMP_REASON,
            "power_state_reason": "the simulated drive has no power states",
        })
    }

    /// The plan for a real target: `block` and its path (`/dev/nvme0n1`), read under
    /// `sys_root` (`/sys`).
    pub fn for_target(block: bool, path: &Path, sys_root: &Path) -> Plan {
        if !block {
            return Plan::none("a regular file: the drive under it also serves other files, so its counters are not this run's");
        }
        let Some(dev) = path.file_name().and_then(|n| n.to_str()) else {
            return Plan::none("the device has no name");
        };
        let mut sources: Vec<Box<dyn Source>> = vec![];
        let mut names = vec![];
        let mut reasons = serde_json::Map::new();
        match hwmon::find_for_block(sys_root, dev) {
            Found::Dir(d) => match Hwmon::open(d) {
                Ok(h) => {
                    names.push("hwmon");
                    sources.push(Box::new(h));
                }
                Err(e) => {
                    reasons.insert("temp_reason".into(), json!(e.to_string()));
                }
            },
            Found::None(why) if why.contains("no drive") => return Plan::none(&why),
            Found::None(why) => {
                reasons.insert("temp_reason".into(), json!(why));
            }
        }
        if dev.starts_with("nvme") {
            // the admin ioctl on the namespace node reaches its controller (needs root)
            match crate::drive::IoctlAdmin::open(path) {
                Ok(admin) => {
                    names.push("nvme-log");
                    sources.push(Box::new(super::nvme_log::source(
                        admin,
                        Duration::from_secs(1),
                    )));
                }
                Err(e) => {
                    reasons.insert("nvme_log_reason".into(), json!(e.to_string()));
                }
            }
        }
        let smartctl = smartctl_on_path().then(|| Smartctl::new(&path.display().to_string()));
        match &smartctl {
            Some(s) => {
                names.push("smartctl");
                sources.push(Box::new(Smartctl::new(&s.device)));
            }
            None => {
                reasons.insert(
                    "counters_reason".into(),
                    json!("smartctl is not installed (smartmontools): no write counters"),
                );
            }
        }
        let mut meta = json!({"source": names.join("+"), "cadence_s": {"hwmon": 1, "nvme-log": 1, "smartctl": super::smartctl::DEFAULT_CADENCE.as_secs()}});
        if names.contains(&"nvme-log") {
            // the host counter's unit: one NVMe Data Unit; the standard log has no NAND counter
            meta["host_unit_bytes"] = json!(super::nvme_log::DATA_UNIT_BYTES);
            meta["nand_reason"] = json!("the NVMe SMART/Health log has no NAND-write counter");
        }
        if let Value::Object(m) = &mut meta {
            m.extend(reasons);
        }
        Plan {
            meta,
            sampler: (!sources.is_empty()).then(|| Sampler::start(sources)),
            smartctl,
        }
    }

    /// A non-blocking reader of the sampler's latest sample, if there is a sampler.
    pub fn reader(&self) -> Option<Reader> {
        self.sampler.as_ref().map(Sampler::reader)
    }

    /// A SMART snapshot now (`smartctl -j -x` output as printed), or why there is none.
    pub fn snapshot(&self) -> Value {
        match &self.smartctl {
            Some(s) => match s.run() {
                Ok(v) => v,
                Err(e) => json!({"error": e.to_string()}),
            },
            None => {
                json!({"error": self.meta.get("reason").or(self.meta.get("counters_reason")).cloned().unwrap_or(json!("no SMART source"))})
            }
        }
    }

    /// Stops the sampler; its report goes into the metadata.
    pub fn finish(mut self) -> Value {
        if let Some(s) = self.sampler.take() {
            let rep = s.stop();
            if let Some(last) = rep.last {
                for (k, v) in [
                    ("host_unit_bytes", last.host_unit_bytes),
                    ("nand_unit_bytes", last.nand_unit_bytes),
                ] {
                    if let Some(v) = v {
                        self.meta[k] = json!(v);
                    }
                }
                if last.nand_written_bytes.is_none() && self.meta.get("nand_reason").is_none() {
                    self.meta["nand_reason"] = json!("no NAND-write counter known for this drive");
                }
            }
            if let Value::Object(m) = &mut self.meta {
                m.insert(
                    "sampler".into(),
                    json!(rep
                        .sources
                        .iter()
                        .map(|(n, reads, failed, errs)| json!({"source": n, "reads": reads, "failed": failed, "errors": errs}))
                        .collect::<Vec<_>>()),
                );
            }
        }
        self.meta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_loop_devices_get_none_with_a_reason() {
        let p = Plan::for_target(false, Path::new("/tmp/x.bin"), Path::new("/sys"));
        assert_eq!(p.meta["source"], "none");
        assert!(p.meta["reason"].as_str().unwrap().contains("regular file"));
        assert!(p.reader().is_none());
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("block/loop3")).unwrap();
        let p = Plan::for_target(true, Path::new("/dev/loop3"), t.path());
        assert_eq!(
            p.meta,
            json!({"source": "none", "reason": "loop device: no drive"})
        );
        assert!(p.snapshot()["error"]
            .as_str()
            .unwrap()
            .contains("loop device"));
    }

    #[test]
    fn a_drive_with_hwmon_is_sampled() {
        let t = tempfile::tempdir().unwrap();
        let hw = t.path().join("devices/nvme/nvme0/hwmon1");
        std::fs::create_dir_all(&hw).unwrap();
        std::fs::write(hw.join("temp1_input"), "45000\n").unwrap();
        std::fs::create_dir_all(t.path().join("block/nvme0n1")).unwrap();
        std::os::unix::fs::symlink(
            t.path().join("devices/nvme/nvme0"),
            t.path().join("block/nvme0n1/device"),
        )
        .unwrap();
        let p = Plan::for_target(true, Path::new("/dev/nvme0n1"), t.path());
        assert!(p.meta["source"].as_str().unwrap().starts_with("hwmon"));
        let mut r = p.reader().unwrap();
        let mut got = None;
        for _ in 0..100 {
            got = r.latest();
            if got.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(got.unwrap().sample.temp_c, Some(45.0));
        let meta = p.finish();
        assert_eq!(meta["sampler"][0]["source"], "hwmon");
    }
}
