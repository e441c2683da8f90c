//! How workers share limits and stop flags ([`Control`]) and how their completions reach the
//! one [`Session`] of a run ([`Reporter`]): directly when there is one job, through batches
//! sent to the recording thread when there are several, so percentiles are computed over all
//! jobs' completions together.
//!
//! Every completion is attributed to the interval in which it completed. With several jobs a
//! worker's batch never spans an interval boundary and carries a watermark ("every completion
//! of mine before this time has been sent"); the recording thread closes an interval only when
//! every worker's watermark has passed its end.

use crate::error::{Error, Result};
use crate::run::Session;
use crate::units::interval_ns;
use crate::workload::{Budget, Op, OpKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the observer is asked whether to stop (Ctrl-C), in ns.
pub const POLL_NS: u64 = 50_000_000;
/// A worker sends its batch at least this often, in ns (the watermark must keep moving).
const SEND_NS: u64 = 10_000_000;
/// ... or when this many completions are waiting.
const BATCH: usize = 4096;

/// Limits and stop flags shared by the workers of one run.
pub struct Control {
    halt: AtomicBool,
    interrupted: AtomicBool,
    failure: Mutex<Option<String>>,
    /// End of the run for `time=`, ns since the start.
    pub deadline_ns: Option<u64>,
    /// `written=`: bytes the counted kinds may move in total across jobs.
    budget: Budget,
    /// A job found that this kernel cannot queue discards and trimmed synchronously.
    trims_synchronous: AtomicBool,
}

impl Control {
    /// `budget` is the workload's `written=` budget ([`Budget::of`]).
    pub fn new(deadline_ns: Option<u64>, budget: Budget) -> Self {
        Control {
            halt: AtomicBool::new(false),
            interrupted: AtomicBool::new(false),
            failure: Mutex::new(None),
            deadline_ns,
            budget,
            trims_synchronous: AtomicBool::new(false),
        }
    }

    /// Notes that trims fell back to synchronous discards (see the io_uring engine).
    pub fn note_synchronous_trims(&self) {
        self.trims_synchronous.store(true, Ordering::Relaxed);
    }

    /// True if any job fell back to synchronous discards.
    pub fn trims_were_synchronous(&self) -> bool {
        self.trims_synchronous.load(Ordering::Relaxed)
    }

    /// True once no worker may submit more I/O.
    #[inline]
    pub fn halted(&self) -> bool {
        self.halt.load(Ordering::Relaxed)
    }

    /// Reserves `op` against the `written=` budget; false (and halt) once it is spent.
    #[inline]
    pub fn claim(&self, op: &Op) -> bool {
        if self.budget.claim(op.kind, op.len) {
            return true;
        }
        self.halt.store(true, Ordering::Relaxed);
        false
    }

    /// Completion time as attributed: completions draining after the `time=` deadline count in
    /// the last interval, so a timed run has exactly `time / interval` rows; the last one ends
    /// at the last completion (`Session::finish`), as fio counts what it reaps at `runtime=`.
    #[inline]
    pub fn clamp(&self, t_ns: u64) -> u64 {
        match self.deadline_ns {
            Some(d) if t_ns >= d => d - 1,
            _ => t_ns,
        }
    }

    /// True when the deadline has passed.
    #[inline]
    pub fn time_up(&self, t_ns: u64) -> bool {
        self.deadline_ns.is_some_and(|d| t_ns >= d)
    }

    /// The user asked to stop (Ctrl-C).
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::Relaxed);
        self.halt.store(true, Ordering::Relaxed);
    }

    pub fn was_interrupted(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    /// A worker failed: remember the first message and stop everyone.
    pub fn fail(&self, msg: String) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(msg);
        }
        self.halt.store(true, Ordering::Relaxed);
    }

    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Where a worker reports completions.
pub trait Reporter {
    /// One completion at `t_ns` (already clamped), `lat_ns` after its submission.
    fn complete(&mut self, t_ns: u64, kind: OpKind, bytes: u64, lat_ns: u64);
    /// Completions of `kind`, each of `bytes`, all at `t_ns` (already clamped), with latencies
    /// `lat_ns`: as [`Reporter::complete`] once per latency, which is what it does unless the
    /// reporter can take them at once.
    #[inline]
    fn complete_all(&mut self, t_ns: u64, kind: OpKind, bytes: u64, lat_ns: &[u64]) {
        for &l in lat_ns {
            self.complete(t_ns, kind, bytes, l);
        }
    }
    /// Every completion before `t_ns` has been reported; lets intervals close and polls for stop.
    fn heartbeat(&mut self, t_ns: u64);
}

