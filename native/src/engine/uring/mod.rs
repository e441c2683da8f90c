//! The io_uring engine: one ring per job keeping `iodepth` I/Os in flight, with the target's
//! descriptor, the I/O buffers and the ring's own descriptor registered with the kernel where
//! it allows (fewer per-I/O costs than fio's defaults), all set up before the run's clock
//! starts ([`prepare`]). The loop is fio's `t/io_uring`'s: [`prep`] refills the free slots,
//! [`Ring::submit_ahead`] hands them over, [`flush`] reports the last round's completions while
//! those are in flight, [`Ring::wait`] hands over the rest and waits, and [`harvest`] takes the
//! completions and publishes the consumed head at once. At QD1 that is two `io_uring_enter`
//! calls per I/O, one to submit and one to wait, as fio makes (see [`Ring::wait`]). No timer is
//! armed per wait: one multishot timeout ticks for the whole run ([`WAIT`](ring::WAIT)).
//! The run's metadata carries the enters made and the time-weighted mean of the I/Os in
//! flight ([`Stats`]). Submission and completion
//! are timed once per batch: an I/O's latency runs from when it is queued to the ring (the clock
//! is read before each [`SUBMIT_BATCH`](ring::SUBMIT_BATCH) entries are pushed) to just after
//! the enter that returns with its completion, as fio's `lat` (which starts when fio queues the
//! I/O to its engine). Ops are taken from the stream in blocks ([`AHEAD`]), and completions are
//! sorted for reporting as they are reaped ([`harvest`]).
//!
//! There is no `clat`: fio's starts when the submit-only `io_uring_enter` that hands the I/O
//! over returns. Here, past QD1, the last entries of a round usually go over in the enter that
//! also waits, which returns only once something completed: when the kernel took them cannot be
//! read from user space.
//!
//! Trims are queued like reads and writes: a block device's discard goes out as the block
//! layer's `BLOCK_URING_CMD_DISCARD` command (Linux 6.12+), a file's hole punch as an
//! `IORING_OP_FALLOCATE`. A kernel without the discard command refuses the first one; the job
//! then discards synchronously (`BLKDISCARD`) from that op on, as it does at `iodepth=1`.

use crate::engine::job::{wait_until, Job, Next};
use crate::engine::report::Reporter;
use crate::engine::sqe::{push_rw, trim_entry, trim_unsupported, FileRef};
use crate::workload::{Op, OpKind};

mod ring;
mod setup;

use io_uring::{IoUring, SubmissionQueue};
use ring::{batches, Ring, TICK};
pub use ring::{build_ring, BATCHES};
pub use setup::{prepare, Setup};
use std::io;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// Fault injection for the test suite: while set, every queued trim's answer is replaced by
/// `EOPNOTSUPP` until one has succeeded, as a kernel older than Linux 6.12 answers a block
/// device's discard command, so the synchronous fallback runs on a kernel that could queue
/// them. (The kernel has already done the refused trim; the fallback repeats it, which a discard
/// allows.) Set only through `flashback._native._refuse_queued_trims_for_tests`.
pub static REFUSE_QUEUED_TRIMS: AtomicBool = AtomicBool::new(false);

/// Discards `op` synchronously and reports it; false if it failed (the run is then stopped).
fn trim_now<R: Reporter>(job: &mut Job<'_>, rep: &mut R, op: &Op) -> bool {
    let s = job.now();
    let res = job.trim(op);
    let e = job.now();
    if let Err(err) = res {
        job.fail(op.kind, op.offset, op.len, &err);
        return false;
    }
    rep.complete(job.ctl.clamp(e), op.kind, op.len, e - s);
    rep.heartbeat(e);
    true
}

/// Per-slot state of an I/O in flight: its op's fields side by side rather than an [`Op`]
/// (32 bytes, two slots per cache line, where an `Op` and its padding made 40; callgrind
/// showed the padding copied on every push and reap).
#[derive(Clone, Copy)]
struct Slot {
    offset: u64,
    len: u64,
    submit_ns: u64,
    /// The slot's buffer ([`NO_BUF`] for a trim).
    buf: u16,
    kind: OpKind,
}

impl Slot {
    #[inline]
    fn op(&self) -> Op {
        Op {
            kind: self.kind,
            offset: self.offset,
            len: self.len,
        }
    }
}

