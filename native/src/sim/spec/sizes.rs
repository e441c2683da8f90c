//! A configuration's sizes: the blocks fixed by the layout, sizes scaled with the drive
//! (`scale=`), and the checks every configuration passes ([`validate`]).

use super::kept::buffer_floor_bytes;
use super::{GcPolicy, SimConfig};
use crate::error::{Error, Result};

/// Blocks a drive keeps out of the data area on average, rounded up: the free pool as it
/// sits between collections (`gc_reserve`: GC refills to one more and the next open takes it;
/// with hysteresis, midway to `gc_high`) and half of each open write frontier (host and GC,
/// or one shared), which fill with data as it arrives. Counting whole frontiers and the
/// refilled pool gave a scaled drive ~2.4 blocks of spare the full drive lacks: steady 4 KiB
/// random-write WA 7.41 at 1/64 vs 7.68 at 1/8 (generic; 5.93 at 1/512).
pub(super) fn fixed_blocks(c: &SimConfig) -> u64 {
    let pool2 = c.gc_reserve as u64 + (c.gc_high.max(c.gc_reserve)) as u64;
    (pool2 + if c.shared_frontier { 1 } else { 2 }).div_ceil(2)
}

/// Shrinks the drive by `c.scale`: the one rule for every size-like parameter of a scaled
/// drive, so that a procedure scaled alike sees the same drive state at the same fraction of
/// its steps.
///
/// - capacity and SLC cache: × scale (4 KiB-aligned; keys given in the spec are full-size
///   values and are scaled too);
/// - GC reserve and watermark (`gc_high`): × scale, at least 2 and reserve + 1 (GC needs a
///   free block to copy into) — unless the spec gives them;
/// - raw NAND: the spare blocks left for data once the GC pool and the open frontiers are set
///   aside are scale × the full drive's, so the effective over-provisioning (what sets write
///   amplification) is the full drive's; `op` is re-derived from that block count (the pool
///   and frontiers are whole blocks that cannot shrink below their minimum);
/// - write buffer: × scale, but never below two pages per plane of every die (the depth that
///   keeps every plane programming; a real controller's buffer is a fixed structure, so
///   below that it does not scale) and never above its full size — unless the spec gives it.
///
/// Not scaled (fixed structures of the controller and NAND): page and block size, dies,
/// channels, planes, timings, the erase-ahead pool per die.
///
/// Time: a timed run on a scaled drive drains `scale ×` the commands in flight at its limit
/// (`drive/run.rs`, `RunLoop::issues_at`).
pub(super) fn scale_sizes(c: &mut SimConfig) {
    let s = c.scale;
    let given = |c: &SimConfig, key: &str| c.overrides.iter().any(|(k, _)| k == key);
    let block = c.block_bytes();
    let full_mlc = c.raw_blocks() - c.slc_blocks();
    // the spare in 4 KiB slots, not whole blocks: a user area ending inside a block leaves
    // the rest of that block spare (rounding the user area up to a block and the spare on its
    // own gave generic at 1/64 67.3 blocks of spare for the full drive's 4263.8 / 64 = 66.6:
    // +1.1 %, steady 4 KiB random-write WA 7.60 vs 7.71 at 1/16 – 1/4)
    let full_user = c.capacity_bytes as f64 / block as f64;
    let usable_full = (full_mlc as f64 - full_user - fixed_blocks(c) as f64).max(0.0);
    c.capacity_bytes = ((c.capacity_bytes as f64 * s) as u64) / 4096 * 4096;
    c.slc_cache_bytes = ((c.slc_cache_bytes as f64 * s) as u64) / 4096 * 4096;
    // the pool and frontiers by the rule: the raw NAND is sized for them; a reserve or
    // watermark the spec gives is taken as it is (at this scale) and validated against that
    // (a key the spec gives counts at its minimum here: the spare it takes is the caller's)
    let mut rule = c.clone();
    rule.gc_reserve = if given(c, "gc_reserve") {
        2
    } else {
        ((c.gc_reserve as f64 * s).round() as u32).max(2)
    };
    rule.gc_high = if given(c, "gc_high") || c.gc_high == 0 {
        0
    } else {
        ((c.gc_high as f64 * s).round() as u32).max(rule.gc_reserve + 1)
    };
    if !given(c, "gc_reserve") {
        c.gc_reserve = rule.gc_reserve;
    }
    if !given(c, "gc_high") {
        c.gc_high = rule.gc_high;
    }
    let rule = rule; // sizes the raw NAND below
    if !given(c, "buffer") {
        let page = c.page_size as u64;
        let floor = buffer_floor_bytes(c);
        let scaled = ((c.buffer_bytes as f64 * s) as u64).max(floor) / page * page;
        c.buffer_bytes = scaled.min(c.buffer_bytes).max(page);
    }
    let user = c.capacity_bytes as f64 / block as f64;
    let mlc = (user + usable_full * s + fixed_blocks(&rule) as f64).round() as u64;
    let mlc = mlc.max(c.capacity_bytes.div_ceil(block) + fixed_blocks(&rule));
    if c.capacity_bytes > 0 {
        c.op = (mlc * block) as f64 / c.capacity_bytes as f64 - 1.0;
    }
    c.sources.push((
        "scale".into(),
        format!(
            "shrunk by {s}: capacity, SLC cache, GC reserve/watermark and write buffer scaled (buffer floor: 2 pages per plane of every die; GC reserve floor: 2 blocks; what each kept: sources[\"sizes\"]); raw NAND set so the spare left for data beyond the GC pool and open blocks is {s} × the full drive's (op re-derived: {:.4}); not scaled, fixed structures of the controller and NAND: page and erase-block size, channels, dies, planes, timings, the erase-ahead pool per die (a GC victim's copy time and a command's bytes are a full drive's, so an interval holding {s} × the review's bytes jitters by whole victims; a write buffer at its floor or its full size is a larger share of a scaled write); a timed run stops issuing (1 − {s}) × the time its commands in flight take to drain before its limit, so it reaps {s} × the full run's (fio's iodepth × bs in flight does not shrink with the drive)",
            c.op
        ),
    ));
}

