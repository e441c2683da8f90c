//! flashback's native core: the capture engine (real files and block devices), the simulated
//! SSD, the capture format and the analysis kernels. Pure Rust; the PyO3 layer lives in
//! `python/` behind the `python` feature and only converts types.

pub mod capture;
pub mod drive;
pub mod engine;
pub mod error;
pub mod fiolog;
pub mod output;
pub mod pelt;
pub mod pelt_linear;
pub mod rng;
pub mod run;
pub mod sim;
pub mod target;
pub mod telemetry;
pub mod trace;
pub mod units;
pub mod workload;

pub use error::{Error, Result};

#[cfg(feature = "python")]
mod python;
