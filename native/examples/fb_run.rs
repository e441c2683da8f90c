use flashback_native::run::{Quiet, RunOptions};
use flashback_native::target::{OpenOptions, Target};
use flashback_native::workload::Workload;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut t = Target::open(
        &a[1],
        &OpenOptions {
            destroy: Some(a[1].clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let pairs: Vec<(String, String)> = a[2..]
        .iter()
        .map(|s| {
            let (k, v) = s.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    let w = Workload::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).unwrap();
    let out = t.run(&w, &RunOptions::default(), &mut Quiet).unwrap();
    println!("{}", out.meta["totals"]);
    println!("{}", out.meta["duration_s"]);
}
