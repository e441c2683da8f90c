//! The psync engine: one blocking `pread`/`pwrite` at a time per job (fio's `psync`).

use super::buf::SlotBufs;
use super::job::{wait_until, Job, Next};
use super::report::Reporter;
use crate::workload::OpKind;
use std::io;
use std::os::unix::io::AsRawFd;

/// One positional read or write of exactly `len` bytes; EINTR is retried.
#[inline]
fn pio(fd: i32, kind: OpKind, buf: *mut u8, len: u64, off: u64) -> io::Result<u64> {
    loop {
        // SAFETY: `buf` points to at least `len` bytes owned by the caller.
        let r = unsafe {
            match kind {
                OpKind::Read => libc::pread(fd, buf.cast(), len as usize, off as libc::off_t),
                _ => libc::pwrite(fd, buf.cast(), len as usize, off as libc::off_t),
            }
        };
        if r >= 0 {
            return Ok(r as u64);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Runs the job to its end; returns the time (ns since the start) it finished.
pub fn run<R: Reporter>(job: &mut Job<'_>, rep: &mut R) -> u64 {
    let mut bufs = SlotBufs::new(1, job.bs as usize);
    let fd = job.file.as_raw_fd();
    let static_data = job.gen.is_static();
    // true while the buffer holds something other than the static write pattern
    let mut dirty = true;
    let mut t = job.now();
    while !job.ctl.time_up(t) {
        let op = match job.next_due() {
            Next::Op(op) => op,
            Next::NotYet(due) => {
                wait_until(job.t0, due);
                t = job.now();
                continue;
            }
            Next::Done => break,
        };
        if op.kind == OpKind::Write && (dirty || !static_data) {
            job.gen.fill(bufs.slot_mut(0));
            dirty = false;
        }
        let start = job.now();
        let res = match op.kind {
            OpKind::Trim => job.trim(&op).map(|_| op.len),
            k => pio(fd, k, bufs.ptr(0), op.len, op.offset),
        };
        t = job.now();
        match res {
            Ok(n) if n == op.len => {}
            Ok(n) => {
                job.fail_short(op.kind, op.offset, op.len, n);
                break;
            }
            Err(e) => {
                job.fail(op.kind, op.offset, op.len, &e);
                break;
            }
        }
        if op.kind == OpKind::Read {
            dirty = true;
        }
        rep.complete(job.ctl.clamp(t), op.kind, op.len, t - start);
        rep.heartbeat(t);
    }
    t
}
