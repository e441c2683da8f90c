//! The real-I/O engine: regular files and block devices through io_uring or psync.
//!
//! - [`open`]: opening a file (created, preallocated and marked when missing) or block device,
//!   with [`safety`] deciding once whether it may be written;
//! - [`runner`]: a run's jobs, limits and recording; [`uring`] and [`psync`] are the engines;
//! - [`child`]: a run in a forked child of a session of its own, as fio runs a job;
//! - [`discard`]: BLKDISCARD / hole punching; [`sysfs`]: what the kernel says about a device.

mod affinity;
mod buf;
mod child;
mod discard;
mod job;
mod layout;
mod open;
mod preflight;
mod psync;
mod report;
mod runner;
mod safety;
mod sqe;
mod sysfs;
mod uring;
pub use uring::{BATCHES, REFUSE_QUEUED_TRIMS};

pub use open::{Kind, MARK_XATTR};
/// The in-use guard, for the drive layer's purge (every namespace it reaches).
pub(crate) use safety::in_use_reason;

use crate::error::{Error, Result};
use crate::run::{Observer, RunOptions, RunOutput};
use crate::target::OpenOptions;
use crate::workload::Workload;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A regular file or block device opened for I/O.
pub struct RealTarget {
    t: open::Opened,
    host_written: u64,
}

impl RealTarget {
    /// Opens `spec` (see [`crate::target::Target::open`]). Writability is decided here: a block
    /// device needs `destroy` naming it and must not be in use; a file must be flashback's own
    /// or `overwrite` given. Refusals at open are [`Error::Refused`]; a target opened without
    /// permission to write refuses every later write the same way.
    pub fn open(spec: &str, opts: &OpenOptions) -> Result<Self> {
        Ok(RealTarget {
            t: open::open(spec, opts)?,
            host_written: 0,
        })
    }

