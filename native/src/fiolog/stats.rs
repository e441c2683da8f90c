//! Exact per-interval latency statistics of per-I/O samples, as the importer's numpy code
//! computes them, bit for bit: each interval's values sorted, scaled (`value · scale`), their
//! mean as `numpy.mean` sums them (pairwise, [`numpy_sum`]), the percentiles by fio's rule on
//! exact samples (the smallest value with at least `p·N` samples at or below it) and the
//! maximum. Intervals end at `edges[1..]`; a sample at time t belongs to the interval
//! (start, end] holding it, samples at or before `edges[0]` to the first and past the last edge
//! to the last (numpy's `searchsorted(edges, t, "left") - 1`, clipped).

use super::read::EXACT_F64;

/// One log's samples: times (ms), values, and each row's data direction (`None`: every row
/// is of the direction asked for).
pub struct Samples<'a> {
    pub t_ms: &'a [f64],
    pub value: &'a [f64],
    pub ddir: Option<&'a [i64]>,
}

/// Per-interval statistics (NaN where an interval holds no sample).
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyStats {
    pub mean: Vec<f64>,
    pub p50: Vec<f64>,
    pub p99: Vec<f64>,
    pub p999: Vec<f64>,
    pub max: Vec<f64>,
}

/// The statistics of direction `d`'s samples of all `logs` pooled, per interval of `edges`
/// (ms, ascending, at least two); `None` when a value is not an integer in [0, 2⁵³) or a time
/// is NaN (the numpy path keeps those cases).
pub fn interval_latency(
    logs: &[Samples],
    d: i64,
    edges: &[f64],
    scale: f64,
) -> Option<LatencyStats> {
    assert!(
        edges.len() >= 2,
        "interval_latency needs at least one interval"
    );
    let n = edges.len() - 1;
    let mut out = LatencyStats {
        mean: vec![f64::NAN; n],
        p50: vec![f64::NAN; n],
        p99: vec![f64::NAN; n],
        p999: vec![f64::NAN; n],
        max: vec![f64::NAN; n],
    };
    if logs.iter().any(|lg| lg.t_ms.iter().any(|t| t.is_nan())) {
        return None;
    }
    let mut scratch = Scratch::default();
    if let [one] = logs {
        if one.ddir.is_none() && one.t_ms.is_sorted() {
            // the rows of each interval are consecutive: sort them one interval at a time
            let mut start = 0;
            for (i, end) in sorted_ends(one.t_ms, edges).into_iter().enumerate() {
                if end > start {
                    scratch.load(&one.value[start..end])?;
                    scratch.stats(scale, &mut out, i);
                }
                start = end;
            }
            return Some(out);
        }
    }
    // otherwise: count each interval's rows, then place every value in its interval's run
    let mut counts = vec![0usize; n];
    for_each_row(logs, d, edges, |b, _| counts[b] += 1);
    let mut next: Vec<usize> = counts
        .iter()
        .scan(0, |acc, &c| {
            let at = *acc;
            *acc += c;
            Some(at)
        })
        .collect();
    let total: usize = counts.iter().sum();
    let mut keys = vec![0u64; total];
    let mut ok = true;
    for_each_row(logs, d, edges, |b, v| {
        ok &= exact(v);
        keys[next[b]] = v as u64;
        next[b] += 1;
    });
    if !ok {
        return None;
    }
    let mut start = 0;
    for (i, &c) in counts.iter().enumerate() {
        if c > 0 {
            scratch.keys.clear();
            scratch.keys.extend_from_slice(&keys[start..start + c]);
            scratch.stats(scale, &mut out, i);
        }
        start += c;
    }
    Some(out)
}

/// For times in ascending order: the end (exclusive row index) of each interval's rows.
fn sorted_ends(t: &[f64], edges: &[f64]) -> Vec<usize> {
    let n = edges.len() - 1;
    let mut ends: Vec<usize> = edges[1..n]
        .iter()
        .map(|&e| t.partition_point(|&x| x <= e))
        .collect();
    ends.push(t.len());
    ends
}

