//! Page-mapped flash translation layer with a 4 KiB mapping unit.
//!
//! Space inside an erase block is counted in *units* ([`UNIT`] per 4 KiB slot, 4 bytes each) so
//! that inline compression can store a 4 KiB logical block in less than a slot: a block is full
//! when its units or its entry slots run out. Without compression every entry is one slot.
//!
//! Layout (flat vectors, `u32` indices, no allocation per operation):
//! - `l2p[lba]` → global entry index `block << shift | i` (or `NONE`),
//! - `p2l[entry]` → lba; an entry is valid while `l2p[p2l[entry]]` points back at it (GC checks
//!   its victim's entries a burst at a time; no validity bitmap to update on every write),
//! - per block: valid units/count, fill, state, close sequence number,
//! - greedy: stacks by valid level (stale entries skipped); FIFO: queue; random/cost-benefit:
//!   closed set.
//!
//! Every NAND page operation the FTL causes is appended to [`Ftl::work`] (tagged page or block
//! numbers) for the timing model to schedule on dies and channels.
//!
//! - this file: the maps, block life cycle and host interface
//! - [`buckets`]: greedy GC's victim stacks by valid level
//! - [`gc`]: victim choice, relocation of valid data, folding, erase

use super::spec::{GcPolicy, SimConfig};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

mod buckets;
mod gc;

pub use super::util::Divisor;
use super::util::{huge_vec, prefetch};
pub use crate::rng::mix64;

/// Units per 4 KiB slot (one unit = 4 bytes).
pub const UNIT: u32 = 1024;
/// Bytes per unit.
pub const UNIT_BYTES: u64 = 4;
const NONE: u32 = u32::MAX;

const FREE: u8 = 0;
const OPEN: u8 = 1;
const CLOSED: u8 = 2;

/// Work tags (top two bits of a [`Ftl::work`] item).
pub const TAG_SHIFT: u32 = 30;
pub const W_HOST_PROG: u32 = 0;
pub const W_GC_PROG: u32 = 1;
pub const W_READ: u32 = 2;
pub const W_ERASE: u32 = 3;
pub const W_MASK: u32 = (1 << TAG_SHIFT) - 1;

/// First-occurrence flags the drive turns into ground-truth events.
pub const EV_POOL_EXHAUSTED: u8 = 1;
pub const EV_GC_COPY: u8 = 2;
pub const EV_SLC_FULL: u8 = 4;

/// The per-block fields every invalidation touches, together.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Blk {
    valid_units: u32,
    valid_count: u32,
    /// Changes whenever the block enters or leaves a greedy bucket.
    stamp: u32,
    state: u8,
}

pub struct Ftl {
    policy: GcPolicy,
    gc_reserve: usize,
    /// GC hysteresis: once the pool is down to `gc_reserve`, GC refills it to this many.
    gc_high: usize,
    /// Greedy among this many sampled closed blocks (0: exact greedy from the buckets).
    gc_sample: u32,
    /// Exact greedy: closed blocks live in the buckets (checked on every invalidation).
    bucketed: bool,
    /// GC copies go to the host's open block (one write frontier).
    shared_frontier: bool,
    compression: bool,
    pub pages_per_block: u32,
    page_units: u32,
    block_units: u32,
    shift: u32,
    /// MLC blocks are `0..n_mlc`, SLC-mode blocks `n_mlc..n_blocks`.
    pub n_mlc: u32,
    pub n_blocks: u32,
    pub user_lbas: u32,
    trim_threshold: u64,
    trim_seed: u64,

    l2p: Vec<u32>,
    p2l: Vec<u32>,
    /// Physical units per LBA, allocated only once mapped LBAs hold different sizes; until then
    /// every mapped LBA holds `uniform_units` (one run's data is one size, and a per-LBA array
    /// would add a random memory access to every write and GC copy).
    lba_units: Vec<u16>,
    uniform_units: u32,
    page_div: Divisor,
    slot_div: Divisor,

    /// Per block: valid units/count, state, bucket stamp (one cache line holds four blocks).
    blk: Vec<Blk>,
    fill_entries: Vec<u32>,
    fill_units: Vec<u32>,
    close_seq: Vec<u64>,

