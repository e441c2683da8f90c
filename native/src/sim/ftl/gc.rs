//! Garbage collection: victim choice (greedy, FIFO, random, cost-benefit), relocation of a
//! victim's valid data to the GC frontier, SLC folding, and the erase that frees the block.

use super::*;
use rand::Rng;

/// GC prefetches the map entries of a victim's entries this many at a time...
const GC_BURST: u32 = 16;
/// ... this many entries ahead of checking them.
const GC_SCAN: u32 = 48;

impl Ftl {
    /// Once the free pool is down to the reserve, collects victims until it holds `gc_high`
    /// blocks (hysteresis; without it, `gc_reserve` + 1).
    pub(super) fn foreground_gc(&mut self) {
        if self.free.len() > self.gc_reserve {
            return;
        }
        self.flag(EV_POOL_EXHAUSTED);
        let mut guard = 0u64;
        while self.free.len() < self.gc_high {
            self.collect_one();
            guard += 1;
            assert!(
                guard < 4 * self.n_blocks as u64 + 16,
                "GC made no progress; the drive has no reclaimable space"
            );
        }
    }

    /// Closed MLC blocks that GC could pick.
    pub fn closed_mlc(&self) -> u32 {
        self.closed_count - self.slc_closed.len() as u32
    }

    fn pick_victim(&mut self) -> u32 {
        match self.policy {
            _ if self.bucketed => loop {
                if let Some(b) = self.bucket_top(self.min_level) {
                    break b;
                }
                self.min_level += 1;
            },
            GcPolicy::Greedy => {
                // d-choices: the fewest valid units among d closed blocks drawn at random
                let n = self.closed_list.len();
                let mut best = self.closed_list[self.rng.random_range(0..n)];
                for _ in 1..self.gc_sample {
                    let b = self.closed_list[self.rng.random_range(0..n)];
                    if self.blk[b as usize].valid_units < self.blk[best as usize].valid_units {
                        best = b;
                    }
                }
                best
            }
            GcPolicy::Fifo => self.fifo.pop_front().expect("a closed block for FIFO GC"),
            GcPolicy::Random => {
                let i = self.rng.random_range(0..self.closed_list.len());
                self.closed_list[i]
            }
            GcPolicy::CostBenefit => {
                // (1 − u) · age / 2u over d = 16 random candidates (d-choices sampling).
                let mut best = self.closed_list[0];
                let mut best_score = f64::NEG_INFINITY;
                for _ in 0..16 {
                    let b = self.closed_list[self.rng.random_range(0..self.closed_list.len())];
                    let u = self.blk[b as usize].valid_units as f64 / self.block_units as f64;
                    let age = (self.nand_units - self.close_seq[b as usize]) as f64 + 1.0;
                    let score = if u == 0.0 {
                        f64::INFINITY
                    } else {
                        (1.0 - u) * age / (2.0 * u)
                    };
                    if score > best_score {
                        best_score = score;
                        best = b;
                    }
                }
                best
            }
        }
    }

    /// Garbage-collects one victim (policy's choice): copies its valid data to the GC frontier,
    /// erases it and returns it to the free pool. Returns the victim's valid units.
    pub fn collect_one(&mut self) -> u32 {
        let b = self.pick_victim();
        self.unclose(b);
        self.relocate(b)
    }

    /// Folds the oldest closed SLC block into MLC. Returns false if there is none.
    pub fn fold_one(&mut self) -> bool {
        if self.slc_closed.is_empty() {
            return false;
        }
        // Folding writes MLC blocks through the GC frontier: make room first, as a host write
        // would (a no-op unless the pool is down to the reserve).
        self.foreground_gc();
        let Some(b) = self.slc_closed.pop_front() else {
            return false;
        };
        self.closed_count -= 1;
        self.relocate(b);
        true
    }

    /// Hints the CPU to fetch the map entry (and size) of the LBA stored at entry `e`.
    #[inline]
    fn prefetch_entry(&self, e: u32) {
        if let Some(&lba) = self.p2l.get(e as usize) {
            if let Some(x) = self.l2p.get(lba as usize) {
                prefetch(x as *const u32 as *const i8);
            }
            if let Some(x) = self.lba_units.get(lba as usize) {
                prefetch(x as *const u16 as *const i8);
            }
        }
    }

