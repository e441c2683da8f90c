//! The capture's columns: one table, [`COLUMNS`], declares every column's name, type, unit,
//! nullability and kind. The Arrow schema ([`super::ipc::schema`]), the row batches
//! ([`super::ipc::rows_to_batch`]), the progress dict (`python/util.rs`), the Python export
//! (`_native.capture_columns()`, which the stub lists) and every aggregation in Python (rounds,
//! windows, datasets: `flashback.columns`) derive from it.
//!
//! **Adding a column is one row here** (plus, if the value is new, its field in
//! [`IntervalRow`]): nothing else names columns by position.
//!
//! Kinds say how a column aggregates over a window of intervals, and are never guessed from a
//! name:
//! - `counter`: a count over the interval (I/Os, bytes): summed;
//! - `cumulative`: a running total (host/NAND bytes written since an erase, the clock): take
//!   differences (the value at a window's end minus the value at the end of the one before);
//! - `gauge`: a level or a rate in the interval (MB/s, latency, free blocks, temperature):
//!   averaged, interval-weighted, or its extremes;
//! - `label`: a name (the protocol step): constant within a group, never aggregated.

use super::row::IntervalRow;
use arrow_schema::DataType;

/// How a column aggregates over a window of intervals (see the module note).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Cumulative,
    Gauge,
    Label,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Cumulative => "cumulative",
            Kind::Gauge => "gauge",
            Kind::Label => "label",
        }
    }
}

/// Which captures carry a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Every capture.
    Base,
    /// Captures of a `sim:` target (the simulator's ground truth).
    Sim,
    /// Every capture flashback's core writes; null unless a telemetry source fills
    /// [`IntervalRow::drive`].
    Drive,
    /// Only captures imported from fio (the core never measures them).
    Import,
}

impl Group {
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Base => "base",
            Group::Sim => "sim",
            Group::Drive => "drive",
            Group::Import => "import",
        }
    }
}

/// How a column's value is read from a row; the variant is the column's Arrow type.
#[derive(Clone, Copy)]
pub enum Get {
    F64(fn(&IntervalRow) -> Option<f64>),
    U64(fn(&IntervalRow) -> Option<u64>),
    Str(fn(&IntervalRow) -> &str),
    /// A float column the core never writes ([`Group::Import`]).
    ImportedF64,
}

/// One column of the capture table.
#[derive(Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    /// Unit of the values (`""` for labels and plain counts of things).
    pub unit: &'static str,
    pub nullable: bool,
    pub kind: Kind,
    pub group: Group,
    pub get: Get,
}

impl Column {
    pub fn data_type(&self) -> DataType {
        match self.get {
            Get::F64(_) | Get::ImportedF64 => DataType::Float64,
            Get::U64(_) => DataType::UInt64,
            Get::Str(_) => DataType::Utf8,
        }
    }

    /// The short type name the Python export gives (`f64`, `u64`, `str`).
    pub fn dtype_name(&self) -> &'static str {
        match self.get {
            Get::F64(_) | Get::ImportedF64 => "f64",
            Get::U64(_) => "u64",
            Get::Str(_) => "str",
        }
    }
}

use Group::{Base, Drive, Import, Sim};
use Kind::{Counter, Cumulative, Gauge, Label};

const fn f(
    name: &'static str,
    unit: &'static str,
    nullable: bool,
    kind: Kind,
    group: Group,
    get: fn(&IntervalRow) -> Option<f64>,
) -> Column {
    Column {
        name,
        unit,
        nullable,
        kind,
        group,
        get: Get::F64(get),
    }
}

const fn u(
    name: &'static str,
    unit: &'static str,
    nullable: bool,
    kind: Kind,
    group: Group,
    get: fn(&IntervalRow) -> Option<u64>,
) -> Column {
    Column {
        name,
        unit,
        nullable,
        kind,
        group,
        get: Get::U64(get),
    }
}

const fn imported(name: &'static str) -> Column {
    Column {
        name,
        unit: "us",
        nullable: true,
        kind: Gauge,
        group: Import,
        get: Get::ImportedF64,
    }
}

fn rate(n: u64, r: &IntervalRow) -> f64 {
    n as f64 / r.interval_s
}

