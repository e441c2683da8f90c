//! Host operations read ahead of issue, so the FTL's map entries they touch are prefetched.

use super::ftl::Ftl;
use crate::workload::{Op, OpStream};

/// An op stream read up to three bursts of [`BURST`] operations in advance, so that the map
/// entries the next writes touch are prefetched a burst at a time (misses issued together
/// overlap): the map entries of the burst after next, then the validity words and block fields
/// they point to for the next burst.
pub struct Ahead {
    stream: OpStream,
    /// The op and, for a timed trace replay, its recorded issue time (ns since the start).
    buf: [Option<(Op, Option<u64>)>; RING],
    /// Ops handed out so far; `buf` holds the next `2 * BURST` (or more, see `next`).
    head: usize,
}

const BURST: usize = 16;
const RING: usize = 64;

impl Ahead {
    fn pull(stream: &mut OpStream) -> Option<(Op, Option<u64>)> {
        stream
            .next_op()
            .map(|op| (op, stream.issue_not_before_ns()))
    }

    pub fn new(mut stream: OpStream) -> Self {
        let buf = std::array::from_fn(|i| {
            if i < 2 * BURST {
                Self::pull(&mut stream)
            } else {
                None
            }
        });
        Ahead {
            stream,
            buf,
            head: 0,
        }
    }

    #[inline]
    pub fn next(&mut self, ftl: &Ftl) -> Option<(Op, Option<u64>)> {
        if self.head.is_multiple_of(BURST) {
            self.refill(ftl);
        }
        let op = self.buf[self.head % RING];
        self.head += 1;
        op
    }

    /// At the start of a burst: validity words for the next burst, then pulls the burst
    /// after it and prefetches its map entries.
    #[inline]
    fn refill(&mut self, ftl: &Ftl) {
        for k in self.head + BURST..self.head + 2 * BURST {
            if let Some((m, _)) = self.buf[k % RING] {
                ftl.prefetch_valid((m.offset / 4096) as u32);
            }
        }
        for k in self.head + 2 * BURST..self.head + 3 * BURST {
            let new = Self::pull(&mut self.stream);
            if let Some((n, _)) = new {
                ftl.prefetch_map((n.offset / 4096) as u32);
            }
            self.buf[k % RING] = new;
        }
    }
}
