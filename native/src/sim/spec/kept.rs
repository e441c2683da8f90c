//! What a configuration's fixed-size structures are at its scale, said in its own
//! `sources["sizes"]`: the write buffer, the GC reserve and watermark, the erase block and the
//! erase-ahead pool, each computed from the sizes the drive kept and, where a size did not
//! follow `scale=`, why (its floor, or a fixed structure of the controller and NAND).

use super::SimConfig;
use crate::sim::timing::ERASE_AHEAD_BLOCKS;

/// The sizes [`super::sizes::scale_sizes`] may change, as the preset (or spec) gave them
/// before scaling.
#[derive(Clone, Copy, Debug)]
pub(super) struct FullSizes {
    buffer_bytes: u64,
    gc_reserve: u32,
    gc_high: u32,
    raw_blocks: u64,
}

impl FullSizes {
    pub(super) fn of(c: &SimConfig) -> Self {
        FullSizes {
            buffer_bytes: c.buffer_bytes,
            gc_reserve: c.gc_reserve,
            gc_high: c.gc_high,
            raw_blocks: c.raw_blocks(),
        }
    }
}

/// The write buffer's floor: two pages per plane of every die (the depth that keeps every
/// plane programming); `scale_sizes` never shrinks the buffer below it.
pub(super) fn buffer_floor_bytes(c: &SimConfig) -> u64 {
    2 * c.page_size as u64 * (c.dies() * c.planes.max(1)) as u64
}

fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes / 1024)
}

fn given(c: &SimConfig, key: &str) -> bool {
    c.overrides.iter().any(|(k, _)| k == key)
}

fn buffer_note(c: &SimConfig, full: &FullSizes) -> String {
    let s = c.scale;
    let floor = buffer_floor_bytes(c);
    let why = format!(
        "its floor is 2 pages per plane of every die = 2 × {} × {} planes × {} dies = {}",
        kib(c.page_size as u64),
        c.planes.max(1),
        c.dies(),
        kib(floor)
    );
    if given(c, "buffer") {
        return format!(
            "write buffer {} as given (buffer=), not scaled",
            kib(c.buffer_bytes)
        );
    }
    if full.buffer_bytes <= floor {
        let at = if s < 1.0 {
            format!(
                "; {s} × {} would be {}",
                kib(full.buffer_bytes),
                kib((full.buffer_bytes as f64 * s) as u64)
            )
        } else {
            String::new()
        };
        return format!(
            "write buffer {}, not scaled: at or under its floor at any scale ({why}{at})",
            kib(c.buffer_bytes)
        );
    }
    if s >= 1.0 {
        return format!(
            "write buffer {} (scale= shrinks it, to no less than {}: {why})",
            kib(c.buffer_bytes),
            kib(floor)
        );
    }
    if (full.buffer_bytes as f64 * s) < floor as f64 {
        return format!(
            "write buffer {}, at its floor: {s} × its full {} would be {} ({why})",
            kib(c.buffer_bytes),
            kib(full.buffer_bytes),
            kib((full.buffer_bytes as f64 * s) as u64)
        );
    }
    format!(
        "write buffer {} = {s} × its full {}",
        kib(c.buffer_bytes),
        kib(full.buffer_bytes)
    )
}

fn pool_note(c: &SimConfig, full: &FullSizes) -> String {
    let s = c.scale;
    let reserve = if given(c, "gc_reserve") {
        format!(
            "GC reserve {} free blocks as given (gc_reserve=), not scaled",
            c.gc_reserve
        )
    } else if s >= 1.0 {
        format!(
            "GC reserve {} free blocks (scale= shrinks it, to no fewer than 2)",
            c.gc_reserve
        )
    } else if (full.gc_reserve as f64 * s).round() < 2.0 {
        format!(
            "GC reserve {} free blocks, at its floor of 2 (GC needs a free block to copy into): {s} × its full {} would be {:.3}",
            c.gc_reserve,
            full.gc_reserve,
            full.gc_reserve as f64 * s
        )
    } else {
        format!(
            "GC reserve {} free blocks = {s} × its full {}",
            c.gc_reserve, full.gc_reserve
        )
    };
    let high = if c.gc_high == 0 {
        "no GC watermark (gc_high=0: GC frees one block at a time)".to_string()
    } else if given(c, "gc_high") {
        format!(
            "GC watermark {} free blocks as given (gc_high=), not scaled",
            c.gc_high
        )
    } else if s >= 1.0 {
        format!(
            "GC watermark {} free blocks (scale= shrinks it, to no fewer than the reserve + 1)",
            c.gc_high
        )
    } else if ((full.gc_high as f64 * s).round() as u32) <= c.gc_reserve {
        format!(
            "GC watermark {} free blocks, at its floor of the reserve + 1: {s} × its full {} would be {:.3}",
            c.gc_high,
            full.gc_high,
            full.gc_high as f64 * s
        )
    } else {
        format!(
            "GC watermark {} free blocks = {s} × its full {}",
            c.gc_high, full.gc_high
        )
    };
    format!("{reserve}; {high}")
}

/// `sources["sizes"]`: the write buffer, GC reserve and watermark, erase block and erase-ahead
/// pool of `c` (already scaled), each against its full size (`full`) and its floor.
pub(super) fn sizes_note(c: &SimConfig, full: &FullSizes) -> String {
    let block = c.block_bytes();
    let blocks = if c.scale < 1.0 {
        format!(
            "{} erase blocks of raw NAND here, {} at full size",
            c.raw_blocks(),
            full.raw_blocks
        )
    } else {
        format!("{} erase blocks of raw NAND", c.raw_blocks())
    };
    format!(
        "{}; {}; erase block {} ({} pages of {}), not scaled (a NAND structure): {blocks}; erase-ahead pool {ERASE_AHEAD_BLOCKS} blocks per die × {} dies, not scaled",
        buffer_note(c, full),
        pool_note(c, full),
        kib(block),
        c.pages_per_block,
        kib(c.page_size as u64),
        c.dies()
    )
}
