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
//! | `gc_reserve` | free blocks below which foreground GC runs (a scaled-down drive, unless given: × scale, at least 2; see `sizes::scale_sizes`) | 2 – 1024 |
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

mod kept;
mod sizes;
use sizes::scale_sizes;
pub use sizes::validate;

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
    let full = kept::FullSizes::of(&cfg);
    if cfg.scale < 1.0 {
        scale_sizes(&mut cfg);
    }
    let note = kept::sizes_note(&cfg, &full);
    cfg.sources.push(("sizes".into(), note));
    validate(&cfg)?;
    Ok(cfg)
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
mod tests;
