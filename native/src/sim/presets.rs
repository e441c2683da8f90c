//! The drives the reviews tested, as simulator configurations, each parameter with its source.
//!
//! Geometry and capacities come from the manufacturers' product specifications and the
//! reviews' descriptions; NAND array times are typical datasheet values for the flash
//! generation each drive used (IMFT 34/25/20 nm MLC); the few parameters no public document
//! gives (controller command time, fixed latencies, write buffer, TRIM efficacy, idle-GC
//! watermark) are fitted with `flashback.sim.calibrate` (see `toolkit/flashback/sim/`)
//! against the reviews' published numbers; their `sources` entries say so and name the target.
//!
//! A preset is the full-size drive; `scale=` shrinks it by one rule (`spec::scale_sizes`):
//! capacity, SLC cache, GC reserve and watermark and the write buffer scale with it, and the
//! raw NAND keeps the spare left for data in proportion. What cannot scale is said there and in
//! each scaled drive's `sources["scale"]` (and each drive's `sources["sizes"]` says what its
//! buffer, GC pool and erase block are at its scale, and which sat at a floor): page and block size, dies, channels and planes (the
//! NAND's and controller's structure), timings, the erase-ahead pool per die, the GC pool's
//! two-block minimum, and the write buffer below two pages per plane of every die (the SF-2281
//! presets' 512 KiB buffer is already at that floor for 16 dies × 2 planes of 8 KiB pages, so it
//! does not shrink at any scale).
//!
//! Every preset also exists with a `-op25` suffix: the same drive with 25 % over-provisioning
//! (what AnandTech simulates by leaving part of the drive unpartitioned).

use super::spec::{GcPolicy, SimConfig, Timings};

const SATA3_MBPS: f64 = 560.0; // 6 Gb/s, 8b/10b → 600 MB/s raw; ~560 MB/s payload after FIS overhead
const SATA2_MBPS: f64 = 280.0; // 3 Gb/s → 300 MB/s raw; ~280 MB/s payload

const SRC_SATA3: &str =
    "SATA 6 Gb/s link: 600 MB/s after 8b/10b, ~560 MB/s payload (SATA 3.0 spec)";
const SRC_SATA2: &str =
    "SATA 3 Gb/s link: 300 MB/s after 8b/10b, ~280 MB/s payload (SATA 2.6 spec)";
const SRC_25NM: &str = "typical datasheet values of IMFT 25 nm 64 Gbit MLC (8 KiB page, 256 pages/block, 2 planes; tR ~50-75 us, tPROG ~1.3 ms, tBERS ~3 ms)";
const SRC_20NM: &str = "typical datasheet values of IMFT 20 nm 64 Gbit MLC (16 KiB page, 256 pages/block, 2 planes; tR ~75 us, tPROG ~1.6 ms, tBERS ~3 ms)";
const SRC_34NM: &str = "typical datasheet values of IMFT 34 nm 32 Gbit MLC (4 KiB page, 128 pages/block, 2 planes; tR ~50 us, tPROG ~0.9 ms, tBERS ~2 ms)";
const SRC_SF: &str = "SandForce SF-2281: 8 channels, no DRAM, DuraWrite compression, RAISE parity; compression floor from SandForce's published 0.5x-0.1x DuraWrite range";

