//! Exact PELT for piecewise-linear segmentation: each segment of `y` is fitted by its own
//! least-squares line in `x` (a step, a ramp, or both), and the cost of a segment is its
//! residual sum of squares, O(1) from cumulative sums of `x`, `x²`, `y`, `y²` and `xy`.
//!
//! Same conventions as [`crate::pelt`] (ruptures' `Pelt`): the total of a segmentation is
//! `Σ (cost(segment) + pen)`, segments are at least `min_size` long (at least 2: a line needs
//! two points), the first minimum wins ties, and a start `t` stays admissible at `s` while
//! `F(t) + cost(t, s) + pen <= F(s) + pen`. The result lists segment end indices, the last
//! being `n`.

use crate::error::{Error, Result};
use crate::pelt::backtrack;

/// Cumulative sums of centred and scaled `x` and `y`: a segment's line fit in O(1).
struct LinSums {
    sx: Vec<f64>,
    sxx: Vec<f64>,
    sy: Vec<f64>,
    syy: Vec<f64>,
    sxy: Vec<f64>,
}

impl LinSums {
    fn new(x: &[f64], y: &[f64]) -> Self {
        let n = x.len();
        let mx = x.iter().sum::<f64>() / n.max(1) as f64;
        let my = y.iter().sum::<f64>() / n.max(1) as f64;
        let span = x
            .iter()
            .fold(0.0f64, |a, &v| a.max((v - mx).abs()))
            .max(f64::MIN_POSITIVE);
        let mut s = LinSums {
            sx: Vec::with_capacity(n + 1),
            sxx: Vec::with_capacity(n + 1),
            sy: Vec::with_capacity(n + 1),
            syy: Vec::with_capacity(n + 1),
            sxy: Vec::with_capacity(n + 1),
        };
        let (mut a, mut b, mut c, mut d, mut e) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for v in [&mut s.sx, &mut s.sxx, &mut s.sy, &mut s.syy, &mut s.sxy] {
            v.push(0.0);
        }
        for (&xi, &yi) in x.iter().zip(y) {
            let u = (xi - mx) / span;
            let w = yi - my;
            a += u;
            b += u * u;
            c += w;
            d += w * w;
            e += u * w;
            s.sx.push(a);
            s.sxx.push(b);
            s.sy.push(c);
            s.syy.push(d);
            s.sxy.push(e);
        }
        s
    }

    /// Residual sum of squares of the least-squares line over `start..end`.
    #[inline]
    fn cost(&self, start: usize, end: usize) -> f64 {
        let len = (end - start) as f64;
        let sx = self.sx[end] - self.sx[start];
        let sy = self.sy[end] - self.sy[start];
        let cxx = (self.sxx[end] - self.sxx[start]) - sx * sx / len;
        let cyy = (self.syy[end] - self.syy[start]) - sy * sy / len;
        let cxy = (self.sxy[end] - self.sxy[start]) - sx * sy / len;
        let rss = if cxx > 1e-12 * len {
            cyy - cxy * cxy / cxx
        } else {
            cyy
        };
        rss.max(0.0)
    }
}

fn check(x: &[f64], y: &[f64], pen: f64, min_size: usize) -> Result<()> {
    if x.len() != y.len() {
        return Err(Error::InvalidValue(format!(
            "x and y must have the same length, got {} and {}",
            x.len(),
            y.len()
        )));
    }
    if !pen.is_finite() || pen < 0.0 {
        return Err(Error::InvalidValue(format!(
            "PELT penalty must be a finite number >= 0, got {pen}; pass a positive penalty"
        )));
    }
    if x.len() < min_size {
        return Err(Error::InvalidValue(format!(
            "cannot segment {} points with min_size={min_size}; give at least min_size points",
            x.len()
        )));
    }
    for (name, v) in [("x", x), ("y", y)] {
        if let Some(i) = v.iter().position(|a| !a.is_finite()) {
            return Err(Error::InvalidValue(format!(
                "{name} value {i} is {}; drop or fill non-finite values before segmenting",
                v[i]
            )));
        }
    }
    if x.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::InvalidValue(
            "x must not decrease; sort the points by x before segmenting".into(),
        ));
    }
    Ok(())
}

/// Exact piecewise-linear PELT of `y` against `x` (non-decreasing). Returns the segment end
/// indices (ascending, last = `n`). `min_size` below 2 is raised to 2.
///
/// # Errors
/// [`Error::InvalidValue`] for different lengths, a non-finite value, `x` decreasing, a
/// negative or non-finite `pen`, or fewer points than `min_size`.
pub fn pelt_linear(x: &[f64], y: &[f64], pen: f64, min_size: usize) -> Result<Vec<usize>> {
    let m = min_size.max(2);
    check(x, y, pen, m)?;
    let n = x.len();
    let sums = LinSums::new(x, y);
    let mut f = vec![f64::NAN; n + 1];
    let mut prev = vec![usize::MAX; n + 1];
    f[0] = 0.0;
    let mut adm: Vec<usize> = vec![0];
    let mut values: Vec<f64> = Vec::new();
    let mut next = m; // next start to admit
    let ends = (m..n).chain(std::iter::once(n));
    for s in ends {
        while next < n && next + m <= s {
            if next >= m {
                adm.push(next);
            }
            next += 1;
        }
        values.clear();
        values.extend(adm.iter().map(|&t| f[t] + (sums.cost(t, s) + pen)));
        let (mut best, mut best_k) = (f64::INFINITY, 0);
        for (k, &v) in values.iter().enumerate() {
            if v < best {
                best = v;
                best_k = k;
            }
        }
        f[s] = best;
        prev[s] = adm[best_k];
        let bound = best + pen;
        let mut k = 0;
        adm.retain(|_| {
            let keep = values[k] <= bound;
            k += 1;
            keep
        });
    }
    Ok(backtrack(&prev, n))
}