    free: Vec<u32>,
    slc_free: Vec<u32>,
    slc_closed: VecDeque<u32>,
    host_open: u32,
    gc_open: u32,
    slc_open: u32,
    closed_count: u32,

    /// Greedy: one stack of `(block, stamp)` per valid level, newest on top. A block leaving a
    /// level is not searched for: its stamp changes, which makes the entry stale, and stale
    /// entries are skipped when met on top and swept by [`Ftl::compact_buckets`].
    buckets: Vec<Vec<u64>>,
    bucket_entries: usize,
    min_level: usize,
    fifo: VecDeque<u32>,
    closed_list: Vec<u32>,
    closed_pos: Vec<u32>,
    rng: Xoshiro256PlusPlus,
    /// GC's list of a victim's valid entries (reused).
    scratch: Vec<u32>,

    /// Cumulative units since the last secure erase.
    pub host_units: u64,
    pub gc_units: u64,
    pub nand_units: u64,
    pub erases: u64,
    pub mapped: u64,
    /// Tagged NAND operations produced since the caller last cleared it.
    pub work: Vec<u32>,
    /// New first-occurrence flags (`EV_*`), cleared by the caller; `seen` remembers them.
    pub new_events: u8,
    seen: u8,
}

impl Ftl {
    /// A freshly erased FTL for `c`. Errors: [`crate::Error::InvalidValue`] when a table's
    /// memory cannot be allocated (see [`super::memory`]).
    pub fn new(c: &SimConfig) -> crate::error::Result<Ftl> {
        use super::memory::{try_filled, try_zeroed};
        let slots = c.slots_per_block();
        let stride = c.entries_per_block().next_power_of_two();
        let n_blocks = c.raw_blocks() as u32;
        let n_slc = c.slc_blocks() as u32;
        let user_lbas = (c.capacity_bytes / 4096) as u32;
        let n = n_blocks as usize;
        let entries = n_blocks as usize * stride as usize;
        let levels = slots as usize + 1;
        let mut f = Ftl {
            policy: c.gc,
            gc_reserve: c.gc_reserve as usize,
            // spec::validate refuses 1 ..= gc_reserve; 0 is "one block past the reserve"
            gc_high: if c.gc_high == 0 {
                c.gc_reserve as usize + 1
            } else {
                c.gc_high as usize
            },
            gc_sample: c.gc_sample,
            bucketed: c.gc == GcPolicy::Greedy && c.gc_sample == 0,
            shared_frontier: c.shared_frontier,
            compression: c.compression,
            pages_per_block: c.pages_per_block,
            page_units: (c.page_size / 4096) * UNIT,
            block_units: slots * UNIT,
            shift: stride.trailing_zeros(),
            n_mlc: n_blocks - n_slc,
            n_blocks,
            user_lbas,
            trim_threshold: (c.trim_efficacy * u64::MAX as f64) as u64,
            trim_seed: c.seed,
            l2p: huge_vec(user_lbas as usize, NONE).ok_or_else(|| {
                crate::error::Error::InvalidValue(format!(
                    "could not allocate the simulated drive's logical map of {user_lbas} entries; use a smaller capacity (scale=)"
                ))
            })?,
            // calloc: only the entries blocks actually fill get pages (matters with compression)
            p2l: try_zeroed("reverse map", entries)?,
            lba_units: vec![],
            uniform_units: UNIT,
            page_div: Divisor::new((c.page_size / 4096) * UNIT),
            slot_div: Divisor::new(c.page_size / 4096),
            blk: try_filled("block table", n, Blk::default())?,
            fill_entries: try_zeroed("block table", n)?,
            fill_units: try_zeroed("block table", n)?,
            close_seq: try_zeroed("block table", n)?,
            free: vec![],
            slc_free: vec![],
            slc_closed: VecDeque::new(),
            host_open: NONE,
            gc_open: NONE,
            slc_open: NONE,
            closed_count: 0,
            buckets: vec![vec![]; levels],
            bucket_entries: 0,
            min_level: levels,
            fifo: VecDeque::new(),
            closed_list: vec![],
            closed_pos: try_filled("block table", n, NONE)?,
            rng: Xoshiro256PlusPlus::seed_from_u64(c.seed),
            scratch: vec![],
            host_units: 0,
            gc_units: 0,
            nand_units: 0,
            erases: 0,
            mapped: 0,
            work: Vec::with_capacity(4096),
            new_events: 0,
            seen: 0,
        };
        f.reset_blocks();
        Ok(f)
    }

