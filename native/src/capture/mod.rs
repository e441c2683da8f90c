//! The capture format: one row per interval, recorded from completions, written as an Arrow
//! IPC stream in checksummed batches (at least one a second of wall time) ended by a trailer.

pub mod check;
pub mod columns;
pub mod ipc;
pub mod read;
mod recorder;
mod row;
pub mod stream;

pub use recorder::Recorder;
pub use row::{DriveSample, IntervalRow, LatStats, SimTruth};

/// The metadata key under which a capture's JSON metadata is stored in the Arrow schema.
pub const META_KEY: &str = "flashback.meta";