/// SF-2281 dirty state: write rate once all NAND holds incompressible data, as a fraction of
/// clean, fitted once off-replay (`flashback.sim.dirty_rate.fit_dirty_rate`).
const SF2281_DIRTY_RATE: f64 = 0.691;
const SRC_SF_DIRTY: &str = "fitted off-replay: flashback.sim.dirty_rate.fit_dirty_rate() = 0.691 on two sources no replay reproduces (figures from issue #15's text; the seeds do not quote them): ComputerBase's Intel SSD 530 240GB test, incompressible sequential write 303 MB/s clean -> 241.5 MB/s dirty (0.797), and AnandTech's OCZ Vertex 3 120GB TRIM page, AS-SSD 162.1 MB/s clean, 38.3 after torture, 101.5 after TRIM (0.626); residuals -13 % and +10 %, the two sources disagree by that much. Mechanism (documented by AnandTech's SF-1200 and Vertex 3 TRIM pages and seed 003: after incompressible writes fill the drive, TRIM does not bring SandForce back to its clean rate): once all NAND has been written with incompressible data, incompressible writes run at 55-90 % of clean and TRIM does not restore them; rewriting with compressible data or a secure erase does (model: native/src/sim/dirty.rs). The replays of seeds 001-003 predict their after-TRIM numbers from it";

/// The SF-2281's NAND-side datapath (physical bytes after DuraWrite), fitted once.
const SF2281_BACKEND_MBPS: f64 = 315.1;
const SRC_SF_BACKEND: &str = "fitted: SF-2281 drives write incompressible data at ~300-315 MB/s at any queue depth however much NAND they have (AnandTech seed 003: SSD 530 240GB 315.1 MB/s clean AS-SSD, 16 MiB QD1), while 32 dies of 20 nm MLC could program ~650 MB/s; the replayed clean AS-SSD write equals backend_mbps (no other stage binds), so it is set to the published 315.1 MB/s (check: flashback.sim.calibrate.evaluate with TARGETS['intel-530-240g']); smaller drives (16 dies, e.g. the 520 120GB) stay NAND-bound below it";

fn timings_25nm(link: f64) -> Timings {
    Timings {
        t_read_us: 60.0,
        t_prog_us: 1300.0,
        t_erase_us: 3000.0,
        t_prog_slc_us: 400.0,
        channel_mbps: 166.0,
        link_mbps: link,
        ctrl_mbps: 520.0,
        backend_mbps: 0.0,
        cmd_us: 12.0,
        lat_read_us: 90.0,
        lat_write_us: 40.0,
    }
}

#[allow(clippy::too_many_arguments, reason = "one preset table row")]
fn base(
    name: &str,
    description: &str,
    controller: &str,
    capacity: u64,
    op: f64,
    page: u32,
    ppb: u32,
    channels: u32,
    dies: u32,
    t: Timings,
) -> SimConfig {
    SimConfig {
        preset: name.into(),
        description: description.into(),
        controller: controller.into(),
        capacity_bytes: capacity,
        op,
        page_size: page,
        pages_per_block: ppb,
        channels,
        dies_per_channel: dies,
        planes: 2,
        gc: GcPolicy::Greedy,
        gc_reserve: 8,
        idle_gc: true,
        idle_gc_free: 0.5,
        compression: false,
        compress_floor: 0.08,
        slc_cache_bytes: 0,
        trim_efficacy: 1.0,
        dirty_rate: 1.0,
        shared_frontier: false,
        gc_high: 0,
        gc_sample: 0,
        buffer_bytes: 1 << 20,
        timings: t,
        scale: 1.0,
        seed: 1,
        sources: vec![
            ("features.frontier".into(), "separate (default): no source says whether the reviewed controllers write GC copies and host data to one open block; frontier=shared (one write frontier) is what makes TRIM efficacy show in a pass that rewrites the previous pass's blocks (tests/test_sim.py)".into()),
            ("features.gc_high/gc_sample".into(), "0/0 (default: GC frees one block at a time, exact greedy victims): no source gives the reviewed controllers' free-block watermarks or victim sampling; gc_high > gc_reserve adds hysteresis, gc_sample = d picks d-choices victims (native/tests/sim_wa.rs, tests/test_sim.py)".into()),
        ],
        overrides: vec![],
    }
}

fn src(c: &mut SimConfig, pairs: &[(&str, &str)]) {
    for (k, v) in pairs {
        c.sources.push((k.to_string(), v.to_string()));
    }
}

