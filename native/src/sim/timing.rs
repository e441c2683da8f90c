//! Timing: per-die and per-channel busy times, a serial controller and host link, and a write
//! buffer that lets host writes complete ahead of the NAND programs that absorb them.
//!
//! Every resource is a "free at" time in virtual nanoseconds; an operation starts at the later
//! of its ready time and the resource's free time and occupies it for its service time. Host
//! commands are issued in nondecreasing time order (the event loop guarantees it), so
//! reservations are made in time order.
//!
//! - Die: program of one page occupies it `t_prog / planes` (multi-plane programs), a read
//!   `t_read`. Pages are striped over dies by their global page number (superblock-style, so
//!   one open block keeps every die busy).
//! - Erase: a simulated block is a slice of a superblock (one physical block per die, erased
//!   on every die in parallel), so its erase costs each die `t_erase × (its pages on that die)
//!   / pages_per_block` — the die time a physical erase takes, shared by the slices it covers.
//!   Erases run ahead of need: a fully invalid block is erased into a small pre-erased pool
//!   ([`ERASE_AHEAD_BLOCKS`] physical blocks per die) in the die's idle gaps; only erase work
//!   beyond the pool delays the die's next operation. (Charging a whole `t_erase` to one die
//!   stalled the stripe behind it: the level after NAND exhaustion then depended on
//!   `t_erase`, although erase is ~1.7 % of a die's program time.)
//! - Channel: one page transfer at `channel_mbps`.
//! - Controller: `cmd_us` per command plus bytes at `ctrl_mbps` (IOPS and bandwidth caps).
//! - Backend: every page programmed (host or GC) crosses the controller's NAND-side datapath
//!   at `backend_mbps` (physical bytes, after compression), one page at a time; 0 = no limit.
//!   It is what caps a SandForce drive's incompressible writes at any queue depth while
//!   compressible data runs at the host-side `ctrl_mbps`.
//!   A SandForce drive in its dirty state runs it and the page programs at a fraction of
//!   their clean rate ([`Timing::set_write_fraction`], see [`super::dirty`]).
//! - Host link: bytes at `link_mbps`, one transfer at a time. Programs are cut-through: a
//!   page is ready to program as soon as its last byte has crossed the link, not when the
//!   whole command has (a 16 MiB write at QD1 keeps the dies as busy as 128 KiB at QD32).
//! - Write buffer: a write is acknowledged once the host pages older than the buffer's capacity
//!   are programmed, plus the fixed firmware latency `lat_write_us`.

use super::ftl::{Divisor, TAG_SHIFT, W_ERASE, W_GC_PROG, W_HOST_PROG, W_MASK, W_READ};
use super::spec::SimConfig;

/// Physical blocks per die that may wait to be erased (the pre-erased pool's depth).
pub const ERASE_AHEAD_BLOCKS: u64 = 2;

pub struct Timing {
    ndies: Divisor,
    pages_per_block: u64,
    /// Per die: erase work (ns) done ahead in idle gaps, not yet paid.
    erase_debt: Vec<u64>,
    erase_pool_ns: u64,
    nch: Divisor,
    slc_first_page: u32,
    die_free: Vec<u64>,
    ch_free: Vec<u64>,
    pub t_read: u64,
    pub t_prog: u64,
    pub t_prog_slc: u64,
    pub t_erase: u64,
    pub xfer_page: u64,
    link_ps_per_byte: u64,
    ctrl_ps_per_byte: u64,
    /// Backend time of one page programmed, ns (0: no backend limit).
    backend_page: u64,
    /// Clean-drive backend and program times (before the dirty-state slowdown), ns.
    backend_page_clean: u64,
    t_prog_clean: u64,
    t_prog_slc_clean: u64,
    /// The fraction the write path runs at now ([`Timing::set_write_fraction`]).
    write_fraction: f64,
    backend_free: u64,
    pub cmd_ns: u64,
    pub lat_read: u64,
    pub lat_write: u64,
    pub link_free: u64,
    pub ctrl_free: u64,
    ring: Vec<u64>,
    ring_mask: u64,
    buffer_pages: u64,
    host_pages: u64,
    last_done: u64,
    /// Total NAND page operations scheduled (programs + reads + erases), for benchmarks.
    pub nand_ops: u64,
}

fn ns(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}

/// Picoseconds per byte at `mbps` decimal MB/s.
fn ps_per_byte(mbps: f64) -> u64 {
    (1e6 / mbps).round() as u64
}

