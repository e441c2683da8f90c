//! The offset/operation sequence of a workload: deterministic for a given seed, shared by the
//! real engine and the simulator so both see exactly the same I/O stream.

use super::{RandomDist, Rw, Workload};
use crate::rng::{mix64, PHI};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Direction of one I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Read = 0,
    Write = 1,
    Trim = 2,
}

/// One I/O: byte offset on the target and length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub offset: u64,
    pub len: u64,
}

/// Splits the span `[offset, offset + len)` into `jobs` contiguous, `bs`-aligned slices, one per
/// job, so that sequential passes and permutations cover every block exactly once across jobs.
/// Returns `(slice_offset, slice_len)` pairs; trailing bytes that do not fill a block are unused.
pub fn job_slices(offset: u64, len: u64, bs: u64, jobs: u32) -> Vec<(u64, u64)> {
    // in u128: blocks × jobs can pass 2^64; each slice lies inside the span, so the results fit
    let blocks = u128::from(len / bs);
    let jobs = u128::from(jobs.max(1));
    (0..jobs)
        .map(|j| {
            let b0 = (blocks * j / jobs) as u64;
            let b1 = (blocks * (j + 1) / jobs) as u64;
            (offset + b0 * bs, (b1 - b0) * bs)
        })
        .collect()
}

/// A keyed bijection on `[0, n)`: a 4-round Feistel network on the smallest even-width power
/// of two ≥ n, with cycle-walking. Used for `random=permutation` without storing n offsets.
#[derive(Clone, Debug)]
struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    fn new(n: u64, key: u64) -> Self {
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut k = key;
        let keys = std::array::from_fn(|_| {
            k = mix64(k.wrapping_add(PHI));
            k
        });
        Permutation { n, half_bits, keys }
    }

    #[inline]
    fn apply_once(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let f = mix64(r ^ k) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    #[inline]
    fn get(&self, i: u64) -> u64 {
        let mut x = self.apply_once(i);
        while x >= self.n {
            x = self.apply_once(x);
        }
        x
    }

    /// Appends `Op { kind, offset: start + get(i)·bs, len: bs }` for every `i` in `range`:
    /// [`Permutation::get`]'s values, with its constants held in registers for the whole
    /// block (the io_uring engine takes 64 ops at a time; callgrind: 80 instructions per op,
    /// 60 of them the Feistel rounds, against 102 through `get` in a closure).
    #[inline]
    fn fill(
        &self,
        out: &mut Vec<Op>,
        range: std::ops::Range<u64>,
        kind: OpKind,
        start: u64,
        bs: u64,
    ) {
        let (n, half, [k0, k1, k2, k3]) = (self.n, self.half_bits, self.keys);
        let mask = (1u64 << half) - 1;
        let once = move |x: u64| {
            let (mut l, mut r) = (x >> half, x & mask);
            for k in [k0, k1, k2, k3] {
                (l, r) = (r, l ^ (mix64(r ^ k) & mask));
            }
            (l << half) | r
        };
        out.extend(range.map(move |i| {
            let mut x = once(i);
            while x >= n {
                x = once(x);
            }
            Op {
                kind,
                offset: start + x * bs,
                len: bs,
            }
        }));
    }
}

/// The operation stream of one job over its slice.
#[derive(Clone, Debug)]
pub struct OpStream {
    rw: Rw,
    rwmix_read: u32,
    random: RandomDist,
    start: u64,
    bs: u64,
    nblocks: u64,
    /// index within the current pass
    pos: u64,
    pass: u64,
    loops: Option<u64>,
    seed: u64,
    rng: Xoshiro256PlusPlus,
    perm: Option<Permutation>,
    /// Trace replay: this job's share of the trace (every `stride`-th op from `first`).
    trace: Option<(std::sync::Arc<Vec<crate::trace::TraceOp>>, usize, usize)>,
    time_scale: Option<f64>,
    last_issue_ns: Option<u64>,
}

/// The kind every op of `rw` has; `None` for `randrw`, whose kinds are drawn ([`mixed_kind`]).
#[inline]
fn fixed_kind(rw: Rw) -> Option<OpKind> {
    match rw {
        Rw::Read | Rw::RandRead => Some(OpKind::Read),
        Rw::Write | Rw::RandWrite => Some(OpKind::Write),
        Rw::Trim | Rw::RandTrim => Some(OpKind::Trim),
        Rw::RandRw => None,
    }
}