/// 120,034,123,776 bytes: IDEMA LBA count of a 120 GB drive (234,441,648 sectors).
const CAP_120G: u64 = 120_034_123_776;
const CAP_128G: u64 = 128_035_676_160;
const CAP_180G: u64 = 180_045_766_656;
const CAP_240G: u64 = 240_057_409_536;
const CAP_80G: u64 = 80_026_361_856;
const GIB: f64 = 1073741824.0;

fn op_of(raw_gib: f64, user: u64) -> f64 {
    raw_gib * GIB / user as f64 - 1.0
}

fn sandforce(
    name: &str,
    description: &str,
    capacity: u64,
    raw_gib: f64,
    dies_per_ch: u32,
    nm20: bool,
) -> SimConfig {
    let mut t = timings_25nm(SATA3_MBPS);
    let (page, nm) = if nm20 {
        (16384, SRC_20NM)
    } else {
        (8192, SRC_25NM)
    };
    if nm20 {
        t.t_read_us = 75.0;
        t.t_prog_us = 1600.0;
    }
    let mut c = base(
        name,
        description,
        "SandForce SF-2281",
        capacity,
        op_of(raw_gib, capacity),
        page,
        256,
        8,
        dies_per_ch,
        t,
    );
    c.compression = true;
    c.compress_floor = 0.08;
    c.buffer_bytes = 512 << 10;
    c.trim_efficacy = 0.9;
    c.dirty_rate = SF2281_DIRTY_RATE;
    c.idle_gc = false;
    c.timings.backend_mbps = SF2281_BACKEND_MBPS;
    src(&mut c, &[
        ("capacity", "manufacturer's user capacity (IDEMA LBA count)"),
        ("op", "raw NAND (GiB) over user capacity; SF-2281 keeps the rest as spare + RAISE parity"),
        ("geometry", nm),
        ("controller", SRC_SF),
        ("timings.t_read_us/t_prog_us/t_erase_us", nm),
        ("timings.channel_mbps", "ONFI 2.x synchronous interface, ~166 MT/s per channel"),
        ("timings.link_mbps", SRC_SATA3),
        ("timings.ctrl_mbps", "SF-2281 sequential write spec with compressible data (~500-520 MB/s)"),
        ("timings.backend_mbps", SRC_SF_BACKEND),
        ("timings.cmd_us", "SF-2281 random-write IOPS spec (~80k 4 KiB IOPS) → ~12 us per command"),
        ("timings.lat_read_us/lat_write_us", "assumed: typical QD1 command latency of SATA SSDs of the era (not fitted yet; the X-bit review (seed 003) gives QD1 results only as charts)"),
        ("features.compression", "DuraWrite inline compression (SandForce product brief)"),
        ("features.trim_efficacy", "assumed 0.9, not fitted: AnandTech (seed 003) reports that SandForce TRIM does not restore full speed after incompressible torture (183 → 193 vs 315 MB/s clean); in the model that loss is the dirty state (features.dirty_rate), which holds whatever trim_efficacy is"),
        ("features.dirty_rate", SRC_SF_DIRTY),
        ("features.idle_gc", "off: X-bit (seed 002) finds SandForce drives 'getting slower in use due to poor algorithms of garbage collection ... with any firmware' and recommends them only with TRIM; AnandTech (seed 003) measures the SSD 530 at 183.3 MB/s after torture with no recovery between steps. No source gives a SandForce idle-GC rate, so none is modelled (idle time does not restore it); an unreported idle gap can then not move the after-torture numbers"),
    ]);
    c.sources.push((
        "features.buffer".into(),
        format!(
            "SF-2281 has no external DRAM: an on-chip write buffer of {} KiB assumed (no source gives its size); a fixed structure of the controller, it does not shrink with scale= (sources[\"sizes\"] says when it is at or under the simulator's floor)",
            c.buffer_bytes / 1024
        ),
    ));
    c
}