/// Calls `f(interval, value)` for every row of direction `d`, log by log in row order.
fn for_each_row(logs: &[Samples], d: i64, edges: &[f64], mut f: impl FnMut(usize, f64)) {
    let last = edges.len() - 2;
    for lg in logs {
        let sorted = lg.t_ms.is_sorted();
        let mut above = 0usize; // edges below the current time, when the times ascend
        for (r, (&t, &v)) in lg.t_ms.iter().zip(lg.value).enumerate() {
            if lg.ddir.is_some_and(|dd| dd[r] != d) {
                continue;
            }
            let below = if sorted {
                while above < edges.len() && edges[above] < t {
                    above += 1;
                }
                above
            } else {
                edges.partition_point(|&e| e < t)
            };
            f(below.saturating_sub(1).min(last), v);
        }
    }
}

#[inline]
fn exact(v: f64) -> bool {
    (0.0..EXACT_F64 as f64).contains(&v) && v.fract() == 0.0
}

/// Reused buffers: one interval's values as integers, the radix sort's second buffer, and the
/// scaled values.
#[derive(Default)]
struct Scratch {
    keys: Vec<u64>,
    spare: Vec<u64>,
    scaled: Vec<f64>,
}

impl Scratch {
    fn load(&mut self, values: &[f64]) -> Option<()> {
        self.keys.clear();
        for &v in values {
            if !exact(v) {
                return None;
            }
            self.keys.push(v as u64);
        }
        Some(())
    }

    /// Sorts the loaded values and writes interval `i`'s statistics.
    fn stats(&mut self, scale: f64, out: &mut LatencyStats, i: usize) {
        radix_sort(&mut self.keys, &mut self.spare);
        self.scaled.clear();
        self.scaled
            .extend(self.keys.iter().map(|&k| k as f64 * scale));
        let vv = &self.scaled;
        let m = vv.len();
        out.mean[i] = (0.0 + numpy_sum(vv)) / m as f64;
        let at = |p: f64| {
            let k = (p * m as f64 - 1e-9).ceil() as usize;
            vv[(k - 1).min(m - 1)]
        };
        out.p50[i] = at(0.5);
        out.p99[i] = at(0.99);
        out.p999[i] = at(0.999);
        out.max[i] = vv[m - 1];
    }
}

/// Sorts in place: least-significant-digit radix sort over 11-bit digits, as many as the
/// largest key needs (a digit every key shares is skipped); small inputs by comparison.
fn radix_sort(keys: &mut Vec<u64>, spare: &mut Vec<u64>) {
    const BITS: u32 = 11;
    const RADIX: usize = 1 << BITS;
    let n = keys.len();
    if n < 256 {
        keys.sort_unstable();
        return;
    }
    let top = keys.iter().copied().max().unwrap_or(0);
    let passes = (u64::BITS - top.leading_zeros()).div_ceil(BITS);
    spare.resize(n, 0);
    let mut counts = vec![0usize; RADIX];
    for pass in 0..passes {
        let shift = pass * BITS;
        counts.fill(0);
        for &k in keys.iter() {
            counts[((k >> shift) as usize) & (RADIX - 1)] += 1;
        }
        if counts.contains(&n) {
            continue;
        }
        let mut at = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = at;
            at += here;
        }
        for &k in keys.iter() {
            let b = ((k >> shift) as usize) & (RADIX - 1);
            spare[counts[b]] = k;
            counts[b] += 1;
        }
        std::mem::swap(keys, spare);
    }
}