    fn reset_blocks(&mut self) {
        // Free list as a stack popped from the end: lowest block numbers first.
        self.free = (0..self.n_mlc).rev().collect();
        self.slc_free = (self.n_mlc..self.n_blocks).rev().collect();
    }

    /// Secure erase: everything unmapped, every block free, counters zero.
    pub fn sanitize(&mut self) {
        self.l2p.fill(NONE);
        self.lba_units = vec![];
        self.uniform_units = UNIT;
        self.blk.fill(Blk::default());
        self.fill_entries.fill(0);
        self.fill_units.fill(0);
        self.buckets.iter_mut().for_each(Vec::clear);
        self.bucket_entries = 0;
        self.min_level = self.buckets.len();
        self.fifo.clear();
        self.closed_list.clear();
        self.closed_pos.fill(NONE);
        self.slc_closed.clear();
        self.host_open = NONE;
        self.gc_open = NONE;
        self.slc_open = NONE;
        self.closed_count = 0;
        self.host_units = 0;
        self.gc_units = 0;
        self.nand_units = 0;
        self.erases = 0;
        self.mapped = 0;
        self.work.clear();
        self.new_events = 0;
        self.seen = 0;
        self.reset_blocks();
    }

    pub fn free_blocks(&self) -> u64 {
        (self.free.len() + self.slc_free.len()) as u64
    }

    pub fn slc_free_blocks(&self) -> usize {
        self.slc_free.len()
    }

    /// Spare MLC blocks beyond those needed to hold the user capacity.
    pub fn spare_blocks(&self) -> u64 {
        let user_blocks = (self.user_lbas as u64 * UNIT as u64).div_ceil(self.block_units as u64);
        (self.n_mlc as u64).saturating_sub(user_blocks)
    }

    #[inline]
    fn block_cap(&self, b: u32) -> u32 {
        if b >= self.n_mlc {
            self.block_units / 2
        } else {
            self.block_units
        }
    }

    #[inline]
    fn units_of(&self, lba: u32) -> u32 {
        if self.lba_units.is_empty() {
            self.uniform_units
        } else {
            self.lba_units[lba as usize] as u32
        }
    }

    /// Makes sure a write of `units` can be recorded: switches to per-LBA sizes the first time
    /// a size differs from the one every mapped LBA holds.
    #[inline]
    fn note_units(&mut self, units: u32) {
        if units == self.uniform_units || !self.lba_units.is_empty() {
            return;
        }
        if self.mapped == 0 {
            self.uniform_units = units;
        } else {
            // counted in the estimate the drive was admitted under (sim::memory)
            self.lba_units = huge_vec(self.user_lbas as usize, self.uniform_units as u16)
                .expect("the per-LBA unit map fits the memory estimate the drive was built under");
        }
    }

    fn flag(&mut self, ev: u8) {
        if self.seen & ev == 0 {
            self.seen |= ev;
            self.new_events |= ev;
        }
    }

    /// Physical page of `lba` as a global page number, if mapped.
    #[inline]
    pub fn page_of(&self, lba: u32) -> Option<u32> {
        let e = self.l2p[lba as usize];
        if e == NONE {
            return None;
        }
        let b = e >> self.shift;
        let i = e & ((1 << self.shift) - 1);
        let page = if self.compression {
            let fe = self.fill_entries[b as usize].max(1);
            ((i as u64 * self.fill_units[b as usize] as u64 / fe as u64) as u32 / self.page_units)
                .min(self.pages_per_block - 1)
        } else {
            self.slot_div.quot(i)
        };
        Some(b * self.pages_per_block + page)
    }

