//! Buffer contents for writes: incompressible, zeros, partially compressible, or a pattern.

use super::DataPattern;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Chunk over which `compress:N` splits random and zero bytes.
const COMPRESS_CHUNK: usize = 4096;

/// Bytes per sector [`DataGen::refresh`] tags.
pub const TAG_SECTOR: usize = 512;

/// Fills write buffers according to a [`DataPattern`].
pub struct DataGen {
    pattern: DataPattern,
    rng: Xoshiro256PlusPlus,
    fast: Option<fast::AesStream>,
    /// Key of the sector tags ([`DataGen::refresh`]).
    tag_key: u64,
    /// Sectors tagged so far: the next tag's counter.
    tags: u64,
}

/// A bijection of `u64` (splitmix64's finaliser): distinct inputs give distinct outputs,
/// which look random.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl DataGen {
    pub fn new(pattern: &DataPattern, seed: u64) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xda7a_da7a);
        let fast = fast::AesStream::new(&mut rng);
        // from the seed, not `rng`: the filled bytes stay what they were before tags existed
        let tag_key = mix(seed ^ 0x7a65_7461_6761_6773);
        DataGen {
            pattern: pattern.clone(),
            rng,
            fast,
            tag_key,
            tags: 0,
        }
    }

    /// True when a buffer [`DataGen::fill`]ed once can be made a fresh write's data by
    /// [`DataGen::refresh`] (random data: a pool of random buffers rotated per write, each
    /// retagged, as fio's default `scramble_buffers`).
    pub fn refreshable(&self) -> bool {
        self.pattern == DataPattern::Random
    }

    /// Makes a buffer that holds random data (from [`DataGen::fill`]) the data of a new write:
    /// the first 8 bytes of each [`TAG_SECTOR`]-byte sector get a tag that no other sector
    /// this generator tags gets (a bijection of a counter that never repeats), and that looks
    /// random, so the buffer stays incompressible. The rest of each sector keeps the random
    /// bytes it was filled with. Writing `bs` bytes costs `bs / 512` stores instead of `bs`
    /// fresh random bytes. Only for [`DataGen::refreshable`] patterns.
    #[inline]
    pub fn refresh(&mut self, buf: &mut [u8]) {
        debug_assert!(self.refreshable());
        for sector in buf.chunks_mut(TAG_SECTOR) {
            let tag = mix(self.tag_key ^ self.tags).to_le_bytes();
            self.tags = self.tags.wrapping_add(1);
            let n = sector.len().min(8);
            sector[..n].copy_from_slice(&tag[..n]);
        }
    }

    /// Incompressible bytes: AES rounds over a counter where the CPU has AES instructions
    /// (fast enough that refilling every I/O costs little: `make bench` prints its GB/s from
    /// `native/examples/fill_cost.rs`), the PRNG elsewhere.
    #[inline]
    fn random(&mut self, buf: &mut [u8]) {
        match self.fast.as_mut() {
            Some(f) => f.fill(buf),
            None => self.rng.fill_bytes(buf),
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
            DataPattern::Random => self.random(buf),
            DataPattern::Zeros => buf.fill(0),
            DataPattern::Compress(pct) => {
                let keep = COMPRESS_CHUNK * (100 - *pct as usize) / 100;
                for chunk in buf.chunks_mut(COMPRESS_CHUNK) {
                    let k = keep.min(chunk.len());
                    self.random(&mut chunk[..k]);
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

mod fast {
    //! A counter run through three AES rounds (AES-NI; with VAES and AVX-512 four blocks per
    //! instruction): statistically random, incompressible bytes (`make bench` prints the
    //! speed: `native/examples/fill_cost.rs`). Not cryptographic, and not meant to be.

    use rand::RngCore;

    /// Buffers at least this long are written with non-temporal stores (they would only push
    /// everything else out of the caches); shorter ones stay in the cache, where the kernel's
    /// copy or the device's DMA reads them fastest (`tests/bench/engine_ring.py`'s 128 KiB
    /// write row measures the CPU per I/O of such writes against fio).
    const NT_MIN: usize = 512 << 10;

    pub struct AesStream {
        keys: [[u8; 16]; 4],
        nonce: u64,
        ctr: u64,
        /// The CPU has 512-bit AES (VAES + AVX-512F): four blocks per instruction.
        wide: bool,
    }

    /// Sixteen 16-byte blocks, counters `ctr..ctr+16`, in four 512-bit registers: the same
    /// bytes [`block`] gives for `ctr..ctr+8` and `ctr+8..ctr+16`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "vaes,avx512f")]
    #[inline]
    unsafe fn block_wide(
        k: &[std::arch::x86_64::__m512i; 4],
        nonce: i64,
        ctr: u64,
    ) -> [std::arch::x86_64::__m512i; 4] {
        use std::arch::x86_64::*;
        let c = |i: u64| ctr.wrapping_add(i) as i64;
        let mut b = [_mm512_setzero_si512(); 4];
        for (r, x) in b.iter_mut().enumerate() {
            // 128-bit lane j: low half the counter ctr + 4r + j, high half the nonce
            let i = 4 * r as u64;
            let ctrs = _mm512_set_epi64(
                nonce,
                c(i + 3),
                nonce,
                c(i + 2),
                nonce,
                c(i + 1),
                nonce,
                c(i),
            );
            *x = _mm512_xor_si512(ctrs, k[0]);
        }
        for key in &k[1..] {
            for x in b.iter_mut() {
                *x = _mm512_aesenc_epi128(*x, *key);
            }
        }
        b
    }

    /// Eight 16-byte blocks: counters `ctr..ctr+8` through the rounds.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "aes,sse2")]
    #[inline]
    unsafe fn block(
        k: &[std::arch::x86_64::__m128i; 4],
        nonce: i64,
        ctr: u64,
    ) -> [std::arch::x86_64::__m128i; 8] {
        use std::arch::x86_64::*;
        let mut b = [_mm_setzero_si128(); 8];
        for (i, x) in b.iter_mut().enumerate() {
            *x = _mm_xor_si128(
                _mm_set_epi64x(nonce, ctr.wrapping_add(i as u64) as i64),
                k[0],
            );
        }
        for key in &k[1..] {
            for x in b.iter_mut() {
                *x = _mm_aesenc_si128(*x, *key);
            }
        }
        b
    }

    impl AesStream {
        /// `None` when the CPU lacks AES instructions.
        pub fn new(rng: &mut impl RngCore) -> Option<Self> {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("aes") {
                let mut keys = [[0u8; 16]; 4];
                keys.iter_mut().for_each(|k| rng.fill_bytes(k));
                let wide = std::arch::is_x86_feature_detected!("vaes")
                    && std::arch::is_x86_feature_detected!("avx512f");
                return Some(AesStream {
                    keys,
                    nonce: rng.next_u64(),
                    ctr: 0,
                    wide,
                });
            }
            let _ = rng;
            None
        }

        /// Turns the 512-bit path off (tests compare both paths).
        #[cfg(test)]
        pub fn narrow_only(&mut self) {
            self.wide = false;
        }

        #[inline]
        pub fn fill(&mut self, buf: &mut [u8]) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: constructed only when the CPU has AES instructions, and `wide` only when
            // it has VAES and AVX-512F.
            unsafe {
                let rest = if self.wide { self.fill_wide(buf) } else { buf };
                self.fill_aes(rest)
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = buf;
        }

        /// Fills the 256-byte chunks of a 64-byte aligned `buf` four blocks per instruction;
        /// returns what is left for [`AesStream::fill_aes`] (all of `buf` when unaligned).
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "vaes,avx512f")]
        unsafe fn fill_wide<'b>(&mut self, buf: &'b mut [u8]) -> &'b mut [u8] {
            use std::arch::x86_64::*;
            if !(buf.as_ptr() as usize).is_multiple_of(64) {
                return buf;
            }
            let k: [__m512i; 4] = [0, 1, 2, 3]
                .map(|i| _mm512_broadcast_i32x4(_mm_loadu_si128(self.keys[i].as_ptr().cast())));
            let nonce = self.nonce as i64;
            let nt = buf.len() >= NT_MIN;
            let mut chunks = buf.chunks_exact_mut(256);
            for c in &mut chunks {
                let b = block_wide(&k, nonce, self.ctr);
                self.ctr = self.ctr.wrapping_add(16);
                for (i, x) in b.iter().enumerate() {
                    let p: *mut __m512i = c.as_mut_ptr().add(i * 64).cast();
                    if nt {
                        _mm512_stream_si512(p, *x);
                    } else {
                        _mm512_store_si512(p, *x);
                    }
                }
            }
            if nt {
                _mm_sfence();
            }
            chunks.into_remainder()
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "aes,sse2")]
        unsafe fn fill_aes(&mut self, buf: &mut [u8]) {
            use std::arch::x86_64::*;
            let k: [__m128i; 4] =
                [0, 1, 2, 3].map(|i| _mm_loadu_si128(self.keys[i].as_ptr().cast()));
            let nonce = self.nonce as i64;
            let aligned = (buf.as_ptr() as usize).is_multiple_of(16);
            let nt = aligned && buf.len() >= NT_MIN;
            let mut chunks = buf.chunks_exact_mut(128);
            for c in &mut chunks {
                let b = block(&k, nonce, self.ctr);
                self.ctr = self.ctr.wrapping_add(8);
                for (i, x) in b.iter().enumerate() {
                    let p: *mut __m128i = c.as_mut_ptr().add(i * 16).cast();
                    if nt {
                        _mm_stream_si128(p, *x);
                    } else {
                        _mm_storeu_si128(p, *x);
                    }
                }
            }
            if nt {
                _mm_sfence();
            }
            let rest = chunks.into_remainder();
            if !rest.is_empty() {
                let b = block(&k, nonce, self.ctr);
                self.ctr = self.ctr.wrapping_add(8);
                let mut tmp = [0u8; 128];
                for (i, x) in b.iter().enumerate() {
                    _mm_storeu_si128(tmp.as_mut_ptr().add(i * 16).cast(), *x);
                }
                rest.copy_from_slice(&tmp[..rest.len()]);
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

/// The memo of [`compress_ratio_cached`]; `engine::child` holds its lock across `fork`.
pub(crate) fn compress_ratio_cache(
) -> &'static std::sync::Mutex<std::collections::HashMap<(String, u64), f64>> {
    static CACHE: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<(String, u64), f64>>,
    > = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// [`measure_compress_ratio`] memoised per (pattern, block size): replays run thousands of
/// short steps with the same data, and each measurement compresses 16 blocks.
#[allow(clippy::unwrap_used, reason = "poisoned only by a panic")]
pub fn compress_ratio_cached(pattern: &DataPattern, bs: u64) -> f64 {
    let key = (pattern.spec(), bs);
    let cache = compress_ratio_cache();
    if let Some(r) = cache.lock().unwrap().get(&key) {
        return *r;
    }
    let r = measure_compress_ratio(pattern, bs, 0x5eed, 16);
    cache.lock().unwrap().insert(key, r);
    r
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
    fn random_blocks_never_repeat_and_odd_lengths_fill() {
        let mut g = DataGen::new(&DataPattern::Random, 9);
        let mut seen = std::collections::HashSet::new();
        let mut buf = vec![0u8; 4096];
        for _ in 0..1000 {
            g.fill(&mut buf);
            assert!(seen.insert(buf.clone()));
        }
        let mut odd = vec![0u8; 1000];
        g.fill(&mut odd);
        assert!(odd[900..].iter().any(|&b| b != 0));
        let big = measure_compress_ratio(&DataPattern::Random, 1 << 20, 2, 4);
        assert!(big > 0.995, "{big}");
    }

    /// The pool's retagging: every sector of every refresh gets a tag no other gets, the
    /// buffer stays incompressible, and only the tag bytes change.
    #[test]
    fn refresh_tags_every_sector_uniquely_and_keeps_the_rest() {
        let mut g = DataGen::new(&DataPattern::Random, 3);
        assert!(g.refreshable());
        let mut buf = vec![0u8; 128 << 10];
        g.fill(&mut buf);
        let before = buf.clone();
        let mut sectors = std::collections::HashSet::new();
        for _ in 0..64 {
            g.refresh(&mut buf);
            for (a, b) in buf.chunks(TAG_SECTOR).zip(before.chunks(TAG_SECTOR)) {
                assert_eq!(a[8..], b[8..], "only the tag changes");
                assert!(sectors.insert(a.to_vec()), "a sector repeated");
            }
            let c = zstd::bulk::compress(&buf, 3).unwrap();
            assert!(c.len() as f64 / buf.len() as f64 > 0.995);
        }
        assert_eq!(sectors.len(), 64 * 256);
        // two generators of different seeds tag differently
        let mut h = DataGen::new(&DataPattern::Random, 4);
        let mut other = before.clone();
        h.refresh(&mut other);
        let mut first = before.clone();
        DataGen::new(&DataPattern::Random, 3).refresh(&mut first);
        assert_ne!(other[..8], first[..8]);
        for p in [DataPattern::Zeros, DataPattern::Compress(50)] {
            assert!(!DataGen::new(&p, 1).refreshable());
        }
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
            assert!(
                (r - want).abs() < 0.03,
                "compress:{pct} gave {r}, want {want}"
            );
        }
    }

    #[test]
    fn wide_and_narrow_aes_give_the_same_bytes() {
        let mut a = DataGen::new(&DataPattern::Random, 5);
        let mut b = DataGen::new(&DataPattern::Random, 5);
        if let Some(f) = b.fast.as_mut() {
            f.narrow_only();
        }
        #[repr(align(64))]
        struct Aligned([u8; 8448]);
        let mut buf = Box::new(Aligned([0; 8448]));
        let mut want = vec![0u8; 8448];
        for len in [4096, 8448, 300, 64, 8448 - 100] {
            a.fill(&mut buf.0[..len]);
            b.fill(&mut want[..len]);
            assert_eq!(&buf.0[..len], &want[..len], "len {len}");
        }
    }
}