fn all() -> Vec<SimConfig> {
    let mut v = vec![];

    let mut c = sandforce(
        "intel-520-120g",
        "Intel SSD 520 120GB (SF-2281, 25 nm IMFT MLC), the Puget CDM-loop drive",
        CAP_120G,
        128.0,
        2,
        false,
    );
    c.timings.t_prog_us = 1358.0;
    c.timings.ctrl_mbps = 502.6;
    src(&mut c, &[
        ("observed", "Puget (seed 000): ~193 MB/s incompressible seq write max, ~500 MB/s compressible; drop after ~40 GB written; level from ~380 GB"),
        ("fitted", "t_prog_us=1358 and ctrl_mbps=502.6 fitted by flashback.sim.calibrate(TARGETS['intel-520-120g'], scale 1/64, 22 evaluations) to Puget's 193.3 MB/s incompressible and 500 MB/s compressible sequential writes; re-checked after erase-ahead and cut-through programs: 193.1 MB/s at 1 MiB QD1 (-0.1 %), so kept"),
    ]);
    v.push(c);

    let mut c = sandforce(
        "intel-330-120g",
        "Intel SSD 330 120GB (SF-2281, 25 nm IMFT MLC)",
        CAP_120G,
        128.0,
        2,
        false,
    );
    c.timings.cmd_us = 14.0;
    c.timings.t_prog_us = 1358.0; // same NAND as the 520 120GB: its fitted value
    src(&mut c, &[("observed", "X-bit (seed 002): 15 % slower after degradation at QD32 (vs 10 % for the 335)"), ("choice", "120 GB chosen among the 330's 60/120/180/240 GB models: same NAND as the 520 120GB")]);
    v.push(c);

    let mut c = sandforce(
        "intel-335-240g",
        "Intel SSD 335 240GB (SF-2281, 20 nm IMFT MLC)",
        CAP_240G,
        256.0,
        4,
        true,
    );
    src(&mut c, &[("observed", "X-bit (seed 002): 10 % slower at QD32 after degradation; AnandTech (seed 003): reaches steady state about twice as early as the 530")]);
    v.push(c);

    let mut c = sandforce(
        "intel-530-240g",
        "Intel SSD 530 240GB (SF-2281, 20 nm IMFT MLC)",
        CAP_240G,
        256.0,
        4,
        true,
    );
    src(&mut c, &[
        ("observed", "AnandTech (seed 003): AS-SSD incompressible seq write 315.1 MB/s clean, 183.3 after 60 min 4K QD32 torture, 193.3 after TRIM"),
        ("timings.t_prog_us", "datasheet 1600 us (SRC_20NM); an earlier fit to 1438 us fitted a timing artifact (programs waited for a 16 MiB command's last byte)"),
        ("not fitted", "trim_efficacy keeps the SandForce default; the after-TRIM pass (193.3 MB/s) is predicted by the dirty state fitted off-replay (features.dirty_rate), not fitted to it"),
    ]);
    v.push(c);

    let mut c = sandforce(
        "ocz-vertex3-120g",
        "OCZ Vertex 3 120GB (SF-2281, 25 nm IMFT MLC)",
        CAP_120G,
        128.0,
        2,
        false,
    );
    c.trim_efficacy = 0.8;
    // As for the SSD 530 (SRC_SF_BACKEND), the clean incompressible rate is the backend's; here it
    // is taken from a source no replay reproduces, so BeHardware's 161 MB/s is a prediction.
    c.timings.backend_mbps = 162.1;
    src(&mut c, &[
        ("observed", "BeHardware (seed 001): new seq write 161 MB/s dropping to 142/132 after 9.4 GB; 48.3 MB/s used; ~130 after TRIM; random-write dip after 13.5 GB"),
        ("timings.backend_mbps", "fitted off-replay: AnandTech's OCZ Vertex 3 120GB review, TRIM page, AS-SSD incompressible sequential write 162.1 MB/s clean (figure from issue #15's text; the seeds do not quote it); the SF-2281 writes incompressible data at one rate at any queue depth (SRC_SF_BACKEND), and without this cap the 16-die 120 GB model ran NAND-bound at ~203 MB/s. BeHardware's 161 MB/s (seed 001, replayed) is then predicted, not fitted"),
    ]);
    v.push(c);

    let mut t = timings_25nm(SATA3_MBPS);
    t.ctrl_mbps = 600.0;
    t.cmd_us = 10.0;
    t.lat_write_us = 35.0;
    t.lat_read_us = 60.0;
    let mut c = base(
        "crucial-m4-128g",
        "Crucial m4 128GB (Marvell 88SS9174, 25 nm IMFT MLC)",
        "Marvell 88SS9174-BLD2",
        CAP_128G,
        op_of(128.0, CAP_128G),
        8192,
        256,
        8,
        2,
        t,
    );
    c.buffer_bytes = 4 << 20;
    src(&mut c, &[
        ("capacity", "manufacturer's user capacity (IDEMA LBA count)"),
        ("op", "128 GiB raw NAND for 128 GB user: ~7.4 % spare"),
        ("geometry", SRC_25NM),
        ("timings.t_read_us/t_prog_us/t_erase_us", SRC_25NM),
        ("timings.link_mbps", SRC_SATA3),
        ("timings.cmd_us", "Marvell 88SS9174 class random IOPS (~40-50k 4 KiB) with firmware 0009"),
        ("features.buffer", "256 MB DRAM mostly holds the map; a few MiB of write buffer assumed"),
        ("observed", "BeHardware (seed 001): random-write dip after 90 s / 6.4 GB into a 10 GB span; seq write after random drops to 83.1 MB/s; TRIM restores"),
    ]);
    v.push(c);

    let mut t = timings_25nm(SATA3_MBPS);
    t.t_read_us = 50.0;
    t.t_prog_us = 900.0;
    t.t_erase_us = 2000.0;
    t.ctrl_mbps = 500.0;
    t.cmd_us = 12.0;
    t.lat_write_us = 35.0;
    t.lat_read_us = 60.0;
    let mut c = base(
        "intel-510-120g",
        "Intel SSD 510 120GB (Marvell 88SS9174, 34 nm IMFT MLC)",
        "Marvell 88SS9174-BKK2",
        CAP_120G,
        op_of(128.0, CAP_120G),
        4096,
        128,
        8,
        4,
        t,
    );
    c.buffer_bytes = 4 << 20;
    src(&mut c, &[
        ("capacity", "manufacturer's user capacity (IDEMA LBA count)"),
        ("op", "128 GiB raw NAND for 120 GB user"),
        ("geometry", SRC_34NM),
        ("timings.t_read_us/t_prog_us/t_erase_us", SRC_34NM),
        ("timings.link_mbps", SRC_SATA3),
        ("observed", "BeHardware (seed 001): random-write dip after 60 s / 3.9 GB into a 10 GB span; seq write after random drops to 120 MB/s; TRIM restores"),
    ]);
    v.push(c);

    let mut t = timings_25nm(SATA2_MBPS);
    t.ctrl_mbps = 270.0;
    t.cmd_us = 20.0;
    t.lat_write_us = 45.0;
    t.lat_read_us = 60.0;
    let mut c = base(
        "intel-320-120g",
        "Intel SSD 320 120GB (Intel PC29AS21BA0, 25 nm IMFT MLC)",
        "Intel PC29AS21BA0",
        CAP_120G,
        op_of(128.0, CAP_120G),
        8192,
        256,
        10,
        2,
        t,
    );
    c.buffer_bytes = 4 << 20;
    src(&mut c, &[
        ("capacity", "manufacturer's user capacity (IDEMA LBA count)"),
        ("op", "128 GiB raw NAND (spare + XOR parity) for 120 GB user"),
        ("geometry", "10-channel Intel controller; NAND per SRC_25NM"),
        ("timings.t_read_us/t_prog_us/t_erase_us", SRC_25NM),
        ("timings.link_mbps", SRC_SATA2),
        ("observed", "BeHardware (seed 001): least affected drive; random-write dip only after 210 s / 7.59 GB into a 10 GB span"),
    ]);
    v.push(c);

    let mut t = timings_25nm(SATA2_MBPS);
    t.t_read_us = 50.0;
    t.t_prog_us = 900.0;
    t.t_erase_us = 2000.0;
    t.ctrl_mbps = 250.0;
    t.cmd_us = 25.0;
    t.lat_write_us = 50.0;
    t.lat_read_us = 60.0;
    let mut c = base(
        "intel-x25m-80g",
        "Intel X25-M G2 80GB (Intel PC29AS21BA0, 34 nm IMFT MLC)",
        "Intel PC29AS21BA0",
        CAP_80G,
        op_of(80.0, CAP_80G),
        4096,
        128,
        10,
        2,
        t,
    );
    c.buffer_bytes = 2 << 20;
    c.idle_gc = false;
    src(
        &mut c,
        &[
            ("capacity", "manufacturer's user capacity (IDEMA LBA count)"),
            ("op", "80 GiB raw NAND for 80 GB user: ~7.4 % spare"),
            ("geometry", SRC_34NM),
            ("timings.t_read_us/t_prog_us/t_erase_us", SRC_34NM),
            ("timings.link_mbps", SRC_SATA2),
            (
                "features.idle_gc",
                "pre-TRIM firmware era: no idle-time GC assumed",
            ),
            (
                "observed",
                "AnandTech (seed 004): 2 MB seq read 264.1 MB/s new, 230.2 MB/s used",
            ),
        ],
    );
    v.push(c);

    let t = timings_25nm(SATA3_MBPS);
    let mut c = base(
        "generic",
        "A plain client SSD: 7 % OP, no compression, no SLC cache",
        "generic",
        128_000_000_000 / 4096 * 4096,
        0.07,
        8192,
        256,
        8,
        2,
        t,
    );
    c.buffer_bytes = 4 << 20;
    src(
        &mut c,
        &[
            ("capacity", "round 128 GB"),
            ("op", "7 %: the GB-vs-GiB spare of a typical client drive"),
            ("timings", SRC_25NM),
            ("timings.link_mbps", SRC_SATA3),
        ],
    );
    v.push(c);
    let _ = CAP_180G;
    v
}