    // ---- block life cycle -----------------------------------------------------------------

    fn close(&mut self, b: u32) {
        // a partly filled last page is programmed with padding
        let fu = self.fill_units[b as usize];
        if !fu.is_multiple_of(self.page_units) {
            let tag = if b == self.gc_open {
                W_GC_PROG
            } else {
                W_HOST_PROG
            };
            self.work
                .push(tag << TAG_SHIFT | (b * self.pages_per_block + self.page_div.quot(fu)));
        }
        self.blk[b as usize].state = CLOSED;
        self.closed_count += 1;
        self.close_seq[b as usize] = self.nand_units;
        if b >= self.n_mlc {
            self.slc_closed.push_back(b);
            return;
        }
        match self.policy {
            _ if self.bucketed => self.bucket_insert(b),
            GcPolicy::Fifo => self.fifo.push_back(b),
            _ => {
                self.closed_pos[b as usize] = self.closed_list.len() as u32;
                self.closed_list.push(b);
            }
        }
    }

    fn unclose(&mut self, b: u32) {
        self.closed_count -= 1;
        match self.policy {
            _ if self.bucketed => self.bucket_remove(b),
            GcPolicy::Fifo => {} // popped by the caller
            _ => {
                let pos = self.closed_pos[b as usize] as usize;
                let last = self.closed_list.pop().expect("closed list holds the block");
                if last != b {
                    self.closed_list[pos] = last;
                    self.closed_pos[last as usize] = pos as u32;
                }
                self.closed_pos[b as usize] = NONE;
            }
        }
    }

    fn open(&mut self, b: u32) {
        debug_assert_eq!(self.blk[b as usize].state, FREE);
        self.blk[b as usize].state = OPEN;
        self.fill_entries[b as usize] = 0;
        self.fill_units[b as usize] = 0;
    }

    #[inline]
    fn room(&self, b: u32, units: u32) -> bool {
        b != NONE
            && self.fill_units[b as usize] + units <= self.block_cap(b)
            && self.fill_entries[b as usize] < (1 << self.shift)
    }

    /// Appends `lba` (`units` long) to open block `b`, emitting page programs.
    #[inline]
    fn append(&mut self, b: u32, lba: u32, units: u32, tag: u32) {
        let bi = b as usize;
        let e = (b << self.shift) | self.fill_entries[bi];
        self.p2l[e as usize] = lba;
        self.l2p[lba as usize] = e;
        if !self.lba_units.is_empty() {
            self.lba_units[lba as usize] = units as u16;
        }
        self.fill_entries[bi] += 1;
        let f0 = self.fill_units[bi];
        let f1 = f0 + units;
        self.fill_units[bi] = f1;
        self.blk[bi].valid_units += units;
        self.blk[bi].valid_count += 1;
        self.mapped += 1;
        self.nand_units += units as u64;
        let (p0, p1) = (self.page_div.quot(f0), self.page_div.quot(f1));
        for p in p0..p1 {
            self.work
                .push(tag << TAG_SHIFT | (b * self.pages_per_block + p));
        }
    }

    /// Removes the mapping of `lba` (overwrite or TRIM).
    #[inline]
    fn invalidate(&mut self, lba: u32) {
        let e = self.l2p[lba as usize];
        if e == NONE {
            return;
        }
        self.l2p[lba as usize] = NONE;
        let b = e >> self.shift;
        let bi = b as usize;
        let u = self.units_of(lba);
        let bk = &mut self.blk[bi];
        let before = bk.valid_units;
        bk.valid_units -= u;
        bk.valid_count -= 1;
        let closed = bk.state == CLOSED;
        self.mapped -= 1;
        if self.bucketed && closed && b < self.n_mlc && (before - u) / UNIT != before / UNIT {
            self.bucket_remove(b);
            self.bucket_insert(b);
        }
    }

    // ---- host interface -------------------------------------------------------------------

