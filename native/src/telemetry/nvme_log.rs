//! The NVMe SMART / Health Information log page (Log Identifier 02h), decoded from its 512
//! bytes (NVM Express Base Specification, "SMART / Health Information Log": all fields
//! little-endian; 16-byte counters; temperatures in kelvin).

use super::DriveSample;
use crate::{Error, Result};

/// Length of the log page.
pub const LOG_LEN: usize = 512;
/// One "Data Unit": 1000 units of 512 bytes; the drive rounds up.
pub const DATA_UNIT_BYTES: u64 = 512_000;

/// The fields flashback uses, in the log page's units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NvmeHealth {
    pub critical_warning: u8,
    /// Composite temperature, kelvin (0 = not reported).
    pub composite_temp_k: u16,
    pub available_spare_pct: u8,
    pub available_spare_threshold_pct: u8,
    pub percentage_used: u8,
    pub data_units_read: u128,
    pub data_units_written: u128,
    pub host_read_commands: u128,
    pub host_write_commands: u128,
    pub controller_busy_time_min: u128,
    pub power_cycles: u128,
    pub power_on_hours: u128,
    pub unsafe_shutdowns: u128,
    pub media_errors: u128,
    pub error_log_entries: u128,
    pub warning_temp_time_min: u32,
    pub critical_temp_time_min: u32,
    /// Temperature sensors 1–8, kelvin (0 = not implemented).
    pub temp_sensors_k: [u16; 8],
    pub thermal_transitions: [u32; 2],
    pub thermal_time_s: [u32; 2],
}

