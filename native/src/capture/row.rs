//! One capture row. Rates (`*_iops`, `*_mbps`) are derived when the row is written to Arrow.

/// Latency statistics of one direction in one interval, in microseconds: submission to
/// completion, fio's `lat` (see the io_uring engine for where the clock is read). The engine
/// measures no `clat` (see the io_uring engine's module note); fio imports carry both.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatStats {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// The simulator's ground truth at the end of an interval. Byte counters are cumulative since
/// the drive's last secure erase, like `host_written_bytes`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SimTruth {
    pub nand_written_bytes: u64,
    pub gc_copied_bytes: u64,
    pub free_blocks: u64,
}

/// The drive's own telemetry at the end of an interval (the `drive_*` columns of
/// [`super::columns::COLUMNS`]); every field is `None` (a null column value) unless a telemetry
/// source fills it. Byte counters are cumulative, from the drive's own counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DriveSample {
    /// Composite temperature, °C.
    pub temp_c: Option<f64>,
    /// Thermal throttle state (0 = not throttling; higher = a deeper throttle level).
    pub throttle: Option<u64>,
    /// The power state the drive reports.
    pub power_state: Option<u64>,
    pub host_written_bytes: Option<u64>,
    pub nand_written_bytes: Option<u64>,
    /// Age of the sample at the interval's end, seconds.
    pub sample_age_s: Option<f64>,
}

/// One interval of a capture.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalRow {
    /// End of the interval, seconds since the capture began.
    pub t_s: f64,
    pub interval_s: f64,
    /// Completed operations, indexed by `OpKind` (read, write, trim).
    pub ios: [u64; 3],
    /// Completed bytes, indexed by `OpKind`.
    pub bytes: [u64; 3],
    /// Latency of reads and writes; `None` when none completed.
    pub lat: [Option<LatStats>; 2],
    /// Cumulative host bytes written (see the design's schema).
    pub host_written_bytes: u64,
    pub step: String,
    pub sim: Option<SimTruth>,
    /// NAND bytes / host bytes written in this interval (sim only; `None` if no host writes).
    pub wa: Option<f64>,
    /// The drive's telemetry; all null by default.
    pub drive: DriveSample,
}
