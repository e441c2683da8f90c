//! `sim:<preset>[?key=value&...]` → a validated [`SimConfig`].
//!
//! Keys (any preset, overriding it; sizes accept `4k`, `1m`, `120g`, times are microseconds):
//!
//! | key | meaning | allowed |
//! |---|---|---|
//! | `capacity` | user bytes (multiple of the 4 KiB logical block) | ≥ 64 erase blocks |
//! | `op` | over-provisioning (raw − user) / user | 0 < op ≤ 4 |
//! | `pages_per_block` | NAND pages per erase block | 16 – 1024 |
//! | `page_size` | NAND page bytes | 4k, 8k, 16k, 32k |
//! | `gc` | victim policy | `greedy`, `fifo`, `random`, `cost-benefit` |
//! | `idle_gc` | background GC while idle | `on`/`off` |
//! | `compression` | DuraWrite-style inline compression | `on`/`off` |
//! | `slc_cache` | SLC cache bytes of user data (0 = none) | < user capacity / 2 |
//! | `scale` | capacity multiplier keeping ratios, `1/N` or a decimal | 0 < scale ≤ 1 |
//! | `seed` | random-victim and TRIM-efficacy randomness | integer |
//! | `channels`, `dies` (per channel), `planes` | parallelism | 1 – 64, 1 – 64, 1 – 8 |
//! | `gc_reserve` | free blocks below which foreground GC runs (a scaled-down drive, unless given: × scale, at least 2; see [`scale_sizes`]) | 2 – 1024 |
//! | `idle_gc_free` | idle GC restores this fraction of the spare blocks | 0 – 1 |
//! | `trim_efficacy` | fraction of trimmed 4 KiB blocks really unmapped | 0 – 1 |
//! | `dirty_rate` | SandForce dirty state: write rate, as a fraction of clean, once all NAND holds incompressible data (1: no dirty state) | 0.05 – 1 |
//! | `frontier` | host writes and GC copies in `separate` open blocks or one `shared` block | `separate`, `shared` |
//! | `gc_high` | GC hysteresis: once the pool falls to `gc_reserve`, GC refills it to this many free blocks (0: `gc_reserve` + 1; otherwise above `gc_reserve`) | 0 – 4096 |
//! | `gc_sample` | greedy victim among this many closed blocks sampled at random (d-choices; 0: exact greedy) | 0, 2 – 256 |
//! | `compress_floor` | smallest physical/host ratio the compressor reaches | 0.01 – 1 |
//! | `t_read_us`, `t_prog_us`, `t_erase_us`, `t_prog_slc_us` | NAND array times | > 0, ≤ 100 000 |
//! | `channel_mbps`, `link_mbps`, `ctrl_mbps` | transfer caps (decimal MB/s) | 1 – 100 000 |
//! | `backend_mbps` | controller→NAND datapath, physical bytes programmed (0: none) | 0 – 100 000 |
//! | `cmd_us` | controller service time per command (IOPS cap) | 0 – 10 000 |
//! | `lat_read_us`, `lat_write_us` | fixed command latency (firmware + host stack) | 0 – 100 000 |
//! | `buffer` | write buffer bytes (host data accepted ahead of NAND) | ≥ one page |

use super::presets::{preset, preset_names};
use crate::error::{Error, Result};
use crate::units::{parse_int, parse_number, parse_scale, parse_size, parse_switch};
use serde_json::{json, Value};

/// GC victim selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcPolicy {
    Greedy,
    Fifo,
    Random,
    CostBenefit,
}

impl GcPolicy {
    pub fn name(self) -> &'static str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::Fifo => "fifo",
            GcPolicy::Random => "random",
            GcPolicy::CostBenefit => "cost-benefit",
        }
    }
}

