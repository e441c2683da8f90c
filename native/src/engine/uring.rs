//! The io_uring engine: one ring per job keeping `iodepth` I/Os in flight, with the target's
//! descriptor, the I/O buffers and the ring's own descriptor registered with the kernel where
//! it allows (fewer per-I/O costs than fio's defaults), all set up before the run's clock
//! starts ([`prepare`]). The loop is fio's `t/io_uring`'s: [`prep`] refills the free slots,
//! [`Ring::submit_ahead`] hands them over, [`flush`] reports the last round's completions while
//! those are in flight, [`Ring::wait`] hands over the rest and waits, and [`harvest`] takes the
//! completions and publishes the consumed head at once. At QD1 that is two `io_uring_enter`
//! calls per I/O, one to submit and one to wait, as fio makes (see [`Ring::wait`]). No timer is
//! armed per wait: one multishot timeout ticks for the whole run ([`WAIT`]).
//! The run's metadata carries the enters made and the time-weighted mean of the I/Os in
//! flight ([`Stats`]). Submission and completion
//! are timed once per batch: an I/O's latency runs from when it is queued to the ring (at most
//! [`SUBMIT_BATCH`] entries before the clock is read) to just after the enter that returns with
//! its completion, as fio's `lat` (which starts when fio queues the I/O to its engine).
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

use super::buf::SlotBufs;
use super::job::{wait_until, Job, Next};
use super::report::Reporter;
use super::sqe::{rw_entry, trim_entry, trim_unsupported, FileRef};
use crate::workload::{Op, OpKind};
use io_uring::{opcode, types, CompletionQueue, IoUring, SubmissionQueue, Submitter};
use std::collections::VecDeque;
use std::io;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Longest wait for a completion before the worker checks its flags again. Where the kernel has
/// multishot timeouts (Linux 6.4+) one timeout queued at the start of the run completes this
/// often for the whole run ([`TICK`]): no timer is armed and cancelled per wait, which is what
/// a timeout passed to each waiting `io_uring_enter` costs (an hrtimer started and cancelled
/// in every sleep). Elsewhere each wait carries the timeout.
const WAIT: Duration = Duration::from_millis(20);

/// `user_data` of the run's multishot timeout (slots are numbered from 0).
const TICK: u64 = u64::MAX;

/// Most I/Os handed to the kernel per `io_uring_enter` while more are queued (every free slot is
/// refilled and pushed first, then handed over this many at a time). The kernel issues a batch of submissions in full (under one block plug, and an
/// O_DIRECT write on a filesystem is issued inline, several µs each) before the device sees any
/// of it, so refilling all the slots a burst of completions freed and submitting them at once
/// leaves the device idle meanwhile. Measured in one interleaved run on this project's 2-core
/// VM against fio (which submits every I/O on its own): 4 KiB randwrite QD32 on an ext4 file
/// went from 0.77 to 0.98 of fio's IOPS, on a loop device from 0.89 to 0.99, randread on a
/// loop device from 0.88 to 1.03; CPU per I/O stayed 20–35 % under fio's.
const SUBMIT_BATCH: usize = 4;

/// Completions waited for per `io_uring_enter` (at most the I/Os in flight): fio's
/// `iodepth_batch_complete_min` default.
const COMPLETE_BATCH: usize = 1;

/// Submission and completion batches of the io_uring loop for the whole process, as
/// `(submit, complete)`; `(0, 0)` = [`SUBMIT_BATCH`] and [`COMPLETE_BATCH`]. Not a workload
/// field: set only by the benchmarks (`native/examples/fb_run.rs --batch S/C`) to run the loop
/// at `t/io_uring`'s `-sS -cC` beside it. With a completion batch over 1 the run's timeout no
/// longer bounds a wait (the kernel sleeps again until the batch is complete, as `t/io_uring`,
/// which has no timeout, does): a stalled device stalls the worker.
pub static BATCHES: std::sync::Mutex<(usize, usize)> = std::sync::Mutex::new((0, 0));

/// The batches in effect (see [`BATCHES`]), each at least 1.
fn batches() -> (usize, usize) {
    let (s, c) = *BATCHES.lock().unwrap_or_else(|e| e.into_inner());
    (
        if s == 0 { SUBMIT_BATCH } else { s },
        if c == 0 { COMPLETE_BATCH } else { c },
    )
}

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

