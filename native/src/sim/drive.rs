//! [`SimDrive`]: the FTL and timing model behind the target interface, on a virtual clock.
//!
//! Host commands are simulated event by event: `jobs × iodepth` commands are outstanding; the
//! earliest completion is recorded and its slot immediately issues the job's next command at
//! that time. The FTL state changes when a command is issued; its completion time comes from
//! the timing model. Capture rows carry the ground truth (`nand_written_bytes`,
//! `gc_copied_bytes`, `free_blocks`) sampled when each interval closes.

use super::dirty::Dirty;
use super::ftl::{Ftl, EV_GC_COPY, EV_POOL_EXHAUSTED, EV_SLC_FULL, UNIT, UNIT_BYTES};
use super::spec::{parse_spec, SimConfig};
use super::steady::SteadyDetector;
use super::timing::Timing;
use crate::capture::SimTruth;
use crate::error::{Error, Result};
use crate::run::Observer;
use crate::workload::{compress_ratio_cached, OpKind, Workload};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

mod run;

/// A ground-truth event: what happened, after how many host bytes, at what drive time.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub name: &'static str,
    pub host_written_bytes: u64,
    /// Drive time since its last secure erase, ns.
    pub t_ns: u64,
    /// Write amplification measured over the detection window (steady state only).
    pub wa: Option<f64>,
}

/// A simulated drive with its FTL state; persists across runs (fill, torture, TRIM, idle...).
pub struct SimDrive {
    cfg: SimConfig,
    ftl: Ftl,
    timing: Timing,
    /// Virtual time, ns since the drive was created.
    now: u64,
    /// Virtual time of the last secure erase.
    erased_at: u64,
    host_written: u64,
    host_trimmed: u64,
    events: Vec<Event>,
    steady: SteadyDetector,
    ops_since_check: u64,
    dirty: Dirty,
}

impl SimDrive {
    /// Parses `<preset>[?key=value&...]`.
    /// Errors: [`Error::InvalidValue`] for a bad spec, or one whose tables would not fit in
    /// memory (estimated first, see [`super::memory`]).
    pub fn from_spec(spec: &str) -> Result<Self> {
        let cfg = parse_spec(spec)?;
        super::memory::check(&cfg)?;
        Self::new(cfg)
    }

    /// A freshly erased drive with configuration `cfg`. Errors: [`Error::InvalidValue`] when
    /// its tables cannot be allocated.
    pub fn new(cfg: SimConfig) -> Result<Self> {
        let ftl = Ftl::new(&cfg)?;
        let timing = Timing::new(&cfg, ftl.n_mlc)?;
        let steady = SteadyDetector::new(cfg.capacity_bytes);
        let dirty = Dirty::new(
            cfg.dirty_rate,
            cfg.raw_blocks() * cfg.slots_per_block() as u64,
        );
        Ok(SimDrive {
            dirty,
            cfg,
            ftl,
            timing,
            now: 0,
            erased_at: 0,
            host_written: 0,
            host_trimmed: 0,
            events: vec![],
            steady,
            ops_since_check: 0,
        })
    }

    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    pub fn size_bytes(&self) -> u64 {
        self.cfg.capacity_bytes
    }

    pub fn host_written_bytes(&self) -> u64 {
        self.host_written
    }

    /// Cumulative NAND bytes programmed since the last secure erase (host data + GC copies).
    pub fn nand_written_bytes(&self) -> u64 {
        self.ftl.nand_units * UNIT_BYTES
    }

    pub fn gc_copied_bytes(&self) -> u64 {
        self.ftl.gc_units * UNIT_BYTES
    }

    pub fn free_blocks(&self) -> u64 {
        self.ftl.free_blocks()
    }

    pub fn erases(&self) -> u64 {
        self.ftl.erases
    }

    /// Mapped 4 KiB logical blocks.
    pub fn mapped_lbas(&self) -> u64 {
        self.ftl.mapped
    }

    /// NAND page operations scheduled so far (benchmarks).
    pub fn nand_ops(&self) -> u64 {
        self.timing.nand_ops
    }

    /// Virtual seconds since the last secure erase.
    pub fn drive_time_s(&self) -> f64 {
        (self.now - self.erased_at) as f64 / 1e9
    }

    /// Share of raw NAND in SandForce's dirty state (0 without the model), 0 – 1.
    pub fn dirty_level(&self) -> f64 {
        self.dirty.level()
    }