/// NAND and controller timing, microseconds and decimal MB/s.
#[derive(Clone, Debug, PartialEq)]
pub struct Timings {
    pub t_read_us: f64,
    pub t_prog_us: f64,
    pub t_erase_us: f64,
    pub t_prog_slc_us: f64,
    pub channel_mbps: f64,
    pub link_mbps: f64,
    pub ctrl_mbps: f64,
    /// Physical (post-compression) bytes per second the controller can send to the NAND,
    /// decimal MB/s; 0: no such limit.
    pub backend_mbps: f64,
    pub cmd_us: f64,
    pub lat_read_us: f64,
    pub lat_write_us: f64,
}

/// A fully specified simulated drive.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    pub preset: String,
    pub description: String,
    pub controller: String,
    /// User-visible bytes (after `scale`).
    pub capacity_bytes: u64,
    pub op: f64,
    pub page_size: u32,
    pub pages_per_block: u32,
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes: u32,
    pub gc: GcPolicy,
    pub gc_reserve: u32,
    pub idle_gc: bool,
    pub idle_gc_free: f64,
    pub compression: bool,
    pub compress_floor: f64,
    pub slc_cache_bytes: u64,
    pub trim_efficacy: f64,
    /// SandForce dirty state: write rate once all NAND holds incompressible data, as a
    /// fraction of the clean rate (1: no dirty state).
    pub dirty_rate: f64,
    /// GC copies share the host's open block (one write frontier) instead of their own.
    pub shared_frontier: bool,
    /// Free blocks GC restores once the pool is down to `gc_reserve` (0: `gc_reserve` + 1).
    pub gc_high: u32,
    /// Greedy victim among this many random closed blocks (0: exact greedy).
    pub gc_sample: u32,
    pub buffer_bytes: u64,
    pub timings: Timings,
    pub scale: f64,
    pub seed: u64,
    /// Where each parameter comes from (parameter → sentence).
    pub sources: Vec<(String, String)>,
    /// Keys the spec string overrode.
    pub overrides: Vec<(String, String)>,
}

/// The keys a spec accepts.
pub const KEYS: &[&str] = &[
    "capacity",
    "op",
    "pages_per_block",
    "page_size",
    "gc",
    "idle_gc",
    "compression",
    "slc_cache",
    "scale",
    "seed",
    "channels",
    "dies",
    "planes",
    "gc_reserve",
    "idle_gc_free",
    "trim_efficacy",
    "dirty_rate",
    "frontier",
    "gc_high",
    "gc_sample",
    "compress_floor",
    "t_read_us",
    "t_prog_us",
    "t_erase_us",
    "t_prog_slc_us",
    "channel_mbps",
    "link_mbps",
    "ctrl_mbps",
    "backend_mbps",
    "cmd_us",
    "lat_read_us",
    "lat_write_us",
    "buffer",
];

fn bad(key: &str, v: &str, range: &str) -> Error {
    Error::InvalidValue(format!("sim key {key}={v:?} is out of range; use {range}"))
}

/// `sim key <k>`: how a spec's errors name a key.
fn field(key: &str) -> String {
    format!("sim key {key}")
}

fn num(key: &str, v: &str, lo: f64, hi: f64, lo_open: bool) -> Result<f64> {
    parse_number(&field(key), v, lo, hi, lo_open)
}

fn int(key: &str, v: &str, lo: u64, hi: u64) -> Result<u64> {
    parse_int(&field(key), v, lo, hi)
}

/// The prefix that makes a target string a simulated drive.
pub const PREFIX: &str = "sim:";

/// A `sim:` string taken apart: the preset name and its `key=value` overrides in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecParts {
    pub preset: String,
    pub keys: Vec<(String, String)>,
}

/// Splits `[sim:]<preset>[?k=v&k=v]` into its preset and keys, without checking either
/// against the presets (see [`parse_spec`] for that). Percent-decoding is not needed: values
/// are plain tokens; keys and values are trimmed and empty pairs (`&&`) skipped.
///
/// Errors with [`Error::InvalidValue`] for a pair without `=`.
pub fn split_spec(spec: &str) -> Result<SpecParts> {
    let spec = spec.strip_prefix(PREFIX).unwrap_or(spec);
    let (name, query) = spec.split_once('?').unwrap_or((spec, ""));
    let mut keys = Vec::new();
    for pair in query.split('&').filter(|p| !p.trim().is_empty()) {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            Error::InvalidValue(format!("sim key {pair:?} has no value; write key=value"))
        })?;
        keys.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(SpecParts {
        preset: name.trim().to_string(),
        keys,
    })
}

