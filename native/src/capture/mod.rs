//! The capture format: one row per interval, recorded from completions, written as an Arrow
//! IPC stream flushed every interval.

pub mod check;
pub mod columns;
pub mod ipc;
mod recorder;
mod row;

pub use recorder::Recorder;
pub use row::{DriveSample, IntervalRow, LatStats, SimTruth};

/// The metadata key under which a capture's JSON metadata is stored in the Arrow schema.
pub const META_KEY: &str = "flashback.meta";