/// A `randrw` op's kind: a read with probability `rwmix_read` %, one draw of `rng`.
#[inline]
fn mixed_kind(rng: &mut Xoshiro256PlusPlus, rwmix_read: u32) -> OpKind {
    if rng.random_range(0..100u32) < rwmix_read {
        OpKind::Read
    } else {
        OpKind::Write
    }
}

impl OpStream {
    /// The stream for job `job` of `w` over the slice `[slice_offset, slice_offset + slice_len)`.
    pub fn new(w: &Workload, slice_offset: u64, slice_len: u64, job: u32) -> Self {
        let seed = mix64(w.seed ^ mix64(job as u64 + 1));
        let jobs = w.jobs.max(1) as usize;
        let trace = w.trace.as_ref().map(|t| (t.clone(), job as usize, jobs));
        let nblocks = match &trace {
            Some((t, first, stride)) => (t.len().saturating_sub(*first)).div_ceil(*stride) as u64,
            None => slice_len / w.bs,
        };
        let mut s = OpStream {
            rw: w.rw,
            rwmix_read: w.rwmix_read,
            random: w.random,
            start: slice_offset,
            bs: w.bs,
            nblocks,
            pos: 0,
            pass: 0,
            loops: w.loops_limit(),
            seed,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            perm: None,
            trace,
            time_scale: w.trace_time_scale,
            last_issue_ns: None,
        };
        s.new_pass();
        s
    }

    fn new_pass(&mut self) {
        if self.rw.is_random() && self.random == RandomDist::Permutation {
            self.perm = Some(Permutation::new(
                self.nblocks,
                mix64(self.seed ^ self.pass.wrapping_mul(0x2545f4914f6cdd1d)),
            ));
        }
    }

    /// Blocks in one pass (= ops per pass).
    pub fn blocks_per_pass(&self) -> u64 {
        self.nblocks
    }

    /// For a timed trace replay: the earliest time (ns since the run began) at which the op
    /// last returned by [`OpStream::next_op`] may be issued; `None` = issue at once.
    pub fn issue_not_before_ns(&self) -> Option<u64> {
        self.last_issue_ns
    }

    /// True for a timed trace replay: each op carries its own issue time
    /// ([`OpStream::issue_not_before_ns`]), so ops are taken one at a time, never
    /// [filled](OpStream::fill) ahead.
    pub fn is_timed(&self) -> bool {
        self.trace.is_some() && self.time_scale.is_some()
    }

    /// Starts the next pass when this one is done; false once the loop limit is reached
    /// (one rule for [`OpStream::next_op`] and [`OpStream::fill`]).
    #[inline]
    fn in_pass(&mut self) -> bool {
        if self.pos == self.nblocks {
            self.pass += 1;
            self.pos = 0;
            self.new_pass();
        }
        self.loops.is_none_or(|l| self.pass < l)
    }

    /// Appends to `out` the next `n` operations (fewer only where the loop limit ends the
    /// stream): exactly those `n` calls of [`OpStream::next_op`] would return, made in one loop
    /// per pass with the pattern's choices taken once (the io_uring engine refills its slots
    /// from such a block). Allocates nothing when `out` has room for them.
    pub fn fill(&mut self, out: &mut Vec<Op>, n: usize) {
        if self.trace.is_some() {
            // ops of a trace are a copy each; its issue times are kept per op
            out.extend(std::iter::from_fn(|| self.next_op()).take(n));
            return;
        }
        let mut left = n as u64;
        while left > 0 && self.nblocks > 0 {
            if !self.in_pass() {
                return;
            }
            let m = left.min(self.nblocks - self.pos);
            self.fill_pass(out, m);
            self.pos += m;
            left -= m;
        }
    }