/// Cross-parameter checks (also run on the presets themselves in tests).
pub fn validate(c: &SimConfig) -> Result<()> {
    let block = c.block_bytes();
    if c.capacity_bytes < 64 * block {
        return Err(Error::InvalidValue(format!(
            "sim capacity {} bytes is smaller than 64 erase blocks of {block} bytes; use a larger capacity or scale",
            c.capacity_bytes
        )));
    }
    if c.slc_cache_bytes * 2 >= c.capacity_bytes {
        return Err(Error::InvalidValue(format!(
            "sim key slc_cache={} is too large; use 0 to less than half the capacity ({} bytes)",
            c.slc_cache_bytes,
            c.capacity_bytes / 2
        )));
    }
    if c.buffer_bytes < c.page_size as u64 {
        return Err(Error::InvalidValue(format!(
            "sim key buffer={} is smaller than one NAND page; use {} bytes or more",
            c.buffer_bytes, c.page_size
        )));
    }
    let t = &c.timings;
    if t.t_prog_slc_us > t.t_prog_us {
        return Err(Error::InvalidValue(format!(
            "sim key t_prog_slc_us={} exceeds t_prog_us={}; an SLC program must not be slower than an MLC one",
            t.t_prog_slc_us, t.t_prog_us
        )));
    }
    if t.t_read_us > t.t_prog_us {
        return Err(Error::InvalidValue(format!(
            "sim key t_read_us={} exceeds t_prog_us={}; NAND reads must be faster than programs",
            t.t_read_us, t.t_prog_us
        )));
    }
    if t.t_prog_us > t.t_erase_us * 4.0 {
        return Err(Error::InvalidValue(format!(
            "sim key t_prog_us={} is more than 4 × t_erase_us={}; use a program time below four erase times",
            t.t_prog_us, t.t_erase_us
        )));
    }
    if c.gc_high != 0 && c.gc_high <= c.gc_reserve {
        return Err(Error::InvalidValue(format!(
            "sim key gc_high={} is not above gc_reserve={} (the free blocks at which GC starts{}); use a gc_high above {} for hysteresis, or 0 to free one block at a time",
            c.gc_high,
            c.gc_reserve,
            if c.scale < 1.0 && !c.overrides.iter().any(|(k, _)| k == "gc_reserve") {
                ", scaled with the drive"
            } else {
                ""
            },
            c.gc_reserve
        )));
    }
    let raw_blocks = c.raw_blocks();
    let user_blocks = c.capacity_bytes.div_ceil(block);
    if raw_blocks < user_blocks + c.gc_reserve.max(c.gc_high) as u64 + 4 + c.slc_blocks() {
        if c.gc_high > c.gc_reserve {
            return Err(Error::InvalidValue(format!(
                "sim key gc_high={} leaves fewer spare blocks than gc_high + 4 at this capacity; use a smaller gc_high or a larger op",
                c.gc_high
            )));
        }
        return Err(Error::InvalidValue(format!(
            "sim key op={} leaves fewer spare blocks than gc_reserve + 4 at this capacity; use a larger op or capacity",
            c.op
        )));
    }
    if c.gc_sample > 0 && c.gc != GcPolicy::Greedy {
        return Err(Error::InvalidValue(format!(
            "sim key gc_sample={} applies to greedy GC only, not gc={}; use gc=greedy or drop gc_sample",
            c.gc_sample,
            c.gc.name()
        )));
    }
    if raw_blocks * c.pages_per_block as u64 >= 1 << 30 {
        return Err(Error::InvalidValue(format!(
            "sim capacity {} bytes has more than 2^30 NAND pages; use larger pages or a smaller capacity",
            c.capacity_bytes
        )));
    }
    let entries = raw_blocks * c.entries_per_block().next_power_of_two() as u64;
    if entries >= u32::MAX as u64 || c.capacity_bytes / 4096 >= u32::MAX as u64 {
        return Err(Error::InvalidValue(format!(
            "sim capacity {} bytes is too large for the simulator's 32-bit maps; use at most 8 TB (less with compression)",
            c.capacity_bytes
        )));
    }
    Ok(())
}
