//! Turns a stream of completions into evenly spaced interval rows.
//!
//! The caller reports each completion with [`Recorder::record`] after advancing the clock with
//! [`Recorder::roll`] to the completion time, so every completion lands in the interval in
//! which it completed. Intervals without completions are emitted as zeros.

use super::row::{DriveSample, IntervalRow, LatStats, SimTruth};
use crate::workload::OpKind;
use hdrhistogram::Histogram;

/// Per-interval accumulator.
pub struct Recorder {
    interval_ns: u64,
    /// Start of the current interval, ns since the capture began.
    start_ns: u64,
    ios: [u64; 3],
    bytes: [u64; 3],
    lat_sum_ns: [u128; 2],
    lat_max_ns: [u64; 2],
    hist: [Histogram<u64>; 2],
    /// The whole run's histograms (every interval's completions merged), per direction.
    run_hist: [Histogram<u64>; 2],
    /// Per direction: the open interval's completions reach `run_hist` when it closes, in one
    /// pass over its histogram, instead of each being recorded in both ([`merge_pays`]).
    merge: [bool; 2],
    run_lat_sum_ns: [u128; 2],
    run_lat_max_ns: [u64; 2],
    /// A run of equal latencies not yet in `hist`: (kind, latency, count); recorded with one
    /// histogram call when the run ends or the interval closes.
    run: (usize, u64, u64),
    host_written: u64,
    step: String,
    last_truth: Option<SimTruth>,
    /// The drive telemetry the next rows carry (all null until a source sets it).
    drive: DriveSample,
    /// The state at the start: host bytes written, the first truth and drive sample set.
    start: IntervalRow,
    /// host / nand cumulative bytes at the end of the previous interval (for `wa`).
    prev_host: u64,
    prev_nand: u64,
}

fn new_hist() -> Histogram<u64> {
    // 3 significant digits: quantiles within 0.1 %; auto-resizing so multi-second stalls fit.
    let mut h = Histogram::new(3).expect("hdrhistogram with 3 significant digits");
    h.auto(true);
    h
}

impl Recorder {
    /// `host_written_start`: cumulative host bytes at the start (non-zero for later steps of a
    /// replay or for a simulated drive that was written before).
    pub fn new(interval_s: f64, step: &str, host_written_start: u64) -> Self {
        Recorder {
            interval_ns: crate::units::interval_ns(interval_s),
            start_ns: 0,
            ios: [0; 3],
            bytes: [0; 3],
            lat_sum_ns: [0; 2],
            lat_max_ns: [0; 2],
            hist: [new_hist(), new_hist()],
            run_hist: [new_hist(), new_hist()],
            // the first interval merges: its histograms are as small as they will be
            merge: [true; 2],
            run_lat_sum_ns: [0; 2],
            run_lat_max_ns: [0; 2],
            run: (0, 0, 0),
            host_written: host_written_start,
            step: step.to_string(),
            last_truth: None,
            drive: DriveSample::default(),
            start: IntervalRow {
                host_written_bytes: host_written_start,
                ..Default::default()
            },
            prev_host: host_written_start,
            prev_nand: 0,
        }
    }

    /// Sets the simulator truth the next rows carry (call before [`Recorder::roll`]).
    pub fn set_truth(&mut self, truth: SimTruth) {
        if self.last_truth.is_none() {
            self.prev_nand = truth.nand_written_bytes;
            self.start.sim = Some(truth);
        }
        self.last_truth = Some(truth);
    }

    /// Sets the drive telemetry the next rows carry (call before [`Recorder::roll`]); it stays
    /// until set again.
    pub fn set_drive(&mut self, sample: DriveSample) {
        if self.start.drive == DriveSample::default() {
            self.start.drive = sample;
        }
        self.drive = sample;
    }

    /// Every cumulative column's value at the start of the capture (before its first
    /// interval), for differencing: `{name: value}`, without the columns it is unknown for
    /// (the simulator's truth and drive counters are those first set).
    pub fn cumulative_start(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for c in super::columns::COLUMNS {
            if c.kind != super::columns::Kind::Cumulative {
                continue;
            }
            let v = match c.get {
                super::columns::Get::F64(g) => g(&self.start).map(|v| serde_json::json!(v)),
                super::columns::Get::U64(g) => g(&self.start).map(|v| serde_json::json!(v)),
                _ => None,
            };
            if let Some(v) = v {
                m.insert(c.name.into(), v);
            }
        }
        serde_json::Value::Object(m)
    }