impl Timing {
    /// Errors: [`crate::Error::InvalidValue`] when the write-buffer ring cannot be allocated.
    pub fn new(c: &SimConfig, n_mlc: u32) -> crate::error::Result<Timing> {
        let t = &c.timings;
        let planes = c.planes.max(1) as f64;
        let buffer_pages = (c.buffer_bytes / c.page_size as u64).max(1);
        let ring_len = (buffer_pages + 2).next_power_of_two();
        let t_prog = ns(t.t_prog_us / planes);
        let t_prog_slc = ns(t.t_prog_slc_us / planes);
        let backend_page = if t.backend_mbps > 0.0 {
            c.page_size as u64 * ps_per_byte(t.backend_mbps) / 1000
        } else {
            0
        };
        let ring = super::memory::try_zeroed("write-buffer ring", ring_len as usize)?;
        Ok(Timing {
            ndies: Divisor::new(c.dies()),
            pages_per_block: c.pages_per_block as u64,
            erase_debt: vec![0; c.dies() as usize],
            erase_pool_ns: ERASE_AHEAD_BLOCKS * ns(t.t_erase_us),
            nch: Divisor::new(c.channels),
            slc_first_page: n_mlc * c.pages_per_block,
            die_free: vec![0; c.dies() as usize],
            ch_free: vec![0; c.channels as usize],
            t_read: ns(t.t_read_us),
            t_prog,
            t_prog_slc,
            t_erase: ns(t.t_erase_us),
            xfer_page: (c.page_size as u64 * ps_per_byte(t.channel_mbps)) / 1000,
            link_ps_per_byte: ps_per_byte(t.link_mbps),
            ctrl_ps_per_byte: ps_per_byte(t.ctrl_mbps),
            backend_page,
            t_prog_clean: t_prog,
            t_prog_slc_clean: t_prog_slc,
            backend_page_clean: backend_page,
            write_fraction: 1.0,
            backend_free: 0,
            cmd_ns: ns(t.cmd_us),
            lat_read: ns(t.lat_read_us),
            lat_write: ns(t.lat_write_us),
            link_free: 0,
            ctrl_free: 0,
            ring,
            ring_mask: ring_len - 1,
            buffer_pages,
            host_pages: 0,
            last_done: 0,
            nand_ops: 0,
        })
    }

    /// Every resource idle from `now` on (after a secure erase).
    pub fn reset(&mut self, now: u64) {
        self.die_free.fill(now);
        self.erase_debt.fill(0);
        self.ch_free.fill(now);
        self.link_free = now;
        self.ctrl_free = now;
        self.backend_free = now;
        self.ring.fill(now);
        self.host_pages = 0;
        self.last_done = now;
    }

    /// Runs the write path (backend and page programs) at `fraction` (0, 1] of its clean
    /// rate: each page programmed costs `1 / fraction` of its clean time (SandForce dirty
    /// state).
    pub fn set_write_fraction(&mut self, fraction: f64) {
        // called after every write command of a SandForce drive: once the dirty level stops
        // moving (all NAND dirty) the fraction repeats, and the times need no recomputing
        if fraction == self.write_fraction {
            return;
        }
        self.write_fraction = fraction;
        let slow = |x: u64| (x as f64 / fraction).round() as u64;
        self.backend_page = slow(self.backend_page_clean);
        self.t_prog = slow(self.t_prog_clean);
        self.t_prog_slc = slow(self.t_prog_slc_clean);
    }

    /// Time at which every die is idle again.
    pub fn dies_idle_at(&self) -> u64 {
        self.die_free.iter().copied().max().unwrap_or(0)
    }

    /// Erase work still owed by the dies (ns, summed over dies).
    pub fn erase_debt_ns(&self) -> u64 {
        self.erase_debt.iter().sum()
    }

    /// Lets every die finish its deferred erases from `t` on (the drive is idle).
    pub fn settle_erases(&mut self, t: u64) {
        for (f, d) in self.die_free.iter_mut().zip(self.erase_debt.iter_mut()) {
            *f = (*f).max(t) + *d;
            *d = 0;
        }
    }

    /// When die `die` starts an operation ready at `t`: erase work owed is done in the idle
    /// gap before `t` first.
    #[inline(always)]
    fn die_start(&mut self, die: usize, t: u64) -> u64 {
        let free = self.die_free[die];
        if free < t {
            let debt = self.erase_debt[die];
            if debt != 0 {
                let paid = debt.min(t - free);
                self.erase_debt[die] = debt - paid;
            }
            t
        } else {
            free
        }
    }