/// A trim's slot holds no buffer.
const NO_BUF: u16 = u16::MAX;

/// A completion taken from the ring and not yet reported.
#[derive(Clone, Copy)]
struct Done {
    op: Op,
    lat_ns: u64,
    res: i32,
}

/// What a job's run on one ring counted, besides its completions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// When the job finished, ns since the start.
    pub end_ns: u64,
    /// `io_uring_enter` calls.
    pub enters: u64,
    /// Time integral of the I/Os in flight (from when each is stamped to when the enter that
    /// returns with its completion returns), in I/O·ns: divided by the run time, the
    /// time-weighted mean number of I/Os in flight.
    pub inflight_ns: u128,
    /// When the first I/O's latency started, ns since the start (`None`: no I/O).
    pub first_submit_ns: Option<u64>,
    /// How long the job's set-up took before the clock started (ring, buffers, registration),
    /// in ns; filled by the runner.
    pub setup_ns: u64,
}

/// Ops taken from the job's stream at a time ([`OpStream::fill`](crate::workload::OpStream::fill)).
const AHEAD: usize = 64;

/// The run's I/O state: slots, which are free, which are queued but not yet handed over.
struct State {
    setup: Setup,
    file: FileRef,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Ops taken from the stream and not yet issued, from `ahead_at` on (not for a timed trace,
    /// whose ops are taken as they come due).
    ahead: Vec<Op>,
    ahead_at: usize,
    timed: bool,
    /// Entries pushed to the submission queue and not yet handed to the kernel.
    unsubmitted: usize,
    /// The time-weighted count of the slots in flight (stamped and not yet reaped): its
    /// integral so far.
    stamped_ns: u128,
    last_ns: u64,
    first_submit_ns: Option<u64>,
    /// Successful reads and writes reaped at `done_t`, all of kind and size `lats_of`, before
    /// any other completion of that harvest: their latencies, to be reported at once.
    lats: Vec<u64>,
    lats_of: (OpKind, u64),
    /// The rest of the completions reaped at `done_t` (errors, short transfers, trims, another
    /// kind or size, and everything after the first of those), in order, not yet reported.
    done: Vec<Done>,
    done_t: u64,
    static_data: bool,
    /// A job that writes nothing reads into slot `i`'s own buffer `i` (no buffer lists).
    slot_bufs: bool,
    /// Trims go through the ring until the kernel refuses one without any having succeeded. At
    /// depth 1 there is nothing to overlap, so they stay synchronous, as fio's are.
    queue_trims: bool,
    trims_queued_ok: bool,
    exhausted: bool,
    broken: bool,
}

impl State {
    fn new(job: &Job<'_>, setup: Setup) -> Self {
        let depth = setup.depth;
        let blank = Slot {
            offset: 0,
            len: 0,
            submit_ns: 0,
            buf: NO_BUF,
            kind: OpKind::Read,
        };
        State {
            file: FileRef {
                fixed: setup.fixed_file,
                fd: job.file.as_raw_fd(),
            },
            slots: vec![blank; depth],
            free: (0..depth as u32).rev().collect(),
            ahead: Vec::with_capacity(AHEAD),
            ahead_at: 0,
            timed: job.stream.is_timed(),
            unsubmitted: 0,
            stamped_ns: 0,
            last_ns: 0,
            first_submit_ns: None,
            lats: Vec::with_capacity(depth),
            lats_of: (OpKind::Read, 0),
            done: Vec::with_capacity(depth),
            done_t: 0,
            static_data: job.gen.is_static(),
            slot_bufs: !job.writes,
            queue_trims: depth > 1,
            trims_queued_ok: false,
            exhausted: false,
            broken: false,
            setup,
        }
    }