    pub fn host_written_bytes(&self) -> u64 {
        self.host_written
    }

    /// End of the current interval, ns since the capture began.
    pub fn next_boundary_ns(&self) -> u64 {
        self.start_ns + self.interval_ns
    }

    /// Records one completion in the current interval.
    #[inline]
    pub fn record(&mut self, kind: OpKind, bytes: u64, latency_ns: u64) {
        self.record_all(kind, bytes, &[latency_ns]);
    }

    /// Records completions of `kind`, each of `bytes`, with latencies `latency_ns` in order,
    /// the counters added once (runs of equal latencies go to the histograms together).
    #[inline]
    pub fn record_all(&mut self, kind: OpKind, bytes: u64, latency_ns: &[u64]) {
        let k = kind as usize;
        let n = latency_ns.len() as u64;
        self.ios[k] += n;
        self.bytes[k] += n * bytes;
        if kind == OpKind::Write {
            self.host_written += n * bytes;
        }
        if k < 2 {
            for &latency_ns in latency_ns {
                self.lat_sum_ns[k] += latency_ns as u128;
                self.lat_max_ns[k] = self.lat_max_ns[k].max(latency_ns);
                let lat = latency_ns.max(1);
                if self.run.2 > 0 && self.run.0 == k && self.run.1 == lat {
                    self.run.2 += 1;
                } else {
                    self.flush_run();
                    self.run = (k, lat, 1);
                }
            }
        }
    }

    /// Records the pending run of equal latencies in its histogram.
    #[inline]
    fn flush_run(&mut self) {
        let (k, lat, n) = self.run;
        if n > 0 {
            let _ = self.hist[k].record_n(lat, n);
            if !self.merge[k] {
                let _ = self.run_hist[k].record_n(lat, n);
            }
            self.run.2 = 0;
        }
    }

    /// Closes every interval that ends at or before `now_ns`, appending rows to `out`.
    #[inline]
    pub fn roll(&mut self, now_ns: u64, out: &mut Vec<IntervalRow>) {
        while now_ns >= self.start_ns + self.interval_ns {
            let end = self.start_ns + self.interval_ns;
            out.push(self.close(end));
        }
    }

    /// Closes the last, possibly partial, interval at `now_ns` (nothing if it has no length).
    pub fn finish(&mut self, now_ns: u64, out: &mut Vec<IntervalRow>) {
        self.roll(now_ns, out);
        if now_ns > self.start_ns {
            out.push(self.close(now_ns));
        }
    }

    /// Ends a timed run whose time limit was `limit_ns` and whose last command completed at
    /// `end_ns`: the intervals before the limit close as usual, and the commands reaped after
    /// it (recorded in the last interval) stretch that interval to `end_ns`, as fio reaps what
    /// is in flight at `runtime=` and counts it, its runtime ending at the last completion.
    /// The same as [`Recorder::finish`] when `end_ns` is not past the limit.
    pub fn finish_drained(&mut self, limit_ns: u64, end_ns: u64, out: &mut Vec<IntervalRow>) {
        if end_ns <= limit_ns {
            return self.finish(end_ns, out);
        }
        self.roll(limit_ns - 1, out);
        out.push(self.close(end_ns));
    }

    fn close(&mut self, end_ns: u64) -> IntervalRow {
        self.flush_run();
        let lat = std::array::from_fn(|k| {
            let n = self.ios[k];
            (n > 0).then(|| {
                let (h, max) = (&self.hist[k], self.lat_max_ns[k]);
                LatStats {
                    mean_us: self.lat_sum_ns[k] as f64 / n as f64 / 1e3,
                    p50_us: quantile_ns(h, 0.50, max) as f64 / 1e3,
                    p99_us: quantile_ns(h, 0.99, max) as f64 / 1e3,
                    p999_us: quantile_ns(h, 0.999, max) as f64 / 1e3,
                    max_us: max as f64 / 1e3,
                }
            })
        });
        for k in 0..2 {
            self.run_lat_sum_ns[k] += self.lat_sum_ns[k];
            self.run_lat_max_ns[k] = self.run_lat_max_ns[k].max(self.lat_max_ns[k]);
            if self.merge[k] {
                // same configuration, auto-resizing: cannot fail
                let _ = self.run_hist[k].add(&self.hist[k]);
            }
            // the next interval likely completes about as many
            self.merge[k] = merge_pays(self.ios[k], &self.hist[k]);
        }
        let wa = self.last_truth.and_then(|t| {
            let dh = self.host_written - self.prev_host;
            let dn = t.nand_written_bytes.saturating_sub(self.prev_nand);
            self.prev_nand = t.nand_written_bytes;
            (dh > 0).then(|| dn as f64 / dh as f64)
        });
        self.prev_host = self.host_written;
        let row = IntervalRow {
            t_s: end_ns as f64 / 1e9,
            interval_s: (end_ns - self.start_ns) as f64 / 1e9,
            ios: self.ios,
            bytes: self.bytes,
            lat,
            host_written_bytes: self.host_written,
            step: self.step.clone(),
            sim: self.last_truth,
            wa,
            drive: self.drive,
        };
        self.start_ns = end_ns;
        self.ios = [0; 3];
        self.bytes = [0; 3];
        self.lat_sum_ns = [0; 2];
        self.lat_max_ns = [0; 2];
        for h in &mut self.hist {
            if !h.is_empty() {
                h.reset();
            }
        }
        row
    }
}