/// True (and the run failed) if `io_uring_enter` returned an error after which the ring is
/// unusable. A timeout, a signal, a full completion queue or a lack of kernel memory leave the
/// submissions queued for the next try.
fn enter_failed(job: &Job<'_>, r: io::Result<usize>) -> bool {
    let Err(e) = r else { return false };
    if matches!(
        e.raw_os_error(),
        Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
    ) {
        return false;
    }
    job.ctl.fail(format!(
        "io_uring submission on {} failed: {e}",
        job.path.display()
    ));
    true
}

/// Creates a ring with `entries` submission slots, with the cheapest completion mode the kernel
/// offers (single issuer + deferred task work, else cooperative task work, else plain).
pub fn build_ring(entries: u32) -> io::Result<IoUring> {
    let entries = entries.next_power_of_two().max(2);
    if let Ok(r) = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
    {
        return Ok(r);
    }
    if let Ok(r) = IoUring::builder().setup_coop_taskrun().build(entries) {
        return Ok(r);
    }
    IoUring::new(entries)
}

/// Most memory spent on spare write buffers (see [`Setup`]).
const SPARE_BYTES: usize = 64 << 20;

/// Memory of the pool of random write buffers a write-only `data=random` job rotates through
/// (see [`Setup`]); at least twice the depth of buffers, at most [`SPARE_BYTES`] beyond it.
const POOL_BYTES: usize = 4 << 20;

/// What a job sets up before the run's clock starts: its I/O buffers (allocated with every page
/// touched and, for a workload that writes, each holding the data of a write, as fio fills its
/// buffers before it starts) and, where the kernel allows, the target's descriptor and the
/// buffers registered with the ring. Registering pins every buffer page, which at bs=1m QD128
/// alone takes tens of ms.
///
/// A workload that writes gets spare buffers beyond its depth (up to `depth`, at most
/// [`SPARE_BYTES`] of them): a slot reaped is refilled at once with a buffer that already holds
/// its data, and the spent buffer is filled again after the refills have been handed over,
/// while the I/Os are in flight (generating a 4 KiB buffer inline kept a slot empty ~0.5 µs).
///
/// A job that only writes random data (`data=random`, the default) instead gets a pool of
/// [`POOL_BYTES`] of buffers filled with random bytes before the clock starts, taken in turn
/// (first in, first out) and, once written, retagged ([`DataGen::refresh`]: 8 bytes per
/// 512-byte sector) rather than regenerated: each write is still incompressible and no two
/// sectors the job writes are identical, while a 128 KiB write costs 256 stores instead of
/// 128 KiB of fresh AES output. What repeats is the rest of each sector: a buffer's untagged
/// bytes come back once per pool turn, every [`POOL_BYTES`] (or twice the depth's) of writes.
///
/// [`DataGen::refresh`]: crate::workload::DataGen::refresh
pub struct Setup {
    bufs: SlotBufs,
    depth: usize,
    fixed_file: bool,
    fixed_bufs: bool,
    /// Write buffers are a rotated pool, retagged instead of refilled.
    pool: bool,
    /// Buffers holding the data of a next write, oldest first.
    ready: VecDeque<u16>,
    /// Buffers whose contents are spent (read into, or written with fresh data).
    spent: Vec<u16>,
}

/// Sets `job` up on `ring` (see [`Setup`]); call before the run's clock starts.
pub fn prepare(job: &mut Job<'_>, ring: &mut IoUring) -> Setup {
    let depth = job.depth.min(ring.params().sq_entries() as usize).max(1);
    let bs = job.bs.max(1) as usize;
    let pool = job.writes && !job.reads && job.gen.refreshable();
    let spare = if pool {
        // u16 buffer indices; `NO_BUF` is not one
        (POOL_BYTES / bs)
            .max(depth)
            .min(SPARE_BYTES / bs)
            .min(usize::from(NO_BUF) - depth)
    } else if job.writes {
        // none for blocks over SPARE_BYTES: those are filled as they are taken
        depth.min(SPARE_BYTES / bs)
    } else {
        0
    };
    let n = depth + spare;
    let mut bufs = SlotBufs::new(n, job.bs as usize);
    let (mut ready, mut spent) = (VecDeque::with_capacity(n), Vec::with_capacity(n));
    // taken from the front: buffer 0 first
    for b in 0..n as u16 {
        if job.writes {
            job.gen.fill(bufs.slot_mut(b as usize));
            if pool {
                // every sector written carries a tag, the first write's too
                job.gen.refresh(bufs.slot_mut(b as usize));
            }
            ready.push_back(b);
        } else {
            spent.push(b);
        }
    }
    let fixed_file = ring
        .submitter()
        .register_files(&[job.file.as_raw_fd()])
        .is_ok();
    // SAFETY: the buffers outlive the ring's use of them: every I/O is drained before `run`
    // returns, and on a broken ring the buffers are leaked rather than freed.
    let fixed_bufs = unsafe { ring.submitter().register_buffers(&bufs.iovecs()) }.is_ok();
    Setup {
        bufs,
        depth,
        fixed_file,
        fixed_bufs,
        pool,
        ready,
        spent,
    }
}

