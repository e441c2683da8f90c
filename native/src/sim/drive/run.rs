//! [`SimDrive::run`]: a workload on the virtual clock, in MQSim's steps — the workload
//! checked, every job's queue primed, the event loop over completions in time order, and the
//! run's `events`/`sim` record.

use super::SimDrive;
use crate::error::{Error, Result};
use crate::run::{Observer, RunOptions, RunOutput, Session, Status};
use crate::sim::ahead::Ahead;
use crate::sim::ftl::UNIT;
use crate::sim::pending::Pending;
use crate::workload::{job_slices, Budget, OpKind, OpStream, Workload};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// One outstanding command.
#[derive(Clone, Copy)]
struct Slot {
    job: u32,
    issued: u64,
    kind: OpKind,
    bytes: u64,
}

const DEBUG_CHECK_EVERY: u64 = 1 << 16;

/// One run's event-loop state: each job's op stream, the command slots, the completions
/// queued by time (MQSim's event queue), the byte/op budget and the run's clock limits.
struct RunLoop {
    streams: Vec<Ahead>,
    slots: Vec<Slot>,
    pending: Pending,
    budget: Budget,
    t0: u64,
    time_limit: Option<u64>,
    /// Share of the in-flight commands' drain time a timed run stops issuing before its
    /// limit: 1 − scale on a scaled drive, 0 at full size (see [`RunLoop::issues_at`]).
    early: f64,
    /// Commands completed so far in this run.
    completed: u64,
    units: u32,
}

impl RunLoop {
    fn new(w: &Workload, span: u64, t0: u64, units: u32, scale: f64) -> Self {
        RunLoop {
            streams: job_slices(w.offset, span, w.bs, w.jobs)
                .into_iter()
                .enumerate()
                .map(|(j, (o, l))| Ahead::new(OpStream::new(w, o, l, j as u32)))
                .collect(),
            slots: vec![],
            pending: Pending::new(w.jobs as usize * w.iodepth as usize),
            budget: Budget::of(w),
            t0,
            time_limit: w
                .time_s
                .map(|s| t0 + crate::units::time_limit_ns(s, w.interval_s)),
            early: (1.0 - scale).clamp(0.0, 1.0),
            completed: 0,
            units,
        }
    }

    /// Whether a timed run still issues a command at `t`. fio stops issuing at `runtime=` and
    /// reaps what is in flight: `jobs × iodepth` commands at any scale, which on a drive
    /// scaled by `s` (its time scaled alike) is `1 / s` times the full run's share (SNIA's
    /// 1 MiB QD32 steps at 1/64: 32 MiB drained after 0.94 s of writes, +35 – 40 % bytes).
    /// So a scaled drive stops issuing `(1 − s) ×` the time the commands in flight take to
    /// drain early, that time by Little's law: in flight × elapsed / completed (the drive is
    /// busy from the start; a mean of the latencies completed so far reads the first queue's
    /// ramp and is half as long). What it then drains is `s ×` the full drive's.
    #[inline]
    fn issues_at(&self, t: u64) -> bool {
        let Some(l) = self.time_limit else {
            return true;
        };
        if self.early == 0.0 || self.completed == 0 {
            return t < l;
        }
        let drain = self.slots.len() as f64 * (t - self.t0) as f64 / self.completed as f64;
        (t as f64 + self.early * drain) < l as f64
    }
}