/// True when an interval of `ios` completions recorded in `h` is cheaper merged into the whole
/// run's histogram at its close ([`Histogram::add`]: one pass over every bucket `h` spans,
/// about 5 instructions each) than recorded there one run of equal latencies at a time (about
/// 37 each): from one completion per 8 buckets. The counts are the same either way.
fn merge_pays(ios: u64, h: &Histogram<u64>) -> bool {
    ios.saturating_mul(8) >= h.distinct_values() as u64
}

/// The latency at quantile `q` of `h`, never above `max_ns`, the largest latency recorded.
/// A histogram answers with the highest value its bucket stands for, up to 0.1 % above every
/// latency in that bucket; the top quantiles of a small interval land in the maximum's bucket.
fn quantile_ns(h: &Histogram<u64>, q: f64, max_ns: u64) -> u64 {
    h.value_at_quantile(q).min(max_ns)
}

/// The quantiles the whole-run summary reports, with their key suffixes.
const RUN_QUANTILES: [(f64, &str); 4] = [
    (0.50, "p50"),
    (0.99, "p99"),
    (0.999, "p999"),
    (0.9999, "p9999"),
];

impl Recorder {
    /// The whole run's latency per direction (`[read, write]`, `None` without completions):
    /// I/Os, mean, p50/p99/p99.9/p99.99 and max in µs, exact to the histogram's precision
    /// (3 significant digits; max and mean exact), and the merged histogram itself as
    /// `[latency_ns, count]` pairs in increasing latency (each latency the highest its bucket
    /// stands for, so recording the pairs into a 3-digit histogram rebuilds it exactly).
    /// Counts every completion recorded so far, including the interval still open.
    pub fn run_latency(&mut self) -> [Option<serde_json::Value>; 2] {
        self.flush_run();
        std::array::from_fn(|k| {
            // an open interval being merged at its close is not in the run's histogram yet
            let open;
            let h = if self.merge[k] && !self.hist[k].is_empty() {
                let mut whole = self.run_hist[k].clone();
                let _ = whole.add(&self.hist[k]);
                open = whole;
                &open
            } else {
                &self.run_hist[k]
            };
            let n = h.len();
            if n == 0 {
                return None;
            }
            let sum_ns = self.run_lat_sum_ns[k] + self.lat_sum_ns[k];
            let max_ns = self.run_lat_max_ns[k].max(self.lat_max_ns[k]);
            let mut m = serde_json::Map::new();
            m.insert("ios".into(), n.into());
            m.insert("mean_us".into(), (sum_ns as f64 / n as f64 / 1e3).into());
            for (q, name) in RUN_QUANTILES {
                let v = quantile_ns(h, q, max_ns) as f64 / 1e3;
                m.insert(format!("{name}_us"), v.into());
            }
            m.insert("max_us".into(), (max_ns as f64 / 1e3).into());
            let pairs: Vec<[u64; 2]> = h
                .iter_recorded()
                .map(|v| [v.value_iterated_to(), v.count_at_value()])
                .collect();
            m.insert("hist_sigfig".into(), 3.into());
            m.insert("hist_ns".into(), serde_json::json!(pairs));
            Some(serde_json::Value::Object(m))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_land_in_their_interval_and_gaps_are_zero_rows() {
        let mut r = Recorder::new(1.0, "s", 0);
        let mut out = vec![];
        r.roll(100_000_000, &mut out);
        r.record(OpKind::Write, 4096, 1000);
        r.roll(3_500_000_000, &mut out); // closes 0-1, 1-2, 2-3
        r.record(OpKind::Read, 8192, 2000);
        r.finish(3_750_000_000, &mut out);
        assert_eq!(out.len(), 4);
        assert_eq!(out[0].ios, [0, 1, 0]);
        assert_eq!(out[0].host_written_bytes, 4096);
        assert_eq!(out[1].ios, [0, 0, 0]);
        assert!(out[1].lat[1].is_none());
        assert_eq!(out[2].t_s, 3.0);
        assert_eq!(out[3].ios, [1, 0, 0]);
        assert!((out[3].interval_s - 0.75).abs() < 1e-12);
        assert_eq!(out[3].t_s, 3.75);
    }

    /// Commands reaped after a timed run's limit stay in its last interval, which ends at
    /// the last completion: no extra row, the bytes and the time both counted.
    #[test]
    fn a_drained_timed_run_stretches_its_last_interval() {
        let mut r = Recorder::new(1.0, "s", 0);
        let mut out = vec![];
        for t in [100_000_000u64, 1_500_000_000, 2_999_999_999] {
            r.roll(t, &mut out);
            r.record(OpKind::Write, 4096, 1_000);
        }
        r.finish_drained(3_000_000_000, 3_400_000_000, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].ios, [0, 1, 0]);
        assert!((out[2].interval_s - 1.4).abs() < 1e-12);
        assert!((out[2].t_s - 3.4).abs() < 1e-12);
        let mut plain = Recorder::new(1.0, "s", 0);
        let mut rows = vec![];
        plain.record(OpKind::Write, 4096, 1_000);
        plain.finish_drained(3_000_000_000, 2_500_000_000, &mut rows);
        assert_eq!(rows.len(), 3);
        assert!((rows[2].interval_s - 0.5).abs() < 1e-12);
    }

    #[test]
    fn percentiles_match_brute_force() {
        let mut r = Recorder::new(1.0, "s", 0);
        let mut lats: Vec<u64> = (0..100_000u64)
            .map(|i| 1000 + (i * 7919) % 500_000)
            .collect();
        lats.push(90_000_000); // a 90 ms stall
        for &l in &lats {
            r.record(OpKind::Write, 4096, l);
        }
        let mut out = vec![];
        r.finish(1_000_000_000, &mut out);
        lats.sort();
        let q =
            |p: f64| lats[((p * lats.len() as f64).ceil() as usize).saturating_sub(1)] as f64 / 1e3;
        let s = out[0].lat[1].unwrap();
        for (got, want) in [
            (s.p50_us, q(0.5)),
            (s.p99_us, q(0.99)),
            (s.p999_us, q(0.999)),
        ] {
            assert!((got - want).abs() / want < 0.01, "{got} vs {want}");
        }
        assert_eq!(s.max_us, 90_000.0);
    }

    /// The latency at quantile `q` of `sorted` the way a histogram counts (the smallest value
    /// with at least ceil(q·n) values at or below it), from the raw values themselves.
    fn brute_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1]
    }

