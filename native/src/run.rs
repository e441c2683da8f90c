//! What every run shares, real or simulated: the recorder, the capture file, the observer
//! (progress and Ctrl-C), and the capture metadata.

use crate::capture::ipc::IpcSink;
use crate::capture::{IntervalRow, Recorder, SimTruth};
use crate::error::Result;
use crate::workload::{OpKind, Workload};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Receives progress and decides whether to stop (Ctrl-C).
pub trait Observer {
    /// Called with every batch of newly closed intervals, in order.
    fn on_rows(&mut self, _rows: &[IntervalRow]) {}
    /// Polled at least every 100 ms of wall time; `true` stops the run (status `interrupted`).
    fn should_stop(&mut self) -> bool {
        false
    }
}

/// An observer that watches nothing and never stops.
pub struct Quiet;
impl Observer for Quiet {}

/// Per-run options that are not part of the workload.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Protocol step label written in the `step` column.
    pub step: String,
    /// Stream the capture to this Arrow IPC file, in batches written at least every second of
    /// wall time (see `capture::ipc::IpcSink`).
    pub capture_path: Option<PathBuf>,
    /// Keep per-interval recording off (for measuring its cost in benchmarks): only totals.
    pub no_recording: bool,
    /// With `capture_path`: the intervals go to the file only and the output holds none, so
    /// memory stays flat however long the run (the file is the capture).
    pub stream_only: bool,
    /// With `capture_path`: an existing regular file there may be replaced (never a device,
    /// FIFO or directory; see [`crate::output`]).
    pub overwrite_capture: bool,
    /// Where the drive's sysfs is read for telemetry (`None`: `/sys`). Benchmarks and tests
    /// point it at a recorded tree so the sampler runs beside a loop device.
    pub sys_root: Option<PathBuf>,
}

/// Final status of a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Complete,
    Interrupted,
    Failed(String),
}

impl Status {
    pub fn as_str(&self) -> String {
        match self {
            Status::Complete => "complete".into(),
            Status::Interrupted => "interrupted".into(),
            Status::Failed(m) => format!("failed: {m}"),
        }
    }
}

/// The result of a run: rows and metadata (JSON object).
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub rows: Vec<IntervalRow>,
    pub meta: Value,
    pub with_sim: bool,
}

/// The live state of one run. Engines call [`Session::tick`] with the current clock (ns since
/// the start; wall clock for real targets, virtual for `sim:`) before recording completions at
/// that time, and [`Session::finish`] at the end.
pub struct Session<'o> {
    pub rec: Recorder,
    rows: Vec<IntervalRow>,
    pushed: usize,
    sink: Option<IpcSink>,
    obs: &'o mut dyn Observer,
    meta: Value,
    with_sim: bool,
    recording: bool,
    /// rows are dropped once streamed (see [`RunOptions::stream_only`])
    stream_only: bool,
    /// the drive's telemetry: the sampler's latest sample is copied into each closed row
    telemetry: Option<crate::telemetry::slot::Reader>,
    /// the simulated drive's counters at the start and end (its `smart_start`/`smart_end`)
    sim_counters: [Option<crate::telemetry::DriveSample>; 2],
    /// the workload's `time=` limit in ns ([`crate::units::time_limit_ns`]): a run ending
    /// past it reaped commands in flight at it, which stretch its last interval
    time_limit_ns: Option<u64>,
    /// totals kept even when recording is off
    pub total_ios: [u64; 3],
    pub total_bytes: [u64; 3],
    /// wall time spent in the observer (rows handed over, stop polls; waiting for Python's
    /// GIL included): the run's `observer_s` (real targets)
    observer: std::time::Duration,
}

