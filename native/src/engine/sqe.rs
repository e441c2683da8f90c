//! The submission entries the io_uring engine queues: a read or write through a (registered)
//! buffer, and a trim (a block device's discard command or a file's hole punch), addressed to
//! the registered target or its descriptor.

use super::open::Kind;
use crate::workload::{Op, OpKind};
use io_uring::{opcode, squeue, types};

/// `BLOCK_URING_CMD_DISCARD` = `_IO(0x12, 0)` (include/uapi/linux/fs.h): discard `[addr,
/// addr + addr3)` of a block device. Not in the `io-uring` crate's bindings.
pub(super) const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

/// The submission entry that trims `[offset, offset + len)` of the target without blocking
/// (`fixed`: the target is registered file 0, else `fd`).
pub(super) fn trim_entry(kind: Kind, fixed: bool, fd: i32, offset: u64, len: u64) -> squeue::Entry {
    macro_rules! entry {
        ($fd:expr) => {
            match kind {
                Kind::Block => {
                    // The command's 16 bytes overlay the entry's `addr3` (the length).
                    let mut cmd = [0u8; 16];
                    cmd[..8].copy_from_slice(&len.to_ne_bytes());
                    opcode::UringCmd16::new($fd, BLOCK_URING_CMD_DISCARD)
                        .addr(Some(offset))
                        .cmd(cmd)
                        .build()
                }
                Kind::File => opcode::Fallocate::new($fd, len)
                    .offset(offset)
                    .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                    .build(),
            }
        };
    }
    if fixed {
        entry!(types::Fixed(0))
    } else {
        entry!(types::Fd(fd))
    }
}

/// A queued trim's failure that means "this kernel cannot queue discards", not a device error.
pub(super) fn trim_unsupported(errno: i32) -> bool {
    matches!(errno, libc::EOPNOTSUPP | libc::EINVAL | libc::ENOTTY)
}

/// The target as a ring addresses it: registered file 0, or its descriptor.
#[derive(Clone, Copy)]
pub(super) struct FileRef {
    pub(super) fixed: bool,
    pub(super) fd: i32,
}

/// Pushes the submission entry that reads or writes `op` through the buffer at `p` (`buf`: its
/// index among the registered buffers, `None` if they are not registered), tagged `user_data`;
/// false if the queue is full. Each kind of entry is built and pushed in its own arm: built in
/// one arm and pushed after the arms met, the entry went through a stack copy whose overlapping
/// zeroing stores the copy's 16-byte load could not forward from (`perf annotate`: half of
/// `State::push_ready`'s samples on that store, issue 29).
///
/// # Safety
/// The buffer at `p` must stay valid until the entry's completion is reaped.
#[inline(always)]
pub(super) unsafe fn push_rw(
    sq: &mut squeue::SubmissionQueue<'_>,
    file: FileRef,
    op: &Op,
    p: *mut u8,
    buf: Option<u16>,
    user_data: u64,
) -> bool {
    let len = op.len as u32;
    macro_rules! push {
        ($e:expr) => {
            // SAFETY: the caller keeps the buffer valid until the completion is reaped.
            unsafe { sq.push(&$e.build().user_data(user_data)) }.is_ok()
        };
    }
    macro_rules! entry {
        ($fd:expr) => {
            match (op.kind, buf) {
                (OpKind::Read, Some(b)) => {
                    push!(opcode::ReadFixed::new($fd, p, len, b).offset(op.offset))
                }
                (OpKind::Read, None) => push!(opcode::Read::new($fd, p, len).offset(op.offset)),
                (_, Some(b)) => push!(opcode::WriteFixed::new($fd, p, len, b).offset(op.offset)),
                (_, None) => push!(opcode::Write::new($fd, p, len).offset(op.offset)),
            }
        };
    }
    if file.fixed {
        entry!(types::Fixed(0))
    } else {
        entry!(types::Fd(file.fd))
    }
}
