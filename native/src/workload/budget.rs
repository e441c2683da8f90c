//! The `written=` budget: one rule for the real engine and the simulator.
//!
//! The rule is fio's (`io_size`): an operation of a counted kind is issued while the bytes
//! issued before it are below the budget, and it is issued whole — never shortened. So the
//! last operation may cross the budget: `written=10240, bs=4k` writes 3 × 4096 = 12,288 bytes,
//! exactly as `fio --io_size=10240 --bs=4k` does (checked with fio 3.x). A budget that is a
//! multiple of the block size is met exactly.
//!
//! Counted kinds: writes, or trims for `rw=trim|randtrim` (whose `written=` limits the bytes
//! trimmed).

use super::{OpKind, Rw, Workload};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Bytes the counted kinds may still be issued for, shared by every job of one run.
#[derive(Debug)]
pub struct Budget {
    limit: Option<u64>,
    counted: [bool; 3],
    claimed: AtomicU64,
    spent: AtomicBool,
}

impl Budget {
    /// A budget of `limit` bytes (`None`: unlimited) over the `counted` kinds.
    pub fn new(limit: Option<u64>, counted: [bool; 3]) -> Self {
        Budget {
            limit,
            counted,
            claimed: AtomicU64::new(0),
            spent: AtomicBool::new(false),
        }
    }

    /// The budget of `w.written`: trims for trim workloads, writes otherwise.
    pub fn of(w: &Workload) -> Self {
        let counted = if matches!(w.rw, Rw::Trim | Rw::RandTrim) {
            [false, false, true]
        } else {
            [false, true, false]
        };
        Budget::new(w.written, counted)
    }

    /// True if an operation of `kind` and `len` bytes may be issued (and charges it); false
    /// once the budget is spent, after which [`Budget::spent`] is true.
    #[inline]
    pub fn claim(&self, kind: OpKind, len: u64) -> bool {
        let Some(limit) = self.limit else { return true };
        if !self.counted[kind as usize] {
            return true;
        }
        let before = self.claimed.fetch_add(len, Ordering::Relaxed);
        if before >= limit {
            self.spent.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// True once a counted operation was refused.
    pub fn spent(&self) -> bool {
        self.spent.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issued(limit: u64, bs: u64) -> u64 {
        let b = Budget::new(Some(limit), [false, true, false]);
        let mut n = 0;
        while b.claim(OpKind::Write, bs) {
            n += bs;
            assert!(n < limit + bs, "ran past the budget");
        }
        assert!(b.spent());
        n
    }

    #[test]
    fn last_op_is_whole_and_may_cross_the_budget_as_in_fio() {
        // fio --rw=write --bs=4k --io_size=10240 reports io_bytes=12288 (3 ios)
        assert_eq!(issued(10240, 4096), 12288);
        assert_eq!(issued(8192, 4096), 8192);
        assert_eq!(issued(1, 4096), 4096);
        assert_eq!(issued(40960, 4096), 40960);
    }

    #[test]
    fn only_counted_kinds_are_charged() {
        let b = Budget::new(Some(4096), [false, true, false]);
        assert!(b.claim(OpKind::Read, 1 << 20) && b.claim(OpKind::Trim, 1 << 20));
        assert!(b.claim(OpKind::Write, 4096));
        assert!(!b.claim(OpKind::Write, 4096));
        assert!(Budget::new(None, [true; 3]).claim(OpKind::Write, u64::MAX / 2));
    }
}
