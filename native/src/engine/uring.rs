//! The io_uring engine: one ring per job keeping `iodepth` I/Os in flight, with the target's
//! descriptor, the I/O buffers and the ring's own descriptor registered with the kernel where
//! it allows (fewer per-I/O costs than fio's defaults). Submission and completion are timed
//! once per `io_uring_enter`.
//!
//! Trims are queued like reads and writes: a block device's discard goes out as the block
//! layer's `BLOCK_URING_CMD_DISCARD` command (Linux 6.12+), a file's hole punch as an
//! `IORING_OP_FALLOCATE`. A kernel without the discard command refuses the first one; the job
//! then discards synchronously (`BLKDISCARD`) from that op on, as it does at `iodepth=1`.

use super::buf::SlotBufs;
use super::job::{wait_until, Job, Next};
use super::open::Kind;
use super::report::Reporter;
use crate::workload::{Op, OpKind};
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Longest wait for a completion before the worker checks its flags again.
const WAIT: Duration = Duration::from_millis(20);

/// Most new I/Os held back before they are handed to the kernel while the free slots are being
/// refilled. The kernel issues a batch of submissions in full (under one block plug, and an
/// O_DIRECT write on a filesystem is issued inline, several µs each) before the device sees any
/// of it, so refilling all the slots a burst of completions freed and submitting them at once
/// leaves the device idle meanwhile. Measured in one interleaved run on this project's 2-core
/// VM against fio (which submits every I/O on its own): 4 KiB randwrite QD32 on an ext4 file
/// went from 0.77 to 0.98 of fio's IOPS, on a loop device from 0.89 to 0.99, randread on a
/// loop device from 0.88 to 1.03; CPU per I/O stayed 20–35 % under fio's.
const SUBMIT_BATCH: usize = 4;

/// `BLOCK_URING_CMD_DISCARD` = `_IO(0x12, 0)` (include/uapi/linux/fs.h): discard `[addr,
/// addr + addr3)` of a block device. Not in the `io-uring` crate's bindings.
const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

/// The submission entry that trims `[offset, offset + len)` of the target without blocking
/// (`fixed`: the target is registered file 0, else `fd`).
fn trim_entry(kind: Kind, fixed: bool, fd: i32, offset: u64, len: u64) -> squeue::Entry {
    macro_rules! entry {
        ($fd:expr) => {
            match kind {
                Kind::Block => {
                    // The command's 16 bytes overlay the entry's `addr3` (the length).
                    let mut cmd = [0u8; 16];
                    cmd[..8].copy_from_slice(&len.to_ne_bytes());
                    opcode::UringCmd16::new($fd, BLOCK_URING_CMD_DISCARD)
                        .addr(Some(offset))
                        .cmd(cmd)
                        .build()
                }
                Kind::File => opcode::Fallocate::new($fd, len)
                    .offset(offset)
                    .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                    .build(),
            }
        };
    }
    if fixed {
        entry!(types::Fixed(0))
    } else {
        entry!(types::Fd(fd))
    }
}

/// Fault injection for the test suite: while set, every queued trim's answer is replaced by
/// `EOPNOTSUPP` until one has succeeded, as a kernel older than Linux 6.12 answers a block
/// device's discard command, so the synchronous fallback runs on a kernel that could queue
/// them. (The kernel has already done the refused trim; the fallback repeats it, which a discard
/// allows.) Set only through `flashback._native._refuse_queued_trims_for_tests`.
pub static REFUSE_QUEUED_TRIMS: AtomicBool = AtomicBool::new(false);

/// A queued trim's failure that means "this kernel cannot queue discards", not a device error.
fn trim_unsupported(errno: i32) -> bool {
    matches!(errno, libc::EOPNOTSUPP | libc::EINVAL | libc::ENOTTY)
}

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

/// Marks `queued` slots as submitted at `ns`.
#[inline]
fn stamp(slots: &mut [Slot], queued: &[u32], ns: u64) {
    for &q in queued {
        slots[q as usize].submit_ns = ns;
    }
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

/// Per-slot state of an I/O in flight.
#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    submit_ns: u64,
    /// The buffer holds something other than the static write pattern.
    dirty: bool,
}

