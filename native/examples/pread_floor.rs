//! The floor of a synchronous read benchmark: a bare loop of `O_DIRECT` `pread`s of `bs`
//! bytes at uniformly random aligned offsets for `seconds`, with two clock reads per I/O (as
//! any tool that measures latency needs) and nothing else — no histogram, no intervals, no
//! Python. No psync tool can sustain more IOPS than this loop on the same target, so the
//! engine benchmark runs it beside fio and flashback to tell the tool's cost from the machine's.
//! Built by `make bench`.
//!
//!     pread_floor PATH SECONDS BS
//!
//! Prints one JSON line: `{"ios": N, "duration_s": S, "lat_mean_us": L}` (L: mean time
//! inside `pread`, to compare with a tool's recorded latency).
#![allow(clippy::unwrap_used, reason = "any failure ends the tool")]

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: pread_floor PATH SECONDS BS");
        std::process::exit(2);
    }
    let seconds: f64 = args[2].parse().expect("SECONDS is a number");
    let bs: usize = args[3].parse().expect("BS is a byte count");
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&args[1])
        .expect("open the target");
    let fd = f.as_raw_fd();
    // SAFETY: lseek on an open descriptor; the size of a block device or file.
    let size = unsafe { libc::lseek(fd, 0, libc::SEEK_END) } as u64;
    let blocks = size / bs as u64;
    assert!(blocks > 0, "target smaller than one block");
    let layout = std::alloc::Layout::from_size_align(bs, 4096).unwrap();
    // SAFETY: non-zero size; leaked until exit.
    let buf = unsafe { std::alloc::alloc_zeroed(layout) };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let limit = (seconds * 1e9) as u128;
    let t0 = Instant::now();
    let mut ios = 0u64;
    let mut lat_sum = 0u128;
    loop {
        let off = rng.random_range(0..blocks) * bs as u64;
        let s = Instant::now();
        // SAFETY: `buf` holds `bs` bytes.
        let r = unsafe { libc::pread(fd, buf.cast(), bs, off as libc::off_t) };
        let e = Instant::now();
        assert_eq!(r, bs as isize, "pread at {off} failed");
        lat_sum += (e - s).as_nanos();
        ios += 1;
        if (e - t0).as_nanos() >= limit {
            break;
        }
    }
    let dur = t0.elapsed().as_secs_f64();
    println!(
        "{{\"ios\": {ios}, \"duration_s\": {dur:.6}, \"lat_mean_us\": {:.3}}}",
        lat_sum as f64 / ios as f64 / 1e3
    );
}