impl SimDrive {
    /// Runs a workload on the virtual clock, in MQSim's steps: the workload checked
    /// ([`Self::run_span`]), every job's queue primed ([`Self::prime`]), the event loop over
    /// completions in time order ([`Self::event_loop`]), and the result's `events`/`sim`
    /// record ([`Self::run_record`]).
    pub fn run(
        &mut self,
        w: &Workload,
        opts: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<RunOutput> {
        let span = self.run_span(w)?;
        let (units, _ratio) = self.data_units(w);
        let events_before = self.events.len();
        let t0 = self.now;
        let mut lp = RunLoop::new(w, span, t0, units, self.cfg.scale);
        let mut sess = Session::start(w, opts, self.meta(), true, self.host_written, obs)?;
        sess.set_truth(self.truth());
        self.prime(&mut lp, w.iodepth);
        let (status, last_done) = self.event_loop(&mut lp, &mut sess)?;
        if cfg!(debug_assertions) {
            self.ftl.check_invariants();
        }
        sess.set_truth(self.truth());
        let end = last_done.max(t0);
        self.now = self.now.max(end);
        let extra = self.run_record(events_before, t0, units);
        sess.finish(end - t0, status, extra)
    }

    /// The bytes `w` spans on this drive, once its block size, offset and span are checked.
    fn run_span(&self, w: &Workload) -> Result<u64> {
        if !w.bs.is_multiple_of(4096) || !w.offset.is_multiple_of(4096) {
            return Err(Error::InvalidValue(format!(
                "bs={} and offset={} must be multiples of 4 KiB on a simulated drive (its logical block); use 4k, 8k, ...",
                w.bs, w.offset
            )));
        }
        let cap = self.cfg.capacity_bytes;
        let span = match w.size {
            Some(s) => s,
            None => cap.saturating_sub(w.offset),
        };
        if w.offset.checked_add(span).is_none_or(|end| end > cap) || span < w.bs {
            return Err(Error::InvalidValue(format!(
                "offset={} + size={span} does not fit the simulated drive's {cap} bytes; use a span of bs to {cap} bytes",
                w.offset
            )));
        }
        Ok(span)
    }

    /// Issues the first `iodepth` commands of every job at the run's start.
    fn prime(&mut self, lp: &mut RunLoop, iodepth: u32) {
        for j in 0..lp.streams.len() {
            for _ in 0..iodepth {
                if let Some((op, not_before)) = lp.streams[j].next(&self.ftl) {
                    if !lp.budget.claim(op.kind, op.len) {
                        break;
                    }
                    let at = not_before.map_or(lp.t0, |n| lp.t0 + n);
                    let done = self.issue(op.kind, op.offset, op.len, at, lp.units);
                    lp.slots.push(Slot {
                        job: j as u32,
                        issued: at,
                        kind: op.kind,
                        bytes: op.len,
                    });
                    lp.pending.push((done, lp.slots.len() as u32 - 1));
                }
            }
        }
    }

    /// Completes commands in time order, recording each and issuing its job's next, until
    /// the queue is empty; returns the run's status and the time its last command ended.
    fn event_loop(&mut self, lp: &mut RunLoop, sess: &mut Session<'_>) -> Result<(Status, u64)> {
        let wall = Instant::now();
        let mut next_poll = Duration::from_millis(100);
        let mut completions = 0u64;
        let mut status = Status::Complete;
        let mut stopping = false;
        let mut last_done = lp.t0;
        while let Some((done, si)) = lp.pending.pop() {
            let slot = lp.slots[si as usize];
            // Commands still in flight when the time is up are reaped, as fio reaps them at
            // `runtime=`: counted in the last interval, which ends, as the run does, when the
            // last of them completes (`Session::finish`), so a GC stall they waited on is in
            // the step's time, not between steps.
            let at = match lp.time_limit {
                Some(l) if done >= l => l - 1,
                _ => done,
            };
            self.now = self.now.max(done);
            last_done = last_done.max(done);
            let rel = at - lp.t0;
            if rel >= sess.rec.next_boundary_ns() {
                sess.set_truth(self.truth());
            }
            sess.tick(rel)?;
            sess.record(slot.kind, slot.bytes, done - slot.issued);
            lp.completed += 1;
            completions += 1;
            if completions & 1023 == 0 && wall.elapsed() >= next_poll {
                next_poll = wall.elapsed() + Duration::from_millis(100);
                if sess.should_stop() {
                    status = Status::Interrupted;
                    stopping = true;
                }
            }
            self.debug_check();
            if stopping || !lp.issues_at(done) {
                stopping = true;
                continue;
            }
            stopping = !self.issue_next(lp, slot.job, si, done);
        }
        Ok((status, last_done))
    }

    /// Issues job `job`'s next command into slot `si` once the slot's command ended at
    /// `done`; false when the job's budget is spent (the run then stops issuing).
    fn issue_next(&mut self, lp: &mut RunLoop, job: u32, si: u32, done: u64) -> bool {
        let Some((op, not_before)) = lp.streams[job as usize].next(&self.ftl) else {
            return true;
        };
        // a timed trace replay issues no earlier than the op's recorded time
        let at = not_before.map_or(done, |n| done.max(lp.t0 + n));
        if !lp.budget.claim(op.kind, op.len) {
            return false;
        }
        let d = self.issue(op.kind, op.offset, op.len, at, lp.units);
        lp.slots[si as usize] = Slot {
            job,
            issued: at,
            kind: op.kind,
            bytes: op.len,
        };
        lp.pending.push((d, si));
        true
    }

    /// Debug builds: checks the FTL's invariants every [`DEBUG_CHECK_EVERY`] completions.
    fn debug_check(&mut self) {
        if cfg!(debug_assertions) {
            self.ops_since_check += 1;
            if self.ops_since_check >= DEBUG_CHECK_EVERY {
                self.ops_since_check = 0;
                self.ftl.check_invariants();
            }
        }
    }

    /// The run's `events` since `events_before` and the drive's `sim` counters after it.
    fn run_record(&self, events_before: usize, t0: u64, units: u32) -> Value {
        json!({
            "events": self.events_json(events_before, t0),
            "sim": {
                "host_written_bytes": self.host_written,
                "nand_written_bytes": self.nand_written_bytes(),
                "gc_copied_bytes": self.gc_copied_bytes(),
                "free_blocks": self.ftl.free_blocks(),
                "erases": self.ftl.erases,
                "mapped_bytes": self.ftl.mapped * 4096,
                "dirty_level": self.dirty.level(),
                "compress_units_per_4k": units as f64 / UNIT as f64,
                "drive_time_s": self.drive_time_s(),
            },
        })
    }
}
