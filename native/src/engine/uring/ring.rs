//! The ring of a job's run: built with the cheapest completion mode the kernel offers, the
//! run's multishot timeout, and the `io_uring_enter` calls that hand entries over and wait
//! ([`Ring::hand_over`], [`Ring::wait`]), at the batches in effect ([`BATCHES`]).

use super::State;
use crate::engine::job::Job;
use io_uring::{opcode, types, CompletionQueue, IoUring, SubmissionQueue, Submitter};
use std::io;
use std::time::Duration;

/// Longest wait for a completion before the worker checks its flags again. Where the kernel has
/// multishot timeouts (Linux 6.4+) one timeout queued at the start of the run completes this
/// often for the whole run ([`TICK`]): no timer is armed and cancelled per wait, which is what
/// a timeout passed to each waiting `io_uring_enter` costs (an hrtimer started and cancelled
/// in every sleep). Elsewhere each wait carries the timeout.
pub(super) const WAIT: Duration = Duration::from_millis(20);

/// `user_data` of the run's multishot timeout (slots are numbered from 0).
pub(super) const TICK: u64 = u64::MAX;

/// Most I/Os handed to the kernel per `io_uring_enter` while more are queued (every free slot is
/// refilled and pushed first, then handed over this many at a time). The kernel issues a batch
/// of submissions in full (under one block plug, and an O_DIRECT write on a filesystem is issued
/// inline) before the device sees any of it, so refilling all the slots a burst of completions
/// freed and submitting them at once leaves the device idle meanwhile; fio submits every I/O on
/// its own. `make bench`'s engine rows (`tests/bench/engine.py`: IOPS and CPU per I/O against
/// fio at QD32 on a file and a loop device) measure it.
pub(super) const SUBMIT_BATCH: usize = 4;

/// Completions waited for per `io_uring_enter` (at most the I/Os in flight): fio's
/// `iodepth_batch_complete_min` default.
pub(super) const COMPLETE_BATCH: usize = 1;

/// Submission and completion batches of the io_uring loop for the whole process, as
/// `(submit, complete)`; `(0, 0)` = [`SUBMIT_BATCH`] and [`COMPLETE_BATCH`]. Not a workload
/// field: set only by the benchmarks (`native/examples/fb_run.rs --batch S/C`) to run the loop
/// at `t/io_uring`'s `-sS -cC` beside it. With a completion batch over 1 the run's timeout no
/// longer bounds a wait (the kernel sleeps again until the batch is complete, as `t/io_uring`,
/// which has no timeout, does): a stalled device stalls the worker.
pub static BATCHES: std::sync::Mutex<(usize, usize)> = std::sync::Mutex::new((0, 0));

/// The batches in effect (see [`BATCHES`]), each at least 1.
pub(super) fn batches() -> (usize, usize) {
    let (s, c) = *BATCHES.lock().unwrap_or_else(|e| e.into_inner());
    (
        if s == 0 { SUBMIT_BATCH } else { s },
        if c == 0 { COMPLETE_BATCH } else { c },
    )
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
/// offers (single issuer + deferred task work, else cooperative task work, else plain) and,
/// where the kernel has it (Linux 6.6+), no submission queue index array, as `t/io_uring` sets
/// its ring up (`IORING_SETUP_NO_SQARRAY`: the kernel takes entries in ring order without
/// reading an index per entry).
pub fn build_ring(entries: u32) -> io::Result<IoUring> {
    let entries = entries.next_power_of_two().max(2);
    for no_sqarray in [true, false] {
        let mut b = IoUring::builder();
        b.setup_single_issuer()
            .setup_defer_taskrun()
            .setup_coop_taskrun();
        if no_sqarray {
            b.setup_no_sqarray();
        }
        if let Ok(r) = b.build(entries) {
            return Ok(r);
        }
    }
    if let Ok(r) = IoUring::builder().setup_coop_taskrun().build(entries) {
        return Ok(r);
    }
    IoUring::new(entries)
}

/// The ring's three parts, split once for the whole run.
pub(super) struct Ring<'r> {
    pub(super) submitter: Submitter<'r>,
    pub(super) sq: SubmissionQueue<'r>,
    pub(super) cq: CompletionQueue<'r>,
    pub(super) ext_arg: bool,
    /// The run's multishot timeout is armed ([`TICK`]): waits carry no timeout of their own.
    pub(super) tick: bool,
    /// Entries handed over per enter while more are queued ([`batches`]).
    pub(super) submit_batch: usize,
    /// Completions waited for per enter, at most the I/Os in flight ([`batches`]).
    pub(super) complete_batch: usize,
    pub(super) enters: u64,
}

