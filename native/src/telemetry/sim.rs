//! The simulated drive's telemetry: its host and NAND write counters as a real drive would
//! report them — in whole units (host in NVMe Data Units of 512,000 bytes, rounded up as
//! the NVMe log does; NAND in 32 MiB units, truncated as Intel's attribute 243 does) — so
//! measured write amplification on a `sim:` capture goes through the same quantisation and
//! error bounds as on hardware. The simulator has no thermal model: no temperature, no
//! throttling (null columns, with that reason in the metadata).

use super::DriveSample;

/// Host counter unit: one NVMe Data Unit.
pub const HOST_UNIT_BYTES: u64 = super::nvme_log::DATA_UNIT_BYTES;
/// NAND counter unit: 32 MiB, as the Intel DC drives' 243 NAND_Writes_32MiB.
pub const NAND_UNIT_BYTES: u64 = 32 << 20;
/// Why the simulated drive reports no temperature.
pub const NO_TEMP_REASON: &str = "the simulated drive has no thermal model";

/// The sample a simulated drive with these exact counters reports.
pub fn sample(host_written_bytes: u64, nand_written_bytes: u64) -> DriveSample {
    DriveSample {
        host_written_bytes: Some(host_written_bytes.div_ceil(HOST_UNIT_BYTES) * HOST_UNIT_BYTES),
        host_unit_bytes: Some(HOST_UNIT_BYTES),
        nand_written_bytes: Some(nand_written_bytes / NAND_UNIT_BYTES * NAND_UNIT_BYTES),
        nand_unit_bytes: Some(NAND_UNIT_BYTES),
        ..DriveSample::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_quantised_like_a_drive_and_stay_within_one_unit() {
        let s = sample(1, (32 << 20) - 1);
        assert_eq!(s.host_written_bytes, Some(512_000)); // rounded up
        assert_eq!(s.nand_written_bytes, Some(0)); // truncated
        for (h, n) in [(0u64, 0u64), (7_777_777, 123_456_789), (10 << 30, 31 << 30)] {
            let s = sample(h, n);
            let (hq, nq) = (s.host_written_bytes.unwrap(), s.nand_written_bytes.unwrap());
            assert!(hq >= h && hq - h < HOST_UNIT_BYTES);
            assert!(nq <= n && n - nq < NAND_UNIT_BYTES);
        }
        assert_eq!(s.temp_c, None);
    }
}
