//! Buffer contents for writes: incompressible, zeros, partially compressible, or a pattern.

use super::DataPattern;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Chunk over which `compress:N` splits random and zero bytes.
const COMPRESS_CHUNK: usize = 4096;

/// Fills write buffers according to a [`DataPattern`].
pub struct DataGen {
    pattern: DataPattern,
    rng: Xoshiro256PlusPlus,
}

impl DataGen {
    pub fn new(pattern: &DataPattern, seed: u64) -> Self {
        DataGen {
            pattern: pattern.clone(),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xda7a_da7a),
        }
    }

    /// True when the contents never change between I/Os, so a filled buffer can be reused.
    pub fn is_static(&self) -> bool {
        matches!(self.pattern, DataPattern::Zeros | DataPattern::Pattern(_))
            || self.pattern == DataPattern::Compress(100)
    }

    /// Fills `buf` with the next buffer's worth of data.
    pub fn fill(&mut self, buf: &mut [u8]) {
        match &self.pattern {
            DataPattern::Random => self.rng.fill_bytes(buf),
            DataPattern::Zeros => buf.fill(0),
            DataPattern::Compress(pct) => {
                let keep = COMPRESS_CHUNK * (100 - *pct as usize) / 100;
                for chunk in buf.chunks_mut(COMPRESS_CHUNK) {
                    let k = keep.min(chunk.len());
                    self.rng.fill_bytes(&mut chunk[..k]);
                    chunk[k..].fill(0);
                }
            }
            DataPattern::Pattern(p) => {
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = p[i % p.len()];
                }
            }
        }
    }
}

/// Measures how well the data compresses: zstd (level 3) compressed bytes / raw bytes over
/// `samples` buffers of `bs` bytes (≈ 1.00 for random data, ≈ 0 for zeros). Each buffer is
/// compressed on its own, as a controller compresses each write on its own.
pub fn measure_compress_ratio(pattern: &DataPattern, bs: u64, seed: u64, samples: usize) -> f64 {
    let bs = (bs as usize).clamp(512, 1 << 20);
    let mut gen = DataGen::new(pattern, seed);
    let mut buf = vec![0u8; bs];
    let (mut raw, mut packed) = (0usize, 0usize);
    for _ in 0..samples.max(1) {
        gen.fill(&mut buf);
        let c = zstd::bulk::compress(&buf, 3).expect("zstd compression of a memory buffer");
        raw += buf.len();
        packed += c.len().min(buf.len());
    }
    packed as f64 / raw as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_is_incompressible_and_refilled() {
        let r = measure_compress_ratio(&DataPattern::Random, 65536, 1, 8);
        assert!(r > 0.995, "{r}");
        let mut g = DataGen::new(&DataPattern::Random, 1);
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        g.fill(&mut a);
        g.fill(&mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn zeros_compress_away() {
        let r = measure_compress_ratio(&DataPattern::Zeros, 65536, 1, 4);
        assert!(r < 0.01, "{r}");
    }

    #[test]
    fn compress_n_yields_requested_ratio() {
        for pct in [25u8, 50, 75] {
            let r = measure_compress_ratio(&DataPattern::Compress(pct), 131072, 3, 8);
            let want = (100 - pct) as f64 / 100.0;
            assert!((r - want).abs() < 0.03, "compress:{pct} gave {r}, want {want}");
        }
    }
}