/// The capture's columns, in file order. One row per column; see the module note.
pub static COLUMNS: &[Column] = &[
    f("t_s", "s", false, Cumulative, Base, |r| Some(r.t_s)),
    f("interval_s", "s", false, Counter, Base, |r| {
        Some(r.interval_s)
    }),
    u("read_ios", "", false, Counter, Base, |r| Some(r.ios[0])),
    u("write_ios", "", false, Counter, Base, |r| Some(r.ios[1])),
    u("trim_ios", "", false, Counter, Base, |r| Some(r.ios[2])),
    u("read_bytes", "B", false, Counter, Base, |r| {
        Some(r.bytes[0])
    }),
    u("write_bytes", "B", false, Counter, Base, |r| {
        Some(r.bytes[1])
    }),
    u("trim_bytes", "B", false, Counter, Base, |r| {
        Some(r.bytes[2])
    }),
    f("read_iops", "1/s", false, Gauge, Base, |r| {
        Some(rate(r.ios[0], r))
    }),
    f("write_iops", "1/s", false, Gauge, Base, |r| {
        Some(rate(r.ios[1], r))
    }),
    f("trim_iops", "1/s", false, Gauge, Base, |r| {
        Some(rate(r.ios[2], r))
    }),
    f("read_mbps", "MB/s", false, Gauge, Base, |r| {
        Some(rate(r.bytes[0], r) / 1e6)
    }),
    f("write_mbps", "MB/s", false, Gauge, Base, |r| {
        Some(rate(r.bytes[1], r) / 1e6)
    }),
    f("read_lat_mean_us", "us", true, Gauge, Base, |r| {
        r.lat[0].map(|l| l.mean_us)
    }),
    f("read_lat_p50_us", "us", true, Gauge, Base, |r| {
        r.lat[0].map(|l| l.p50_us)
    }),
    f("read_lat_p99_us", "us", true, Gauge, Base, |r| {
        r.lat[0].map(|l| l.p99_us)
    }),
    f("read_lat_p999_us", "us", true, Gauge, Base, |r| {
        r.lat[0].map(|l| l.p999_us)
    }),
    f("read_lat_max_us", "us", true, Gauge, Base, |r| {
        r.lat[0].map(|l| l.max_us)
    }),
    f("write_lat_mean_us", "us", true, Gauge, Base, |r| {
        r.lat[1].map(|l| l.mean_us)
    }),
    f("write_lat_p50_us", "us", true, Gauge, Base, |r| {
        r.lat[1].map(|l| l.p50_us)
    }),
    f("write_lat_p99_us", "us", true, Gauge, Base, |r| {
        r.lat[1].map(|l| l.p99_us)
    }),
    f("write_lat_p999_us", "us", true, Gauge, Base, |r| {
        r.lat[1].map(|l| l.p999_us)
    }),
    f("write_lat_max_us", "us", true, Gauge, Base, |r| {
        r.lat[1].map(|l| l.max_us)
    }),
    u("host_written_bytes", "B", false, Cumulative, Base, |r| {
        Some(r.host_written_bytes)
    }),
    Column {
        name: "step",
        unit: "",
        nullable: false,
        kind: Label,
        group: Base,
        get: Get::Str(|r| &r.step),
    },
    // the simulator's ground truth: byte counters cumulative since the drive's last erase
    u("nand_written_bytes", "B", false, Cumulative, Sim, |r| {
        r.sim.map(|t| t.nand_written_bytes)
    }),
    f("wa", "", true, Gauge, Sim, |r| r.wa),
    u("free_blocks", "", false, Gauge, Sim, |r| {
        r.sim.map(|t| t.free_blocks)
    }),
    u("gc_copied_bytes", "B", false, Cumulative, Sim, |r| {
        r.sim.map(|t| t.gc_copied_bytes)
    }),
    // the drive's own telemetry (null unless a source fills `IntervalRow::drive`)
    f("drive_temp_c", "degC", true, Gauge, Drive, |r| {
        r.drive.temp_c
    }),
    u("drive_throttle", "", true, Gauge, Drive, |r| {
        r.drive.throttle
    }),
    u("drive_power_state", "", true, Gauge, Drive, |r| {
        r.drive.power_state
    }),
    u(
        "drive_host_written_bytes",
        "B",
        true,
        Cumulative,
        Drive,
        |r| r.drive.host_written_bytes,
    ),
    u(
        "drive_nand_written_bytes",
        "B",
        true,
        Cumulative,
        Drive,
        |r| r.drive.nand_written_bytes,
    ),
    f("drive_sample_age_s", "s", true, Gauge, Drive, |r| {
        r.drive.sample_age_s
    }),
    // fio imports only: fio's completion latency (see `flashback.capture`'s note on clat)
    imported("read_clat_mean_us"),
    imported("read_clat_p50_us"),
    imported("read_clat_p99_us"),
    imported("read_clat_p999_us"),
    imported("read_clat_max_us"),
    imported("write_clat_mean_us"),
    imported("write_clat_p50_us"),
    imported("write_clat_p99_us"),
    imported("write_clat_p999_us"),
    imported("write_clat_max_us"),
];

/// The columns a capture written by the core carries: base and drive columns, and the
/// simulator's with `with_sim`.
pub fn written(with_sim: bool) -> impl Iterator<Item = &'static Column> {
    COLUMNS.iter().filter(move |c| match c.group {
        Base | Drive => true,
        Sim => with_sim,
        Import => false,
    })
}

/// The column named `name`.
pub fn by_name(name: &str) -> Option<&'static Column> {
    COLUMNS.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_units_match_the_name_suffixes() {
        let mut names: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COLUMNS.len());
        for c in COLUMNS {
            let want = if c.name.ends_with("_us") {
                "us"
            } else if c.name.ends_with("_bytes") {
                "B"
            } else if c.name.ends_with("_s") {
                "s"
            } else if c.name.ends_with("_mbps") {
                "MB/s"
            } else {
                continue;
            };
            assert_eq!(c.unit, want, "{}", c.name);
        }
    }

    #[test]
    fn only_nullable_columns_may_be_missing_from_a_row() {
        let row = IntervalRow {
            interval_s: 1.0,
            ..Default::default()
        };
        for c in written(true) {
            let missing = match c.get {
                Get::F64(g) => g(&row).is_none(),
                Get::U64(g) => g(&row).is_none(),
                Get::Str(_) | Get::ImportedF64 => false,
            };
            // sim columns are filled whenever the row carries the simulator's truth
            if missing && c.group != Sim {
                assert!(c.nullable, "{} is missing but not nullable", c.name);
            }
        }
    }
}