    fn relocate(&mut self, b: u32) -> u32 {
        let bi = b as usize;
        let moved = self.blk[bi].valid_units;
        let n = self.fill_entries[bi];
        let base = b << self.shift;
        // The valid entries, in order: an entry is valid while the map still points at it. The
        // map entries are prefetched a burst at a time, GC_SCAN entries ahead (misses issued
        // together overlap); the copies below then find them cached.
        let mut todo = std::mem::take(&mut self.scratch);
        todo.clear();
        let want = self.blk[bi].valid_count as usize;
        for i in 0..n.min(GC_SCAN) {
            self.prefetch_entry(base + i);
        }
        let mut i = 0u32;
        while i < n && todo.len() < want {
            if i.is_multiple_of(GC_BURST) {
                for j in i + GC_SCAN..(i + GC_SCAN + GC_BURST).min(n) {
                    self.prefetch_entry(base + j);
                }
            }
            let e = base + i;
            if self.l2p[self.p2l[e as usize] as usize] == e {
                todo.push(i);
            }
            i += 1;
        }
        debug_assert_eq!(todo.len(), want);
        // With compression, entry i sits in page ⌊i·fill_units / (n·page_units)⌋; the page only
        // changes at entry `next_page_at`, worked out once per page (no division per copy).
        let mut pages = VictimPages {
            compression: self.compression,
            fill: self.fill_units[bi] as u64,
            n: n as u64,
            page_units: self.page_units as u64,
            page_div: self.page_div,
            slot_div: self.slot_div,
            page: 0,
            next_page_at: 0,
            last_page: NONE,
            first_page: b * self.pages_per_block,
        };
        if self.lba_units.is_empty() {
            self.copy_uniform(bi, base, &todo, &mut pages);
        } else {
            for &i in &todo {
                let e = base + i;
                let lba = self.p2l[e as usize];
                let units = self.units_of(lba);
                pages.read(i, &mut self.work);
                // unmap from the victim
                self.blk[bi].valid_units -= units;
                self.blk[bi].valid_count -= 1;
                self.mapped -= 1;
                // write to the GC frontier
                if !self.room(self.gc_open, units) {
                    self.new_gc_frontier();
                }
                self.append(self.gc_open, lba, units, W_GC_PROG);
                self.gc_units += units as u64;
            }
        }
        self.scratch = todo;
        if moved > 0 {
            self.flag(EV_GC_COPY);
        }
        debug_assert_eq!(self.blk[bi].valid_count, 0);
        debug_assert_eq!(self.blk[bi].valid_units, 0);
        // erase
        self.blk[bi].state = FREE;
        self.fill_entries[bi] = 0;
        self.fill_units[bi] = 0;
        self.erases += 1;
        self.work.push(W_ERASE << TAG_SHIFT | b);
        if b >= self.n_mlc {
            self.slc_free.push(b);
        } else {
            self.free.push(b);
        }
        moved
    }

    /// Closes the GC frontier (if any) and opens a free block in its place.
    fn new_gc_frontier(&mut self) {
        if self.gc_open != NONE {
            self.close(self.gc_open);
        }
        let nb = self.free.pop().expect("GC frontier needs a free block");
        self.open(nb);
        self.gc_open = nb;
    }

    /// GC copies when every mapped LBA holds `uniform_units`: the entries `todo` of victim
    /// `bi` (entry base `base`) go to the GC frontier a run at a time, as many as fit in it,
    /// with its fill counters in registers; the NAND work is the same, in the same order, as
    /// copying them one by one with [`Ftl::append`].
    fn copy_uniform(&mut self, bi: usize, base: u32, todo: &[u32], pages: &mut VictimPages) {
        let u = self.uniform_units;
        let stride = 1u32 << self.shift;
        let mut k = 0;
        while k < todo.len() {
            if !self.room(self.gc_open, u) {
                self.new_gc_frontier();
            }
            let g = self.gc_open;
            let gi = g as usize;
            let (f_units, f_entries) = (self.fill_units[gi], self.fill_entries[gi]);
            let fit = ((self.block_cap(g) - f_units) / u).min(stride - f_entries) as usize;
            let end = (k + fit).min(todo.len());
            let (mut fu, mut fe) = (f_units, f_entries);
            let gbase = g << self.shift;
            let gpage = g * self.pages_per_block;
            let tag = W_GC_PROG << TAG_SHIFT;
            for &i in &todo[k..end] {
                let lba = self.p2l[(base + i) as usize];
                pages.read(i, &mut self.work);
                let e = gbase | fe;
                self.p2l[e as usize] = lba;
                self.l2p[lba as usize] = e;
                fe += 1;
                let f0 = fu;
                fu += u;
                for p in self.page_div.quot(f0)..self.page_div.quot(fu) {
                    self.work.push(tag | (gpage + p));
                }
            }
            let m = (end - k) as u32;
            self.fill_units[gi] = fu;
            self.fill_entries[gi] = fe;
            self.blk[gi].valid_units += m * u;
            self.blk[gi].valid_count += m;
            self.blk[bi].valid_units -= m * u;
            self.blk[bi].valid_count -= m;
            self.nand_units += (m * u) as u64;
            self.gc_units += (m * u) as u64;
            k = end;
        }
    }

    /// Whether background GC has something worth collecting (a closed MLC block with invalid data).
    pub fn has_garbage(&mut self) -> bool {
        if self.closed_mlc() == 0 {
            return false;
        }
        if !self.bucketed {
            return true;
        }
        while self.min_level < self.buckets.len() && self.bucket_top(self.min_level).is_none() {
            self.min_level += 1;
        }
        self.min_level < self.buckets.len() && (self.min_level as u32) < self.block_units / UNIT
    }
}

/// Which page of a GC victim each entry sits in, and the page reads that copying them takes.
struct VictimPages {
    compression: bool,
    fill: u64,
    n: u64,
    page_units: u64,
    page_div: Divisor,
    slot_div: Divisor,
    page: u32,
    next_page_at: u32,
    last_page: u32,
    first_page: u32,
}

impl VictimPages {
    /// Queues the read of entry `i`'s page unless it was the last page read.
    #[inline(always)]
    fn read(&mut self, i: u32, work: &mut Vec<u32>) {
        if self.compression {
            if i >= self.next_page_at {
                self.page = self.page_div.quot((i as u64 * self.fill / self.n) as u32);
                let end = (self.page as u64 + 1) * self.n * self.page_units;
                self.next_page_at = end.div_ceil(self.fill).min(u32::MAX as u64) as u32;
            }
        } else {
            self.page = self.slot_div.quot(i);
        }
        debug_assert!(
            !self.compression
                || self.page == self.page_div.quot((i as u64 * self.fill / self.n) as u32)
        );
        if self.page != self.last_page {
            work.push(W_READ << TAG_SHIFT | (self.first_page + self.page));
            self.last_page = self.page;
        }
    }
}
