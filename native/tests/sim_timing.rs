//! The timing model against what it should predict from first principles.
//!
//! On a NAND-bound drive (fast controller and link) writing uniform random 4 KiB blocks at QD32:
//! - fresh: each host write costs one page program (4 KiB pages), so
//!   IOPS = dies × planes / t_prog, and the free pool runs out after (N − reserve)·b host
//!   writes, i.e. at t = (N − reserve)·b / IOPS;
//! - steady state at write amplification A: each host write costs A programs, A − 1 GC reads
//!   (array read + transfer out) and A/b erases of die time, so
//!   IOPS = dies / (A·t_prog/planes + (A − 1)(t_read + t_xfer) + A·t_erase/b).

use flashback_native::run::{Quiet, RunOptions};
use flashback_native::sim::SimDrive;
use flashback_native::workload::Workload;

const T_PROG_US: f64 = 1000.0;
const T_READ_US: f64 = 50.0;
const T_ERASE_US: f64 = 3000.0;
const CH_MBPS: f64 = 400.0;
const DIES: f64 = 8.0;

fn spec(b: u32) -> String {
    let cap = 1500u64 * b as u64 * 4096;
    format!(
        "generic?capacity={cap}&op=0.25&pages_per_block={b}&page_size=4k&channels=4&dies=2&planes=1\
         &gc_reserve=2&idle_gc=off&t_prog_us={T_PROG_US}&t_read_us={T_READ_US}&t_erase_us={T_ERASE_US}\
         &channel_mbps={CH_MBPS}&cmd_us=0.5&link_mbps=5000&ctrl_mbps=5000&lat_write_us=20&buffer=256k"
    )
}

#[test]
fn fresh_iops_and_time_to_cliff_follow_the_die_budget() {
    let b = 64u32;
    let mut d = SimDrive::from_spec(&spec(b)).unwrap();
    let n = d.config().raw_blocks();
    let cap = d.size_bytes();
    let w = Workload::from_pairs([
        ("rw", "randwrite"),
        ("bs", "4k"),
        ("iodepth", "32"),
        ("random", "uniform"),
        ("written", &format!("{}", cap * 2)),
    ])
    .unwrap();
    let out = d
        .run(
            &w,
            &RunOptions {
                step: "t".into(),
                capture_path: None,
                no_recording: false,
                stream_only: false,
                overwrite_capture: false,
                sys_root: None,
            },
            &mut Quiet,
        )
        .unwrap();
    let iops_model = DIES / (T_PROG_US * 1e-6);
    let first = &out.rows[1];
    let iops = first.ios[1] as f64 / first.interval_s;
    assert!(
        (iops - iops_model).abs() / iops_model < 0.05,
        "fresh IOPS {iops} vs model {iops_model}"
    );
    let cliff = d
        .events()
        .iter()
        .find(|e| e.name == "free_pool_exhausted")
        .unwrap();
    let writes = (n - 2) as f64 * b as f64;
    let t_model = writes / iops_model;
    let t = cliff.t_ns as f64 / 1e9;
    assert!(
        (t - t_model).abs() / t_model < 0.05,
        "cliff at {t} s vs model {t_model} s"
    );
    let host_model = writes * 4096.0;
    assert!((cliff.host_written_bytes as f64 - host_model).abs() / host_model < 0.01);
}

#[test]
fn steady_iops_follows_write_amplification() {
    for b in [64u32, 128] {
        let mut d = SimDrive::from_spec(&spec(b)).unwrap();
        let cap = d.size_bytes();
        let opts = RunOptions {
            step: "t".into(),
            capture_path: None,
            no_recording: false,
            stream_only: false,
            overwrite_capture: false,
            sys_root: None,
        };
        let fill = Workload::from_pairs([("rw", "write"), ("bs", "256k")]).unwrap();
        d.run(&fill, &opts, &mut Quiet).unwrap();
        let w = Workload::from_pairs([
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("iodepth", "32"),
            ("random", "uniform"),
            ("written", &format!("{}", cap * 5)),
        ])
        .unwrap();
        let out = d.run(&w, &opts, &mut Quiet).unwrap();
        let rows = &out.rows[out.rows.len() * 2 / 3..out.rows.len() - 1];
        let (r0, r1) = (&rows[0], rows.last().unwrap());
        let (s0, s1) = (r0.sim.unwrap(), r1.sim.unwrap());
        let host = (r1.host_written_bytes - r0.host_written_bytes) as f64;
        let wa = (s1.nand_written_bytes - s0.nand_written_bytes) as f64 / host;
        let secs = r1.t_s - r0.t_s;
        let iops = host / 4096.0 / secs;
        let xfer_us = 4096.0 / CH_MBPS;
        let per_write_us =
            wa * T_PROG_US + (wa - 1.0) * (T_READ_US + xfer_us) + wa * T_ERASE_US / b as f64;
        let model = DIES / (per_write_us * 1e-6);
        eprintln!("b={b}: WA {wa:.3}, steady IOPS {iops:.0}, model {model:.0}");
        assert!(wa > 1.5, "not in GC steady state: WA {wa}");
        assert!(
            (iops - model).abs() / model < 0.05,
            "b={b}: steady IOPS {iops} vs model {model}"
        );
    }
}

#[test]
fn queue_depth_one_is_latency_bound() {
    let mut d = SimDrive::from_spec(&spec(64)).unwrap();
    let w = Workload::from_pairs([
        ("rw", "randwrite"),
        ("bs", "4k"),
        ("iodepth", "1"),
        ("time", "2s"),
    ])
    .unwrap();
    let out = d
        .run(
            &w,
            &RunOptions {
                step: "t".into(),
                capture_path: None,
                no_recording: false,
                stream_only: false,
                overwrite_capture: false,
                sys_root: None,
            },
            &mut Quiet,
        )
        .unwrap();
    // QD1: controller 0.5 us + link 4096 B at 5000 MB/s + 20 us firmware latency, buffer not full
    let per_op_us = 0.5 + 4096.0 / 5000.0 + 20.0;
    let iops = out.rows[0].ios[1] as f64;
    let model: f64 = 1e6 / per_op_us;
    // the buffer (64 pages) fills after 64 writes; then QD1 waits for programs: die-bound rate
    let die_bound = DIES / (T_PROG_US * 1e-6);
    let expect = model.min(die_bound);
    assert!(
        (iops - expect).abs() / expect < 0.05,
        "QD1 IOPS {iops} vs {expect}"
    );
}