    /// Slots holding an I/O (pushed and not yet reaped).
    #[inline]
    fn inflight(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Advances the in-flight integral to `ns` (a clock reading, never earlier than the last):
    /// it counts the slots pushed and not yet reaped.
    #[inline]
    fn tick(&mut self, ns: u64) {
        let inflight = self.inflight() as u128;
        self.stamped_ns += inflight * u128::from(ns.saturating_sub(self.last_ns));
        self.last_ns = self.last_ns.max(ns);
    }

    /// The next op to issue, as [`Job::next_due`] gives it, taken from a block of the stream's
    /// ops ([`AHEAD`] at a time) unless the stream is a timed trace: the `written=` budget is
    /// claimed and the stop flag read as each op is issued, as there.
    #[inline(always)]
    fn next_op(&mut self, job: &mut Job<'_>) -> Next {
        if self.timed {
            return job.next_due();
        }
        if job.held.is_some() {
            if let Some((op, _)) = job.held.take() {
                return Next::Op(op);
            }
        }
        if job.ctl.halted() {
            return Next::Done;
        }
        if self.ahead_at == self.ahead.len() {
            self.ahead.clear();
            self.ahead_at = 0;
            job.stream.fill(&mut self.ahead, AHEAD);
            if self.ahead.is_empty() {
                return Next::Done;
            }
        }
        let op = self.ahead[self.ahead_at];
        self.ahead_at += 1;
        if job.ctl.claim(&op) {
            Next::Op(op)
        } else {
            Next::Done
        }
    }

    /// The common case of [`prep`]'s loop, in a loop of its own: ops taken from the block
    /// ahead (not a timed trace, nothing held back, no trim) pushed into free slots, with the
    /// same checks per op as [`State::next_op`] (the stop flag, then the `written=` budget) and
    /// the same clock rule as [`prep`] ([`State::push_clocked`]). Returns where it stopped: [`Stop::Slow`] hands the next op (or the end of the
    /// free slots or of the block) to [`prep`]'s general path. Kept out of line: inlined into
    /// [`run`] with everything else, the loop spilled its state to the stack (callgrind at
    /// 32/32: 135 instructions per I/O for the refill inlined, 105 out of line).
    #[inline(never)]
    fn push_ready(
        &mut self,
        job: &mut Job<'_>,
        sq: &mut SubmissionQueue<'_>,
        submit_batch: usize,
        clock: &mut (usize, u64),
    ) -> Stop {
        if self.timed || job.held.is_some() {
            return Stop::Slow;
        }
        // copies the loop keeps in registers
        let (mut left, mut now) = *clock;
        let stop = loop {
            let Some(&slot) = self.free.last() else {
                break Stop::Slow;
            };
            let Some(&op) = self.ahead.get(self.ahead_at) else {
                break Stop::Slow;
            };
            if op.kind == OpKind::Trim || job.ctl.halted() {
                break Stop::Slow;
            }
            self.ahead_at += 1;
            if !job.ctl.claim(&op) {
                break Stop::Done;
            }
            if !self.push_clocked(job, sq, slot, op, submit_batch, (&mut left, &mut now)) {
                break Stop::Full;
            }
        };
        *clock = (left, now);
        stop
    }

    /// Pushes `op` into free slot `slot` under the run's clock rule: `clock` = (pushes left
    /// before the clock is read again, its last reading); at 0 the clock is read, the in-flight
    /// integral advanced to it and the first submission stamped, and `submit_batch` more pushes
    /// share that reading. False if the submission queue is full (cannot happen with depth ≤
    /// sq_entries): the op is then held ([`Job::held`]) and issued next round. The one home of
    /// both rules for [`State::push_ready`] and [`prep`].
    #[inline(always)]
    fn push_clocked(
        &mut self,
        job: &mut Job<'_>,
        sq: &mut SubmissionQueue<'_>,
        slot: u32,
        op: Op,
        submit_batch: usize,
        (left, now): (&mut usize, &mut u64),
    ) -> bool {
        if *left == 0 {
            *now = job.now();
            self.tick(*now);
            self.first_submit_ns.get_or_insert(*now);
            *left = submit_batch;
        }
        if !self.push(job, sq, slot, op, *now) {
            job.held = Some((op, 0));
            return false;
        }
        *left -= 1;
        true
    }

    /// A buffer for `kind`: a write takes one holding its data (filled now only if no spare
    /// is ready), a read preferably a spent one.
    #[inline]
    fn take_buf(&mut self, job: &mut Job<'_>, kind: OpKind) -> u16 {
        let su = &mut self.setup;
        match kind {
            OpKind::Write => match su.ready.pop_front() {
                Some(b) => b,
                None => {
                    let b = su.spent.pop().expect("a free slot has a free buffer");
                    if su.pool {
                        job.gen.refresh(su.bufs.slot_mut(b as usize));
                    } else {
                        job.gen.fill(su.bufs.slot_mut(b as usize));
                    }
                    b
                }
            },
            OpKind::Read => su
                .spent
                .pop()
                .or_else(|| su.ready.pop_back())
                .expect("a free slot has a free buffer"),
            OpKind::Trim => NO_BUF,
        }
    }

    /// Puts `op` in free slot `slot` and pushes its submission entry, its latency starting at
    /// `now_ns`; false if the queue is full.
    #[inline(always)]
    fn push(
        &mut self,
        job: &mut Job<'_>,
        sq: &mut SubmissionQueue<'_>,
        slot: u32,
        op: Op,
        now_ns: u64,
    ) -> bool {
        let i = slot as usize;
        let buf = match (self.slot_bufs, op.kind) {
            (_, OpKind::Trim) => NO_BUF,
            (true, _) => slot as u16,
            (false, kind) => self.take_buf(job, kind),
        };
        let user_data = u64::from(slot);
        let pushed = if op.kind == OpKind::Trim {
            let sqe = trim_entry(job.kind, self.file.fixed, self.file.fd, op.offset, op.len);
            // SAFETY: a trim's entry holds no pointer.
            unsafe { sq.push(&sqe.user_data(user_data)) }.is_ok()
        } else {
            let index = if self.setup.one_region { 0 } else { buf };
            let fixed = self.setup.fixed_bufs.then_some(index);
            let p = self.setup.bufs.ptr(buf as usize);
            // SAFETY: the buffer stays valid until the completion is reaped (see `prepare`).
            unsafe { push_rw(sq, self.file, &op, p, fixed, user_data) }
        };
        if !pushed {
            if !self.slot_bufs {
                self.give_back(op.kind, buf);
            }
            return false;
        }
        self.slots[i] = Slot {
            offset: op.offset,
            len: op.len,
            submit_ns: now_ns,
            buf,
            kind: op.kind,
        };
        self.free.pop();
        self.unsubmitted += 1;
        true
    }

    /// Returns a slot's buffer after its `kind` of I/O: a write of the static pattern leaves
    /// it ready for the next, anything else spends it.
    #[inline]
    fn give_back(&mut self, kind: OpKind, buf: u16) {
        match kind {
            OpKind::Trim => {}
            OpKind::Write if self.static_data => self.setup.ready.push_back(buf),
            _ => self.setup.spent.push(buf),
        }
    }
}

/// Where [`State::push_ready`] stopped.
enum Stop {
    /// The next op, if any, takes [`prep`]'s general path.
    Slow,
    /// The stream or the run is over (the op taken was refused by the `written=` budget).
    Done,
    /// The submission queue is full; the op is held for the next round.
    Full,
}

/// Fills every free slot with a due operation and pushes its entry to the submission queue,
/// reading the clock once per [`SUBMIT_BATCH`](ring::SUBMIT_BATCH) pushes, before the first of
/// them: a slot reaped is refilled at once, before the completions that freed it are reported
/// (see [`flush`]), with a buffer that already holds its data. Like fio's `lat` (whose clock is
/// read before each I/O is queued), an I/O's latency starts when it is queued to the ring; the
/// last (at most [`SUBMIT_BATCH`](ring::SUBMIT_BATCH)) go to the kernel with the waiting enter,
/// after the reporting (all of them before it where nothing else is in the kernel:
/// [`Ring::submit_ahead`]). Refilling before reporting keeps the depth in flight:
/// `tests/test_engine_accounting.py` checks the time-weighted I/Os in flight at QD32, and
/// `make bench`'s engine rows print it beside each run.
/// Returns when the next op of a timed trace is due (if that stopped it).
/// Synchronous trims run here, as they come, after the completions waiting to be reported.
fn prep<R: Reporter>(
    job: &mut Job<'_>,
    rep: &mut R,
    s: &mut State,
    ring: &mut Ring<'_>,
    t: &mut u64,
) -> Option<u64> {
    if s.exhausted || job.ctl.halted() || job.ctl.time_up(*t) {
        return None;
    }
    // pushes left before the clock is read again, and its last reading
    let mut clock = (0, 0);
    loop {
        match s.push_ready(job, &mut ring.sq, ring.submit_batch, &mut clock) {
            Stop::Slow => {}
            Stop::Done => {
                s.exhausted = true;
                return None;
            }
            Stop::Full => return None,
        }
        let &slot = s.free.last()?;
        let op = match s.next_op(job) {
            Next::Op(op) => op,
            Next::NotYet(due) => return Some(due),
            Next::Done => {
                s.exhausted = true;
                return None;
            }
        };
        if op.kind == OpKind::Trim && !s.queue_trims {
            // completions are reported in time order
            flush(job, rep, s);
            if !trim_now(job, rep, &op) {
                return None;
            }
            *t = job.now();
            if job.ctl.time_up(*t) {
                return None;
            }
            // the next push reads the clock again
            clock.0 = 0;
            continue;
        }
        let (left, now) = &mut clock;
        if !s.push_clocked(job, &mut ring.sq, slot, op, ring.submit_batch, (left, now)) {
            return None;
        }
    }
}

/// Takes every completion from the ring at `t` (when the waiting enter returned), frees their
/// slots and buffers for [`prep`], and publishes the consumed head at once, so the next enter
/// waits for a new completion instead of returning at the sight of an old one (at QD1 that
/// made two `io_uring_enter` calls per I/O). Nothing is reported here (see [`flush`]), but the
/// common completions are sorted for it as they are taken: while every one so far is a read or
/// write of the first one's kind and size that moved all its bytes, only its latency is kept
/// (`lats`); from the first other one on, each is kept whole, in order (`done`).
fn harvest(s: &mut State, ring: &mut Ring<'_>, t: u64) {
    s.tick(t);
    s.done_t = t;
    ring.cq.sync();
    for cqe in ring.cq.by_ref() {
        let slot = cqe.user_data();
        if slot >= TICK - 1 {
            // the multishot timeout fired; without `more` it has ended (or was refused): each
            // wait carries its own timeout from now on
            if slot == TICK && !io_uring::cqueue::more(cqe.flags()) {
                ring.tick = false;
            }
            continue;
        }
        let st = &s.slots[slot as usize];
        // only what the common case needs; the op whole for the rest
        let (kind, len, lat_ns, buf) = (st.kind, st.len, t.saturating_sub(st.submit_ns), st.buf);
        let res = cqe.result();
        s.free.push(slot as u32);
        if !s.slot_bufs {
            s.give_back(kind, buf);
        }
        if s.done.is_empty()
            && kind != OpKind::Trim
            && i64::from(res) == len as i64
            && (s.lats.is_empty() || s.lats_of == (kind, len))
        {
            s.lats_of = (kind, len);
            s.lats.push(lat_ns);
        } else {
            let op = s.slots[slot as usize].op();
            s.done.push(Done { op, lat_ns, res });
        }
    }
    ring.cq.sync();
}

/// Reports the completions [`harvest`] took, then fills spent buffers until a whole depth of
/// writes is ready: the work that can wait while the refills are in flight.
///
/// Completions are reported in runs of the same kind and size ([`Reporter::complete_all`]):
/// they all completed at `done_t`, so the interval is checked once per run, and each keeps its
/// own latency. The run [`harvest`] gathered (`lats`) comes first, then the rest in order.
fn flush<R: Reporter>(job: &mut Job<'_>, rep: &mut R, s: &mut State) {
    let mut tc = job.ctl.clamp(s.done_t);
    // kind and size of the latencies in `s.lats`
    let mut run = s.lats_of;
    for d in s.done.drain(..) {
        let op = d.op;
        let trim = op.kind == OpKind::Trim;
        let res = if trim && !s.trims_queued_ok && REFUSE_QUEUED_TRIMS.load(Ordering::Relaxed) {
            -libc::EOPNOTSUPP
        } else {
            d.res
        };
        if trim && res < 0 && !s.trims_queued_ok && trim_unsupported(-res) {
            // this kernel cannot queue discards: this one and the rest run synchronously
            s.queue_trims = false;
            job.ctl.note_synchronous_trims();
            report_run(rep, tc, run, &mut s.lats);
            trim_now(job, rep, &op);
            // later completions are reported no earlier than this one
            tc = tc.max(job.ctl.clamp(job.now()));
            continue;
        }
        // a read or write returns the bytes it moved, a trim 0
        let want = if trim { 0 } else { op.len as i64 };
        if res < 0 {
            let e = io::Error::from_raw_os_error(-res);
            job.fail(op.kind, op.offset, op.len, &e);
        } else if i64::from(res) != want {
            job.fail_short(op.kind, op.offset, op.len, res as u64);
        } else {
            s.trims_queued_ok |= trim;
            if (op.kind, op.len) != run {
                report_run(rep, tc, run, &mut s.lats);
                run = (op.kind, op.len);
            }
            s.lats.push(d.lat_ns);
        }
    }
    report_run(rep, tc, run, &mut s.lats);
    let su = &mut s.setup;
    if su.pool {
        // every written buffer goes back to the end of the pool's turn
        for b in su.spent.drain(..) {
            job.gen.refresh(su.bufs.slot_mut(b as usize));
            su.ready.push_back(b);
        }
    } else if job.writes {
        while su.ready.len() < su.depth {
            let Some(b) = su.spent.pop() else { break };
            job.gen.fill(su.bufs.slot_mut(b as usize));
            su.ready.push_back(b);
        }
    }
}

/// Reports the completions whose latencies are in `lats`, all of `run` = (kind, size) at `tc`,
/// and empties it.
#[inline]
fn report_run<R: Reporter>(rep: &mut R, tc: u64, run: (OpKind, u64), lats: &mut Vec<u64>) {
    if !lats.is_empty() {
        rep.complete_all(tc, run.0, run.1, lats);
        lats.clear();
    }
}

/// Runs the job to its end on `ring`, set up by [`prepare`] before the clock started. Each
/// turn: refill the free slots ([`prep`]), hand them over, report the last completions
/// ([`flush`]) while those are in flight, then wait and take the next ([`harvest`]).
pub fn run<R: Reporter>(job: &mut Job<'_>, ring: &mut IoUring, setup: Setup, rep: &mut R) -> Stats {
    run_batched(job, ring, setup, rep, batches())
}

/// [`run`] handing over `(submit, complete)` entries and completions per enter ([`BATCHES`]).
pub(super) fn run_batched<R: Reporter>(
    job: &mut Job<'_>,
    ring: &mut IoUring,
    setup: Setup,
    rep: &mut R,
    (submit_batch, complete_batch): (usize, usize),
) -> Stats {
    let ext_arg = ring.params().is_feature_ext_arg();
    let (fixed_file, fixed_bufs) = (setup.fixed_file, setup.fixed_bufs);
    let mut s = State::new(job, setup);
    // One submitter for the whole run, so the ring's own descriptor can be registered too
    // (no descriptor lookup per `io_uring_enter`).
    let (mut submitter, sq, cq) = ring.split();
    let ring_fd = submitter.register_ring_fd().is_ok();
    let mut r = Ring {
        submitter,
        sq,
        cq,
        ext_arg,
        tick: false,
        submit_batch,
        complete_batch,
        enters: 0,
    };
    r.arm_tick();
    let mut t = job.now();
    s.last_ns = t;
    loop {
        let not_before = prep(job, rep, &mut s, &mut r, &mut t);
        if s.inflight() == 0 {
            flush(job, rep, &mut s);
            let Some(due) = not_before else { break };
            // a timed trace replay waiting for its next op's recorded time
            wait_until(job.t0, due);
            t = job.now();
            rep.heartbeat(t);
            continue;
        }
        if !r.submit_ahead(job, &mut s) {
            break;
        }
        flush(job, rep, &mut s);
        rep.heartbeat(t);
        if !r.wait(job, &mut s) {
            break;
        }
        t = job.now();
        harvest(&mut s, &mut r, t);
    }
    flush(job, rep, &mut s);
    rep.heartbeat(t);
    r.disarm_tick();
    let stats = Stats {
        end_ns: t,
        enters: r.enters,
        inflight_ns: s.stamped_ns,
        first_submit_ns: s.first_submit_ns,
        setup_ns: 0,
    };
    if ring_fd {
        let _ = r.submitter.unregister_ring_fd();
    }
    drop(r);
    if s.broken && s.inflight() > 0 {
        // The kernel may still write into these buffers; never hand them back to the allocator.
        std::mem::forget(s);
        return stats;
    }
    // Drop the ring's references now: ring teardown is asynchronous, and a registered file
    // still held by it would keep an exclusively opened device claimed after the target closes.
    if fixed_file {
        let _ = ring.submitter().unregister_files();
    }
    if fixed_bufs {
        let _ = ring.submitter().unregister_buffers();
    }
    stats
}

#[cfg(test)]
mod tests;
