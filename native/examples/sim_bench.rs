//! Simulator throughput on one core:
//! `cargo run --release --example sim_bench -- <spec> <written> [qd] [bs] [norec|rec] [prefill]`.
//! Prints wall and CPU seconds, host ops/s and NAND page operations/s as JSON (used by
//! tests/bench/sim.py). `prefill` bytes of the same workload are written first, untimed (to
//! time the steady state alone).

use flashback_native::run::{Quiet, RunOptions};
use flashback_native::sim::SimDrive;
use flashback_native::workload::Workload;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let spec = a.get(1).map(String::as_str).unwrap_or("generic");
    let written = a.get(2).map(String::as_str).unwrap_or("20g");
    let qd = a.get(3).map(String::as_str).unwrap_or("32");
    let bs = a.get(4).map(String::as_str).unwrap_or("4k");
    let norec = a.get(5).is_some_and(|s| s == "norec");
    let prefill = a.get(6).map(String::as_str);
    let mut d = SimDrive::from_spec(spec).expect("spec");
    let workload = |written: &str| {
        Workload::from_pairs([
            ("rw", "randwrite"),
            ("bs", bs),
            ("iodepth", qd),
            ("random", "uniform"),
            ("written", written),
        ])
        .expect("workload")
    };
    let opts = RunOptions {
        step: "bench".into(),
        capture_path: None,
        no_recording: norec,
        stream_only: false,
        overwrite_capture: false,
        sys_root: None,
    };
    if let Some(p) = prefill {
        d.run(&workload(p), &opts, &mut Quiet).expect("prefill");
    }
    let (h0, n0, nw0) = (d.host_written_bytes(), d.nand_ops(), d.nand_written_bytes());
    let c0 = cpu_s();
    let t = Instant::now();
    let out = d.run(&workload(written), &opts, &mut Quiet).expect("run");
    let dt = t.elapsed().as_secs_f64();
    let cpu = cpu_s() - c0;
    let host = d.host_written_bytes() - h0;
    let nand_ops = d.nand_ops() - n0;
    let host_ops = host as f64 / 4096.0;
    println!(
        "{{\"spec\":\"{spec}\",\"wall_s\":{dt:.3},\"cpu_s\":{cpu:.3},\"host_ops_per_s\":{:.0},\"nand_ops\":{nand_ops},\"nand_ops_per_s\":{:.0},\"nand_ops_per_cpu_s\":{:.0},\"wa\":{:.3},\"rows\":{}}}",
        host_ops / dt,
        nand_ops as f64 / dt,
        nand_ops as f64 / cpu,
        (d.nand_written_bytes() - nw0) as f64 / host as f64,
        out.rows.len()
    );
}

/// User + system CPU seconds of this process.
fn cpu_s() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}