/// `sim:<preset>?k=v&...` from a preset and keys (in the order given; no `?` without keys).
///
/// Errors with [`Error::InvalidValue`] when the preset or a key or value holds one of the
/// separators `?`, `&`, `=` or is empty, since the string could not be split back.
pub fn build_spec(preset: &str, keys: &[(String, String)]) -> Result<String> {
    let clean = |what: &str, s: &str| -> Result<()> {
        if s.trim().is_empty() || s.contains(['?', '&', '=']) {
            return Err(Error::InvalidValue(format!(
                "sim {what} {s:?} cannot go into a spec; use a non-empty token without ?, & or ="
            )));
        }
        Ok(())
    };
    clean("preset", preset)?;
    let mut out = format!("{PREFIX}{}", preset.trim());
    for (i, (k, v)) in keys.iter().enumerate() {
        clean("key", k)?;
        clean(&format!("key {k} value"), v)?;
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(&format!("{}={}", k.trim(), v.trim()));
    }
    Ok(out)
}

/// A spec (with or without the `sim:` prefix) → the preset overridden by its keys, checked.
pub fn parse_spec(spec: &str) -> Result<SimConfig> {
    let parts = split_spec(spec)?;
    let name = parts.preset.as_str();
    let mut cfg = preset(name).ok_or_else(|| {
        Error::Target(format!(
            "sim:{name} is not a simulator preset; use one of {}",
            preset_names().join(", ")
        ))
    })?;
    let mut capacity_override: Option<u64> = None;
    for (k, v) in &parts.keys {
        let (k, v) = (k.as_str(), v.as_str());
        let t = &mut cfg.timings;
        match k {
            "capacity" => capacity_override = Some(parse_size(&field(k), v)?),
            "op" => cfg.op = num(k, v, 0.0, 4.0, true)?,
            "pages_per_block" => cfg.pages_per_block = int(k, v, 16, 1024)? as u32,
            "page_size" => {
                let p = parse_size(&field(k), v)?;
                if ![4096u64, 8192, 16384, 32768].contains(&p) {
                    return Err(bad(k, v, "4k, 8k, 16k or 32k"));
                }
                cfg.page_size = p as u32;
            }
            "gc" => {
                cfg.gc = match v.trim() {
                    "greedy" => GcPolicy::Greedy,
                    "fifo" => GcPolicy::Fifo,
                    "random" => GcPolicy::Random,
                    "cost-benefit" | "cost_benefit" => GcPolicy::CostBenefit,
                    _ => {
                        return Err(Error::InvalidValue(format!(
                            "sim key gc={v:?} is not a victim policy; use greedy, fifo, random or cost-benefit"
                        )))
                    }
                }
            }
            "idle_gc" => cfg.idle_gc = parse_switch(&field(k), v)?,
            "compression" => cfg.compression = parse_switch(&field(k), v)?,
            "slc_cache" => cfg.slc_cache_bytes = parse_size(&field(k), v)?,
            "scale" => cfg.scale = parse_scale(&field(k), v)?,
            "seed" => cfg.seed = int(k, v, 0, u64::MAX)?,
            "channels" => cfg.channels = int(k, v, 1, 64)? as u32,
            "dies" => cfg.dies_per_channel = int(k, v, 1, 64)? as u32,
            "planes" => cfg.planes = int(k, v, 1, 8)? as u32,
            "gc_reserve" => cfg.gc_reserve = int(k, v, 2, 1024)? as u32,
            "idle_gc_free" => cfg.idle_gc_free = num(k, v, 0.0, 1.0, false)?,
            "trim_efficacy" => cfg.trim_efficacy = num(k, v, 0.0, 1.0, false)?,
            "dirty_rate" => cfg.dirty_rate = num(k, v, 0.05, 1.0, false)?,
            "frontier" => {
                cfg.shared_frontier = match v.trim() {
                    "shared" => true,
                    "separate" => false,
                    _ => {
                        return Err(Error::InvalidValue(format!(
                            "sim key frontier={v:?} is not a frontier layout; use separate or shared"
                        )))
                    }
                }
            }
            "gc_high" => cfg.gc_high = int(k, v, 0, 4096)? as u32,
            "gc_sample" => {
                let d = int(k, v, 0, 256)? as u32;
                if d == 1 {
                    return Err(bad(k, v, "0 (exact greedy) or 2 to 256"));
                }
                cfg.gc_sample = d;
            }
            "compress_floor" => cfg.compress_floor = num(k, v, 0.01, 1.0, false)?,
            "t_read_us" => t.t_read_us = num(k, v, 0.0, 1e5, true)?,
            "t_prog_us" => t.t_prog_us = num(k, v, 0.0, 1e5, true)?,
            "t_erase_us" => t.t_erase_us = num(k, v, 0.0, 1e5, true)?,
            "t_prog_slc_us" => t.t_prog_slc_us = num(k, v, 0.0, 1e5, true)?,
            "channel_mbps" => t.channel_mbps = num(k, v, 1.0, 1e5, false)?,
            "link_mbps" => t.link_mbps = num(k, v, 1.0, 1e5, false)?,
            "ctrl_mbps" => t.ctrl_mbps = num(k, v, 1.0, 1e5, false)?,
            "backend_mbps" => t.backend_mbps = num(k, v, 0.0, 1e5, false)?,
            "cmd_us" => t.cmd_us = num(k, v, 0.0, 1e4, false)?,
            "lat_read_us" => t.lat_read_us = num(k, v, 0.0, 1e5, false)?,
            "lat_write_us" => t.lat_write_us = num(k, v, 0.0, 1e5, false)?,
            "buffer" => cfg.buffer_bytes = parse_size(&field(k), v)?,
            _ => {
                return Err(Error::InvalidValue(format!(
                    "{k:?} is not a sim key; use one of {}",
                    KEYS.join(", ")
                )))
            }
        }
        cfg.overrides.push((k.to_string(), v.to_string()));
    }
    if let Some(c) = capacity_override {
        if c % 4096 != 0 {
            return Err(Error::InvalidValue(format!(
                "sim key capacity={c} is not a multiple of the 4 KiB logical block; use a multiple of 4096 bytes"
            )));
        }
        cfg.capacity_bytes = c;
    }
    if cfg.scale < 1.0 {
        scale_sizes(&mut cfg);
    }
    validate(&cfg)?;
    Ok(cfg)
}