impl<'o> Session<'o> {
    /// Starts a run: builds the metadata and, if asked, creates the streaming capture file.
    pub fn start(
        w: &Workload,
        opts: &RunOptions,
        target_meta: Value,
        with_sim: bool,
        host_written_start: u64,
        obs: &'o mut dyn Observer,
    ) -> Result<Self> {
        let ratio = if w.rw.is_destructive() {
            json!(crate::workload::compress_ratio_cached(&w.data, w.bs))
        } else {
            Value::Null
        };
        let meta = json!({
            "flashback_version": env!("CARGO_PKG_VERSION"),
            "format": crate::capture::stream::FORMAT,
            "run_id": crate::capture::stream::new_run_id(),
            "start_time": now_rfc3339(),
            "status": "running",
            "step": opts.step,
            "workload": w.to_json(),
            // the drive and platform records a lab report needs (crate::drive::record)
            "device": target_meta.get("device").cloned(),
            "platform": crate::drive::record::platform_record(std::path::Path::new("/")),
            "target": target_meta,
            "host": host_meta(),
            "data_compress_ratio": ratio,
            "host_written_start_bytes": host_written_start,
        });
        let mut meta = meta;
        if with_sim {
            meta["telemetry"] = crate::telemetry::plan::Plan::sim_meta();
        }
        let sink = match &opts.capture_path {
            Some(p) => Some(IpcSink::create(
                p,
                with_sim,
                &meta.to_string(),
                opts.overwrite_capture,
            )?),
            None => None,
        };
        Ok(Session {
            rec: Recorder::new(w.interval_s, &opts.step, host_written_start),
            rows: vec![],
            pushed: 0,
            sink,
            obs,
            meta,
            with_sim,
            recording: !opts.no_recording,
            stream_only: opts.stream_only && opts.capture_path.is_some(),
            telemetry: None,
            sim_counters: [None, None],
            time_limit_ns: w
                .time_s
                .map(|s| crate::units::time_limit_ns(s, w.interval_s)),
            total_ios: [0; 3],
            total_bytes: [0; 3],
            observer: std::time::Duration::ZERO,
        })
    }

    /// Records one completion (call [`Session::tick`] with its completion time first).
    #[inline]
    pub fn record(&mut self, kind: OpKind, bytes: u64, latency_ns: u64) {
        self.record_all(kind, bytes, &[latency_ns]);
    }

    /// Records completions of `kind`, each of `bytes`, with latencies `latency_ns` in order
    /// (the counters added once; [`Session::record`] is the one-completion case).
    #[inline]
    pub fn record_all(&mut self, kind: OpKind, bytes: u64, latency_ns: &[u64]) {
        let k = kind as usize;
        let n = latency_ns.len() as u64;
        self.total_ios[k] += n;
        self.total_bytes[k] += n * bytes;
        if self.recording {
            self.rec.record_all(kind, bytes, latency_ns);
        }
    }

    /// Sets the simulator's ground truth carried by the rows closed next, and the simulated
    /// drive's own counters as a drive reports them (`drive_*` columns, sampled on the device
    /// clock at the interval's end: age 0).
    pub fn set_truth(&mut self, t: SimTruth) {
        self.rec.set_truth(t);
        let s = crate::telemetry::sim::sample(self.rec.host_written_bytes(), t.nand_written_bytes);
        self.rec.set_drive(s.to_row(Some(0.0)));
        self.sim_counters[0].get_or_insert(s);
        self.sim_counters[1] = Some(s);
    }

    /// Copies the sampler's latest sample into the rows closed from now on (real drives).
    pub fn attach_telemetry(&mut self, reader: crate::telemetry::slot::Reader) {
        self.telemetry = Some(reader);
    }

    /// Merges `extra` keys into the metadata now (telemetry plan, SMART snapshot at start).
    pub fn add_meta(&mut self, key: &str, value: Value) {
        self.meta[key] = value;
    }

    /// Advances the clock to `now_ns`: closes finished intervals, streams them to the file and
    /// the observer (stopping is asked separately, with [`Session::should_stop`]).
    #[inline]
    pub fn tick(&mut self, now_ns: u64) -> Result<()> {
        if self.recording && now_ns >= self.rec.next_boundary_ns() {
            if let Some(r) = self.telemetry.as_mut() {
                let now = std::time::Instant::now();
                if let Some(p) = r.latest() {
                    self.rec.set_drive(p.sample.to_row(Some(p.age_s(now))));
                }
            }
            self.rec.roll(now_ns, &mut self.rows);
            self.push()?;
        }
        Ok(())
    }

    /// Asks the observer whether to stop (call at least every 100 ms of wall time).
    pub fn should_stop(&mut self) -> bool {
        let t = std::time::Instant::now();
        let stop = self.obs.should_stop();
        self.observer += t.elapsed();
        stop
    }

    fn push(&mut self) -> Result<()> {
        let new = &self.rows[self.pushed..];
        if new.is_empty() {
            return Ok(());
        }
        if let Some(s) = self.sink.as_mut() {
            s.push(new)?;
        }
        let t = std::time::Instant::now();
        self.obs.on_rows(new);
        self.observer += t.elapsed();
        if self.stream_only {
            self.rows.clear();
        }
        self.pushed = self.rows.len();
        Ok(())
    }

    /// Host bytes written so far, cumulative.
    pub fn host_written_bytes(&self) -> u64 {
        self.rec.host_written_bytes()
    }

