//! Exact PELT change-point search (Killick, Fearnhead & Eckley 2012) with O(1) segment costs
//! from cumulative sums.
//!
//! [`pelt_jump`] searches a grid: segment ends only at multiples of `jump` (and at `n`), as
//! ruptures' `jump` does. PELT prunes nothing on a signal without changes, so its work grows
//! as n²; the grid divides it by `jump²`. [`pelt_two_pass`] then searches again over the grid
//! plus every index near the breakpoints the grid gave.
//!
//! Follows ruptures' `Pelt` conventions exactly so that both return the same breakpoints:
//! the total of a segmentation is `Σ (cost(segment) + pen)`, segments are at least
//! `min_size` long, candidate ends are every index `min_size..n` plus `n`, the first minimum
//! (smallest start) wins ties, and a start `t` stays admissible at `s` while
//! `F(t) + cost(t, s) + pen <= F(s) + pen`. The result lists the end index of each segment,
//! the last being `n`.

use crate::error::{Error, Result};

/// Segment cost model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// Sum of squared deviations from the segment mean (ruptures' `CostL2`).
    L2,
    /// Gaussian likelihood with a change in mean and variance: `len · ln(max(var, floor))`.
    NormalMeanVar,
}

impl Cost {
    /// Parses `l2` or `normal`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "l2" => Ok(Cost::L2),
            "normal" | "normal_meanvar" => Ok(Cost::NormalMeanVar),
            other => Err(Error::InvalidValue(format!(
                "unknown native PELT cost {other:?}; use \"l2\" or \"normal\""
            ))),
        }
    }
}

/// Cumulative sums of a (centred) signal: segment cost in O(1).
struct Sums {
    s1: Vec<f64>,
    s2: Vec<f64>,
    var_floor: f64,
}

impl Sums {
    fn new(signal: &[f64]) -> Self {
        let n = signal.len();
        let mean = signal.iter().sum::<f64>() / n.max(1) as f64;
        let mut s1 = Vec::with_capacity(n + 1);
        let mut s2 = Vec::with_capacity(n + 1);
        let (mut a, mut b) = (0.0f64, 0.0f64);
        s1.push(0.0);
        s2.push(0.0);
        for &x in signal {
            let c = x - mean;
            a += c;
            b += c * c;
            s1.push(a);
            s2.push(b);
        }
        let total_var = if n > 0 { b / n as f64 } else { 0.0 };
        Sums {
            s1,
            s2,
            var_floor: (total_var * 1e-12).max(f64::MIN_POSITIVE),
        }
    }

    #[inline]
    fn l2(&self, start: usize, end: usize) -> f64 {
        let len = (end - start) as f64;
        let a = self.s1[end] - self.s1[start];
        let c = (self.s2[end] - self.s2[start]) - a * a / len;
        c.max(0.0)
    }

    #[inline]
    fn cost(&self, model: Cost, start: usize, end: usize) -> f64 {
        match model {
            Cost::L2 => self.l2(start, end),
            Cost::NormalMeanVar => {
                let len = (end - start) as f64;
                let var = self.l2(start, end) / len;
                len * var.max(self.var_floor).ln()
            }
        }
    }
}