    /// Appends the `m` ops at `pos..pos + m` of the current pass (all inside it), drawing from
    /// the generator in [`OpStream::next_op`]'s order (block, then a `randrw` op's kind).
    #[inline]
    fn fill_pass(&mut self, out: &mut Vec<Op>, m: u64) {
        let (start, bs, nb, mix) = (self.start, self.bs, self.nblocks, self.rwmix_read);
        let kind = fixed_kind(self.rw);
        let rng = &mut self.rng;
        let kind_of = |rng: &mut Xoshiro256PlusPlus| kind.unwrap_or_else(|| mixed_kind(rng, mix));
        let op = |kind, block: u64| Op {
            kind,
            offset: start + block * bs,
            len: bs,
        };
        let range = self.pos..self.pos + m;
        if !self.rw.is_random() {
            out.extend(range.map(|i| op(kind_of(rng), i)));
        } else if let (Some(p), RandomDist::Permutation, Some(kind)) =
            (&self.perm, self.random, kind)
        {
            p.fill(out, range, kind, start, bs);
        } else if let (Some(p), RandomDist::Permutation) = (&self.perm, self.random) {
            out.extend(range.map(|i| op(kind_of(rng), p.get(i))));
        } else {
            out.extend(range.map(|_| {
                let block = rng.random_range(0..nb);
                op(kind_of(rng), block)
            }));
        }
    }

