//! The real-I/O engine: regular files and block devices through io_uring or psync.
//! (Placeholder interface; the engine issue fills it in.)

use crate::error::{Error, Result};
use crate::run::{Observer, RunOptions, RunOutput};
use crate::target::OpenOptions;
use crate::workload::Workload;
use serde_json::Value;

/// A regular file or block device opened for I/O.
pub struct RealTarget {
    path: String,
    host_written: u64,
}

impl RealTarget {
    pub fn open(spec: &str, _opts: &OpenOptions) -> Result<Self> {
        Err(Error::Target(format!("{spec}: real targets are not implemented yet")))
    }
    pub fn kind(&self) -> &'static str {
        "file"
    }
    pub fn size_bytes(&self) -> u64 {
        0
    }
    pub fn meta(&self) -> Value {
        serde_json::json!({ "kind": "file", "path": self.path })
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
