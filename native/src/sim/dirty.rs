//! SandForce's "dirty state": once all NAND has been written with incompressible data, an
//! SF-1200/SF-2281 writes incompressible data at a fraction of its clean rate, and TRIM does
//! not restore it; rewriting the drive with compressible data or a secure erase does.
//!
//! Reviewers attribute it to DuraWrite's bookkeeping (compression metadata and write-combined
//! pages that the controller cannot release on TRIM until they are rewritten); no public
//! document gives the mechanism's internals, so the model is phenomenological:
//!
//! - a dirty level `D` counts 4 KiB blocks the host wrote with incompressible data (the
//!   compressor saved nothing), minus those it wrote with compressible data, clamped to
//!   `0 ..= raw NAND` (in 4 KiB slots); TRIM leaves it alone, a secure erase clears it;
//! - the slowdown starts once all NAND has been written (the first block GC erases): until
//!   then every program goes to never-used NAND, as on a fresh drive;
//! - from then on every page programmed (host or GC) costs `1 / f` of its clean time on the NAND-side
//!   datapath (`backend_mbps`) and on its die, `f = 1 − (1 − dirty_rate) · D / raw`: the extra
//!   work of rewriting write-combined pages TRIM could not free. A drive whose NAND is all
//!   dirty writes at `dirty_rate` × its clean rate however much of it is trimmed, whether its
//!   clean rate is bound by the backend (240 GB SF-2281 drives) or by its dies (120 GB ones).
//!
//! `dirty_rate` is fitted once by `flashback.sim.dirty_rate.fit_dirty_rate` on sources that
//! are not replayed (see the SandForce presets' sources).

use super::ftl::UNIT;

/// Dirty level of a simulated drive (4 KiB blocks).
pub struct Dirty {
    /// Write-path fraction once all NAND is dirty; 1: no dirty state.
    rate: f64,
    /// 4 KiB slots of raw NAND (MLC + SLC).
    raw_slots: u64,
    level: u64,
}

impl Dirty {
    pub fn new(rate: f64, raw_slots: u64) -> Dirty {
        Dirty {
            rate,
            raw_slots: raw_slots.max(1),
            level: 0,
        }
    }

    /// Whether the model is on (`dirty_rate` < 1).
    #[inline]
    pub fn active(&self) -> bool {
        self.rate < 1.0
    }

    /// Notes `blocks` 4 KiB host blocks written at `units` physical units each; returns the
    /// write-path fraction to run at from now on (1 until all NAND has been written:
    /// `recycling` says whether GC has erased a block since the last secure erase).
    #[inline]
    pub fn write(&mut self, blocks: u64, units: u32, recycling: bool) -> f64 {
        self.level = if units >= UNIT {
            (self.level + blocks).min(self.raw_slots)
        } else {
            self.level.saturating_sub(blocks)
        };
        if recycling {
            self.fraction()
        } else {
            1.0
        }
    }

    /// Share of raw NAND in the dirty state, 0 – 1.
    pub fn level(&self) -> f64 {
        self.level as f64 / self.raw_slots as f64
    }

    /// Write-path rate as a fraction of clean.
    pub fn fraction(&self) -> f64 {
        1.0 - (1.0 - self.rate) * self.level()
    }

    /// Secure erase.
    pub fn clear(&mut self) {
        self.level = 0;
    }
}