/// Per-slot state of an I/O in flight.
#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    submit_ns: u64,
    /// The slot's buffer ([`NO_BUF`] for a trim).
    buf: u16,
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

/// The ring's three parts, split once for the whole run.
struct Ring<'r> {
    submitter: Submitter<'r>,
    sq: SubmissionQueue<'r>,
    cq: CompletionQueue<'r>,
    ext_arg: bool,
    /// The run's multishot timeout is armed ([`TICK`]): waits carry no timeout of their own.
    tick: bool,
    /// Entries handed over per enter while more are queued ([`batches`]).
    submit_batch: usize,
    /// Completions waited for per enter, at most the I/Os in flight ([`batches`]).
    complete_batch: usize,
    enters: u64,
}

/// The run's I/O state: slots, which are free, which are queued but not yet handed over.
struct State {
    setup: Setup,
    file: FileRef,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots pushed to the submission queue and not yet stamped.
    queued: Vec<u32>,
    /// Entries pushed to the submission queue and not yet handed to the kernel.
    unsubmitted: usize,
    /// The time-weighted count of the slots stamped and not yet reaped: its integral so far.
    stamped_ns: u128,
    last_ns: u64,
    first_submit_ns: Option<u64>,
    /// Completions reaped at `done_t` and not yet reported.
    done: Vec<Done>,
    /// Latencies of a run of completions being reported ([`flush`]).
    lats: Vec<u64>,
    done_t: u64,
    static_data: bool,
    /// Trims go through the ring until the kernel refuses one without any having succeeded. At
    /// depth 1 there is nothing to overlap, so they stay synchronous, as fio's are (64 KiB trims
    /// on a loop device at depth 1: 22k/s through the ring in one run, 17–24k/s synchronous in
    /// four; no difference this VM can resolve).
    queue_trims: bool,
    trims_queued_ok: bool,
    exhausted: bool,
    broken: bool,
}