    /// The next operation, or `None` once the loop limit is reached.
    pub fn next_op(&mut self) -> Option<Op> {
        if self.nblocks == 0 || !self.in_pass() {
            return None;
        }
        let i = self.pos;
        self.pos += 1;
        if let Some((t, first, stride)) = &self.trace {
            let op = t[first + i as usize * stride];
            self.last_issue_ns = self.time_scale.map(|k| {
                let span = t.last().map(|x| x.t_ns).unwrap_or(0) + 1;
                ((op.t_ns + self.pass * span) as f64 * k) as u64
            });
            return Some(Op {
                kind: op.kind,
                offset: op.offset,
                len: op.len,
            });
        }
        let block = if !self.rw.is_random() {
            i
        } else {
            match (&self.perm, self.random) {
                (Some(p), RandomDist::Permutation) => p.get(i),
                _ => self.rng.random_range(0..self.nblocks),
            }
        };
        let kind =
            fixed_kind(self.rw).unwrap_or_else(|| mixed_kind(&mut self.rng, self.rwmix_read));
        Some(Op {
            kind,
            offset: self.start + block * self.bs,
            len: self.bs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(pairs: &[(&str, &str)]) -> Workload {
        Workload::from_pairs(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.get(i);
                assert!(x < n);
                assert!(!seen[x as usize], "n={n} repeats {x}");
                seen[x as usize] = true;
            }
        }
    }

    /// [`Permutation::fill`] (the engine's blocks of ops) gives [`Permutation::get`]'s values
    /// in order, over sizes where the Feistel domain is n itself, just above it (cycle-walking
    /// up to ~4 rounds per value), and a large odd one, for ranges not starting at 0.
    #[test]
    fn permutation_fill_is_get_in_order() {
        for n in [1u64, 2, 3, 5, 64, 65, 1000, 4097, 16_384, (1 << 20) + 3] {
            let p = Permutation::new(n, n ^ 0x5eed);
            for (a, b) in [(0, n.min(300)), (n / 2, n), (n.saturating_sub(70), n)] {
                let mut got = vec![];
                p.fill(&mut got, a..b, OpKind::Write, 4096, 512);
                let want: Vec<Op> = (a..b)
                    .map(|i| Op {
                        kind: OpKind::Write,
                        offset: 4096 + p.get(i) * 512,
                        len: 512,
                    })
                    .collect();
                assert_eq!(got, want, "n={n} range {a}..{b}");
            }
        }
    }

    #[test]
    fn permutation_pass_touches_each_block_once_and_passes_differ() {
        let wl = w(&[("rw", "randwrite"), ("loops", "2"), ("bs", "4k")]);
        let mut s = OpStream::new(&wl, 0, 4096 * 100, 0);
        let mut first: Vec<u64> = (0..100).map(|_| s.next_op().unwrap().offset).collect();
        let second: Vec<u64> = (0..100).map(|_| s.next_op().unwrap().offset).collect();
        assert!(s.next_op().is_none());
        assert_ne!(first, second);
        first.sort();
        assert_eq!(first, (0..100).map(|b| b * 4096).collect::<Vec<_>>());
    }

    #[test]
    fn sequential_covers_span_in_order() {
        let wl = w(&[("rw", "write"), ("bs", "8k")]);
        let mut s = OpStream::new(&wl, 4096, 8192 * 4 + 100, 0);
        let offs: Vec<u64> = std::iter::from_fn(|| s.next_op())
            .map(|o| o.offset)
            .collect();
        assert_eq!(offs, vec![4096, 4096 + 8192, 4096 + 16384, 4096 + 24576]);
    }

    #[test]
    fn uniform_repeats_and_mix_ratio_holds() {
        let wl = w(&[
            ("rw", "randrw"),
            ("rwmix_read", "70"),
            ("random", "uniform"),
            ("loops", "1"),
        ]);
        let mut s = OpStream::new(&wl, 0, 4096 * 10_000, 0);
        let ops: Vec<Op> = std::iter::from_fn(|| s.next_op()).collect();
        assert_eq!(ops.len(), 10_000);
        let reads = ops.iter().filter(|o| o.kind == OpKind::Read).count();
        assert!((6700..7300).contains(&reads), "{reads}");
        let mut offs: Vec<u64> = ops.iter().map(|o| o.offset).collect();
        offs.sort();
        offs.dedup();
        // with replacement: about 1 - 1/e of blocks are distinct
        assert!(offs.len() < 7000 && offs.len() > 5800, "{}", offs.len());
    }

    #[test]
    fn same_seed_same_stream() {
        let wl = w(&[("rw", "randwrite"), ("random", "uniform"), ("seed", "7")]);
        let a: Vec<Op> = {
            let mut s = OpStream::new(&wl, 0, 1 << 20, 0);
            std::iter::from_fn(|| s.next_op()).collect()
        };
        let b: Vec<Op> = {
            let mut s = OpStream::new(&wl, 0, 1 << 20, 0);
            std::iter::from_fn(|| s.next_op()).collect()
        };
        assert_eq!(a, b);
    }

    /// The io_uring engine takes its ops in blocks ([`OpStream::fill`]): the same ops, in the
    /// same order, as one [`OpStream::next_op`] at a time, for every pattern and distribution,
    /// blocks straddling pass boundaries and the loop limit, and a stream that ends mid-block.
    #[test]
    fn blocks_of_ops_are_the_ops_one_at_a_time() {
        for rw in [
            "read",
            "write",
            "randread",
            "randwrite",
            "randrw",
            "trim",
            "randtrim",
        ] {
            for random in ["permutation", "uniform"] {
                let wl = w(&[
                    ("rw", rw),
                    ("random", random),
                    ("rwmix_read", "30"),
                    ("loops", "3"),
                    ("seed", "11"),
                ]);
                let one: Vec<Op> = {
                    let mut s = OpStream::new(&wl, 8192, 4096 * 37, 1);
                    std::iter::from_fn(|| s.next_op()).collect()
                };
                assert_eq!(one.len(), 3 * 37);
                for block in [1, 5, 32, 37, 64, 200] {
                    let mut s = OpStream::new(&wl, 8192, 4096 * 37, 1);
                    let mut got = vec![];
                    loop {
                        let before = got.len();
                        s.fill(&mut got, block);
                        if got.len() - before < block {
                            break;
                        }
                    }
                    assert_eq!(got, one, "rw={rw} random={random} block={block}");
                    // ended: nothing more either way
                    s.fill(&mut got, block);
                    assert_eq!(got.len(), one.len());
                    assert!(s.next_op().is_none());
                }
            }
        }
    }

    #[test]
    fn trace_ops_replayed_in_order_split_across_jobs_with_times() {
        use crate::trace::TraceOp;
        let ops: Vec<TraceOp> = (0..5)
            .map(|i| TraceOp {
                t_ns: i * 1000,
                kind: OpKind::Write,
                offset: i * 4096,
                len: 4096,
            })
            .collect();
        let mut wl = w(&[("jobs", "2")]);
        wl.trace = Some(std::sync::Arc::new(ops));
        wl.trace_time_scale = Some(2.0);
        let mut a = OpStream::new(&wl, 0, 0, 0);
        let mut b = OpStream::new(&wl, 0, 0, 1);
        let mut got_a = vec![];
        while let Some(op) = a.next_op() {
            got_a.push((op.offset, a.issue_not_before_ns().unwrap()));
        }
        let got_b: Vec<u64> = std::iter::from_fn(|| b.next_op())
            .map(|o| o.offset)
            .collect();
        assert_eq!(got_a, vec![(0, 0), (8192, 4000), (16384, 8000)]);
        assert_eq!(got_b, vec![4096, 12288]);
    }

    #[test]
    fn job_slices_partition_the_span() {
        let sl = job_slices(4096, 4096 * 10 + 5, 4096, 3);
        assert_eq!(
            sl,
            vec![(4096, 3 * 4096), (4096 * 4, 3 * 4096), (4096 * 7, 4 * 4096)]
        );
    }
}