/// numpy's pairwise summation of float64 (`DOUBLE_pairwise_sum`, what `numpy.add.reduce` and
/// so `ndarray.mean` use on a contiguous array): blocks of up to 128 summed with eight
/// accumulators, larger runs split in two at a multiple of eight.
pub fn numpy_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for (acc, &x) in r.iter_mut().zip(&a[i..i + 8]) {
                *acc += x;
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        numpy_sum(&a[..n2]) + numpy_sum(&a[n2..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The statistics the slow way: per interval, a comparison sort of its values.
    fn reference(logs: &[Samples], d: i64, edges: &[f64], scale: f64) -> LatencyStats {
        let n = edges.len() - 1;
        let mut per: Vec<Vec<u64>> = vec![Vec::new(); n];
        for lg in logs {
            for (r, (&t, &v)) in lg.t_ms.iter().zip(lg.value).enumerate() {
                if lg.ddir.is_some_and(|dd| dd[r] != d) {
                    continue;
                }
                let below = edges.iter().filter(|&&e| e < t).count();
                per[below.saturating_sub(1).min(n - 1)].push(v as u64);
            }
        }
        let mut out = LatencyStats {
            mean: vec![f64::NAN; n],
            p50: vec![f64::NAN; n],
            p99: vec![f64::NAN; n],
            p999: vec![f64::NAN; n],
            max: vec![f64::NAN; n],
        };
        let mut s = Scratch::default();
        for (i, mut vs) in per.into_iter().enumerate() {
            if !vs.is_empty() {
                vs.sort();
                s.keys = vs;
                s.stats(scale, &mut out, i);
            }
        }
        out
    }

    fn same(a: &LatencyStats, b: &LatencyStats) -> bool {
        let eq = |x: &[f64], y: &[f64]| {
            x.iter()
                .zip(y)
                .all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()))
        };
        eq(&a.mean, &b.mean)
            && eq(&a.p50, &b.p50)
            && eq(&a.p99, &b.p99)
            && eq(&a.p999, &b.p999)
            && eq(&a.max, &b.max)
    }

    #[test]
    fn radix_sort_sorts_keys_of_every_width() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for bits in [1u32, 8, 11, 12, 23, 40, 53] {
            for n in [0usize, 1, 255, 256, 5000] {
                let mut k: Vec<u64> = (0..n).map(|_| rng.random::<u64>() >> (64 - bits)).collect();
                let mut want = k.clone();
                want.sort();
                radix_sort(&mut k, &mut Vec::new());
                assert_eq!(k, want, "bits {bits} n {n}");
            }
        }
    }

    #[test]
    fn pooled_unsorted_and_one_direction_logs_agree_with_a_plain_sort() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let edges: Vec<f64> = (0..=40).map(|k| k as f64 * 25.0).collect();
        let mk = |rng: &mut Xoshiro256PlusPlus, rows: usize, sorted: bool| {
            let mut t: Vec<f64> = (0..rows)
                .map(|_| rng.random_range(0..1100) as f64)
                .collect();
            if sorted {
                t.sort_by(f64::total_cmp);
            }
            let v: Vec<f64> = (0..rows)
                .map(|_| rng.random_range(0..5_000_000) as f64)
                .collect();
            let d: Vec<i64> = (0..rows).map(|_| rng.random_range(0..2)).collect();
            (t, v, d)
        };
        let a = mk(&mut rng, 20_000, true);
        let b = mk(&mut rng, 7_000, false);
        let logs = [
            Samples {
                t_ms: &a.0,
                value: &a.1,
                ddir: Some(&a.2),
            },
            Samples {
                t_ms: &b.0,
                value: &b.1,
                ddir: Some(&b.2),
            },
        ];
        for d in [0, 1] {
            let got = interval_latency(&logs, d, &edges, 0.001).unwrap();
            assert!(same(&got, &reference(&logs, d, &edges, 0.001)));
        }
        let one = [Samples {
            t_ms: &a.0,
            value: &a.1,
            ddir: None,
        }];
        let got = interval_latency(&one, 0, &edges, 1.0).unwrap();
        assert!(same(&got, &reference(&one, 0, &edges, 1.0)));
        assert!(got.mean[40 - 1].is_finite()); // times past the last edge land in the last interval
    }

    #[test]
    fn values_that_are_not_exact_integers_are_left_to_numpy() {
        let t = [1.0, 2.0];
        for bad in [-1.0, 0.5, 9007199254740992.0, f64::NAN] {
            let v = [3.0, bad];
            let logs = [Samples {
                t_ms: &t,
                value: &v,
                ddir: None,
            }];
            assert!(interval_latency(&logs, 0, &[0.0, 10.0], 1.0).is_none());
        }
        let v = [3.0, 4.0];
        let nan_t = [1.0, f64::NAN];
        let logs = [Samples {
            t_ms: &nan_t,
            value: &v,
            ddir: None,
        }];
        assert!(interval_latency(&logs, 0, &[0.0, 10.0], 1.0).is_none());
    }

    #[test]
    fn percentiles_follow_fios_rule_on_small_intervals() {
        // 1..=1000: p50 is the 500th value, p99 the 990th, p99.9 the 999th
        let v: Vec<f64> = (1..=1000).rev().map(|x| x as f64).collect();
        let t = vec![5.0; 1000];
        let got = interval_latency(
            &[Samples {
                t_ms: &t,
                value: &v,
                ddir: None,
            }],
            0,
            &[0.0, 10.0],
            1.0,
        )
        .unwrap();
        assert_eq!(
            (got.p50[0], got.p99[0], got.p999[0], got.max[0]),
            (500.0, 990.0, 999.0, 1000.0)
        );
        assert_eq!(got.mean[0], 500.5);
    }
}
