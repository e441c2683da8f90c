//! The queue of outstanding host commands, ordered by completion time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Outstanding commands as `(completion time, slot)`, popped earliest first (ties: lower slot
/// first). A sorted queue for up to [`SORTED_MAX`] commands — writes complete in the order they
/// were issued, so a push is usually an append — and a binary heap for more.
pub enum Pending {
    Sorted(VecDeque<(u64, u32)>),
    Heap(BinaryHeap<Reverse<(u64, u32)>>),
}

const SORTED_MAX: usize = 64;

impl Pending {
    pub fn new(commands: usize) -> Self {
        if commands <= SORTED_MAX {
            Pending::Sorted(VecDeque::with_capacity(commands))
        } else {
            Pending::Heap(BinaryHeap::with_capacity(commands))
        }
    }

    #[inline]
    pub fn push(&mut self, k: (u64, u32)) {
        match self {
            Pending::Sorted(q) => {
                if q.back().is_none_or(|&b| b < k) {
                    q.push_back(k);
                } else {
                    Self::insert_sorted(q, k);
                }
            }
            Pending::Heap(h) => h.push(Reverse(k)),
        }
    }

    /// A completion earlier than the latest pending one (rare for writes).
    #[cold]
    #[inline(never)]
    fn insert_sorted(q: &mut VecDeque<(u64, u32)>, k: (u64, u32)) {
        let i = q.partition_point(|&x| x < k);
        q.insert(i, k);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u32)> {
        match self {
            Pending::Sorted(q) => q.pop_front(),
            Pending::Heap(h) => h.pop().map(|Reverse(k)| k),
        }
    }
}
