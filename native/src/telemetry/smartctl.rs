//! SATA (and NVMe) telemetry through `smartctl -j`, run as a subprocess at a slow cadence:
//! a SMART read is a pass-through command the drive serves between I/Os, and smartctl's
//! drive database is the one maintained source of what each ATA attribute means.

use super::{ata_units, nvme_log, DriveSample, Source};
use crate::{Error, Result};
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Default cadence: SMART attributes update slowly and each read costs a pass-through.
pub const DEFAULT_CADENCE: Duration = Duration::from_secs(30);
/// A smartctl that has not answered in this long is killed and the read fails.
const TIMEOUT: Duration = Duration::from_secs(20);

/// `smartctl -j -A -n standby` of one device.
pub struct Smartctl {
    pub program: PathBuf,
    pub device: String,
    pub cadence: Duration,
}

impl Smartctl {
    pub fn new(device: &str) -> Self {
        Smartctl {
            program: PathBuf::from("smartctl"),
            device: device.to_string(),
            cadence: DEFAULT_CADENCE,
        }
    }

    /// The JSON smartctl printed (its exit status is a bit mask of warnings: the JSON is
    /// read whatever it is, as long as it parses).
    pub fn run(&self) -> Result<Value> {
        let mut child = Command::new(&self.program)
            .args(["-j", "-i", "-A", "-n", "standby", &self.device])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                Error::io(
                    format!("running {} (install smartmontools)", self.program.display()),
                    e,
                )
            })?;
        let mut out = child.stdout.take().expect("piped stdout");
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = out.read_to_end(&mut buf);
            buf
        });
        let t0 = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if t0.elapsed() > TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(Error::Parse(format!(
                        "smartctl on {} did not answer in {} s",
                        self.device,
                        TIMEOUT.as_secs()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(Error::io("waiting for smartctl", e)),
            }
        }
        let buf = reader.join().unwrap_or_default();
        serde_json::from_slice(&buf).map_err(|e| {
            Error::Parse(format!(
                "smartctl -j on {} printed no JSON: {e}",
                self.device
            ))
        })
    }
}

/// The sample in one `smartctl -j` document (ATA attributes through the unit table; NVMe
/// through its health log), or why it has none.
pub fn sample_of(doc: &Value) -> Result<DriveSample> {
    let mut s = DriveSample {
        temp_c: doc.pointer("/temperature/current").and_then(Value::as_f64),
        ..DriveSample::default()
    };
    if let Some(log) = doc.get("nvme_smart_health_information_log") {
        if let Some(u) = log.get("data_units_written").and_then(Value::as_u64) {
            s.host_written_bytes = u.checked_mul(nvme_log::DATA_UNIT_BYTES);
            s.host_unit_bytes = Some(nvme_log::DATA_UNIT_BYTES);
        }
        return Ok(s);
    }
    let Some(table) = doc
        .pointer("/ata_smart_attributes/table")
        .and_then(Value::as_array)
    else {
        if doc
            .pointer("/smartctl/exit_status")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            & 2
            != 0
        {
            return Err(Error::Parse(
                "smartctl could not open the device (exit bit 1)".into(),
            ));
        }
        return Ok(s); // e.g. the drive was in standby (-n standby): only what was printed
    };
    let attrs: Vec<(u32, String, u64)> = table
        .iter()
        .filter_map(|a| {
            Some((
                u32::try_from(a.get("id")?.as_u64()?).ok()?,
                a.get("name")?.as_str()?.to_string(),
                a.pointer("/raw/value")?.as_u64()?,
            ))
        })
        .collect();
    let fam = doc.get("model_family").and_then(Value::as_str);
    let sector = doc
        .get("logical_block_size")
        .and_then(Value::as_u64)
        .unwrap_or(512);
    if let Ok((b, u)) = ata_units::decode(fam, &attrs, "host", sector) {
        (s.host_written_bytes, s.host_unit_bytes) = (Some(b), Some(u));
    }
    if let Ok((b, u)) = ata_units::decode(fam, &attrs, "nand", sector) {
        (s.nand_written_bytes, s.nand_unit_bytes) = (Some(b), Some(u));
    }
    Ok(s)
}

impl Source for Smartctl {
    fn name(&self) -> &'static str {
        "smartctl"
    }
    fn cadence(&self) -> Duration {
        self.cadence
    }
    fn read(&mut self) -> Result<DriveSample> {
        sample_of(&self.run()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn realdrive(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/realdrive")
            .join(name)
    }

    /// A fake `smartctl` that replays a pinned real output.
    fn fake_smartctl(dir: &Path, file: &Path) -> PathBuf {
        let p = dir.join("smartctl");
        std::fs::write(&p, format!("#!/bin/sh\ncat '{}'\nexit 4\n", file.display())).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn ata_json_through_a_fake_smartctl() {
        let t = tempfile::tempdir().unwrap();
        let f =
            realdrive("AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-ata-full.json");
        let mut s = Smartctl {
            program: fake_smartctl(t.path(), &f),
            ..Smartctl::new("/dev/sda")
        };
        let d = s.read().unwrap();
        assert_eq!(d.temp_c, Some(36.0));
        assert_eq!(d.host_written_bytes, Some(64_777_770_148 * 512));
        assert_eq!(d.nand_written_bytes, None); // Samsung: no NAND counter in the table
    }

    #[test]
    fn nvme_json_host_units() {
        let f = realdrive("AnalogJ__scrutiny__webapp_backend_pkg_models_testdata_smart-nvme.json");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let d = sample_of(&doc).unwrap();
        assert_eq!(d.host_written_bytes, Some(7_773_431 * 512_000));
        assert_eq!(d.nand_written_bytes, None);
    }

    #[test]
    fn missing_program_and_garbage_are_errors() {
        let mut s = Smartctl {
            program: "/nonexistent/smartctl".into(),
            ..Smartctl::new("/dev/sda")
        };
        assert!(s.read().unwrap_err().to_string().contains("smartmontools"));
        let t = tempfile::tempdir().unwrap();
        let g = t.path().join("g.txt");
        std::fs::write(&g, "not json").unwrap();
        let mut s = Smartctl {
            program: fake_smartctl(t.path(), &g),
            ..Smartctl::new("/dev/sda")
        };
        assert!(s.read().unwrap_err().to_string().contains("no JSON"));
    }
}