impl State {
    fn new(job: &Job<'_>, setup: Setup) -> Self {
        let depth = setup.depth;
        let blank = Slot {
            op: Op {
                kind: OpKind::Read,
                offset: 0,
                len: 0,
            },
            submit_ns: 0,
            buf: NO_BUF,
        };
        State {
            file: FileRef {
                fixed: setup.fixed_file,
                fd: job.file.as_raw_fd(),
            },
            slots: vec![blank; depth],
            free: (0..depth as u32).rev().collect(),
            queued: Vec::with_capacity(depth),
            unsubmitted: 0,
            stamped_ns: 0,
            last_ns: 0,
            first_submit_ns: None,
            done: Vec::with_capacity(depth),
            lats: Vec::with_capacity(depth),
            done_t: 0,
            static_data: job.gen.is_static(),
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
    /// it counts the slots stamped and not yet reaped.
    #[inline]
    fn tick(&mut self, ns: u64) {
        let stamped = self.inflight() - self.queued.len();
        self.stamped_ns += stamped as u128 * u128::from(ns.saturating_sub(self.last_ns));
        self.last_ns = self.last_ns.max(ns);
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

    /// Puts `op` in free slot `slot` and pushes its submission entry; false if the queue is full.
    #[inline]
    fn push(&mut self, job: &mut Job<'_>, sq: &mut SubmissionQueue<'_>, slot: u32, op: Op) -> bool {
        let i = slot as usize;
        let buf = self.take_buf(job, op.kind);
        let sqe = if op.kind == OpKind::Trim {
            trim_entry(job.kind, self.file.fixed, self.file.fd, op.offset, op.len)
        } else {
            let fixed = self.setup.fixed_bufs.then_some(buf);
            rw_entry(self.file, &op, self.setup.bufs.ptr(buf as usize), fixed)
        };
        // SAFETY: the buffer stays valid until the completion is reaped (see `prepare`).
        if unsafe { sq.push(&sqe.user_data(u64::from(slot))) }.is_err() {
            self.give_back(op.kind, buf);
            return false;
        }
        self.slots[i].op = op;
        self.slots[i].buf = buf;
        self.free.pop();
        self.queued.push(slot);
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

    /// Marks the queued slots as submitted at `ns`, a clock reading (their latency starts).
    #[inline]
    fn stamp(&mut self, ns: u64) {
        self.tick(ns);
        self.first_submit_ns.get_or_insert(ns);
        for &q in &self.queued {
            self.slots[q as usize].submit_ns = ns;
        }
        self.queued.clear();
    }
}

impl Ring<'_> {
    /// Queues the run's multishot timeout ([`TICK`]) and hands it over; where the kernel refuses
    /// it, its completion says so and [`harvest`] turns `tick` off again.
    fn arm_tick(&mut self) {
        let ts = types::Timespec::from(WAIT);
        // count 0: it repeats until removed
        let sqe = opcode::Timeout::new(&ts)
            .count(0)
            .flags(types::TimeoutFlags::MULTISHOT)
            .build()
            .user_data(TICK);
        // SAFETY: the timespec is read when the entry is submitted, below, while `ts` lives.
        if unsafe { self.sq.push(&sqe) }.is_err() {
            return;
        }
        self.sq.sync();
        self.enters += 1;
        self.tick = self.submitter.submit().is_ok_and(|n| n == 1);
    }

    /// Removes the run's multishot timeout (the ring may outlive the run).
    fn disarm_tick(&mut self) {
        if !self.tick {
            return;
        }
        let sqe = opcode::TimeoutRemove::new(TICK).build().user_data(TICK - 1);
        // SAFETY: the entry holds no pointer.
        if unsafe { self.sq.push(&sqe) }.is_ok() {
            self.sq.sync();
            self.enters += 1;
            let _ = self.submitter.submit();
        }
        self.tick = false;
    }

    /// Hands the kernel [`Ring::submit_batch`] entries at a time (one `io_uring_enter` each)
    /// while more than `keep` are waiting. False if the ring broke.
    #[inline]
    fn hand_over(&mut self, job: &Job<'_>, s: &mut State, keep: usize) -> bool {
        if s.unsubmitted <= keep {
            return true;
        }
        self.sq.sync();
        while s.unsubmitted > keep {
            let n = self.submit_batch.min(s.unsubmitted);
            // SAFETY: no argument is passed; the entries' buffers live until reaped.
            let r = unsafe { self.submitter.enter::<libc::sigset_t>(n as u32, 0, 0, None) };
            self.enters += 1;
            // see what the kernel took from the submission queue
            self.sq.sync();
            match r {
                Ok(n) => s.unsubmitted -= n.min(s.unsubmitted),
                Err(_) if enter_failed(job, r) => {
                    s.broken = true;
                    return false;
                }
                // busy or interrupted: the rest go with the waiting enter
                Err(_) => return true,
            }
        }
        true
    }

    /// Hands the kernel entries [`Ring::submit_batch`] at a time while more than a batch are
    /// waiting; the rest go with the next [`Ring::wait`]. False if the ring broke.
    #[inline]
    fn submit_ahead(&mut self, job: &Job<'_>, s: &mut State) -> bool {
        self.hand_over(job, s, self.submit_batch)
    }

    /// Waits for [`Ring::complete_batch`] completions (at most the I/Os in flight; at most
    /// [`WAIT`] where no multishot timeout is armed and the kernel takes a timeout), handing the
    /// waiting entries over first. When one completion is waited for and it can only be one of
    /// the entries being handed over (always at QD1), they go in an enter of their own and the
    /// wait in a second, as fio does: in one enter that submits and waits, QD1 4 KiB reads on a
    /// loop device ran at 0.53× fio's IOPS with 1.63× its p50 on a quiet machine; submitting
    /// first brought p50 to fio's (issue 29). Otherwise one enter does both, as `t/io_uring`
    /// does: at `-s32 -c32` the split made two enters per 32 I/Os against its one
    /// (`tests/bench/engine_instr.py`: 0.063 vs 0.031 syscalls per I/O). False (and the run
    /// failed) if the ring broke.
    #[inline]
    fn wait(&mut self, job: &Job<'_>, s: &mut State) -> bool {
        // `run` stamped every entry when it was queued
        debug_assert!(s.queued.is_empty());
        let inflight = s.inflight();
        let want = self.complete_batch.min(inflight).max(1);
        if s.unsubmitted > 0 && want == 1 && inflight == s.unsubmitted && !self.hand_over(job, s, 0)
        {
            return false;
        }
        self.sq.sync();
        let r = if self.ext_arg && !self.tick {
            let ts = types::Timespec::from(WAIT);
            let args = types::SubmitArgs::new().timespec(&ts);
            self.submitter.submit_with_args(want, &args)
        } else {
            self.submitter.submit_and_wait(want)
        };
        self.enters += 1;
        // see what the kernel took from the submission queue
        self.sq.sync();
        match r {
            Ok(n) => s.unsubmitted -= n.min(s.unsubmitted),
            Err(_) if enter_failed(job, r) => {
                s.broken = true;
                return false;
            }
            Err(_) => {}
        }
        true
    }
}

/// Fills every free slot with a due operation and pushes its entry to the submission queue,
/// stamping them [`SUBMIT_BATCH`] at a time as they are pushed (the caller stamps the rest): a
/// slot reaped is refilled at once, before the completions that freed it are reported (see
/// [`flush`]), with a buffer that already holds its data. Like fio's `lat`, an I/O's latency
/// starts when it is queued to the ring; the last (at most [`SUBMIT_BATCH`]) go to the kernel
/// with the waiting enter, after the reporting. Measured on a loop device, 4k QD32 at load
/// 13–16, four 2 s runs each, time-weighted I/Os in flight: reporting before the refill 29.3–32.0
/// (randread) and 31.1–31.8 (randwrite); refilled first, buffers pre-filled, 31.4–31.9 and
/// 31.8–31.9 with the rest stamped at the waiting enter (which waits for `submit_ahead`'s
/// enters and the reporting); stamped as pushed, see `tests/test_engine_accounting.py`.
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
    while let Some(&slot) = s.free.last() {
        let op = match job.next_due() {
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
            continue;
        }
        if !s.push(job, &mut ring.sq, slot, op) {
            // queue full (cannot happen with depth ≤ sq_entries): issue it next round
            job.held = Some((op, 0));
            return None;
        }
        if s.queued.len() == ring.submit_batch {
            s.stamp(job.now());
        }
    }
    None
}

/// Takes every completion from the ring at `t` (when the waiting enter returned), frees their
/// slots and buffers for [`prep`], and publishes the consumed head at once, so the next enter
/// waits for a new completion instead of returning at the sight of an old one (at QD1 that
/// made two `io_uring_enter` calls per I/O). Nothing is reported here: see [`flush`].
fn harvest(s: &mut State, ring: &mut Ring<'_>, t: u64) {
    s.tick(t);
    s.done_t = t;
    ring.cq.sync();
    for cqe in ring.cq.by_ref() {
        if cqe.user_data() >= TICK - 1 {
            // the multishot timeout fired; without `more` it has ended (or was refused): each
            // wait carries its own timeout from now on
            if cqe.user_data() == TICK && !io_uring::cqueue::more(cqe.flags()) {
                ring.tick = false;
            }
            continue;
        }
        let i = cqe.user_data() as usize;
        let st = s.slots[i];
        s.free.push(i as u32);
        s.give_back(st.op.kind, st.buf);
        s.done.push(Done {
            op: st.op,
            lat_ns: t.saturating_sub(st.submit_ns),
            res: cqe.result(),
        });
    }
    ring.cq.sync();
}

/// Reports the completions [`harvest`] took, then fills spent buffers until a whole depth of
/// writes is ready: the work that can wait while the refills are in flight.
///
/// Completions are reported in runs of the same kind and size ([`Reporter::complete_all`]):
/// they all completed at `done_t`, so the interval is checked once per run, and each keeps its
/// own latency.
fn flush<R: Reporter>(job: &mut Job<'_>, rep: &mut R, s: &mut State) {
    let mut tc = job.ctl.clamp(s.done_t);
    // kind and size of the latencies in `s.lats`
    let mut run = (OpKind::Read, 0);
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
        if !s.queued.is_empty() {
            // the last refills' latency starts now, as they are queued, not after the reporting
            // they wait through before the waiting enter takes them
            s.stamp(job.now());
        }
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
