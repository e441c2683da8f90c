//! How much memory a simulated drive's tables take, estimated from its configuration before
//! anything is allocated, and the limit a drive is held to: a spec whose tables would not fit
//! is refused with one sentence (the estimate and the limit) instead of aborting the process
//! on a failed allocation. The big tables are then allocated fallibly, so an allocation the
//! kernel still refuses is an error too.
//!
//! The limit is [`DEFAULT_FRACTION`] of `MemAvailable` (/proc/meminfo) when the drive is
//! built, or the size in the environment variable [`LIMIT_ENV`] (e.g. `64g`).

use super::spec::SimConfig;
use crate::error::{Error, Result};
use crate::units::parse_size;

/// Environment variable overriding the limit (a size: bytes, or with k/m/g/t).
pub const LIMIT_ENV: &str = "FLASHBACK_SIM_MEMORY_LIMIT";

/// Share of `MemAvailable` one simulated drive may take by default.
pub const DEFAULT_FRACTION: f64 = 0.75;

/// Bytes per erase block outside the mapping tables: block state (16), fill counters (8),
/// close sequence (8), list position (4), free list (4), FIFO/closed list (4) and greedy
/// bucket entries (8, with up to one stale copy: 16).
const PER_BLOCK: u128 = 16 + 8 + 8 + 4 + 4 + 4 + 16;

/// Estimated bytes the drive model of `c` allocates: its tables at their largest (the
/// per-LBA unit sizes included, which appear once writes of different sizes mix).
pub fn estimate_bytes(c: &SimConfig) -> u128 {
    let n = u128::from(c.raw_blocks());
    let user_lbas = u128::from(c.capacity_bytes / 4096);
    let stride = u128::from(c.entries_per_block()).next_power_of_two();
    let levels = u128::from(c.slots_per_block()) + 1;
    let buffer_pages = u128::from((c.buffer_bytes / u64::from(c.page_size.max(1))).max(1));
    let ring = (buffer_pages + 2).next_power_of_two();
    user_lbas * (4 + 2)          // l2p, per-LBA units
        + n * stride * 4         // p2l
        + n * PER_BLOCK
        + levels * 24            // bucket headers
        + ring * 8               // write-buffer ring
        + u128::from(c.dies()) * 16
        + u128::from(c.channels) * 8
}

/// `MemAvailable` in bytes from a /proc/meminfo text.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The limit in bytes and how it was set, or `None` when nothing sets one (no
/// /proc/meminfo and no [`LIMIT_ENV`]).
pub fn limit_bytes() -> Result<Option<(u64, String)>> {
    if let Ok(v) = std::env::var(LIMIT_ENV) {
        let b = parse_size(LIMIT_ENV, &v)?;
        return Ok(Some((b, format!("set by {LIMIT_ENV}"))));
    }
    let Ok(text) = std::fs::read_to_string("/proc/meminfo") else {
        return Ok(None);
    };
    Ok(mem_available(&text).map(|avail| {
        let limit = (avail as f64 * DEFAULT_FRACTION) as u64;
        (
            limit,
            format!(
                "{:.0} % of the {} available",
                DEFAULT_FRACTION * 100.0,
                gib(u128::from(avail))
            ),
        )
    }))
}

fn gib(b: u128) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// Refuses `c` when its estimate passes `limit` (bytes; `how` says where the limit comes
/// from), in one sentence.
pub fn check_against(c: &SimConfig, limit: u64, how: &str) -> Result<()> {
    let need = estimate_bytes(c);
    if need <= u128::from(limit) {
        return Ok(());
    }
    Err(Error::InvalidValue(format!(
        "the simulated drive {} needs an estimated {} ({need} bytes) for its tables, more than the limit of {} ({how}); use a smaller capacity (scale=), buffer= or a larger compress_floor=, or raise {LIMIT_ENV}",
        c.preset,
        gib(need),
        gib(u128::from(limit))
    )))
}

/// Refuses `c` when its estimate passes the limit ([`limit_bytes`]).
pub fn check(c: &SimConfig) -> Result<()> {
    match limit_bytes()? {
        Some((limit, how)) => check_against(c, limit, &how),
        None => Ok(()),
    }
}

fn alloc_error(what: &str, bytes: u128) -> Error {
    Error::InvalidValue(format!(
        "could not allocate {} for the simulated drive's {what}; use a smaller capacity (scale=), buffer= or a larger compress_floor=",
        gib(bytes)
    ))
}

/// `n` copies of `v`, or an error naming the table when the memory cannot be had.
pub fn try_filled<T: Copy>(what: &str, n: usize, v: T) -> Result<Vec<T>> {
    let mut out: Vec<T> = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| alloc_error(what, n as u128 * std::mem::size_of::<T>() as u128))?;
    out.resize(n, v);
    Ok(out)
}

/// `n` zeros, allocated zeroed (calloc: pages the drive never touches stay unbacked), or an
/// error naming the table when the memory cannot be had.
pub fn try_zeroed<T: Zeroable>(what: &str, n: usize) -> Result<Vec<T>> {
    let bytes = n as u128 * std::mem::size_of::<T>() as u128;
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| alloc_error(what, bytes))?;
    // SAFETY: the layout has a non-zero size (n > 0, T is not zero-sized).
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        return Err(alloc_error(what, bytes));
    }
    // SAFETY: p was allocated by the global allocator with the layout of [T; n]; all-zero
    // bytes are a valid T (Zeroable), so all n elements are initialised.
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// Types for which all-zero bytes are a valid value.
///
/// # Safety
/// Implement only for plain integers.
pub unsafe trait Zeroable: Copy {}
// SAFETY: integers are valid for every bit pattern.
unsafe impl Zeroable for u32 {}
// SAFETY: as above.
unsafe impl Zeroable for u64 {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::parse_spec;

    #[test]
    fn reads_mem_available() {
        let t = "MemTotal: 100 kB\nMemFree: 5 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(mem_available(t), Some(2 << 20));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }

    /// Issue 23 item 13: `buffer=1p` built a 2^36-entry ring (512 GiB) and aborted.
    #[test]
    fn a_petabyte_write_buffer_is_refused_before_allocating() {
        let c = parse_spec("generic?buffer=1p").unwrap();
        assert!(estimate_bytes(&c) > 1 << 39, "{}", estimate_bytes(&c));
        let e = check_against(&c, 64 << 30, "test").unwrap_err();
        assert!(matches!(e, Error::InvalidValue(_)), "{e}");
        let m = e.to_string();
        assert!(
            m.contains("needs an estimated") && m.contains("limit of 64.0 GiB"),
            "{m}"
        );
        // the ordinary spec fits well under it
        let c = parse_spec("generic").unwrap();
        assert!(check_against(&c, 64 << 30, "test").is_ok());
    }

    #[test]
    fn compression_at_its_floor_multiplies_the_reverse_map() {
        let plain = parse_spec("generic").unwrap();
        let packed = parse_spec("generic?compression=on&compress_floor=0.01").unwrap();
        assert!(estimate_bytes(&packed) > 50 * estimate_bytes(&plain) / 2);
    }

    #[test]
    fn an_allocation_that_cannot_be_had_is_an_error_not_an_abort() {
        let e = try_zeroed::<u64>("test table", usize::MAX / 16).unwrap_err();
        assert!(e.to_string().contains("test table"), "{e}");
        let e = try_filled::<u32>("test table", usize::MAX / 8, 7).unwrap_err();
        assert!(e.to_string().contains("could not allocate"), "{e}");
        assert_eq!(try_zeroed::<u32>("t", 3).unwrap(), vec![0, 0, 0]);
    }
}