impl Ring<'_> {
    /// Queues the run's multishot timeout ([`TICK`]) and hands it over; where the kernel refuses
    /// it, its completion says so and [`harvest`](super::harvest) turns `tick` off again.
    pub(super) fn arm_tick(&mut self) {
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
    pub(super) fn disarm_tick(&mut self) {
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
            match self.entered(job, s, r) {
                Some(true) => {}
                // busy or interrupted: the rest go with the waiting enter
                Some(false) => return true,
                None => return false,
            }
        }
        true
    }

    /// Accounts for one `io_uring_enter` that returned `r`: counts it, takes off what the kernel
    /// consumed from the submission queue. `Some(true)` when it took entries, `Some(false)` when
    /// it was busy or interrupted, `None` (the ring broke and the run failed) otherwise.
    #[inline]
    fn entered(&mut self, job: &Job<'_>, s: &mut State, r: io::Result<usize>) -> Option<bool> {
        self.enters += 1;
        // see what the kernel took from the submission queue
        self.sq.sync();
        match r {
            Ok(n) => {
                s.unsubmitted -= n.min(s.unsubmitted);
                Some(true)
            }
            Err(_) if enter_failed(job, r) => {
                s.broken = true;
                None
            }
            Err(_) => Some(false),
        }
    }

    /// True when the next wait is for one completion and every I/O in flight is still waiting
    /// to be handed over (always at QD1): nothing is in the kernel, so the device idles until
    /// they go.
    #[inline]
    fn device_idle(&self, s: &State) -> bool {
        let inflight = s.inflight();
        s.unsubmitted > 0 && inflight == s.unsubmitted && self.complete_batch.min(inflight) <= 1
    }

    /// Hands the kernel entries [`Ring::submit_batch`] at a time while more than a batch are
    /// waiting; the rest go with the next [`Ring::wait`]. Where the device would otherwise idle
    /// ([`Ring::device_idle`], always at QD1) every entry goes now, in enters of their own, and
    /// the completions already taken are reported while the I/Os run, as fio reports after its
    /// submitting enter: reporting first held each QD1 I/O back by the reporting's time (the
    /// last completion's latency into the histograms, the interval check, the heartbeat).
    /// False if the ring broke.
    #[inline]
    pub(super) fn submit_ahead(&mut self, job: &Job<'_>, s: &mut State) -> bool {
        let keep = if self.device_idle(s) {
            0
        } else {
            self.submit_batch
        };
        self.hand_over(job, s, keep)
    }

    /// Waits for [`Ring::complete_batch`] completions (at most the I/Os in flight; at most
    /// [`WAIT`] where no multishot timeout is armed and the kernel takes a timeout), handing the
    /// waiting entries over first. When one completion is waited for and it can only be one of
    /// the entries being handed over ([`Ring::device_idle`]; [`Ring::submit_ahead`] has handed
    /// them over unless the kernel was busy or interrupted), they go in an enter of their own and
    /// the wait in a second, as fio does (issue 29; `tests/bench/engine_ring.py`'s QD1 rows
    /// measure both against fio). Otherwise one enter does both, as `t/io_uring` does: the split
    /// would make two enters per batch against its one (`tests/bench/engine_instr.py` counts
    /// syscalls per I/O). When everything is handed over and the completions waited for are
    /// already in the ring (an I/O the kernel completed inside the enter that submitted it: a
    /// buffered read of cached pages, a buffered write, on a filesystem that takes them without
    /// blocking), no enter is made: fio's `getevents` likewise reaps before it enters, and at
    /// QD1 on such a target the wait was a second syscall per I/O (issue 29). With deferred task
    /// work a device's completions reach the ring only inside an enter, so there this never
    /// skips a wait. False (and the run failed) if the ring broke.
    #[inline]
    pub(super) fn wait(&mut self, job: &Job<'_>, s: &mut State) -> bool {
        let want = self.complete_batch.min(s.inflight()).max(1);
        if self.device_idle(s) && !self.hand_over(job, s, 0) {
            return false;
        }
        if s.unsubmitted == 0 && self.ready() >= want {
            return true;
        }
        self.sq.sync();
        let r = if self.ext_arg && !self.tick {
            let ts = types::Timespec::from(WAIT);
            let args = types::SubmitArgs::new().timespec(&ts);
            self.submitter.submit_with_args(want, &args)
        } else {
            self.submitter.submit_and_wait(want)
        };
        self.entered(job, s, r).is_some()
    }

    /// Completions in the ring not yet taken (the kernel's tail read afresh).
    #[inline]
    fn ready(&mut self) -> usize {
        self.cq.sync();
        self.cq.len()
    }
}
