//! The simulator's memory estimate against what a drive really takes: the peak resident set
//! of this test process (its own binary: no other test shares the process) while a drive is
//! built and written over twice, against `sim::memory::estimate_bytes`.
#![allow(clippy::unwrap_used, reason = "a panic is the test's report")]

mod common;

use common::opts;
use flashback_native::run::Quiet;
use flashback_native::sim::{memory, parse_spec, SimDrive};
use flashback_native::workload::Workload;

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn estimate_is_within_two_times_the_measured_peak() {
    let spec = "generic?scale=1/4";
    let est = memory::estimate_bytes(&parse_spec(spec).unwrap()) as f64;
    let before = status_kib("VmRSS:") * 1024;
    let mut d = SimDrive::from_spec(spec).unwrap();
    for (rw, bs) in [("write", "128k"), ("randwrite", "4k")] {
        let w = Workload::from_pairs([("rw", rw), ("bs", bs), ("iodepth", "32"), ("loops", "1")])
            .unwrap();
        d.run(&w, &opts(), &mut Quiet).unwrap();
    }
    let peak = (status_kib("VmHWM:") * 1024).saturating_sub(before) as f64;
    eprintln!(
        "{spec}: estimate {:.1} MiB, measured peak {:.1} MiB over the baseline",
        est / 1048576.0,
        peak / 1048576.0
    );
    assert!(
        est <= 2.0 * peak && peak <= 2.0 * est,
        "estimate {est} vs peak {peak}"
    );
}
