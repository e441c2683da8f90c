//! Small helpers of the simulator's hot loops: constant division, huge-page vectors,
//! prefetch hints.

/// Division by a run-time constant, a shift when it is a power of two (it always is for the
/// page sizes and die counts the presets use).
#[derive(Clone, Copy)]
pub struct Divisor {
    d: u32,
    shift: u32,
    pow2: bool,
}

impl Divisor {
    pub fn new(d: u32) -> Divisor {
        assert!(d > 0, "division by zero");
        Divisor {
            d,
            shift: d.trailing_zeros(),
            pow2: d.is_power_of_two(),
        }
    }

    #[inline(always)]
    pub fn quot(self, x: u32) -> u32 {
        if self.pow2 {
            x >> self.shift
        } else {
            x / self.d
        }
    }

    #[inline(always)]
    pub fn rem_of(self, x: u32) -> u32 {
        if self.pow2 {
            x & (self.d - 1)
        } else {
            x % self.d
        }
    }
}

/// A vector of `n` copies of `v` whose pages the kernel may back with transparent huge pages:
/// the maps are accessed at random, and 4 KiB pages would make nearly every access a TLB miss.
/// `None` when the memory cannot be had (the caller says which table).
pub fn huge_vec<T: Copy>(n: usize, v: T) -> Option<Vec<T>> {
    let mut out: Vec<T> = Vec::new();
    out.try_reserve_exact(n).ok()?;
    let bytes = n * std::mem::size_of::<T>();
    const HUGE: usize = 2 << 20;
    if bytes >= 2 * HUGE {
        let start = (out.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (out.as_ptr() as usize + bytes) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside the allocation just reserved; madvise only hints.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    out.resize(n, v);
    Some(out)
}

/// Prefetches into L2 (T1): the maps' misses are issued a burst at a time, tens ahead, and a
/// burst sized for the L2's miss buffers would stall on the L1's fewer ones with T0.
#[inline(always)]
pub fn prefetch(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it never faults, even for invalid addresses.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p, std::arch::x86_64::_MM_HINT_T1);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