/// The single-job reporter: records straight into the session on the worker's own thread.
pub struct Direct<'a, 's, 'o> {
    pub session: &'a mut Session<'s>,
    pub ctl: &'a Control,
    iv: u64,
    next_boundary: u64,
    last_poll: u64,
    pub error: Option<Error>,
    _o: std::marker::PhantomData<&'o ()>,
}

impl<'a, 's, 'o> Direct<'a, 's, 'o> {
    pub fn new(session: &'a mut Session<'s>, ctl: &'a Control, interval_s: f64) -> Self {
        let iv = interval_ns(interval_s);
        Direct {
            session,
            ctl,
            iv,
            next_boundary: iv,
            last_poll: 0,
            error: None,
            _o: std::marker::PhantomData,
        }
    }

    #[inline]
    fn advance(&mut self, t_ns: u64) {
        if t_ns >= self.next_boundary {
            if let Err(e) = self.session.tick(t_ns) {
                self.ctl.fail(e.to_string());
                self.error.get_or_insert(e);
            }
            self.next_boundary = (t_ns / self.iv + 1) * self.iv;
        }
    }
}

impl Reporter for Direct<'_, '_, '_> {
    #[inline]
    fn complete(&mut self, t_ns: u64, kind: OpKind, bytes: u64, lat_ns: u64) {
        self.advance(t_ns);
        self.session.record(kind, bytes, lat_ns);
    }

    /// One interval check for the whole batch (they complete at the same time), then the
    /// session's counters once: recording batched, each I/O's own latency kept.
    #[inline]
    fn complete_all(&mut self, t_ns: u64, kind: OpKind, bytes: u64, lat_ns: &[u64]) {
        self.advance(t_ns);
        self.session.record_all(kind, bytes, lat_ns);
    }

    #[inline]
    fn heartbeat(&mut self, t_ns: u64) {
        self.advance(self.ctl.clamp(t_ns));
        if t_ns >= self.last_poll + POLL_NS {
            self.last_poll = t_ns;
            if self.session.should_stop() {
                self.ctl.interrupt();
            }
        }
    }
}

/// One completion in a batch.
#[derive(Clone, Copy, Debug)]
pub struct Rec {
    pub lat_ns: u64,
    pub bytes: u64,
    pub kind: OpKind,
}

/// A worker's batch: completions of one interval, and its watermark.
pub struct Batch {
    pub job: usize,
    /// Interval index every record belongs to.
    pub idx: u64,
    pub recs: Vec<Rec>,
    /// All completions of this job before this time (ns) have been sent; `u64::MAX` = done.
    pub watermark: u64,
}

/// The reporter of one job among several: batches completions for the recording thread.
pub struct Batcher {
    job: usize,
    iv: u64,
    tx: SyncSender<Batch>,
    spare: Receiver<Vec<Rec>>,
    buf: Vec<Rec>,
    idx: u64,
    last_send: u64,
}

impl Batcher {
    pub fn new(
        job: usize,
        interval_s: f64,
        tx: SyncSender<Batch>,
        spare: Receiver<Vec<Rec>>,
    ) -> Self {
        Batcher {
            job,
            iv: interval_ns(interval_s),
            tx,
            spare,
            buf: Vec::with_capacity(BATCH),
            idx: 0,
            last_send: 0,
        }
    }

    fn send(&mut self, watermark: u64, t_ns: u64) {
        let recs = if self.buf.is_empty() {
            Vec::new()
        } else {
            let fresh = self
                .spare
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BATCH));
            std::mem::replace(&mut self.buf, fresh)
        };
        // The recording thread only goes away once the run is over; a failed send is harmless.
        let _ = self.tx.send(Batch {
            job: self.job,
            idx: self.idx,
            recs,
            watermark,
        });
        self.last_send = t_ns;
    }

    /// Sends what is left and marks this job done.
    pub fn done(mut self) {
        self.send(u64::MAX, u64::MAX);
    }
}

impl Reporter for Batcher {
    #[inline]
    fn complete(&mut self, t_ns: u64, kind: OpKind, bytes: u64, lat_ns: u64) {
        let i = t_ns / self.iv;
        if i != self.idx {
            if !self.buf.is_empty() {
                self.send(t_ns, t_ns);
            }
            self.idx = i;
        }
        self.buf.push(Rec {
            lat_ns,
            bytes,
            kind,
        });
    }

    #[inline]
    fn heartbeat(&mut self, t_ns: u64) {
        if self.buf.len() >= BATCH || t_ns >= self.last_send + SEND_NS {
            self.send(t_ns + 1, t_ns);
        }
    }
}

/// The recording thread's side: turns the workers' batches into session records in interval
/// order, closes intervals as the watermarks pass them, and polls the observer.
pub struct Collector {
    iv: u64,
    cur: u64,
    marks: Vec<u64>,
    held: Vec<Batch>,
    spares: Vec<SyncSender<Vec<Rec>>>,
}

