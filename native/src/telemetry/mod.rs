//! The drive's own telemetry, sampled off the I/O path: temperature and thresholds (hwmon),
//! the NVMe SMART/Health log (page 02h), SATA counters through `smartctl -j`, and the
//! simulated drive's counters through the same [`DriveSample`].
//!
//! A [`sampler::Sampler`] thread polls each [`Source`] at its own cadence and publishes the
//! latest merged sample in a [`slot::Slot`]; the recorder copies it into each interval's row
//! with a `try_lock` that never waits, so the engine's I/O loop never blocks on a drive query.

pub mod ata_units;
pub mod hwmon;
pub mod nvme_log;
pub mod plan;
pub mod sampler;
pub mod sim;
pub mod slot;
pub mod smartctl;

use std::time::Duration;

/// One reading of a drive's telemetry. Every field is optional: a source fills what it
/// reads, and a field no source has stays `None` (a null column), never a default.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DriveSample {
    /// Composite / drive temperature, °C.
    pub temp_c: Option<f64>,
    /// Warning (NVMe WCTEMP, hwmon `temp*_max`) and critical (CCTEMP, `temp*_crit`), °C.
    pub temp_warning_c: Option<f64>,
    pub temp_critical_c: Option<f64>,
    /// Thermal-throttle transitions so far (NVMe TMT1 + TMT2 transition counts; ATA
    /// throttle events where the family has a counter).
    pub throttle_transitions: Option<u64>,
    /// Seconds spent throttled so far (NVMe TMT1 + TMT2 total time).
    pub throttle_time_s: Option<u64>,
    /// Throttle state over the last sample period: 0 none, 1 light (NVMe TMT1), 2 heavy
    /// (TMT2); the capture's `drive_throttle` column.
    pub throttle_state: Option<u64>,
    /// NVMe power state (Get Features 02h), where read.
    pub power_state: Option<u32>,
    /// Cumulative host bytes written by the drive's own counter, and one unit of it.
    pub host_written_bytes: Option<u64>,
    pub host_unit_bytes: Option<u64>,
    /// Cumulative bytes written to flash by the drive's own counter, and one unit of it.
    pub nand_written_bytes: Option<u64>,
    pub nand_unit_bytes: Option<u64>,
}

impl DriveSample {
    /// `self` with every field `other` has taken from `other` (a faster source's fresh
    /// temperature over a slower one's, counters from whichever reads them).
    pub fn merge(&mut self, other: &DriveSample) {
        macro_rules! take {
            ($($f:ident),*) => { $( if other.$f.is_some() { self.$f = other.$f; } )* };
        }
        take!(
            temp_c,
            temp_warning_c,
            temp_critical_c,
            throttle_transitions,
            throttle_time_s,
            throttle_state,
            power_state,
            host_written_bytes,
            host_unit_bytes,
            nand_written_bytes,
            nand_unit_bytes
        );
    }
}

impl DriveSample {
    /// The capture row's view of this sample, `age_s` old at the interval's end.
    pub fn to_row(&self, age_s: Option<f64>) -> crate::capture::DriveSample {
        crate::capture::DriveSample {
            temp_c: self.temp_c,
            throttle: self.throttle_state,
            power_state: self.power_state.map(u64::from),
            host_written_bytes: self.host_written_bytes,
            nand_written_bytes: self.nand_written_bytes,
            sample_age_s: age_s,
        }
    }
}

/// Something that reads a drive's telemetry: hwmon, the NVMe log page, `smartctl`, or the
/// simulator. Called from the sampler thread only.
pub trait Source: Send {
    /// Short name for metadata (`hwmon`, `nvme-log`, `smartctl`, `sim`).
    fn name(&self) -> &'static str;
    /// How often to read it (hwmon every second; `smartctl` much less often).
    fn cadence(&self) -> Duration;
    /// One reading. An error is recorded (metadata) and the source read again next time.
    fn read(&mut self) -> crate::Result<DriveSample>;
}
