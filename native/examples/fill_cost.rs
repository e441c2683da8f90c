//! Speed of the write-data generator: GB/s of `DataGen::fill` for `random` data into
//! 4096-aligned buffers of 4 KiB and 128 KiB (the sizes of the engine benchmark). Built by
//! `make bench`.
#![allow(clippy::unwrap_used, reason = "any failure ends the tool")]

use flashback_native::workload::{DataGen, DataPattern};
use std::time::Instant;

fn gbps(bs: usize, total: usize) -> f64 {
    let layout = std::alloc::Layout::from_size_align(bs * 8, 4096).unwrap();
    // SAFETY: non-zero size; freed below.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    let mut g = DataGen::new(&DataPattern::Random, 1);
    let n = total / bs;
    let t = Instant::now();
    for i in 0..n {
        // SAFETY: slot i % 8 lies inside the allocation.
        let s = unsafe { std::slice::from_raw_parts_mut(p.add((i % 8) * bs), bs) };
        g.fill(s);
    }
    let el = t.elapsed().as_secs_f64();
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(p, layout) };
    (n * bs) as f64 / el / 1e9
}

fn main() {
    let total = 2 << 30;
    let _ = gbps(4096, total / 8);
    let a = gbps(4096, total);
    let b = gbps(131072, total);
    println!("{{\"fill_gbps_4k\": {a:.2}, \"fill_gbps_128k\": {b:.2}}}");
}