    /// Ends the run at `now_ns` with `status`; `extra` keys are merged into the metadata. A
    /// timed run's `now_ns` is when its last command completed, past the time limit when
    /// commands in flight at the limit were reaped: those count in the last interval, which
    /// ends at `now_ns`, as does the run (fio's rule, [`Recorder::finish_drained`]).
    pub fn finish(mut self, now_ns: u64, mut status: Status, extra: Value) -> Result<RunOutput> {
        if let Some(r) = self.telemetry.as_mut() {
            if let Some(p) = r.latest() {
                self.rec
                    .set_drive(p.sample.to_row(Some(p.age_s(std::time::Instant::now()))));
            }
        }
        if self.recording {
            match self.time_limit_ns {
                Some(l) => self.rec.finish_drained(l, now_ns, &mut self.rows),
                None => self.rec.finish(now_ns, &mut self.rows),
            }
            self.push()?;
        }
        // A stop asked for while the observer took the last rows (Ctrl-C landing in a
        // progress callback; a simulated run hands over many rows at its end) comes after the
        // run's last poll: it is still the run's status, or the caller would carry on.
        if status == Status::Complete && self.should_stop() {
            status = Status::Interrupted;
        }
        let m = self.meta.as_object_mut().expect("meta is an object");
        m.insert("status".into(), json!(status.as_str()));
        m.insert("end_time".into(), json!(now_rfc3339()));
        m.insert("duration_s".into(), json!(now_ns as f64 / 1e9));
        if !self.with_sim {
            // What watching the run cost it: the wall time its thread spent handing rows to
            // the observer and asking it whether to stop (a progress callback, a live chart,
            // Ctrl-C polls). Left out of a simulated run, whose metadata is a function of its
            // inputs alone.
            m.insert("observer_s".into(), json!(self.observer.as_secs_f64()));
        }
        m.insert(
            "totals".into(),
            json!({
                "read_ios": self.total_ios[0], "write_ios": self.total_ios[1], "trim_ios": self.total_ios[2],
                "read_bytes": self.total_bytes[0], "write_bytes": self.total_bytes[1], "trim_bytes": self.total_bytes[2],
            }),
        );
        for (key, c) in ["smart_start", "smart_end"].iter().zip(self.sim_counters) {
            if let Some(c) = c {
                m.insert(
                    (*key).into(),
                    json!({"source": "sim", "host_written_bytes": c.host_written_bytes,
                           "nand_written_bytes": c.nand_written_bytes,
                           "host_written_error_bytes": c.host_unit_bytes,
                           "nand_written_error_bytes": c.nand_unit_bytes}),
                );
            }
        }
        // Where each cumulative column starts, so the first interval's increase is known.
        m.insert("cumulative_start".into(), self.rec.cumulative_start());
        if self.recording {
            let [read, write] = self.rec.run_latency();
            // The whole run's latency (submission to completion, fio's `lat`) per direction.
            m.insert("latency".into(), json!({ "read": read, "write": write }));
        }
        if let Value::Object(x) = extra {
            for (k, v) in x {
                m.insert(k, v);
            }
        }
        if let Some(s) = self.sink.take() {
            s.finalize(&self.meta)?;
        }
        Ok(RunOutput {
            rows: self.rows,
            meta: self.meta,
            with_sim: self.with_sim,
        })
    }
}

/// UTC time as RFC 3339 without pulling in a date crate.
pub fn now_rfc3339() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // civil-from-days (Howard Hinnant)
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Kernel and CPU of this machine.
pub fn host_meta() -> Value {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|x| x.trim().to_string())
    });
    json!({
        "kernel": read("/proc/sys/kernel/osrelease"),
        "hostname": read("/proc/sys/kernel/hostname"),
        "cpu": cpu,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{OpenOptions, Target};

    /// Asks to stop from inside `on_rows`, as a Ctrl-C raised in a progress callback does.
    struct StopInCallback {
        rows: usize,
        stop: bool,
    }
    impl Observer for StopInCallback {
        fn on_rows(&mut self, rows: &[IntervalRow]) {
            self.rows += rows.len();
            self.stop = true;
        }
        fn should_stop(&mut self) -> bool {
            self.stop
        }
    }

    #[test]
    fn a_stop_asked_for_in_the_last_rows_makes_the_run_interrupted() {
        let mut t = Target::open("sim:generic?scale=1/256", &OpenOptions::default()).unwrap();
        let w = Workload::from_pairs([
            ("rw", "randwrite"),
            ("written", "64m"),
            ("interval", "0.1s"),
        ])
        .unwrap();
        let mut obs = StopInCallback {
            rows: 0,
            stop: false,
        };
        let out = t.run(&w, &RunOptions::default(), &mut obs).unwrap();
        assert!(obs.rows > 0);
        assert_eq!(out.meta["status"], "interrupted");
        let mut quiet = Quiet;
        let out = t.run(&w, &RunOptions::default(), &mut quiet).unwrap();
        assert_eq!(out.meta["status"], "complete");
    }
}