fn u16le(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32le(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u128le(b: &[u8], at: usize) -> u128 {
    u128::from_le_bytes(b[at..at + 16].try_into().expect("16 bytes"))
}

/// Decodes a log page of at least 512 bytes.
pub fn decode(page: &[u8]) -> Result<NvmeHealth> {
    if page.len() < LOG_LEN {
        return Err(Error::Parse(format!(
            "an NVMe SMART/Health log page is {LOG_LEN} bytes; got {}: read the whole page",
            page.len()
        )));
    }
    let b = page;
    let mut sensors = [0u16; 8];
    for (i, s) in sensors.iter_mut().enumerate() {
        *s = u16le(b, 200 + 2 * i);
    }
    Ok(NvmeHealth {
        critical_warning: b[0],
        composite_temp_k: u16le(b, 1),
        available_spare_pct: b[3],
        available_spare_threshold_pct: b[4],
        percentage_used: b[5],
        data_units_read: u128le(b, 32),
        data_units_written: u128le(b, 48),
        host_read_commands: u128le(b, 64),
        host_write_commands: u128le(b, 80),
        controller_busy_time_min: u128le(b, 96),
        power_cycles: u128le(b, 112),
        power_on_hours: u128le(b, 128),
        unsafe_shutdowns: u128le(b, 144),
        media_errors: u128le(b, 160),
        error_log_entries: u128le(b, 176),
        warning_temp_time_min: u32le(b, 192),
        critical_temp_time_min: u32le(b, 196),
        temp_sensors_k: sensors,
        thermal_transitions: [u32le(b, 216), u32le(b, 220)],
        thermal_time_s: [u32le(b, 224), u32le(b, 228)],
    })
}

/// °C of a kelvin reading as smartctl and nvme-cli convert it (`K − 273`); 0 = none.
pub fn kelvin_to_c(k: u16) -> Option<f64> {
    (k != 0).then(|| f64::from(k) - 273.0)
}

impl NvmeHealth {
    /// The sample this log page gives: temperature, throttle counters and host bytes
    /// written (one Data Unit of resolution). The standard log has no NAND counter, so
    /// `nand_written_bytes` stays `None`.
    pub fn sample(&self) -> DriveSample {
        let host = u64::try_from(self.data_units_written)
            .ok()
            .and_then(|u| u.checked_mul(DATA_UNIT_BYTES));
        DriveSample {
            temp_c: kelvin_to_c(self.composite_temp_k),
            throttle_transitions: Some(
                u64::from(self.thermal_transitions[0]) + u64::from(self.thermal_transitions[1]),
            ),
            throttle_time_s: Some(
                u64::from(self.thermal_time_s[0]) + u64::from(self.thermal_time_s[1]),
            ),
            host_written_bytes: host,
            host_unit_bytes: host.map(|_| DATA_UNIT_BYTES),
            ..DriveSample::default()
        }
    }
}

/// One read: the log page's bytes and the power state, if it was read.
pub type PageRead = (Vec<u8>, Option<u32>);

/// The log page as a telemetry source: `read_page` fetches the 512 bytes (Get Log Page 02h,
/// NSID FFFFFFFFh, through the admin ioctl) and the power state if read. The throttle state is read off the
/// thermal-management time counters between two reads: 2 if time at TMT2 (heavy) grew, 1 if
/// time at TMT1 (light) grew, else 0 — `None` on the first read, which has nothing to compare.
pub struct NvmeLog<F: FnMut() -> Result<PageRead> + Send> {
    read_page: F,
    cadence: std::time::Duration,
    last_time_s: Option<[u32; 2]>,
}

impl<F: FnMut() -> Result<PageRead> + Send> NvmeLog<F> {
    pub fn new(read_page: F, cadence: std::time::Duration) -> Self {
        NvmeLog {
            read_page,
            cadence,
            last_time_s: None,
        }
    }
}

/// Log page 02h and the power state (Get Features 02h) of an NVMe controller reached through
/// `admin` (the kernel's admin ioctl, or a fake controller in tests), read each `cadence`.
pub fn source<A: crate::drive::NvmeAdmin + Send + 'static>(
    admin: A,
    cadence: std::time::Duration,
) -> NvmeLog<impl FnMut() -> Result<PageRead> + Send> {
    NvmeLog::new(
        move || {
            let page = crate::drive::nvme::get_log_page(&admin, 0x02, 0xFFFF_FFFF, LOG_LEN)?;
            // Power Management (FID 02h): dword 0 bits 4:0 are the power state; a controller
            // that refuses it leaves the column null
            let ps = crate::drive::nvme::get_features(&admin, 0x02, 0)
                .ok()
                .map(|d| d & 0x1f);
            Ok((page, ps))
        },
        cadence,
    )
}

/// Throttle state over the period between two readings of the TMT1/TMT2 time counters.
pub fn throttle_state(before: [u32; 2], after: [u32; 2]) -> u64 {
    if after[1] > before[1] {
        2
    } else if after[0] > before[0] {
        1
    } else {
        0
    }
}

impl<F: FnMut() -> Result<PageRead> + Send> super::Source for NvmeLog<F> {
    fn name(&self) -> &'static str {
        "nvme-log"
    }
    fn cadence(&self) -> std::time::Duration {
        self.cadence
    }
    fn read(&mut self) -> Result<DriveSample> {
        let (page, power_state) = (self.read_page)()?;
        let h = decode(&page)?;
        let mut s = h.sample();
        s.power_state = power_state;
        s.throttle_state = self
            .last_time_s
            .map(|b| throttle_state(b, h.thermal_time_s));
        self.last_time_s = Some(h.thermal_time_s);
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log page built field by field from the nvme-cli 2.11 output pinned in
    /// tests/data/realdrive (netdata's v2.11 nvme-smart-log.json): what the drive returned
    /// that nvme-cli printed.
    fn page_2_11() -> Vec<u8> {
        let mut b = vec![0u8; LOG_LEN];
        b[1..3].copy_from_slice(&324u16.to_le_bytes());
        b[3] = 100;
        b[4] = 5;
        b[5] = 30;
        let put =
            |b: &mut Vec<u8>, at: usize, v: u128| b[at..at + 16].copy_from_slice(&v.to_le_bytes());
        put(&mut b, 32, 178_037_231);
        put(&mut b, 48, 1_928_683_480);
        put(&mut b, 64, 5_808_178_366);
        put(&mut b, 80, 24_273_507_789);
        put(&mut b, 96, 69_549);
        put(&mut b, 112, 99);
        put(&mut b, 128, 24_424);
        put(&mut b, 144, 49);
        put(&mut b, 176, 212);
        b[216..220].copy_from_slice(&3u32.to_le_bytes());
        b[224..228].copy_from_slice(&1474u32.to_le_bytes());
        b
    }

    #[test]
    fn decodes_every_field_at_its_offset() {
        let h = decode(&page_2_11()).unwrap();
        assert_eq!(h.composite_temp_k, 324);
        assert_eq!(kelvin_to_c(h.composite_temp_k), Some(51.0));
        assert_eq!(h.percentage_used, 30);
        assert_eq!(h.data_units_read, 178_037_231);
        assert_eq!(h.data_units_written, 1_928_683_480);
        assert_eq!(h.host_write_commands, 24_273_507_789);
        assert_eq!(h.power_on_hours, 24_424);
        assert_eq!(h.error_log_entries, 212);
        assert_eq!(h.thermal_transitions, [3, 0]);
        assert_eq!(h.thermal_time_s, [1474, 0]);
    }

    #[test]
    fn sample_has_host_bytes_with_unit_and_no_nand() {
        let s = decode(&page_2_11()).unwrap().sample();
        assert_eq!(s.host_written_bytes, Some(1_928_683_480 * 512_000));
        assert_eq!(s.host_unit_bytes, Some(512_000));
        assert_eq!(s.nand_written_bytes, None);
        assert_eq!(s.throttle_transitions, Some(3));
        assert_eq!(s.throttle_time_s, Some(1474));
        assert_eq!(s.temp_c, Some(51.0));
    }

    /// A real log page (tests/data/realdrive/ecclesia_smart_log.bin; SOURCES.md) against the
    /// values nvme-cli printed for it.
    #[test]
    fn real_log_page_matches_nvme_cli() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/realdrive/ecclesia_smart_log.bin");
        let h = decode(&std::fs::read(p).unwrap()).unwrap();
        assert_eq!(h.composite_temp_k, 314);
        assert_eq!(kelvin_to_c(h.composite_temp_k), Some(41.0));
        assert_eq!(
            (h.available_spare_pct, h.available_spare_threshold_pct),
            (98, 10)
        );
        assert_eq!((h.data_units_read, h.data_units_written), (1044, 15));
        assert_eq!(
            (h.host_read_commands, h.host_write_commands),
            (1_027_083, 1905)
        );
        assert_eq!(
            (h.power_cycles, h.power_on_hours, h.unsafe_shutdowns),
            (4, 408, 1)
        );
        assert_eq!(h.thermal_transitions, [0, 0]);
        assert_eq!(h.sample().host_written_bytes, Some(15 * 512_000));
    }

    #[test]
    fn throttle_state_from_the_time_counters_between_reads() {
        use crate::telemetry::Source;
        let mut pages = vec![page_2_11(), page_2_11(), page_2_11()];
        pages[1][224..228].copy_from_slice(&1480u32.to_le_bytes()); // +6 s at TMT1
        pages[2][224..228].copy_from_slice(&1480u32.to_le_bytes());
        pages[2][228..232].copy_from_slice(&2u32.to_le_bytes()); // +2 s at TMT2
        let mut it = pages.into_iter();
        let mut src = NvmeLog::new(
            move || Ok((it.next().unwrap(), None)),
            std::time::Duration::from_secs(1),
        );
        assert_eq!(src.read().unwrap().throttle_state, None);
        assert_eq!(src.read().unwrap().throttle_state, Some(1));
        assert_eq!(src.read().unwrap().throttle_state, Some(2));
        assert_eq!(throttle_state([5, 0], [5, 0]), 0);
    }

    /// The source at the ioctl boundary: a fake controller serving the real ecclesia page and
    /// power state 3; the commands sent are Get Log Page 02h (NSID FFFFFFFFh, 128 dwords) and
    /// Get Features 02h.
    #[test]
    fn source_over_a_fake_controller() {
        use crate::drive::fake::FakeController;
        use crate::telemetry::Source;
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/realdrive/ecclesia_smart_log.bin");
        struct Shared(std::sync::Arc<FakeController>);
        impl crate::drive::NvmeAdmin for Shared {
            fn admin(&self, cmd: &mut crate::drive::AdminCmd, data: &mut [u8]) -> Result<u32> {
                self.0.admin(cmd, data)
            }
            fn describe(&self) -> String {
                self.0.describe()
            }
        }
        let fake = std::sync::Arc::new(FakeController::new());
        fake.set_log(0x02, std::fs::read(p).unwrap());
        fake.set_feature(0x02, 3);
        let mut src = source(Shared(fake.clone()), std::time::Duration::from_secs(1));
        let s = src.read().unwrap();
        assert_eq!(s.temp_c, Some(41.0));
        assert_eq!(s.power_state, Some(3));
        assert_eq!(s.host_written_bytes, Some(15 * 512_000));
        let cmds = fake.commands();
        assert_eq!(cmds.len(), 2);
        assert_eq!(
            (cmds[0].opcode, cmds[0].nsid, cmds[0].cdw10),
            (0x02, 0xFFFF_FFFF, 0x02 | (127 << 16))
        );
        assert_eq!((cmds[1].opcode, cmds[1].cdw10), (0x0A, 0x02));
    }

    #[test]
    fn short_page_is_an_error_and_zero_temperature_is_none() {
        assert!(decode(&[0u8; 100]).is_err());
        let h = decode(&[0u8; 512]).unwrap();
        assert_eq!(h.sample().temp_c, None);
    }
}