    /// Writes one 4 KiB logical block occupying `units` physical units.
    #[inline]
    pub fn write(&mut self, lba: u32, units: u32) {
        debug_assert!(lba < self.user_lbas && units > 0 && units <= UNIT);
        self.note_units(units);
        self.invalidate(lba);
        self.host_units += units as u64;
        if self.n_mlc < self.n_blocks {
            if !self.room(self.slc_open, units) {
                if self.slc_open != NONE {
                    self.close(self.slc_open);
                    self.slc_open = NONE;
                }
                if let Some(b) = self.slc_free.pop() {
                    self.open(b);
                    self.slc_open = b;
                } else {
                    self.flag(EV_SLC_FULL);
                }
            }
            if self.slc_open != NONE {
                self.append(self.slc_open, lba, units, W_HOST_PROG);
                return;
            }
        }
        if !self.room(self.host_open, units) {
            if self.host_open != NONE {
                self.close(self.host_open);
            }
            self.host_open = NONE;
            self.foreground_gc();
            if self.shared_frontier && self.room(self.gc_open, units) {
                // one write frontier: the host continues in the block GC copied into
                self.host_open = std::mem::replace(&mut self.gc_open, NONE);
            } else {
                let b = self.free.pop().expect("foreground GC keeps a free block");
                self.open(b);
                self.host_open = b;
            }
        }
        self.append(self.host_open, lba, units, W_HOST_PROG);
    }

    /// Unmaps `lba` (subject to `trim_efficacy`). Returns whether it was unmapped.
    #[inline]
    pub fn trim(&mut self, lba: u32) -> bool {
        if self.trim_threshold != u64::MAX {
            let h = mix64(lba as u64 ^ self.trim_seed.wrapping_mul(crate::rng::PHI));
            if h > self.trim_threshold {
                return false;
            }
        }
        let was = self.l2p[lba as usize] != NONE;
        self.invalidate(lba);
        was
    }

    /// Hints the CPU to fetch the map entry of `lba` (software pipelining of host writes).
    #[inline]
    pub fn prefetch_map(&self, lba: u32) {
        if let Some(x) = self.l2p.get(lba as usize) {
            prefetch(x as *const u32 as *const i8);
        }
        if let Some(x) = self.lba_units.get(lba as usize) {
            prefetch(x as *const u16 as *const i8);
        }
    }

    /// Hints the CPU to fetch what invalidating `lba` touches (its map entry must be cached).
    #[inline]
    pub fn prefetch_valid(&self, lba: u32) {
        if let Some(&e) = self.l2p.get(lba as usize) {
            if e != NONE {
                if let Some(x) = self.blk.get((e >> self.shift) as usize) {
                    prefetch(x as *const Blk as *const i8);
                }
            }
        }
    }

    pub fn is_mapped(&self, lba: u32) -> bool {
        self.l2p[lba as usize] != NONE
    }

    /// Number of closed SLC blocks waiting to be folded.
    pub fn slc_pending(&self) -> usize {
        self.slc_closed.len()
    }

    /// Full consistency check (debug builds call it periodically; O(blocks)).
    pub fn check_invariants(&self) {
        let sum_valid: u64 = self.blk.iter().map(|k| k.valid_count as u64).sum();
        assert_eq!(sum_valid, self.mapped, "Σ valid ≠ mapped LBAs");
        let free = self.blk.iter().filter(|k| k.state == FREE).count();
        let open = self.blk.iter().filter(|k| k.state == OPEN).count();
        let closed = self.blk.iter().filter(|k| k.state == CLOSED).count();
        assert_eq!(free + open + closed, self.n_blocks as usize);
        assert_eq!(
            free,
            self.free.len() + self.slc_free.len(),
            "free list ≠ free blocks"
        );
        assert_eq!(closed, self.closed_count as usize, "closed count drifted");
        let opens = [self.host_open, self.gc_open, self.slc_open]
            .iter()
            .filter(|&&b| b != NONE)
            .count();
        assert_eq!(open, opens, "open blocks ≠ frontiers");
        assert_eq!(
            self.nand_units,
            self.host_units + self.gc_units,
            "NAND writes ≠ host writes + GC copies"
        );
    }
}