#[derive(Default)]
struct Admissible {
    t: Vec<usize>,
    /// `t` as f64 (u64 → f64 conversion does not vectorise on baseline x86-64)
    tf: Vec<f64>,
    f: Vec<f64>,
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl Admissible {
    fn push(&mut self, t: usize, f: f64, s1: f64, s2: f64) {
        self.t.push(t);
        self.tf.push(t as f64);
        self.f.push(f);
        self.s1.push(s1);
        self.s2.push(s2);
    }

    /// Keeps the starts whose value is `<= bound` (PELT pruning), in order.
    fn retain(&mut self, values: &[f64], bound: f64) {
        // Nothing to move up to the first pruned start (often none is pruned).
        let Some(first) = values.iter().position(|&v| v > bound) else {
            return;
        };
        let mut j = first;
        for (k, &v) in values.iter().enumerate().skip(first + 1) {
            if v <= bound {
                self.t[j] = self.t[k];
                self.tf[j] = self.tf[k];
                self.f[j] = self.f[k];
                self.s1[j] = self.s1[k];
                self.s2[j] = self.s2[k];
                j += 1;
            }
        }
        self.t.truncate(j);
        self.tf.truncate(j);
        self.f.truncate(j);
        self.s1.truncate(j);
        self.s2.truncate(j);
    }
}

/// Exact PELT. Returns the segment end indices (ascending, last = `signal.len()`).
///
/// `min_size` below 1 (2 for [`Cost::NormalMeanVar`]) is raised to it, as ruptures does.
///
/// # Errors
/// [`Error::InvalidValue`] when the signal has a non-finite value, `pen` is negative or not
/// finite, or the signal is shorter than `min_size`.
pub fn pelt(signal: &[f64], pen: f64, min_size: usize, model: Cost) -> Result<Vec<usize>> {
    pelt_jump(signal, pen, min_size, 1, model)
}

/// Segment ends a search on the `jump` grid considers: multiples of `jump` from `min_size` on,
/// then `n`. Every segment start is `0` or one of these.
fn grid_ends(n: usize, min_size: usize, jump: usize) -> Vec<usize> {
    let first = min_size.div_ceil(jump) * jump;
    (first..n).step_by(jump).chain(std::iter::once(n)).collect()
}

/// PELT with segment ends restricted to the `jump` grid ([`grid_ends`]); `jump = 1` is
/// [`pelt`]. Exact on that grid (same conventions and pruning rule as [`pelt`]).
///
/// # Errors
/// As [`pelt`], and [`Error::InvalidValue`] for `jump = 0`.
pub fn pelt_jump(
    signal: &[f64],
    pen: f64,
    min_size: usize,
    jump: usize,
    model: Cost,
) -> Result<Vec<usize>> {
    if jump == 0 {
        return Err(Error::InvalidValue(
            "PELT jump must be at least 1; use 1 for every index".into(),
        ));
    }
    let (n, m) = (signal.len(), effective_min_size(min_size, model));
    if n < m {
        return Err(too_short(n, m));
    }
    pelt_ends(signal, pen, min_size, &grid_ends(n, m, jump), model)
}

/// Two exact passes for long signals: PELT on the `jump` grid, then PELT over the grid plus
/// every index within ±(`jump` + 2·`min_size`) of each breakpoint the first pass found. The
/// second pass puts a change that fell between grid points where a search at every index puts
/// it, and drops the short segment the grid's optimum may have added beside it.
///
/// # Errors
/// As [`pelt_jump`].
pub fn pelt_two_pass(
    signal: &[f64],
    pen: f64,
    min_size: usize,
    jump: usize,
    model: Cost,
) -> Result<Vec<usize>> {
    let coarse = pelt_jump(signal, pen, min_size, jump, model)?;
    if jump == 1 || coarse.len() < 2 {
        return Ok(coarse);
    }
    let (n, m) = (signal.len(), effective_min_size(min_size, model));
    let reach = jump + 2 * m;
    let mut ends = grid_ends(n, m, jump);
    for &b in &coarse[..coarse.len() - 1] {
        ends.extend(b.saturating_sub(reach).max(m)..(b + reach + 1).min(n));
    }
    ends.sort_unstable();
    ends.dedup();
    pelt_ends(signal, pen, min_size, &ends, model)
}

fn too_short(n: usize, min_size: usize) -> Error {
    Error::InvalidValue(format!(
        "cannot segment {n} points with min_size={min_size}; give at least min_size points"
    ))
}

/// PELT with segment ends restricted to `ends` (ascending, each in `min_size..=n`, the last
/// `n`); every segment starts at 0 or at one of `ends`. Exact over that set, with the
/// conventions and pruning rule of [`pelt`] (the second pass of [`pelt_two_pass`]).
///
/// # Errors
/// As [`pelt`], and [`Error::InvalidValue`] when `ends` is not such a list.
pub fn pelt_ends(
    signal: &[f64],
    pen: f64,
    min_size: usize,
    ends: &[usize],
    model: Cost,
) -> Result<Vec<usize>> {
    let n = signal.len();
    let min_size = effective_min_size(min_size, model);
    if !pen.is_finite() || pen < 0.0 {
        return Err(Error::InvalidValue(format!(
            "PELT penalty must be a finite number >= 0, got {pen}; pass a positive penalty"
        )));
    }
    if n < min_size {
        return Err(too_short(n, min_size));
    }
    if let Some(i) = signal.iter().position(|x| !x.is_finite()) {
        return Err(Error::InvalidValue(format!(
            "signal value {i} is {}; drop or fill non-finite values before segmenting",
            signal[i]
        )));
    }
    let ascending = ends.windows(2).all(|w| w[0] < w[1]);
    if ends.last() != Some(&n) || !ascending || ends[0] < min_size {
        return Err(Error::InvalidValue(format!(
            "candidate segment ends must ascend from min_size={min_size} and end at the \
             signal's length {n}"
        )));
    }
    let sums = Sums::new(signal);
    // f[s]: optimal total of signal[0..s]; prev[s]: start of its last segment.
    let mut f = vec![f64::NAN; n + 1];
    let mut prev = vec![usize::MAX; n + 1];
    f[0] = 0.0;
    // The admissible starts, ascending, as parallel arrays (contiguous, so the inner loop
    // vectorises): start t, F(t), and the cumulative sums at t.
    let mut adm = Admissible::default();
    let mut values: Vec<f64> = Vec::new();
    // Starts are 0 and the candidate ends; each joins the admissible set once a segment from it
    // to the current end is long enough (starts strictly between 0 and min_size have no
    // partition, as in ruptures).
    adm.push(0, 0.0, 0.0, 0.0);
    let mut next_start = 0;
    for &s in ends {
        while next_start < ends.len() && ends[next_start] + min_size <= s {
            let t = ends[next_start];
            adm.push(t, f[t], sums.s1[t], sums.s2[t]);
            next_start += 1;
        }
        let (s1, s2) = (sums.s1[s], sums.s2[s]);
        values.resize(adm.t.len(), 0.0); // every entry is overwritten below
        match model {
            Cost::L2 => {
                let sf = s as f64;
                let m = adm.t.len();
                let (tf, fv, a1, a2) = (&adm.tf[..m], &adm.f[..m], &adm.s1[..m], &adm.s2[..m]);
                for (k, v) in values[..m].iter_mut().enumerate() {
                    let len = sf - tf[k];
                    let a = s1 - a1[k];
                    let c = ((s2 - a2[k]) - a * a / len).max(0.0);
                    *v = fv[k] + (c + pen);
                }
            }
            Cost::NormalMeanVar => {
                for (v, (&t, &ft)) in values.iter_mut().zip(adm.t.iter().zip(&adm.f)) {
                    *v = ft + (sums.cost(model, t, s) + pen);
                }
            }
        }
        let mut best = f64::INFINITY;
        let mut best_k = usize::MAX;
        for (k, &v) in values.iter().enumerate() {
            if v < best {
                best = v;
                best_k = k;
            }
        }
        f[s] = best;
        prev[s] = adm.t[best_k];
        adm.retain(&values, best + pen);
    }
    Ok(backtrack(&prev, n))
}

/// `min_size` raised to the least a segment needs for the cost to exist (2 for a variance).
fn effective_min_size(min_size: usize, model: Cost) -> usize {
    min_size.max(match model {
        Cost::L2 => 1,
        Cost::NormalMeanVar => 2,
    })
}

/// Segment ends (ruptures' convention: the last is `n`) from the best-previous-end table.
pub(crate) fn backtrack(prev: &[usize], n: usize) -> Vec<usize> {
    let mut bkps = Vec::new();
    let mut s = n;
    while s > 0 {
        bkps.push(s);
        s = prev[s];
    }
    bkps.reverse();
    bkps
}

/// Plain O(n²) optimal partitioning with the same conventions (no pruning): the slow,
/// obviously-right twin used by the tests. Equal to [`pelt`] when `min_size` is the cost's
/// minimum; above it PELT's pruning (ruptures' too) may drop a start that a segmentation
/// with a short tail would have needed.
pub fn optimal_partitioning(
    signal: &[f64],
    pen: f64,
    min_size: usize,
    ends: &[usize],
    model: Cost,
) -> Result<Vec<usize>> {
    let n = signal.len();
    let min_size = effective_min_size(min_size, model);
    if n < min_size {
        return Err(too_short(n, min_size));
    }
    let sums = Sums::new(signal);
    let mut f = vec![f64::INFINITY; n + 1];
    let mut prev = vec![usize::MAX; n + 1];
    f[0] = 0.0;
    for &s in ends {
        let starts = std::iter::once(0).chain(ends.iter().copied().filter(|&t| t < n));
        for t in starts.filter(|&t| t + min_size <= s) {
            let v = f[t] + (sums.cost(model, t, s) + pen);
            if v < f[s] {
                f[s] = v;
                prev[s] = t;
            }
        }
    }
    Ok(backtrack(&prev, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn gauss(rng: &mut Xoshiro256PlusPlus) -> f64 {
        // Box-Muller
        let u1: f64 = rng.random::<f64>().max(1e-300);
        let u2: f64 = rng.random();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    fn steps(rng: &mut Xoshiro256PlusPlus, n: usize, k: usize) -> Vec<f64> {
        let mut level = 0.0;
        let cut: Vec<usize> = (0..k).map(|_| rng.random_range(1..n)).collect();
        (0..n)
            .map(|i| {
                if cut.contains(&i) {
                    level += rng.random_range(-5.0..5.0);
                }
                level + gauss(rng)
            })
            .collect()
    }

    #[test]
    fn finds_two_clean_steps() {
        let mut x = vec![0.0; 30];
        x.extend(vec![10.0; 40]);
        x.extend(vec![-3.0; 30]);
        assert_eq!(pelt(&x, 1.0, 2, Cost::L2).unwrap(), vec![30, 70, 100]);
    }

    #[test]
    fn no_change_gives_one_segment() {
        let x = vec![1.5; 50];
        assert_eq!(pelt(&x, 0.1, 3, Cost::L2).unwrap(), vec![50]);
    }

    #[test]
    fn pelt_equals_optimal_partitioning_over_its_candidate_ends() {
        // With min_size > 1 PELT's pruning (as ruptures') is not always exact, so the
        // optimal-partitioning twin is compared with the L2 cost at min_size 1. A third of the
        // cases search every index, a third a grid, a third a random subset of the indices.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for case in 0..900 {
            let n = rng.random_range(2..300);
            let k = rng.random_range(0..6);
            let x = steps(&mut rng, n, k);
            let pen = rng.random_range(0.5..30.0);
            let (found, ends) = match case % 3 {
                0 => (pelt(&x, pen, 1, Cost::L2), grid_ends(n, 1, 1)),
                1 => {
                    let jump = rng.random_range(2..12);
                    (pelt_jump(&x, pen, 1, jump, Cost::L2), grid_ends(n, 1, jump))
                }
                _ => {
                    let keep = rng.random_range(0.1..1.0);
                    let mut e: Vec<usize> = (1..n).filter(|_| rng.random_bool(keep)).collect();
                    e.push(n);
                    (pelt_ends(&x, pen, 1, &e, Cost::L2), e)
                }
            };
            let found = found.unwrap();
            let twin = optimal_partitioning(&x, pen, 1, &ends, Cost::L2).unwrap();
            assert_eq!(found, twin, "case {case}");
            assert!(found.iter().all(|e| ends.contains(e)), "case {case}");
        }
    }

    #[test]
    fn rejects_bad_candidates_and_jump_zero() {
        let x = [1.0, 2.0, 3.0, 4.0];
        for bad in [&[2, 1, 4][..], &[1, 3][..], &[][..], &[0, 4][..]] {
            assert!(pelt_ends(&x, 1.0, 1, bad, Cost::L2).is_err(), "{bad:?}");
        }
        assert!(pelt_jump(&x, 1.0, 1, 0, Cost::L2).is_err());
    }

    #[test]
    fn segments_respect_min_size() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for _ in 0..100 {
            let x = steps(&mut rng, 150, 8);
            let m = rng.random_range(1..10);
            let jump = rng.random_range(1..6);
            let b = pelt_jump(&x, 2.0, m, jump, Cost::L2).unwrap();
            assert!(b[..b.len() - 1].iter().all(|&e| e % jump == 0));
            let mut last = 0;
            for e in b {
                assert!(e - last >= m);
                last = e;
            }
        }
    }

    #[test]
    fn rejects_bad_input() {
        assert!(pelt(&[1.0, f64::NAN, 2.0], 1.0, 1, Cost::L2).is_err());
        assert!(pelt(&[1.0, 2.0], -1.0, 1, Cost::L2).is_err());
        assert!(pelt(&[1.0, 2.0], 1.0, 3, Cost::L2).is_err());
        assert!(Cost::parse("rbf").is_err());
    }
}