/// Runs the job to its end on `ring`; returns the time (ns since the start) it finished.
pub fn run<R: Reporter>(job: &mut Job<'_>, ring: &mut IoUring, rep: &mut R) -> u64 {
    let depth = job.depth.min(ring.params().sq_entries() as usize).max(1);
    let mut bufs = SlotBufs::new(depth, job.bs as usize);
    let fd = job.file.as_raw_fd();
    let fixed_file = ring.submitter().register_files(&[fd]).is_ok();
    // SAFETY: the buffers outlive the ring's use of them: every I/O is drained before return,
    // and on a broken ring the buffers are leaked rather than freed.
    let fixed_bufs = unsafe { ring.submitter().register_buffers(&bufs.iovecs()) }.is_ok();
    let ext_arg = ring.params().is_feature_ext_arg();
    let ts = types::Timespec::from(WAIT);
    let args = types::SubmitArgs::new().timespec(&ts);
    // One submitter for the whole run, so the ring's own descriptor can be registered too
    // (no descriptor lookup per `io_uring_enter`).
    let (mut submitter, mut sq, mut cq) = ring.split();
    let ring_fd = submitter.register_ring_fd().is_ok();

    let static_data = job.gen.is_static();
    // Trims go through the ring until the kernel refuses one without any having succeeded. At
    // depth 1 there is nothing to overlap, so they stay synchronous, as fio's are (64 KiB trims
    // on a loop device at depth 1: 22k/s through the ring in one run, 17–24k/s synchronous in
    // four; no difference this VM can resolve).
    let mut queue_trims = depth > 1;
    let mut trims_queued_ok = false;
    let mut slots = vec![
        Slot {
            op: Op {
                kind: OpKind::Read,
                offset: 0,
                len: 0,
            },
            submit_ns: 0,
            dirty: true,
        };
        depth
    ];
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut queued: Vec<u32> = Vec::with_capacity(depth);
    let mut inflight = 0usize;
    let mut exhausted = false;
    let mut broken = false;
    let mut t = job.now();

    loop {
        queued.clear();
        // `queued[..handed]` went to the kernel already
        let mut handed = 0;
        let mut not_before = None;
        if !exhausted && !job.ctl.halted() && !job.ctl.time_up(t) {
            while let Some(&slot) = free.last() {
                let op = match job.next_due() {
                    Next::Op(op) => op,
                    Next::NotYet(due) => {
                        not_before = Some(due);
                        break;
                    }
                    Next::Done => {
                        exhausted = true;
                        break;
                    }
                };
                if op.kind == OpKind::Trim && !queue_trims {
                    if !trim_now(job, rep, &op) {
                        break;
                    }
                    t = job.now();
                    if job.ctl.time_up(t) {
                        break;
                    }
                    continue;
                }
                let i = slot as usize;
                let st = &mut slots[i];
                match op.kind {
                    OpKind::Write if st.dirty || !static_data => {
                        job.gen.fill(bufs.slot_mut(i));
                        st.dirty = false;
                    }
                    OpKind::Read => st.dirty = true,
                    // a trim leaves the buffer alone
                    _ => {}
                }
                st.op = op;
                let p = bufs.ptr(i);
                let len = op.len as u32;
                let sqe: squeue::Entry = match (op.kind, fixed_file, fixed_bufs) {
                    (OpKind::Trim, _, _) => trim_entry(job.kind, fixed_file, fd, op.offset, op.len),
                    (OpKind::Read, true, true) => {
                        opcode::ReadFixed::new(types::Fixed(0), p, len, slot as u16)
                            .offset(op.offset)
                            .build()
                    }
                    (OpKind::Read, false, true) => {
                        opcode::ReadFixed::new(types::Fd(fd), p, len, slot as u16)
                            .offset(op.offset)
                            .build()
                    }
                    (OpKind::Read, true, false) => opcode::Read::new(types::Fixed(0), p, len)
                        .offset(op.offset)
                        .build(),
                    (OpKind::Read, false, false) => opcode::Read::new(types::Fd(fd), p, len)
                        .offset(op.offset)
                        .build(),
                    (_, true, true) => {
                        opcode::WriteFixed::new(types::Fixed(0), p, len, slot as u16)
                            .offset(op.offset)
                            .build()
                    }
                    (_, false, true) => opcode::WriteFixed::new(types::Fd(fd), p, len, slot as u16)
                        .offset(op.offset)
                        .build(),
                    (_, true, false) => opcode::Write::new(types::Fixed(0), p, len)
                        .offset(op.offset)
                        .build(),
                    (_, false, false) => opcode::Write::new(types::Fd(fd), p, len)
                        .offset(op.offset)
                        .build(),
                };
                let sqe = sqe.user_data(slot as u64);
                // SAFETY: the buffer stays valid until the completion is reaped (see above).
                if unsafe { sq.push(&sqe) }.is_err() {
                    // queue full (cannot happen with depth ≤ sq_entries): issue it next round
                    job.held = Some((op, 0));
                    break;
                }
                free.pop();
                queued.push(slot);
                inflight += 1;
                if queued.len() - handed == SUBMIT_BATCH {
                    stamp(&mut slots, &queued[handed..], job.now());
                    handed = queued.len();
                    sq.sync();
                    if enter_failed(job, submitter.submit()) {
                        broken = true;
                        break;
                    }
                }
            }
        }
        if broken {
            break;
        }
        if inflight == 0 {
            match not_before {
                // a timed trace replay waiting for its next op's recorded time
                Some(due) => {
                    wait_until(job.t0, due);
                    t = job.now();
                    rep.heartbeat(t);
                    continue;
                }
                None => break,
            }
        }
        stamp(&mut slots, &queued[handed..], job.now());
        sq.sync();
        let r = if ext_arg {
            submitter.submit_with_args(1, &args)
        } else {
            submitter.submit_and_wait(1)
        };
        if enter_failed(job, r) {
            broken = true;
            break;
        }
        t = job.now();
        let tc = job.ctl.clamp(t);
        // see what the kernel took from the submission queue and put in the completion queue
        sq.sync();
        cq.sync();
        for cqe in cq.by_ref() {
            let i = cqe.user_data() as usize;
            let st = slots[i];
            free.push(i as u32);
            inflight -= 1;
            let op = st.op;
            let trim = op.kind == OpKind::Trim;
            let res = if trim && !trims_queued_ok && REFUSE_QUEUED_TRIMS.load(Ordering::Relaxed) {
                -libc::EOPNOTSUPP
            } else {
                cqe.result()
            };
            if trim && res < 0 && !trims_queued_ok && trim_unsupported(-res) {
                // this kernel cannot queue discards: this one and the rest run synchronously
                queue_trims = false;
                job.ctl.note_synchronous_trims();
                trim_now(job, rep, &op);
                continue;
            }
            // a read or write returns the bytes it moved, a trim 0
            let want = if trim { 0 } else { op.len as i64 };
            if res < 0 {
                job.fail(
                    op.kind,
                    op.offset,
                    op.len,
                    &io::Error::from_raw_os_error(-res),
                );
            } else if i64::from(res) != want {
                job.fail_short(op.kind, op.offset, op.len, res as u64);
            } else {
                trims_queued_ok |= trim;
                rep.complete(tc, op.kind, op.len, t.saturating_sub(st.submit_ns));
            }
        }
        rep.heartbeat(t);
    }
    cq.sync();
    if ring_fd {
        let _ = submitter.unregister_ring_fd();
    }
    drop((submitter, sq, cq));
    if broken && inflight > 0 {
        // The kernel may still write into these buffers; never hand them back to the allocator.
        std::mem::forget(bufs);
        return t;
    }
    // Drop the ring's references now: ring teardown is asynchronous, and a registered file
    // still held by it would keep an exclusively opened device claimed after the target closes.
    if fixed_file {
        let _ = ring.submitter().unregister_files();
    }
    if fixed_bufs {
        let _ = ring.submitter().unregister_buffers();
    }
    t
}