/// Blocks a drive keeps out of the data area on average, rounded up: the free pool as it
/// sits between collections (`gc_reserve`: GC refills to one more and the next open takes it;
/// with hysteresis, midway to `gc_high`) and half of each open write frontier (host and GC,
/// or one shared), which fill with data as it arrives. Counting whole frontiers and the
/// refilled pool gave a scaled drive ~2.4 blocks of spare the full drive lacks: steady 4 KiB
/// random-write WA 7.41 at 1/64 vs 7.68 at 1/8 (generic; 5.93 at 1/512).
fn fixed_blocks(c: &SimConfig) -> u64 {
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
fn scale_sizes(c: &mut SimConfig) {
    let s = c.scale;
    let given = |c: &SimConfig, key: &str| c.overrides.iter().any(|(k, _)| k == key);
    let block = c.block_bytes();
    let full_mlc = c.raw_blocks() - c.slc_blocks();
    let full_user = c.capacity_bytes.div_ceil(block);
    let usable_full = full_mlc.saturating_sub(full_user + fixed_blocks(c));
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
        let floor = 2 * page * (c.dies() * c.planes.max(1)) as u64;
        let scaled = ((c.buffer_bytes as f64 * s) as u64).max(floor) / page * page;
        c.buffer_bytes = scaled.min(c.buffer_bytes).max(page);
    }
    let user = c.capacity_bytes.div_ceil(block);
    let mlc = user + (usable_full as f64 * s).round() as u64 + fixed_blocks(&rule);
    if c.capacity_bytes > 0 {
        c.op = (mlc * block) as f64 / c.capacity_bytes as f64 - 1.0;
    }
    c.sources.push((
        "scale".into(),
        format!(
            "shrunk by {s}: capacity, SLC cache, GC reserve/watermark and write buffer scaled (buffer floor: 2 pages per plane); raw NAND set so the spare left for data beyond the GC pool and open blocks is {s} × the full drive's (op re-derived: {:.4})",
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

impl SimConfig {
    pub fn block_bytes(&self) -> u64 {
        self.page_size as u64 * self.pages_per_block as u64
    }
    /// 4 KiB mapping slots per erase block.
    pub fn slots_per_block(&self) -> u32 {
        self.pages_per_block * (self.page_size / 4096)
    }
    /// Most mapping entries an erase block can hold (more than its slots when compressing).
    pub fn entries_per_block(&self) -> u32 {
        if self.compression {
            self.slots_per_block() * (1.0 / self.compress_floor).ceil() as u32
        } else {
            self.slots_per_block()
        }
    }
    /// SLC-mode blocks holding `slc_cache_bytes` (each holds half its MLC capacity).
    pub fn slc_blocks(&self) -> u64 {
        if self.slc_cache_bytes == 0 {
            0
        } else {
            (self.slc_cache_bytes * 2).div_ceil(self.block_bytes())
        }
    }
    /// Erase blocks of MLC user + spare area (raw = user × (1 + op)), plus the SLC blocks.
    pub fn raw_blocks(&self) -> u64 {
        let raw = self.capacity_bytes as f64 * (1.0 + self.op);
        (raw / self.block_bytes() as f64).round() as u64 + self.slc_blocks()
    }
    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }

    /// The key parameters as JSON (presets listing and capture metadata).
    pub fn to_json(&self) -> Value {
        let t = &self.timings;
        json!({
            "name": self.preset,
            "description": self.description,
            "controller": self.controller,
            "capacity": self.capacity_bytes,
            "capacity_gb": self.capacity_bytes as f64 / 1e9,
            "op": self.op,
            "raw_bytes": self.raw_blocks() * self.block_bytes(),
            "geometry": {
                "channels": self.channels, "dies_per_channel": self.dies_per_channel,
                "planes": self.planes, "page_size": self.page_size,
                "pages_per_block": self.pages_per_block, "block_bytes": self.block_bytes(),
                "blocks": self.raw_blocks(),
            },
            "timings": {
                "t_read_us": t.t_read_us, "t_prog_us": t.t_prog_us, "t_erase_us": t.t_erase_us,
                "t_prog_slc_us": t.t_prog_slc_us, "channel_mbps": t.channel_mbps,
                "link_mbps": t.link_mbps, "ctrl_mbps": t.ctrl_mbps,
                "backend_mbps": t.backend_mbps, "cmd_us": t.cmd_us,
                "lat_read_us": t.lat_read_us, "lat_write_us": t.lat_write_us,
            },
            "features": {
                "gc": self.gc.name(), "gc_reserve": self.gc_reserve,
                "idle_gc": self.idle_gc, "idle_gc_free": self.idle_gc_free,
                "compression": self.compression, "compress_floor": self.compress_floor,
                "slc_cache": self.slc_cache_bytes, "trim_efficacy": self.trim_efficacy,
                "dirty_rate": self.dirty_rate,
                "frontier": if self.shared_frontier { "shared" } else { "separate" },
                "gc_high": self.gc_high, "gc_sample": self.gc_sample,
                "buffer": self.buffer_bytes,
            },
            "scale": self.scale,
            "seed": self.seed,
            "sources": self.sources.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "overrides": self.overrides.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn split_and_build_round_trip() {
        let p = split_spec("sim:generic?scale=1/64& op=0.07 &&gc=fifo").unwrap();
        assert_eq!(p.preset, "generic");
        assert_eq!(
            p.keys,
            kv(&[("scale", "1/64"), ("op", "0.07"), ("gc", "fifo")])
        );
        let s = build_spec(&p.preset, &p.keys).unwrap();
        assert_eq!(s, "sim:generic?scale=1/64&op=0.07&gc=fifo");
        assert_eq!(split_spec(&s).unwrap(), p);
        assert_eq!(build_spec("generic", &[]).unwrap(), "sim:generic");
        assert_eq!(split_spec("generic").unwrap().preset, "generic");
    }

    #[test]
    fn build_refuses_separators() {
        assert!(build_spec("gen?eric", &[]).is_err());
        assert!(build_spec("generic", &kv(&[("op", "1&gc=fifo")])).is_err());
        assert!(build_spec("generic", &kv(&[("", "1")])).is_err());
        assert!(split_spec("sim:generic?op").is_err());
    }

    #[test]
    fn scale_follows_the_units_rule() {
        let cfg = parse_spec("generic?scale=0.015625").unwrap();
        assert_eq!(cfg.scale, 1.0 / 64.0);
        assert_eq!(parse_spec("generic?scale=1/64").unwrap().scale, 1.0 / 64.0);
        let e = parse_spec("generic?scale=16").unwrap_err().to_string();
        assert!(e.contains("sim key scale=") && e.contains("1/16"), "{e}");
    }

    #[test]
    fn number_and_switch_errors_name_the_sim_key() {
        let e = parse_spec("generic?op=5").unwrap_err().to_string();
        assert!(e.contains("sim key op=5 is out of range"), "{e}");
        let e = parse_spec("generic?idle_gc=maybe").unwrap_err().to_string();
        assert!(
            e.contains("sim key idle_gc=") && e.contains("on or off"),
            "{e}"
        );
    }

    /// Spare blocks left for data once the GC pool and the open frontiers are set aside.
    fn usable_spare(c: &SimConfig) -> f64 {
        let user = c.capacity_bytes.div_ceil(c.block_bytes());
        (c.raw_blocks() - c.slc_blocks()) as f64 - (user + fixed_blocks(c)) as f64
    }

    #[test]
    fn every_size_scales_with_the_drive() {
        for name in [
            "intel-520-120g",
            "crucial-m4-128g",
            "intel-x25m-80g",
            "generic",
        ] {
            let full = parse_spec(name).unwrap();
            for d in [8.0, 16.0, 32.0, 64.0] {
                let c = parse_spec(&format!("{name}?scale=1/{d}")).unwrap();
                let want = usable_spare(&full) / d;
                // the spare left for data is the full drive's, scaled, to the block
                assert!(
                    (usable_spare(&c) - want).abs() <= 1.0,
                    "{name} 1/{d}: {} vs {want}",
                    usable_spare(&c)
                );
                assert_eq!(
                    c.gc_reserve,
                    ((full.gc_reserve as f64 / d).round() as u32).max(2)
                );
                let floor = 2 * c.page_size as u64 * (c.dies() * c.planes) as u64;
                assert!(c.buffer_bytes <= full.buffer_bytes);
                assert!(
                    c.buffer_bytes >= floor.min(full.buffer_bytes),
                    "{name}: buffer below its floor"
                );
                if full.buffer_bytes as f64 / d >= floor as f64 {
                    assert_eq!(
                        c.buffer_bytes,
                        (full.buffer_bytes as f64 / d) as u64 / c.page_size as u64
                            * c.page_size as u64
                    );
                }
            }
        }
        let c = parse_spec("generic?slc_cache=8g&scale=1/64").unwrap();
        assert_eq!(c.slc_cache_bytes, (8u64 << 30) / 64);
        // keys the spec gives win over the scaling rule
        let c = parse_spec("generic?gc_reserve=6&buffer=1m&scale=1/64").unwrap();
        assert_eq!((c.gc_reserve, c.buffer_bytes), (6, 1 << 20));
    }
}