impl Collector {
    pub fn new(interval_s: f64, spares: Vec<SyncSender<Vec<Rec>>>) -> Self {
        Collector {
            iv: interval_ns(interval_s),
            cur: 0,
            marks: vec![0; spares.len()],
            held: vec![],
            spares,
        }
    }

    fn record(&mut self, s: &mut Session<'_>, mut b: Batch) {
        for r in &b.recs {
            s.record(r.kind, r.bytes, r.lat_ns);
        }
        b.recs.clear();
        if b.recs.capacity() > 0 {
            if let Err(TrySendError::Full(_)) = self.spares[b.job].try_send(b.recs) {
                // the worker has enough spares; this one is freed
            }
        }
    }

    fn take(&mut self, s: &mut Session<'_>, b: Batch) {
        let j = b.job;
        self.marks[j] = self.marks[j].max(b.watermark);
        if b.recs.is_empty() {
            return;
        }
        if b.idx <= self.cur {
            self.record(s, b);
        } else {
            self.held.push(b);
        }
    }

    fn open(&mut self, s: &mut Session<'_>, idx: u64) -> Result<()> {
        while self.cur < idx {
            s.tick((self.cur + 1) * self.iv)?;
            self.cur += 1;
            let mut i = 0;
            while i < self.held.len() {
                if self.held[i].idx <= self.cur {
                    let b = self.held.swap_remove(i);
                    self.record(s, b);
                } else {
                    i += 1;
                }
            }
        }
        Ok(())
    }