/// Preset names, including the `-op25` variants.
pub fn preset_names() -> Vec<String> {
    let base: Vec<String> = all().into_iter().map(|c| c.preset).collect();
    let mut out = base.clone();
    out.extend(base.iter().map(|n| format!("{n}-op25")));
    out
}

/// The configuration of a preset by name (`None` if unknown).
pub fn preset(name: &str) -> Option<SimConfig> {
    let (base_name, op25) = match name.strip_suffix("-op25") {
        Some(b) => (b, true),
        None => (name, false),
    };
    let mut c = all().into_iter().find(|c| c.preset == base_name)?;
    if op25 {
        // Same raw NAND, user capacity shrunk so that (raw − user)/user = 0.25.
        let raw = c.capacity_bytes as f64 * (1.0 + c.op);
        c.capacity_bytes = ((raw / 1.25) as u64) / 4096 * 4096;
        c.op = 0.25;
        c.preset = name.to_string();
        c.description = format!(
            "{} with 25 % over-provisioning (same NAND, smaller user area)",
            c.description
        );
        c.sources.push((
            "op".into(),
            "-op25 variant: user capacity reduced to raw/1.25, as AnandTech's 25 % OP partitions"
                .into(),
        ));
    }
    Some(c)
}

/// Every preset's configuration, base presets first.
pub fn all_presets() -> Vec<SimConfig> {
    preset_names().iter().filter_map(|n| preset(n)).collect()
}