    /// Per-interval percentiles come from a histogram whose buckets stand for their highest
    /// value; an interval whose slowest I/Os share the maximum's bucket reported a p99 (and a
    /// lone I/O a p50) above the interval's own maximum.
    #[test]
    fn interval_percentiles_never_exceed_the_interval_max() {
        let mut r = Recorder::new(1.0, "s", 0);
        let mut out = vec![];
        // one I/O: its bucket (512 ns wide at 1 ms) ends 446 ns above it
        r.record(OpKind::Write, 4096, 1_000_001);
        r.roll(1_000_000_000, &mut out);
        // many fast I/Os and a slow tail inside one bucket
        for i in 0..1000u64 {
            r.record(OpKind::Read, 4096, 20_000 + i);
        }
        for i in 0..20u64 {
            r.record(OpKind::Read, 4096, 5_000_000 + i);
        }
        r.finish(2_000_000_000, &mut out);
        for (row, k) in [(&out[0], 1), (&out[1], 0)] {
            let l = row.lat[k].unwrap();
            for p in [l.p50_us, l.p99_us, l.p999_us] {
                assert!(
                    p <= l.max_us,
                    "{p} µs above the interval's max {} µs",
                    l.max_us
                );
            }
        }
        assert_eq!(out[0].lat[1].unwrap().p50_us, 1000.001);
    }

