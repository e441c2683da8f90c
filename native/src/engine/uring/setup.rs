//! What a job sets up on its ring before the run's clock starts: buffers (a rotated pool
//! for random writes) and the registered descriptor and buffers ([`prepare`]).

use super::NO_BUF;
use crate::engine::buf::SlotBufs;
use crate::engine::job::Job;
use io_uring::IoUring;
use std::collections::VecDeque;
use std::os::unix::io::AsRawFd;

/// Most memory spent on spare write buffers (see [`Setup`]).
const SPARE_BYTES: usize = 64 << 20;

/// The largest buffer the kernel registers (`io_buffer_validate`: 1 GiB); a larger set of
/// buffers is registered one buffer per slot.
const MAX_REGISTERED: usize = 1 << 30;

/// Memory of the pool of random write buffers a write-only `data=random` job rotates through
/// (see [`Setup`]); at least twice the depth of buffers, at most [`SPARE_BYTES`] beyond it.
const POOL_BYTES: usize = 4 << 20;

/// What a job sets up before the run's clock starts: its I/O buffers (allocated with every page
/// touched and, for a workload that writes, each holding the data of a write, as fio fills its
/// buffers before it starts) and, where the kernel allows, the target's descriptor and the
/// buffers registered with the ring. Registering pins every buffer page, which at large blocks
/// and depths is a visible share of a short run (the run's `setup_ns` says how long it took).
///
/// A workload that writes gets spare buffers beyond its depth (up to `depth`, at most
/// [`SPARE_BYTES`] of them): a slot reaped is refilled at once with a buffer that already holds
/// its data, and the spent buffer is filled again after the refills have been handed over,
/// while the I/Os are in flight (generated inline, a buffer's data would keep its slot empty
/// while it is made).
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
    pub(super) bufs: SlotBufs,
    pub(super) depth: usize,
    pub(super) fixed_file: bool,
    pub(super) fixed_bufs: bool,
    /// The buffers are registered as one buffer (index 0, [`SlotBufs::region`]) rather than
    /// one per slot: one registration for the kernel to look up and import from on every I/O,
    /// as fio's `t/io_uring` registers its buffers.
    pub(super) one_region: bool,
    /// Write buffers are a rotated pool, retagged instead of refilled.
    pub(super) pool: bool,
    /// Buffers holding the data of a next write, oldest first.
    pub(super) ready: VecDeque<u16>,
    /// Buffers whose contents are spent (read into, or written with fresh data).
    pub(super) spent: Vec<u16>,
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
    let region = bufs.region();
    let one_region = region.iov_len <= MAX_REGISTERED && {
        // SAFETY: the buffers outlive the ring's use of them: every I/O is drained before
        // `run` returns, and on a broken ring the buffers are leaked rather than freed.
        unsafe { ring.submitter().register_buffers(&[region]) }.is_ok()
    };
    let fixed_bufs = one_region || {
        // SAFETY: as for the one region above: the same buffers, one registration per slot.
        unsafe { ring.submitter().register_buffers(&bufs.iovecs()) }.is_ok()
    };
    Setup {
        bufs,
        depth,
        fixed_file,
        fixed_bufs,
        one_region,
        pool,
        ready,
        spent,
    }
}
