//! SandForce's dirty state (see `native/src/sim/dirty.rs`): once all NAND has been written
//! with incompressible data the drive writes incompressible data at `dirty_rate` × its clean
//! rate, TRIM does not restore it, rewriting with compressible data or a secure erase does.
#![allow(clippy::unwrap_used, reason = "a panic is the test's report")]

mod common;

use common::opts;
use flashback_native::run::Quiet;
use flashback_native::sim::SimDrive;
use flashback_native::workload::Workload;

fn run(d: &mut SimDrive, pairs: &[(&str, &str)]) -> f64 {
    let w = Workload::from_pairs(pairs.iter().copied()).unwrap();
    let (h0, t0) = (d.host_written_bytes(), d.drive_time_s());
    d.run(&w, &opts(), &mut Quiet).unwrap();
    (d.host_written_bytes() - h0) as f64 / (d.drive_time_s() - t0) / 1e6
}

/// AS-SSD-like pass: 1/16 of the drive, 1 MiB sequential incompressible writes at QD1.
fn asssd(d: &mut SimDrive) -> f64 {
    let size = (d.size_bytes() / 16 / (1 << 20) * (1 << 20)).to_string();
    run(
        d,
        &[
            ("rw", "write"),
            ("bs", "1m"),
            ("size", &size),
            ("data", "random"),
        ],
    )
}

/// Fill, then a quarter of the drive in 4 KiB random writes (incompressible).
fn torture(d: &mut SimDrive) {
    run(
        d,
        &[
            ("rw", "write"),
            ("bs", "128k"),
            ("iodepth", "4"),
            ("data", "random"),
        ],
    );
    let w = (d.size_bytes() / 4 / 4096 * 4096).to_string();
    run(
        d,
        &[
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("iodepth", "32"),
            ("written", &w),
            ("data", "random"),
        ],
    );
}

/// (clean, after torture + TRIM of everything) pass rates.
fn clean_and_after_trim(spec: &str) -> (f64, f64, SimDrive) {
    let mut d = SimDrive::from_spec(spec).unwrap();
    let clean = asssd(&mut d);
    torture(&mut d);
    let dirty = d.config().dirty_rate < 1.0;
    assert_eq!(
        d.dirty_level() > 0.999,
        dirty,
        "dirty level {}",
        d.dirty_level()
    );
    d.discard(0, None).unwrap();
    let after = asssd(&mut d);
    (clean, after, d)
}

#[test]
fn dirty_state_survives_trim_at_its_documented_fraction() {
    // a TRIM that unmaps everything leaves the dirty state's rate, on a backend-bound
    // (240 GB) and a die-bound (120 GB) SF-2281
    for preset in ["intel-530-240g", "ocz-vertex3-120g"] {
        let spec = format!("{preset}?scale=1/128&dirty_rate=0.7&trim_efficacy=1");
        let (clean, after, _) = clean_and_after_trim(&spec);
        let r = after / clean;
        eprintln!("{spec}: clean {clean:.1} after TRIM {after:.1} ({r:.3})");
        assert!(
            (r - 0.7).abs() < 0.035,
            "{spec}: after/clean {r:.3}, want 0.70"
        );
    }
    // and a weaker TRIM only makes it worse (GC copies what stayed mapped)
    let mut last = f64::INFINITY;
    for eff in ["1", "0.5", "0"] {
        let spec = format!("intel-530-240g?scale=1/128&dirty_rate=0.7&trim_efficacy={eff}");
        let (clean, after, _) = clean_and_after_trim(&spec);
        eprintln!("{spec}: clean {clean:.1} after TRIM {after:.1}");
        assert!(
            after <= 0.72 * clean && after <= last * 1.01,
            "{spec}: {after:.1} after {last:.1}"
        );
        last = after;
    }
}

#[test]
fn without_the_dirty_state_trim_restores_a_sandforce_drive() {
    let (clean, after, _) =
        clean_and_after_trim("intel-530-240g?scale=1/128&dirty_rate=1&trim_efficacy=1");
    assert!(
        (after / clean - 1.0).abs() < 0.03,
        "clean {clean:.1} after TRIM {after:.1}"
    );
}

#[test]
fn compressible_rewrite_or_secure_erase_clears_the_dirty_state() {
    let spec = "intel-530-240g?scale=1/128&dirty_rate=0.7";
    let (clean, _, mut d) = clean_and_after_trim(spec);
    // rewriting more than the raw NAND with compressible data clears it
    let w = (d.size_bytes() * 5 / 4 / 4096 * 4096).to_string();
    run(
        &mut d,
        &[
            ("rw", "write"),
            ("bs", "1m"),
            ("data", "zeros"),
            ("written", &w),
        ],
    );
    assert_eq!(d.dirty_level(), 0.0);
    d.discard(0, None).unwrap();
    let rewritten = asssd(&mut d);
    assert!(
        (rewritten / clean - 1.0).abs() < 0.03,
        "clean {clean:.1} after compressible rewrite {rewritten:.1}"
    );
    // so does a secure erase
    torture(&mut d);
    assert!(d.dirty_level() > 0.999);
    d.sanitize().unwrap();
    assert_eq!(d.dirty_level(), 0.0);
    let erased = asssd(&mut d);
    assert!(
        (erased / clean - 1.0).abs() < 0.01,
        "clean {clean:.1} after secure erase {erased:.1}"
    );
}

#[test]
fn a_fresh_drive_is_not_dirty_before_all_nand_has_been_written() {
    // the dirty level rises with the first incompressible writes, but until GC has to recycle
    // a block every program goes to never-used NAND: the first fill runs at the clean rate
    let mut d = SimDrive::from_spec("intel-530-240g?scale=1/128&dirty_rate=0.7").unwrap();
    let clean = asssd(&mut d);
    let w = (d.size_bytes() * 3 / 4 / 4096 * 4096).to_string();
    let fill = run(
        &mut d,
        &[
            ("rw", "write"),
            ("bs", "1m"),
            ("data", "random"),
            ("written", &w),
        ],
    );
    assert!(
        d.dirty_level() > 0.6 && d.erases() == 0,
        "{} {}",
        d.dirty_level(),
        d.erases()
    );
    assert!(
        (fill / clean - 1.0).abs() < 0.02,
        "clean {clean:.1}, first fill {fill:.1}"
    );
}