    /// Ground-truth events since the last secure erase.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Full invariant check (also run periodically in debug builds).
    pub fn check_invariants(&self) {
        self.ftl.check_invariants();
    }

    fn truth(&self) -> SimTruth {
        SimTruth {
            nand_written_bytes: self.nand_written_bytes(),
            gc_copied_bytes: self.gc_copied_bytes(),
            free_blocks: self.ftl.free_blocks(),
        }
    }

    fn events_json(&self, since: usize, t0: u64) -> Value {
        Value::Array(
            self.events[since..]
                .iter()
                .map(|e| {
                    let abs = self.erased_at + e.t_ns;
                    json!({
                        "name": e.name,
                        "host_written_bytes": e.host_written_bytes,
                        "t_s": abs.saturating_sub(t0) as f64 / 1e9,
                        "drive_t_s": e.t_ns as f64 / 1e9,
                        "wa": e.wa,
                    })
                })
                .collect(),
        )
    }

    pub fn meta(&self) -> Value {
        json!({
            "kind": "sim",
            "preset": self.cfg.preset,
            "size_bytes": self.cfg.capacity_bytes,
            "model": self.cfg.description,
            "config": self.cfg.to_json(),
            "host_written_bytes": self.host_written,
            "host_trimmed_bytes": self.host_trimmed,
            "nand_written_bytes": self.nand_written_bytes(),
            "gc_copied_bytes": self.gc_copied_bytes(),
            "free_blocks": self.ftl.free_blocks(),
            "erases": self.ftl.erases,
            "dirty_level": self.dirty.level(),
            "drive_time_s": self.drive_time_s(),
            "events": self.events_json(0, self.erased_at),
        })
    }

    /// Turns the FTL's first-occurrence flags and the steady-state detector into events.
    #[inline]
    fn note_events(&mut self) {
        if self.ftl.new_events != 0 {
            let ev = std::mem::take(&mut self.ftl.new_events);
            for (bit, name) in [
                (EV_POOL_EXHAUSTED, "free_pool_exhausted"),
                (EV_GC_COPY, "gc_onset"),
                (EV_SLC_FULL, "slc_cache_full"),
            ] {
                if ev & bit != 0 {
                    self.events.push(Event {
                        name,
                        host_written_bytes: self.host_written,
                        t_ns: self.now - self.erased_at,
                        wa: None,
                    });
                }
            }
        }
        if self.host_written >= self.steady.next_at {
            self.steady_window();
        }
    }

    #[cold]
    fn steady_window(&mut self) {
        let nand = self.ftl.nand_units * UNIT_BYTES;
        let t = self.now - self.erased_at;
        let gc_started = self.ftl.gc_units != 0;
        if let Some((entry, entry_t, wa)) =
            self.steady.window(self.host_written, nand, t, gc_started)
        {
            self.events.push(Event {
                name: "steady_state_wa",
                host_written_bytes: entry,
                t_ns: entry_t,
                wa: Some(wa),
            });
        }
    }

    fn lba_range(&self, offset: u64, len: u64) -> Result<(u32, u32)> {
        let cap = self.cfg.capacity_bytes;
        if offset > cap {
            return Err(Error::InvalidValue(format!(
                "offset={offset} is beyond the simulated drive's {cap} bytes; use 0 to {cap}"
            )));
        }
        let end = offset.saturating_add(len).min(cap);
        Ok((offset.div_ceil(4096) as u32, (end / 4096) as u32))
    }

    /// Physical units one 4 KiB block of this workload's data occupies.
    fn data_units(&self, w: &Workload) -> (u32, f64) {
        if !self.cfg.compression || !w.rw.is_destructive() {
            return (UNIT, 1.0);
        }
        let r = compress_ratio_cached(&w.data, w.bs).clamp(self.cfg.compress_floor, 1.0);
        let u = ((r * UNIT as f64).ceil() as u32).clamp(1, UNIT);
        (u, r)
    }

