//! Simulator throughput on one core: `cargo run --release --example sim_bench -- <spec> <written> [qd] [bs] [norec]`.
//! Prints wall seconds, host ops/s and NAND page operations/s as JSON (used by tests/bench/sim.py).

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
    let mut d = SimDrive::from_spec(spec).expect("spec");
    let w = Workload::from_pairs([
        ("rw", "randwrite"),
        ("bs", bs),
        ("iodepth", qd),
        ("random", "uniform"),
        ("written", written),
    ])
    .expect("workload");
    let opts = RunOptions {
        step: "bench".into(),
        capture_path: None,
        no_recording: norec,
    };
    let t = Instant::now();
    let out = d.run(&w, &opts, &mut Quiet).expect("run");
    let dt = t.elapsed().as_secs_f64();
    let host_ops = d.host_written_bytes() as f64 / 4096.0;
    println!(
        "{{\"spec\":\"{spec}\",\"wall_s\":{dt:.3},\"host_ops_per_s\":{:.0},\"nand_ops\":{},\"nand_ops_per_s\":{:.0},\"wa\":{:.3},\"rows\":{}}}",
        host_ops / dt,
        d.nand_ops(),
        d.nand_ops() as f64 / dt,
        d.nand_written_bytes() as f64 / d.host_written_bytes() as f64,
        out.rows.len()
    );
}