    /// Runs until every worker has sent its last batch. Returns early only on a capture-file
    /// error (the workers are halted through `ctl` then, and their batches still drained).
    pub fn run(&mut self, s: &mut Session<'_>, rx: &Receiver<Batch>, ctl: &Control) -> Result<()> {
        let mut last_poll = Instant::now();
        let mut err: Option<Error> = None;
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(b) => {
                    self.take(s, b);
                    while let Ok(b) = rx.try_recv() {
                        self.take(s, b);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            let low = self.marks.iter().copied().min().unwrap_or(u64::MAX);
            if low == u64::MAX {
                break;
            }
            let low = ctl.clamp(low);
            if err.is_none() {
                if let Err(e) = self.open(s, low / self.iv) {
                    ctl.fail(e.to_string());
                    err = Some(e);
                }
            }
            if last_poll.elapsed() >= Duration::from_nanos(POLL_NS) {
                last_poll = Instant::now();
                if s.should_stop() {
                    ctl.interrupt();
                }
            }
        }
        // Every job is done: what is held belongs to later intervals, in order.
        self.held.sort_by_key(|b| b.idx);
        for b in std::mem::take(&mut self.held) {
            if err.is_none() {
                if let Err(e) = self.open(s, b.idx) {
                    err = Some(e);
                }
            }
            self.record(s, b);
        }
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Quiet, RunOptions};
    use crate::workload::Workload;
    use std::sync::mpsc::sync_channel;

    fn recs(lats_us: impl Iterator<Item = u64>, kind: OpKind) -> Vec<Rec> {
        lats_us
            .map(|l| Rec {
                lat_ns: l * 1000,
                bytes: 4096,
                kind,
            })
            .collect()
    }

    /// Two jobs whose batches arrive out of interval order: every completion lands in its own
    /// interval and the percentiles are those of both jobs' latencies together.
    #[test]
    fn collector_merges_jobs_per_interval() {
        let w = Workload::from_pairs([("rw", "randwrite"), ("interval", "1s")]).unwrap();
        let mut obs = Quiet;
        let mut s = Session::start(
            &w,
            &RunOptions::default(),
            serde_json::json!({}),
            false,
            0,
            &mut obs,
        )
        .unwrap();
        let ctl = Control::new(None, Budget::new(None, [false, true, false]));
        let (tx, rx) = sync_channel(16);
        let (sa, _ra) = sync_channel(8);
        let (sb, _rb) = sync_channel(8);
        // job 0: fast completions in both intervals; job 1: slow ones, sent late
        let a0: Vec<u64> = (1..=900).collect();
        let a1: Vec<u64> = (1..=500).collect();
        let b0: Vec<u64> = (5000..5100).collect();
        let b1: Vec<u64> = (9000..9300).collect();
        let batch = |job, idx, v: &Vec<u64>, wm| Batch {
            job,
            idx,
            recs: recs(v.iter().copied(), OpKind::Write),
            watermark: wm,
        };
        tx.send(batch(0, 0, &a0, 900_000_000)).unwrap();
        tx.send(batch(0, 1, &a1, 1_900_000_000)).unwrap();
        tx.send(batch(0, 1, &vec![], u64::MAX)).unwrap();
        tx.send(batch(1, 0, &b0, 950_000_000)).unwrap();
        tx.send(batch(1, 1, &b1, 1_950_000_000)).unwrap();
        tx.send(batch(1, 1, &vec![], u64::MAX)).unwrap();
        drop(tx);
        let mut c = Collector::new(1.0, vec![sa, sb]);
        c.run(&mut s, &rx, &ctl).unwrap();
        let out = s
            .finish(
                2_000_000_000,
                crate::run::Status::Complete,
                serde_json::json!({}),
            )
            .unwrap();
        assert_eq!(out.rows.len(), 2);
        for (row, (a, b)) in out.rows.iter().zip([(&a0, &b0), (&a1, &b1)]) {
            assert_eq!(row.ios[1], (a.len() + b.len()) as u64);
            let mut all: Vec<u64> = a.iter().chain(b.iter()).copied().collect();
            all.sort();
            let q = |p: f64| all[((p * all.len() as f64).ceil() as usize).saturating_sub(1)] as f64;
            let l = row.lat[1].unwrap();
            for (got, want) in [
                (l.p50_us, q(0.5)),
                (l.p99_us, q(0.99)),
                (l.p999_us, q(0.999)),
            ] {
                assert!((got - want).abs() / want < 0.01, "{got} vs {want}");
            }
            assert_eq!(l.max_us, *all.last().unwrap() as f64);
        }
        assert_eq!(out.rows[1].host_written_bytes, 1800 * 4096);
    }

    /// Recording batched changes nothing recorded: completions reported in runs through
    /// `complete_all` give the same rows, bit for bit, and the same whole-run latency (meta) as
    /// the same completions reported one by one, across interval boundaries, kinds and runs of
    /// equal latencies (which the recorder folds into one histogram call).
    #[test]
    fn completions_reported_at_once_record_what_one_by_one_records() {
        let w = Workload::from_pairs([("rw", "randrw"), ("interval", "0.001s")]).unwrap();
        let ctl = Control::new(None, Budget::new(None, [false, true, false]));
        // (time, kind, bytes, latencies): runs of equal and differing latencies in 3 intervals
        let mut x = 7u64;
        let mut batches = vec![];
        for i in 0..300u64 {
            x = crate::rng::mix64(x);
            let kind = if x.is_multiple_of(3) {
                OpKind::Write
            } else {
                OpKind::Read
            };
            let n = (x >> 8) % 9;
            let lats: Vec<u64> = (0..n)
                .map(|j| 1_000 + (x >> 20) % 50_000 + if j % 3 == 0 { 0 } else { j })
                .collect();
            batches.push((i * 10_000, kind, 4096 << (x % 3), lats));
        }
        let mut out = vec![];
        for at_once in [false, true] {
            let mut obs = Quiet;
            let meta = serde_json::json!({});
            let mut s =
                Session::start(&w, &RunOptions::default(), meta, false, 0, &mut obs).unwrap();
            let mut d = Direct::new(&mut s, &ctl, w.interval_s);
            for (t, kind, bytes, lats) in &batches {
                if at_once {
                    d.complete_all(*t, *kind, *bytes, lats);
                } else {
                    for &l in lats {
                        d.complete(*t, *kind, *bytes, l);
                    }
                }
                d.heartbeat(*t);
            }
            let (ios, bytes) = (s.total_ios, s.total_bytes);
            let o = s
                .finish(
                    3_000_000,
                    crate::run::Status::Complete,
                    serde_json::json!({}),
                )
                .unwrap();
            out.push((o.rows, o.meta["latency"].clone(), ios, bytes));
        }
        assert_eq!(out[0].0.len(), 3);
        assert!(out[0].2[0] > 0 && out[0].2[1] > 0);
        assert_eq!(out[0], out[1]);
    }

    #[test]
    fn written_budget_is_claimed_exactly() {
        let ctl = Control::new(None, Budget::new(Some(10 * 4096), [false, true, false]));
        let op = |kind| Op {
            kind,
            offset: 0,
            len: 4096,
        };
        let granted = (0..20).filter(|_| ctl.claim(&op(OpKind::Write))).count();
        assert_eq!(granted, 10);
        assert!(ctl.halted());
        assert!(ctl.claim(&op(OpKind::Read)), "reads are not counted");
    }

    #[test]
    fn deadline_clamps_into_the_last_interval() {
        let ctl = Control::new(Some(2_000_000_000), Budget::new(None, [false; 3]));
        assert_eq!(ctl.clamp(1_000), 1_000);
        assert_eq!(ctl.clamp(2_000_000_500), 1_999_999_999);
        assert!(ctl.time_up(2_000_000_000) && !ctl.time_up(1_999_999_999));
    }
}
