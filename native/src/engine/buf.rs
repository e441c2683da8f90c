//! Page-aligned I/O buffers (O_DIRECT needs buffers aligned to the logical block size; 4096
//! covers every device).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Alignment of every I/O buffer.
pub const ALIGN: usize = 4096;

/// `slots` buffers of `slot_len` bytes each, every one 4096-aligned, in one allocation.
pub struct SlotBufs {
    ptr: NonNull<u8>,
    layout: Layout,
    stride: usize,
    slot_len: usize,
    slots: usize,
}

// SAFETY: the buffer is plain memory owned by this value; it is used by one thread at a time.
unsafe impl Send for SlotBufs {}

impl SlotBufs {
    /// Allocates zeroed buffers, every page already mapped. Panics only if the allocator fails (out of memory).
    pub fn new(slots: usize, slot_len: usize) -> Self {
        let stride = slot_len.div_ceil(ALIGN).max(1) * ALIGN;
        let layout = Layout::from_size_align(stride * slots.max(1), ALIGN).expect("buffer layout");
        // SAFETY: layout has non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        // A large zeroed allocation is fresh pages the kernel maps on first touch: touch them
        // now, while the engine sets up, not in the first I/Os of the run.
        for off in (0..layout.size()).step_by(ALIGN) {
            // SAFETY: off < size, inside the allocation.
            unsafe { ptr.as_ptr().add(off).write_volatile(0) };
        }
        SlotBufs {
            ptr,
            layout,
            stride,
            slot_len,
            slots,
        }
    }

    /// Pointer to the start of slot `i`.
    #[inline]
    pub fn ptr(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.slots);
        // SAFETY: i < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(i * self.stride) }
    }

    /// Slot `i` as a mutable slice of `slot_len` bytes.
    #[inline]
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: the slot lies inside the allocation and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(i), self.slot_len) }
    }

    /// One `iovec` over every slot, padding between them included (for registering them with
    /// io_uring as one buffer, as fio's `t/io_uring` registers its buffers).
    pub fn region(&self) -> libc::iovec {
        libc::iovec {
            iov_base: self.ptr.as_ptr().cast(),
            iov_len: self.layout.size(),
        }
    }

    /// `iovec`s of every slot (for registering them with io_uring).
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|i| libc::iovec {
                iov_base: self.ptr(i).cast(),
                iov_len: self.slot_len,
            })
            .collect()
    }
}

impl Drop for SlotBufs {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut b = SlotBufs::new(3, 5000);
        for i in 0..3 {
            assert_eq!(b.ptr(i) as usize % ALIGN, 0);
            b.slot_mut(i).fill(i as u8 + 1);
        }
        for i in 0..3 {
            assert!(b.slot_mut(i).iter().all(|&x| x == i as u8 + 1));
        }
        assert_eq!(b.iovecs().len(), 3);
        // the region holds every slot, from the first's start to the last's end
        let r = b.region();
        let (start, end) = (r.iov_base as usize, r.iov_base as usize + r.iov_len);
        for v in b.iovecs() {
            assert!(v.iov_base as usize >= start && v.iov_base as usize + v.iov_len <= end);
        }
        assert_eq!(start, b.ptr(0) as usize);
    }
}
