use super::sizes::fixed_blocks;
use super::*;

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn split_and_build_round_trip() {
    let p = split_spec("sim:generic?scale=1/64& op=0.07 &&gc=fifo").unwrap();
    assert_eq!(p.preset, "generic");
    assert_eq!(
        p.keys,
        kv(&[("scale", "1/64"), ("op", "0.07"), ("gc", "fifo")])
    );
    let s = build_spec(&p.preset, &p.keys).unwrap();
    assert_eq!(s, "sim:generic?scale=1/64&op=0.07&gc=fifo");
    assert_eq!(split_spec(&s).unwrap(), p);
    assert_eq!(build_spec("generic", &[]).unwrap(), "sim:generic");
    assert_eq!(split_spec("generic").unwrap().preset, "generic");
}

#[test]
fn build_refuses_separators() {
    assert!(build_spec("gen?eric", &[]).is_err());
    assert!(build_spec("generic", &kv(&[("op", "1&gc=fifo")])).is_err());
    assert!(build_spec("generic", &kv(&[("", "1")])).is_err());
    assert!(split_spec("sim:generic?op").is_err());
}

#[test]
fn scale_follows_the_units_rule() {
    let cfg = parse_spec("generic?scale=0.015625").unwrap();
    assert_eq!(cfg.scale, 1.0 / 64.0);
    assert_eq!(parse_spec("generic?scale=1/64").unwrap().scale, 1.0 / 64.0);
    let e = parse_spec("generic?scale=16").unwrap_err().to_string();
    assert!(e.contains("sim key scale=") && e.contains("1/16"), "{e}");
}

#[test]
fn number_and_switch_errors_name_the_sim_key() {
    let e = parse_spec("generic?op=5").unwrap_err().to_string();
    assert!(e.contains("sim key op=5 is out of range"), "{e}");
    let e = parse_spec("generic?idle_gc=maybe").unwrap_err().to_string();
    assert!(
        e.contains("sim key idle_gc=") && e.contains("on or off"),
        "{e}"
    );
}

/// Spare blocks left for data once the GC pool and the open frontiers are set aside, in
/// 4 KiB slots (a user area ending inside a block leaves the rest of it spare).
fn usable_spare(c: &SimConfig) -> f64 {
    let user = c.capacity_bytes as f64 / c.block_bytes() as f64;
    (c.raw_blocks() - c.slc_blocks()) as f64 - user - fixed_blocks(c) as f64
}

#[test]
fn every_size_scales_with_the_drive() {
    for name in [
        "intel-520-120g",
        "crucial-m4-128g",
        "intel-x25m-80g",
        "generic",
    ] {
        let full = parse_spec(name).unwrap();
        for d in [8.0, 16.0, 32.0, 64.0] {
            let c = parse_spec(&format!("{name}?scale=1/{d}")).unwrap();
            let want = usable_spare(&full) / d;
            // the spare left for data is the full drive's, scaled, to the nearest block (the
            // user area rounded up to a block and the spare on its own gave generic at 1/64
            // 67.3 blocks for 66.6)
            assert!(
                (usable_spare(&c) - want).abs() <= 0.5,
                "{name} 1/{d}: {} vs {want}",
                usable_spare(&c)
            );
            assert_eq!(
                c.gc_reserve,
                ((full.gc_reserve as f64 / d).round() as u32).max(2)
            );
            let floor = 2 * c.page_size as u64 * (c.dies() * c.planes) as u64;
            assert!(c.buffer_bytes <= full.buffer_bytes);
            assert!(
                c.buffer_bytes >= floor.min(full.buffer_bytes),
                "{name}: buffer below its floor"
            );
            if full.buffer_bytes as f64 / d >= floor as f64 {
                assert_eq!(
                    c.buffer_bytes,
                    (full.buffer_bytes as f64 / d) as u64 / c.page_size as u64 * c.page_size as u64
                );
            }
        }
    }
    let c = parse_spec("generic?slc_cache=8g&scale=1/64").unwrap();
    assert_eq!(c.slc_cache_bytes, (8u64 << 30) / 64);
    // keys the spec gives win over the scaling rule
    let c = parse_spec("generic?gc_reserve=6&buffer=1m&scale=1/64").unwrap();
    assert_eq!((c.gc_reserve, c.buffer_bytes), (6, 1 << 20));
}
