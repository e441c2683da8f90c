//! The simulated SSD. (Placeholder interface; the simulator issue fills it in.)

use crate::error::{Error, Result};
use crate::run::{Observer, RunOptions, RunOutput};
use crate::workload::Workload;
use serde_json::Value;

/// A simulated drive with its FTL state; persists across runs (fill, torture, TRIM, idle...).
pub struct SimDrive {
    host_written: u64,
}

impl SimDrive {
    /// Parses `<preset>[?key=value&...]`.
    pub fn from_spec(spec: &str) -> Result<Self> {
        Err(Error::Target(format!("sim:{spec}: the simulator is not implemented yet")))
    }
    pub fn size_bytes(&self) -> u64 {
        0
    }
    pub fn meta(&self) -> Value {
        Value::Null
    }
    pub fn host_written_bytes(&self) -> u64 {
        self.host_written
    }
    pub fn run(&mut self, _w: &Workload, _o: &RunOptions, _obs: &mut dyn Observer) -> Result<RunOutput> {
        unimplemented!()
    }
    pub fn discard(&mut self, _offset: u64, _len: Option<u64>) -> Result<()> {
        unimplemented!()
    }
    pub fn idle(&mut self, _seconds: f64, _obs: &mut dyn Observer) -> Result<()> {
        unimplemented!()
    }
    pub fn sanitize(&mut self) -> Result<()> {
        unimplemented!()
    }
}

/// The presets as JSON (name, key parameters, sources).
pub fn presets() -> Value {
    Value::Array(vec![])
}