/// Plain O(n²) optimal partitioning with the same costs (no pruning): the obviously-right
/// twin of [`pelt_linear`] for the tests.
pub fn optimal_partitioning_linear(
    x: &[f64],
    y: &[f64],
    pen: f64,
    min_size: usize,
) -> Result<Vec<usize>> {
    let m = min_size.max(2);
    check(x, y, pen, m)?;
    let n = x.len();
    let sums = LinSums::new(x, y);
    let mut f = vec![f64::INFINITY; n + 1];
    let mut prev = vec![usize::MAX; n + 1];
    f[0] = 0.0;
    for s in (m..n).chain(std::iter::once(n)) {
        for t in std::iter::once(0).chain(m..n).filter(|&t| t + m <= s) {
            let v = f[t] + (sums.cost(t, s) + pen);
            if v < f[s] {
                f[s] = v;
                prev[s] = t;
            }
        }
    }
    Ok(backtrack(&prev, n))
}

/// Residual sums of squares of a two-line fit of `y` on `x` split at every `k` in
/// `lo..=hi` (the first line over `0..k`, the second over `k..n`): the profile a
/// break-location interval is read from. O(n).
///
/// # Errors
/// As [`pelt_linear`], and [`Error::InvalidValue`] unless `2 <= lo <= hi <= n - 2`.
pub fn split_costs_linear(x: &[f64], y: &[f64], lo: usize, hi: usize) -> Result<Vec<f64>> {
    check(x, y, 0.0, 4)?;
    let n = x.len();
    if lo < 2 || hi < lo || hi + 2 > n {
        return Err(Error::InvalidValue(format!(
            "split range {lo}..={hi} must lie within 2..={}",
            n.saturating_sub(2)
        )));
    }
    let sums = LinSums::new(x, y);
    Ok((lo..=hi)
        .map(|k| sums.cost(0, k) + sums.cost(k, n))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn noise(rng: &mut Xoshiro256PlusPlus) -> f64 {
        (0..12).map(|_| rng.random::<f64>()).sum::<f64>() - 6.0
    }

    #[test]
    fn step_then_ramp_then_flat() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let n = 600;
        let x: Vec<f64> = (0..n).map(|i| i as f64 * 2.5).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| {
                let lv = if i < 200 {
                    10.0
                } else if i < 400 {
                    6.0 - 3.0 * (i - 200) as f64 / 200.0
                } else {
                    3.0
                };
                lv + 0.2 * noise(&mut rng)
            })
            .collect();
        let b = pelt_linear(&x, &y, 3.0 * 0.04 * (n as f64).ln() * 2.0, 5).unwrap();
        assert_eq!(b.len(), 3, "{b:?}");
        assert!((b[0] as i64 - 200).abs() <= 2, "{b:?}");
        assert!((b[1] as i64 - 400).abs() <= 25, "{b:?}");
    }

    #[test]
    fn equals_optimal_partitioning() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        for trial in 0..30 {
            let n = 80 + trial * 3;
            let x: Vec<f64> = (0..n).map(|i| i as f64 + rng.random::<f64>()).collect();
            let y: Vec<f64> = (0..n)
                .map(|i| (i / 25) as f64 * 1.5 + 0.02 * i as f64 + 0.4 * noise(&mut rng))
                .collect();
            let pen = 0.5 + trial as f64 * 0.2;
            assert_eq!(
                pelt_linear(&x, &y, pen, 2).unwrap(),
                optimal_partitioning_linear(&x, &y, pen, 2).unwrap(),
                "trial {trial}"
            );
        }
    }

    #[test]
    fn split_costs_match_direct_fits() {
        let x: Vec<f64> = (0..12).map(|i| (i * i) as f64).collect();
        let y: Vec<f64> = (0..12).map(|i| ((i * 7) % 5) as f64).collect();
        let c = split_costs_linear(&x, &y, 2, 10).unwrap();
        let direct = |a: usize, b: usize| {
            let (xs, ys) = (&x[a..b], &y[a..b]);
            let k = xs.len() as f64;
            let mx = xs.iter().sum::<f64>() / k;
            let my = ys.iter().sum::<f64>() / k;
            let sxx: f64 = xs.iter().map(|v| (v - mx) * (v - mx)).sum();
            let sxy: f64 = xs.iter().zip(ys).map(|(u, v)| (u - mx) * (v - my)).sum();
            let syy: f64 = ys.iter().map(|v| (v - my) * (v - my)).sum();
            syy - sxy * sxy / sxx
        };
        for (i, k) in (2..=10).enumerate() {
            assert!((c[i] - (direct(0, k) + direct(k, 12))).abs() < 1e-9, "{k}");
        }
    }

    #[test]
    fn rejects_bad_input() {
        assert!(pelt_linear(&[0.0, 1.0], &[1.0], 1.0, 2).is_err());
        assert!(pelt_linear(&[1.0, 0.0, 2.0], &[1.0, 2.0, 3.0], 1.0, 2).is_err());
        assert!(pelt_linear(&[0.0, 1.0, 2.0], &[1.0, f64::NAN, 3.0], 1.0, 2).is_err());
        assert!(pelt_linear(&[0.0, 1.0, 2.0], &[1.0, 2.0, 3.0], -1.0, 2).is_err());
    }
}
