//! One flashback run from Rust, without a Python interpreter around it: the engine benchmark
//! runs it beside `fb_child.py` at psync QD1, where a run's IOPS follow wake-up latency, to tell
//! the engine's cost from the cost of the process hosting it. Built by `make bench`.
//!
//!     fb_run TARGET [--batch S/C] [--sys-root DIR] [key=value ...]
//!
//! (workload fields as in `flashback run`)
//!
//! A block device is opened with `destroy=TARGET` when the workload writes or trims, read-only
//! otherwise, as `flashback run` opens it without `--destroy` (and `t/io_uring` and fio open a
//! device they only read: `O_RDONLY`, no write guard to pass). Prints the run's meta as one
//! JSON line.
//! `--batch S/C` runs the io_uring loop handing over S entries per enter and waiting for C
//! completions (`t/io_uring -sS -cC`; the engine's default is 4/1). `--sys-root DIR` reads the
//! drive's sysfs under DIR instead of `/sys` (the telemetry bench plays a recorded drive's tree
//! beside a loop device so the sampler runs).
#![allow(clippy::unwrap_used, reason = "any failure ends the tool")]

use flashback_native::run::{Quiet, RunOptions};
use flashback_native::target::{OpenOptions, Target};
use flashback_native::workload::Workload;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((target, fields)) = args.split_first() else {
        eprintln!("usage: fb_run TARGET [key=value ...]");
        std::process::exit(2);
    };
    let mut pairs = Vec::with_capacity(fields.len());
    let mut fields = fields;
    if fields.first().is_some_and(|f| f == "--batch") {
        let parsed = fields.get(1).and_then(|v| {
            let (s, c) = v.split_once('/')?;
            Some((s.parse::<usize>().ok()?, c.parse::<usize>().ok()?))
        });
        let Some((s, c)) = parsed.filter(|&(s, c)| s > 0 && c > 0) else {
            eprintln!("fb_run: --batch takes S/C, two positive integers (e.g. 8/8)");
            std::process::exit(2);
        };
        *flashback_native::engine::BATCHES.lock().unwrap() = (s, c);
        fields = &fields[2..];
    }
    let mut opts_run = RunOptions::default();
    if fields.first().is_some_and(|f| f == "--sys-root") {
        let Some(dir) = fields.get(1) else {
            eprintln!("fb_run: --sys-root takes a directory");
            std::process::exit(2);
        };
        opts_run.sys_root = Some(dir.into());
        fields = &fields[2..];
    }
    for f in fields {
        let Some(kv) = f.split_once('=') else {
            eprintln!("fb_run: {f:?} is not key=value");
            std::process::exit(2);
        };
        pairs.push(kv);
    }
    let fail = |e: flashback_native::Error| -> ! {
        eprintln!("fb_run: {e}");
        std::process::exit(1);
    };
    let w = Workload::from_pairs(pairs).unwrap_or_else(|e| fail(e));
    let opts = OpenOptions {
        destroy: (target.starts_with("/dev/") && w.rw.is_destructive()).then(|| target.clone()),
        ..Default::default()
    };
    let mut t = Target::open(target, &opts).unwrap_or_else(|e| fail(e));
    let out = t.run(&w, &opts_run, &mut Quiet).unwrap_or_else(|e| fail(e));
    println!("{}", out.meta);
}