    /// Issues one command at `t`; returns its completion time.
    #[inline]
    fn issue(&mut self, kind: OpKind, offset: u64, len: u64, t: u64, units: u32) -> u64 {
        let l0 = (offset / 4096) as u32;
        let l1 = (offset + len).div_ceil(4096) as u32;
        let cs = self.timing.controller(t, len);
        match kind {
            OpKind::Write => {
                // cut-through: a page is programmed once its last byte has crossed the link
                let (link_start, data_in) = self.timing.link_span(cs, len);
                for (i, lba) in (l0..l1).enumerate() {
                    self.ftl.write(lba, units);
                    if !self.ftl.work.is_empty() {
                        let arrived = link_start + self.timing.link_time((i as u64 + 1) * 4096);
                        self.timing.schedule(&self.ftl.work, arrived);
                        self.ftl.work.clear();
                    }
                }
                self.host_written += len;
                if self.dirty.active() {
                    let f = self
                        .dirty
                        .write((l1 - l0) as u64, units, self.ftl.erases > 0);
                    self.timing.set_write_fraction(f);
                }
                self.note_events();
                data_in.max(self.timing.buffer_ready()) + self.timing.lat_write
            }
            OpKind::Read => {
                let mut last_page = u32::MAX;
                let mut first_ready = u64::MAX;
                let mut ready = cs;
                for lba in l0..l1 {
                    if let Some(p) = self.ftl.page_of(lba) {
                        if p != last_page {
                            let r = self.timing.read_page(p, cs);
                            first_ready = first_ready.min(r);
                            ready = ready.max(r);
                            last_page = p;
                        }
                    }
                }
                if first_ready == u64::MAX {
                    first_ready = cs;
                }
                // link transfer overlaps the NAND reads; it cannot end before the last page is out
                let end = self.timing.link(first_ready, len);
                let end = end.max(ready + self.timing.link_time(4096));
                self.timing.link_free = end;
                end + self.timing.lat_read
            }
            OpKind::Trim => {
                for lba in l0..l1 {
                    if self.ftl.trim(lba) {
                        self.host_trimmed += 4096;
                    }
                }
                cs + self.timing.lat_write
            }
        }
    }

    /// Discards (TRIM) `[offset, offset + len)`; partial 4 KiB blocks at the edges are kept.
    pub fn discard(&mut self, offset: u64, len: Option<u64>) -> Result<()> {
        let len = len.unwrap_or(u64::MAX);
        let (l0, l1) = self.lba_range(offset, len)?;
        for lba in l0..l1 {
            if self.ftl.trim(lba) {
                self.host_trimmed += 4096;
            }
        }
        if cfg!(debug_assertions) {
            self.ftl.check_invariants();
        }
        Ok(())
    }

    /// Lets `seconds` of virtual time pass; idle-time GC (and SLC folding) runs if enabled.
    pub fn idle(&mut self, seconds: f64, obs: &mut dyn Observer) -> Result<()> {
        if !(seconds >= 0.0 && seconds.is_finite()) {
            return Err(Error::InvalidValue(format!(
                "idle={seconds} s is not a duration; use 0 or more seconds"
            )));
        }
        let end = self.now + (seconds * 1e9).round() as u64;
        if end > self.now {
            self.timing.settle_erases(self.now); // the pre-erased pool refills first
        }
        let mut t = self.now.max(self.timing.dies_idle_at());
        let wall = Instant::now();
        let mut next_poll = Duration::from_millis(100);
        let target_free = self.cfg.gc_reserve as u64
            + (self.cfg.idle_gc_free * self.ftl.spare_blocks() as f64) as u64;
        loop {
            if t >= end {
                break;
            }
            let did = if self.ftl.slc_pending() > 0 {
                self.ftl.fold_one()
            } else if self.cfg.idle_gc
                && self.ftl.free_blocks() < target_free
                && self.ftl.has_garbage()
            {
                self.ftl.collect_one();
                true
            } else {
                false
            };
            if !did {
                break;
            }
            self.timing.schedule(&self.ftl.work, t);
            self.ftl.work.clear();
            t = self.timing.dies_idle_at();
            self.now = t.min(end);
            self.note_events();
            if wall.elapsed() >= next_poll {
                next_poll = wall.elapsed() + Duration::from_millis(100);
                if obs.should_stop() {
                    break;
                }
            }
        }
        self.now = end.max(self.now);
        if cfg!(debug_assertions) {
            self.ftl.check_invariants();
        }
        Ok(())
    }

    /// Secure erase: every block erased, nothing mapped, counters and events reset.
    pub fn sanitize(&mut self) -> Result<()> {
        self.ftl.sanitize();
        self.dirty.clear();
        self.timing.set_write_fraction(1.0);
        self.now = self.now.max(self.timing.dies_idle_at());
        self.timing.reset(self.now);
        self.erased_at = self.now;
        self.host_written = 0;
        self.host_trimmed = 0;
        self.events.clear();
        self.steady = SteadyDetector::new(self.cfg.capacity_bytes);
        Ok(())
    }
}