    pub fn kind(&self) -> &'static str {
        match self.t.kind {
            Kind::File => "file",
            Kind::Block => "block",
        }
    }

    pub fn size_bytes(&self) -> u64 {
        self.t.size
    }

    /// Kind, canonical path, size, block sizes and (from sysfs) the device's identity.
    pub fn meta(&self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), json!(self.kind()));
        m.insert("path".into(), json!(self.t.path.display().to_string()));
        m.insert("size_bytes".into(), json!(self.t.size));
        m.insert("logical_block_size".into(), json!(self.t.logical_block));
        m.insert("physical_block_size".into(), json!(self.t.physical_block));
        m.insert("writable".into(), json!(self.t.writable.is_ok()));
        let dev = sysfs::device_meta(self.t.dev);
        if self.t.kind == Kind::File {
            m.insert("created_by_flashback".into(), json!(self.t.created));
            if let Some(n) = dev.get("device_name").and_then(Value::as_str) {
                m.insert("backing_device".into(), json!(format!("/dev/{n}")));
            }
        }
        if self.t.kind == Kind::Block {
            if let Some(n) = dev.get("disk_name").and_then(Value::as_str) {
                let redact = crate::drive::record::redact_from_env();
                let rec =
                    crate::drive::record::device_record_on(std::path::Path::new("/"), n, redact);
                m.insert("device".into(), rec);
            }
        }
        for (k, v) in dev {
            if k != "device_name" {
                m.insert(k, v);
            }
        }
        if crate::drive::record::redact_from_env() && m.get("serial").is_some_and(|s| !s.is_null())
        {
            m.insert("serial".into(), json!("redacted"));
        }
        Value::Object(m)
    }

    pub fn host_written_bytes(&self) -> u64 {
        self.host_written
    }

    /// Refuses (one sentence, nothing written) unless the target may be written.
    fn check_writable(&self) -> Result<()> {
        self.t.writable.clone().map_err(Error::Refused)
    }

    /// Runs `w` and returns its capture.
    pub fn run(
        &mut self,
        w: &Workload,
        o: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<RunOutput> {
        if w.rw.is_destructive() {
            self.check_writable()?;
        }
        let meta = self.meta();
        let out = runner::run(&self.t, w, o, meta, self.host_written, obs)?;
        self.host_written = out.host_written_end;
        Ok(out.output)
    }

    /// [`RealTarget::run`] in a forked child process in a session (so a scheduler autogroup)
    /// of its own, as fio runs a job; the same result (see [`child`]). Errors: the run's, and
    /// [`Error::Io`] when the child cannot start or is killed by a signal.
    pub fn run_in_own_session(
        &mut self,
        w: &Workload,
        o: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<RunOutput> {
        child::run(self, w, o, obs)
    }

    /// Discards `[offset, offset + len)` (`None`: to the end), aligned inwards to the logical
    /// block size.
    pub fn discard(&mut self, offset: u64, len: Option<u64>) -> Result<()> {
        self.check_writable()?;
        let size = self.t.size;
        if offset > size {
            return Err(Error::InvalidValue(format!(
                "discard offset {offset} lies beyond the end of {} ({size} bytes); use an offset inside it",
                self.t.path.display()
            )));
        }
        let len = len.unwrap_or(size - offset).min(size - offset);
        preflight::check_discard(&self.t)?;
        discard::discard_span(&self.t.file, self.t.kind, offset, len, self.t.logical_block)
            .map(|_| ())
            .map_err(|e| {
                Error::io(
                    format!(
                        "discarding {len} bytes at {offset} on {} failed",
                        self.t.path.display()
                    ),
                    e,
                )
            })
    }

    /// Sleeps `seconds`, asking the observer every 100 ms whether to stop.
    pub fn idle(&mut self, seconds: f64, obs: &mut dyn Observer) -> Result<()> {
        if seconds.is_nan() || seconds < 0.0 {
            return Err(Error::InvalidValue(format!(
                "idle time {seconds} s is not a duration; give zero or more seconds"
            )));
        }
        let end = Instant::now() + Duration::from_secs_f64(seconds);
        loop {
            let now = Instant::now();
            if now >= end || obs.should_stop() {
                return Ok(());
            }
            std::thread::sleep((end - now).min(Duration::from_millis(100)));
        }
    }

    /// Whole-span discard; resets the host-written counter.
    pub fn sanitize(&mut self) -> Result<()> {
        self.discard(0, None)?;
        self.host_written = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Quiet;

    fn target(dir: &std::path::Path, size: u64) -> RealTarget {
        let p = dir.join("t.bin");
        let o = OpenOptions {
            create_size: Some(size),
            ..Default::default()
        };
        RealTarget::open(p.to_str().unwrap(), &o).unwrap()
    }

    #[test]
    fn every_byte_is_counted_and_lands_on_disk() {
        let d = tempfile::tempdir().unwrap();
        let mut t = target(d.path(), 1 << 20);
        for (engine, jobs) in [
            ("io_uring", "1"),
            ("psync", "1"),
            ("io_uring", "3"),
            ("psync", "2"),
        ] {
            let w = Workload::from_pairs([
                ("rw", "write"),
                ("bs", "16k"),
                ("iodepth", "4"),
                ("jobs", jobs),
                ("engine", engine),
                ("data", "pattern:c3"),
                ("direct", "false"),
            ])
            .unwrap();
            let out = t.run(&w, &RunOptions::default(), &mut Quiet).unwrap();
            assert_eq!(out.meta["status"], "complete", "{engine} {jobs}");
            assert_eq!(out.meta["engine"], engine);
            let bytes: u64 = out.rows.iter().map(|r| r.bytes[1]).sum();
            assert_eq!(bytes, 1 << 20, "{engine} jobs={jobs}");
            assert_eq!(
                std::fs::read(d.path().join("t.bin")).unwrap(),
                vec![0xc3u8; 1 << 20]
            );
            std::fs::write(d.path().join("t.bin"), vec![0u8; 1 << 20]).unwrap();
        }
        assert_eq!(t.host_written_bytes(), 4 << 20);
    }

    /// Spare write buffers are filled while I/Os are in flight and reused: every write still
    /// carries fresh data (random: no two blocks alike), and a buffer a read filled is never
    /// written back (pattern: every block is the pattern or untouched zeros).
    #[test]
    fn every_write_carries_its_own_data_through_the_buffer_pool() {
        let d = tempfile::tempdir().unwrap();
        let mut t = target(d.path(), 1 << 20);
        let w = Workload::from_pairs([
            ("rw", "randwrite"),
            ("random", "permutation"),
            ("bs", "4k"),
            ("iodepth", "8"),
            ("data", "random"),
            ("direct", "false"),
        ])
        .unwrap();
        let out = t.run(&w, &RunOptions::default(), &mut Quiet).unwrap();
        assert_eq!(out.meta["status"], "complete");
        let bytes = std::fs::read(d.path().join("t.bin")).unwrap();
        let mut blocks: Vec<&[u8]> = bytes.chunks(4096).collect();
        blocks.sort_unstable();
        blocks.dedup();
        assert_eq!(blocks.len(), 256, "a block's data was written twice");

        std::fs::write(d.path().join("t.bin"), vec![0u8; 1 << 20]).unwrap();
        let w = Workload::from_pairs([
            ("rw", "randrw"),
            ("bs", "4k"),
            ("iodepth", "8"),
            ("loops", "4"),
            ("data", "pattern:c3"),
            ("direct", "false"),
        ])
        .unwrap();
        let out = t.run(&w, &RunOptions::default(), &mut Quiet).unwrap();
        let written: u64 = out.rows.iter().map(|r| r.ios[1]).sum();
        let read: u64 = out.rows.iter().map(|r| r.ios[0]).sum();
        assert!(written > 0 && read > 0);
        let bytes = std::fs::read(d.path().join("t.bin")).unwrap();
        let mut c3 = 0;
        for b in bytes.chunks(4096) {
            assert!(
                b.iter().all(|&x| x == 0xc3) || b.iter().all(|&x| x == 0),
                "a read's data was written"
            );
            c3 += usize::from(b[0] == 0xc3);
        }
        assert!(c3 > 0);
    }

    #[test]
    fn read_only_target_refuses_writes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("foreign");
        std::fs::write(&p, vec![1u8; 65536]).unwrap();
        let mut t = RealTarget::open(p.to_str().unwrap(), &OpenOptions::default()).unwrap();
        let w = Workload::from_pairs([("rw", "write")]).unwrap();
        assert!(matches!(
            t.run(&w, &RunOptions::default(), &mut Quiet),
            Err(Error::Refused(_))
        ));
        assert!(matches!(t.discard(0, None), Err(Error::Refused(_))));
        assert_eq!(std::fs::read(&p).unwrap(), vec![1u8; 65536]);
    }
}