    /// Charges the erase of block `block` (ready at `t`) to every die holding its pages.
    fn erase(&mut self, block: u32, t: u64) {
        let n = self.erase_debt.len() as u64;
        let ppb = self.pages_per_block;
        let first = (block as u64 * ppb) % n;
        let (q, r) = (ppb / n, ppb % n);
        for k in 0..n.min(ppb) {
            let die = ((first + k) % n) as usize;
            let pages = q + u64::from(k < r);
            let share = self.t_erase * pages / ppb;
            if self.erase_debt[die] + share <= self.erase_pool_ns {
                self.erase_debt[die] += share; // erased ahead, in an idle gap to come
                continue;
            }
            // the pool is full: what the idle gap before `t` cannot absorb is erased now, in
            // the die's queue
            let s = self.die_start(die, t);
            let debt = self.erase_debt[die] + share;
            let now = debt.saturating_sub(self.erase_pool_ns);
            self.die_free[die] = s + now;
            self.erase_debt[die] = debt - now;
        }
    }

    /// Controller stage of a command issued at `t`: returns when it starts being processed.
    #[inline]
    pub fn controller(&mut self, t: u64, bytes: u64) -> u64 {
        let s = self.ctrl_free.max(t);
        self.ctrl_free = s + self.cmd_ns + bytes * self.ctrl_ps_per_byte / 1000;
        s
    }

    /// Host-link transfer of `bytes` ready at `t`; returns its end.
    #[inline]
    pub fn link(&mut self, t: u64, bytes: u64) -> u64 {
        let s = self.link_free.max(t);
        self.link_free = s + bytes * self.link_ps_per_byte / 1000;
        self.link_free
    }

    /// Host-link transfer of `bytes` ready at `t`; returns its start and end.
    #[inline]
    pub fn link_span(&mut self, t: u64, bytes: u64) -> (u64, u64) {
        let s = self.link_free.max(t);
        self.link_free = s + bytes * self.link_ps_per_byte / 1000;
        (s, self.link_free)
    }

    /// Link time of `bytes` without reserving it.
    #[inline]
    pub fn link_time(&self, bytes: u64) -> u64 {
        bytes * self.link_ps_per_byte / 1000
    }

    #[inline]
    fn program(&mut self, page: u32, t: u64) -> u64 {
        let die = self.ndies.rem_of(page) as usize;
        let ch = self.nch.rem_of(die as u32) as usize;
        let t = if self.backend_page != 0 {
            let bs = self.backend_free.max(t);
            self.backend_free = bs + self.backend_page;
            self.backend_free
        } else {
            t
        };
        let cs = self.ch_free[ch].max(t);
        self.ch_free[ch] = cs + self.xfer_page;
        let tp = if page >= self.slc_first_page {
            self.t_prog_slc
        } else {
            self.t_prog
        };
        let ds = self.die_start(die, cs + self.xfer_page);
        self.die_free[die] = ds + tp;
        self.die_free[die]
    }

    /// NAND read of global page `page` requested at `t`; returns when its data is out.
    #[inline]
    pub fn read_page(&mut self, page: u32, t: u64) -> u64 {
        self.nand_ops += 1;
        let die = self.ndies.rem_of(page) as usize;
        let ch = self.nch.rem_of(die as u32) as usize;
        let ds = self.die_start(die, t);
        self.die_free[die] = ds + self.t_read;
        let cs = self.ch_free[ch].max(ds + self.t_read);
        self.ch_free[ch] = cs + self.xfer_page;
        self.ch_free[ch]
    }

    /// Schedules the FTL's queued NAND work, all ready at `t`.
    pub fn schedule(&mut self, work: &[u32], t: u64) {
        self.nand_ops += work.len() as u64;
        for &w in work {
            let v = w & W_MASK;
            match w >> TAG_SHIFT {
                W_HOST_PROG => {
                    let done = self.program(v, t);
                    self.last_done = self.last_done.max(done);
                    self.ring[(self.host_pages & self.ring_mask) as usize] = self.last_done;
                    self.host_pages += 1;
                }
                W_GC_PROG => {
                    self.program(v, t);
                }
                W_READ => {
                    // GC read: array read then transfer out over the die's channel
                    let die = self.ndies.rem_of(v) as usize;
                    let ds = self.die_start(die, t);
                    self.die_free[die] = ds + self.t_read + self.xfer_page;
                }
                W_ERASE => self.erase(v, t),
                _ => unreachable!(),
            }
        }
    }

    /// Earliest time the write buffer holds the data written so far (plus a partial page).
    #[inline]
    pub fn buffer_ready(&self) -> u64 {
        let need = self.host_pages + 1;
        if need <= self.buffer_pages {
            return 0;
        }
        self.ring[((need - self.buffer_pages - 1) & self.ring_mask) as usize]
    }
}
