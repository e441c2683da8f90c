//! fio's per-I/O sample logs: a strict reader for the plain layout fio writes
//! ([`read::read_plain`]) and exact per-interval latency statistics ([`stats::interval_latency`]).
//!
//! Both are fast paths of the Python importer (`flashback.fio.logs`, `flashback.fio.series`):
//! each returns `None` for anything outside what it reproduces bit for bit, and the importer
//! then takes its general path, which reads or refuses the input as it always did.

pub mod read;
pub mod stats;

pub use read::{read_plain, Field, LogColumns};
pub use stats::{interval_latency, LatencyStats, Samples};
