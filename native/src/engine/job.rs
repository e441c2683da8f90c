//! What one worker thread needs: the target, its slice's operation stream, its data
//! generator, the shared limits, and the helpers both engines use.

use super::discard::discard_range;
use super::open::Kind;
use super::report::Control;
use crate::workload::{DataGen, Op, OpKind, OpStream};
use std::fs::File;
use std::io;
use std::path::Path;

/// What [`Job::next_due`] found.
pub enum Next {
    Op(Op),
    /// The next op may not be issued before this time (ns since the start).
    NotYet(u64),
    Done,
}

/// A reading of `CLOCK_MONOTONIC` (the clock [`std::time::Instant`] reads on Linux), in ns:
/// a run's clock origin. The engine reads the clock about twice per `io_uring_enter`;
/// `Instant::elapsed` normalises two timespecs and goes through `Duration` and u128 each time
/// (`tests/bench/engine_instr.py` counts the loop's user-space instructions per I/O), this is
/// the vDSO call, a multiply-add and a subtraction.
#[derive(Clone, Copy, Debug)]
pub struct Clock(u64);

impl Clock {
    /// Now.
    #[inline]
    pub fn now() -> Self {
        Clock(monotonic_ns())
    }

    /// ns since this reading.
    #[inline]
    pub fn elapsed_ns(self) -> u64 {
        monotonic_ns().saturating_sub(self.0)
    }
}

#[inline]
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps towards `due_ns` (ns since `t0`), at most 50 ms so limits and Ctrl-C stay prompt.
pub fn wait_until(t0: Clock, due_ns: u64) {
    let now = t0.elapsed_ns();
    if due_ns > now {
        std::thread::sleep(std::time::Duration::from_nanos(
            (due_ns - now).min(50_000_000),
        ));
    }
}

/// One job of a run.
pub struct Job<'a> {
    pub file: &'a File,
    pub kind: Kind,
    pub path: &'a Path,
    pub stream: OpStream,
    pub gen: DataGen,
    pub bs: u64,
    /// The workload writes (its buffers are filled before the clock starts).
    pub writes: bool,
    /// The workload reads (a buffer read into no longer holds generated data).
    pub reads: bool,
    /// Outstanding I/Os (io_uring); psync always has one.
    pub depth: usize,
    pub ctl: &'a Control,
    /// The run's clock origin.
    pub t0: Clock,
    /// A trace op held back until its recorded issue time (ns since the start).
    pub held: Option<(Op, u64)>,
}

impl Job<'_> {
    /// ns since the run began.
    #[inline]
    pub fn now(&self) -> u64 {
        self.t0.elapsed_ns()
    }

    /// The next operation, or `None` when the stream, the `written=` budget or the run is over.
    #[inline]
    pub fn next_op(&mut self) -> Option<Op> {
        if self.ctl.halted() {
            return None;
        }
        let op = self.stream.next_op()?;
        self.ctl.claim(&op).then_some(op)
    }

    /// The next operation if it is due now. A timed trace replay holds an op back until its
    /// recorded time: then `Next::NotYet(due_ns)`. Untimed runs never read the clock here.
    #[inline]
    pub fn next_due(&mut self) -> Next {
        let (op, due) = match self.held.take() {
            Some(h) => h,
            None => {
                let Some(op) = self.next_op() else {
                    return Next::Done;
                };
                match self.stream.issue_not_before_ns() {
                    None => return Next::Op(op),
                    Some(due) => (op, due),
                }
            }
        };
        if due > self.now() {
            self.held = Some((op, due));
            Next::NotYet(due)
        } else {
            Next::Op(op)
        }
    }

    /// Discards one trim op's range synchronously.
    #[inline]
    pub fn trim(&self, op: &Op) -> io::Result<()> {
        discard_range(self.file, self.kind, op.offset, op.len)
    }

    /// Stops the run with a message naming the operation that failed.
    pub fn fail(&self, kind: OpKind, offset: u64, len: u64, e: &io::Error) {
        let what = match kind {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Trim => "trim",
        };
        self.ctl.fail(format!(
            "{what} of {len} bytes at offset {offset} on {} failed: {e}",
            self.path.display()
        ));
    }

    /// Stops the run because an operation moved fewer bytes than asked.
    pub fn fail_short(&self, kind: OpKind, offset: u64, len: u64, got: u64) {
        let e = io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("only {got} bytes were transferred"),
        );
        self.fail(kind, offset, len, &e);
    }
}
