//! The CPU cost of per-interval recording per completion: `Session::record` + `tick` with
//! recording on (histograms, interval rows) and off (totals only), over 20 M synthetic
//! completions spread over 20 one-second intervals. Prints ns per completion for both.
//! Built by `make bench`; the benchmark script runs it.
#![allow(clippy::unwrap_used, reason = "any failure ends the tool")]

use flashback_native::run::{Quiet, RunOptions, Session, Status};
use flashback_native::workload::{OpKind, Workload};
use std::time::Instant;

fn cost(no_recording: bool, n: u64) -> f64 {
    let w = Workload::from_pairs([("rw", "randread")]).unwrap();
    let o = RunOptions {
        no_recording,
        ..Default::default()
    };
    let mut obs = Quiet;
    let mut s = Session::start(&w, &o, serde_json::json!({}), false, 0, &mut obs).unwrap();
    let span_ns = 20_000_000_000u64;
    let mut lat = 0x9e37_79b9u64;
    let t = Instant::now();
    for i in 0..n {
        let now = i * (span_ns / n);
        // a cheap spread of latencies between 20 µs and ~1 ms
        lat = lat
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if i % 32 == 0 {
            s.tick(now).unwrap();
        }
        s.record(OpKind::Read, 4096, 20_000 + (lat >> 44));
    }
    let el = t.elapsed().as_nanos() as f64 / n as f64;
    s.finish(span_ns, Status::Complete, serde_json::json!({}))
        .unwrap();
    el
}

fn main() {
    let n = 20_000_000;
    let _ = cost(false, n / 10); // warm up
    let on = cost(false, n);
    let off = cost(true, n);
    println!("{{\"record_ns_on\": {on:.2}, \"record_ns_off\": {off:.2}}}");
}
