//! The simulated SSD: a page-mapped FTL (greedy / FIFO / random / cost-benefit GC, TRIM,
//! idle-time GC, SLC cache with folding, DuraWrite-style inline compression) and an
//! event-driven timing model (dies, channels, controller, host link, write buffer) on a
//! virtual clock.
//!
//! - [`spec`]: `sim:<preset>?key=value&...` parsing and validation
//! - [`presets`]: the reviewed drives, each parameter with its source
//! - [`ftl`]: mapping, blocks, victims, frontiers
//! - [`dirty`]: SandForce's dirty state (incompressible data slows the backend; TRIM does not help)
//! - [`timing`]: NAND, channel, controller and link busy times; erase-ahead; cut-through
//! - [`drive`]: [`SimDrive`], the target behind `sim:` strings
//! - [`memory`]: the memory a drive's tables take, estimated and bounded before allocating

mod ahead;
mod dirty;
pub mod drive;
pub mod ftl;
pub mod memory;
mod pending;
pub mod presets;
pub mod spec;
mod steady;
pub mod timing;
mod util;

pub use drive::{Event, SimDrive};
pub use spec::{parse_spec, GcPolicy, SimConfig};

use serde_json::Value;

/// The presets as JSON (name, description, controller, capacity, op, geometry, timings,
/// features, sources).
pub fn presets() -> Value {
    Value::Array(presets::all_presets().iter().map(|c| c.to_json()).collect())
}
