//! Target strings (`/path/file`, `/dev/...`, `sim:<preset>?k=v`) opened into one type that
//! runs workloads, discards, idles and sanitizes, whatever is behind it.

use crate::engine::RealTarget;
use crate::error::Result;
use crate::run::{Observer, RunOptions, RunOutput};
use crate::sim::SimDrive;
use crate::workload::Workload;
use serde_json::Value;

/// How a target may be opened.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// For a block device: the same device path again, confirming that its data is destroyed.
    pub destroy: Option<String>,
    /// For a regular file flashback did not create: allow writing over it.
    pub overwrite: bool,
    /// Size in bytes to create (and preallocate) a missing regular file with.
    pub create_size: Option<u64>,
}

/// An opened target.
pub enum Target {
    Real(RealTarget),
    Sim(Box<SimDrive>),
}

impl Target {
    /// Opens `spec`. Errors: [`crate::Error::Target`] for a spec naming nothing usable,
    /// [`crate::Error::Refused`] when the safety rules forbid writing to it.
    pub fn open(spec: &str, opts: &OpenOptions) -> Result<Target> {
        match spec.strip_prefix(crate::sim::spec::PREFIX) {
            Some(rest) => Ok(Target::Sim(Box::new(SimDrive::from_spec(rest)?))),
            None => Ok(Target::Real(RealTarget::open(spec, opts)?)),
        }
    }

    /// `file`, `block` or `sim`.
    pub fn kind(&self) -> &'static str {
        match self {
            Target::Real(r) => r.kind(),
            Target::Sim(_) => "sim",
        }
    }

    /// User-visible capacity in bytes.
    pub fn size_bytes(&self) -> u64 {
        match self {
            Target::Real(r) => r.size_bytes(),
            Target::Sim(s) => s.size_bytes(),
        }
    }

    /// What the capture metadata says about the target.
    pub fn meta(&self) -> Value {
        match self {
            Target::Real(r) => r.meta(),
            Target::Sim(s) => s.meta(),
        }
    }

    /// Cumulative host bytes written since the target was opened or last sanitized (a `sim:`
    /// drive: since its last secure erase).
    pub fn host_written_bytes(&self) -> u64 {
        match self {
            Target::Real(r) => r.host_written_bytes(),
            Target::Sim(s) => s.host_written_bytes(),
        }
    }

    /// Runs a workload; the capture comes back and, if asked, is streamed to a file.
    pub fn run(
        &mut self,
        w: &Workload,
        opts: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<RunOutput> {
        match self {
            Target::Real(r) => r.run(w, opts, obs),
            Target::Sim(s) => s.run(w, opts, obs),
        }
    }

    /// [`Target::run`] with a real target's job in a child process in a session of its own
    /// (fio's forked job calls `setsid()`: with scheduler autogroups, busy work started from
    /// the caller's session no longer shares the job's CPU time; see `engine::child`). A
    /// `sim:` drive runs in this process. Same result as [`Target::run`]; more errors: the
    /// child cannot be started or was killed ([`crate::Error::Io`]).
    pub fn run_in_own_session(
        &mut self,
        w: &Workload,
        opts: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<RunOutput> {
        match self {
            Target::Real(r) => r.run_in_own_session(w, opts, obs),
            Target::Sim(s) => s.run(w, opts, obs),
        }
    }

    /// Discards (TRIM/unmap) `[offset, offset + len)`; `len = None` means to the end.
    pub fn discard(&mut self, offset: u64, len: Option<u64>) -> Result<()> {
        match self {
            Target::Real(r) => r.discard(offset, len),
            Target::Sim(s) => s.discard(offset, len),
        }
    }

    /// Leaves the drive idle for `seconds` (wall clock for real targets, virtual for `sim:`,
    /// where idle-time garbage collection runs). Stops early if the observer asks.
    pub fn idle(&mut self, seconds: f64, obs: &mut dyn Observer) -> Result<()> {
        match self {
            Target::Real(r) => r.idle(seconds, obs),
            Target::Sim(s) => s.idle(seconds, obs),
        }
    }

    /// Returns the drive to its fresh state: secure erase for `sim:`, a whole-span discard for
    /// real targets. Resets the cumulative host-written counter.
    pub fn sanitize(&mut self) -> Result<()> {
        match self {
            Target::Real(r) => r.sanitize(),
            Target::Sim(s) => s.sanitize(),
        }
    }
}