    /// Busy intervals reach the whole run's histogram in one merge when they close, quiet ones
    /// one latency at a time ([`merge_pays`]); either way, and with an interval still open,
    /// the run's histogram holds exactly what one histogram fed every latency holds.
    #[test]
    fn whole_run_histogram_is_exact_whether_intervals_merge_or_record() {
        let mut r = Recorder::new(0.001, "s", 0);
        let mut out = vec![];
        let mut every = [new_hist(), new_hist()];
        let mut merged = 0;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..24u64 {
            // busy and quiet intervals in turn, reads and writes
            let n = if i % 3 == 2 { 3 } else { 4000 };
            for j in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let lat = if n == 3 {
                    5_000_000 + x % 20_000_000
                } else {
                    800 + x % 60_000
                };
                let kind = if j % 4 == 0 {
                    OpKind::Read
                } else {
                    OpKind::Write
                };
                r.record(kind, 4096, lat);
                every[kind as usize].record(lat.max(1)).unwrap();
            }
            merged += r.merge.iter().filter(|&&m| m).count();
            if i == 20 {
                // the interval is open: what it holds counts too
                let now = r.run_latency();
                for k in 0..2 {
                    let pairs: Vec<[u64; 2]> =
                        serde_json::from_value(now[k].as_ref().unwrap()["hist_ns"].clone())
                            .unwrap();
                    let want: Vec<[u64; 2]> = every[k]
                        .iter_recorded()
                        .map(|v| [v.value_iterated_to(), v.count_at_value()])
                        .collect();
                    assert_eq!(pairs, want, "open interval, direction {k}");
                }
            }
            r.roll((i + 1) * 1_000_000, &mut out);
        }
        r.finish(24_000_000, &mut out);
        assert!(merged > 10, "{merged} interval-directions merged");
        for (k, all) in every.iter().enumerate() {
            assert_eq!(r.run_hist[k].len(), all.len());
            let a: Vec<_> = r.run_hist[k]
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect();
            let b: Vec<_> = all
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect();
            assert_eq!(a, b, "direction {k}");
        }
    }

    /// The whole run's percentiles are those of every I/O of every interval together, to the
    /// histogram's precision (never below the true value, at most 1/1024 above it, never above
    /// the max); mean and max are exact; the stored pairs rebuild the same histogram.
    #[test]
    fn whole_run_latency_is_every_io_merged() {
        let mut r = Recorder::new(0.01, "s", 0);
        let mut out = vec![];
        let mut lats = vec![];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..200_000u64 {
            // xorshift: latencies from ~1 µs to ~60 ms, heavy-tailed, in 100 intervals
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lat = 1_000 + (x % 60_000_000) / (1 + (x >> 40) % 1000);
            r.roll(i * 5_000, &mut out);
            r.record(OpKind::Write, 4096, lat);
            lats.push(lat);
        }
        r.finish(1_000_000_000, &mut out);
        assert_eq!(out.len(), 100);
        let [read, write] = r.run_latency();
        assert!(read.is_none());
        let w = write.unwrap();
        lats.sort_unstable();
        let n = lats.len();
        assert_eq!(w["ios"], n as u64);
        let max = *lats.last().unwrap();
        assert_eq!(w["max_us"].as_f64().unwrap(), max as f64 / 1e3);
        let mean = lats.iter().map(|&l| l as u128).sum::<u128>() as f64 / n as f64 / 1e3;
        assert!((w["mean_us"].as_f64().unwrap() - mean).abs() < 1e-6);
        for (q, key) in [
            (0.5, "p50_us"),
            (0.99, "p99_us"),
            (0.999, "p999_us"),
            (0.9999, "p9999_us"),
        ] {
            let want = brute_quantile(&lats, q) as f64 / 1e3;
            let got = w[key].as_f64().unwrap();
            assert!(
                got >= want && got <= want * (1.0 + 1.0 / 1024.0),
                "{key}: {got} vs {want}"
            );
        }
        let pairs: Vec<[u64; 2]> = serde_json::from_value(w["hist_ns"].clone()).unwrap();
        assert_eq!(pairs.iter().map(|p| p[1]).sum::<u64>(), n as u64);
        assert!(pairs.windows(2).all(|p| p[0][0] < p[1][0]));
        let mut h = new_hist();
        for [v, c] in &pairs {
            h.record_n(*v, *c).unwrap();
        }
        assert_eq!(
            h.value_at_quantile(0.99),
            r.run_hist[1].value_at_quantile(0.99)
        );
        assert_eq!(h.len(), r.run_hist[1].len());
    }
}
