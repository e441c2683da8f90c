//! The engine issues the stream's ops: a seeded run writes exactly the blocks its stream names.

use super::{build_ring, prepare, run_batched};
use crate::engine::job::{Clock, Job};
use crate::engine::open::Kind;
use crate::engine::report::{Control, Reporter};
use crate::workload::{Budget, DataGen, OpKind, OpStream, Workload};
use std::collections::BTreeSet;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;

/// Counts the completions reported.
#[derive(Default)]
struct Count {
    ios: [u64; 3],
}

impl Reporter for Count {
    fn complete(&mut self, _t_ns: u64, kind: OpKind, _bytes: u64, _lat_ns: u64) {
        self.ios[kind as usize] += 1;
    }
    fn heartbeat(&mut self, _t_ns: u64) {}
}

/// Offsets of the `bs` blocks of `f` that hold data (`SEEK_DATA` / `SEEK_HOLE`).
fn data_blocks(f: &File, bs: u64) -> BTreeSet<u64> {
    let mut blocks = BTreeSet::new();
    let mut off = 0;
    loop {
        // SAFETY: plain lseek calls on an open descriptor.
        let data = unsafe { libc::lseek(f.as_raw_fd(), off, libc::SEEK_DATA) };
        if data < 0 {
            return blocks;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(f.as_raw_fd(), data, libc::SEEK_HOLE) };
        blocks.extend((data as u64 / bs..(hole as u64).div_ceil(bs)).map(|b| b * bs));
        off = hole;
    }
}

/// The uring loop takes its ops from the stream in blocks and sorts completions as it reaps
/// them; a seeded `randrw` with replacement over a sparse file, at each batch and depth, must
/// still issue every op of the stream once, with its own kind: the blocks holding data after
/// the run are exactly the stream's write offsets (which depend on the generator's draws for
/// both the blocks and the kinds, in order), and the completions counted are the stream's.
#[test]
fn a_seeded_run_writes_exactly_the_blocks_its_stream_names() {
    let (bs, size) = (4096u64, 4u64 << 20);
    for (depth, batch, seed) in [(1, (4, 1), "3"), (8, (4, 1), "5"), (32, (8, 8), "7")] {
        let w = Workload::from_pairs([
            ("rw", "randrw"),
            ("rwmix_read", "60"),
            ("random", "uniform"),
            ("bs", "4k"),
            ("iodepth", &depth.to_string()),
            ("loops", "1"),
            ("seed", seed),
        ])
        .unwrap();
        let mut stream = OpStream::new(&w, 0, size, 0);
        let ops: Vec<_> = std::iter::from_fn(|| stream.next_op()).collect();
        let want: BTreeSet<u64> = ops
            .iter()
            .filter(|o| o.kind == OpKind::Write)
            .map(|o| o.offset)
            .collect();
        let reads = ops.iter().filter(|o| o.kind == OpKind::Read).count() as u64;

        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("sparse.bin");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .unwrap();
        file.set_len(size).unwrap();
        assert!(data_blocks(&file, bs).is_empty());
        let ctl = Control::new(None, Budget::of(&w));
        let mut job = Job {
            file: &file,
            kind: Kind::File,
            path: &path,
            stream: OpStream::new(&w, 0, size, 0),
            gen: DataGen::new(&w.data, w.seed),
            bs,
            writes: true,
            reads: true,
            depth,
            ctl: &ctl,
            t0: Clock::now(),
            held: None,
        };
        let mut ring = build_ring(depth as u32).unwrap();
        let setup = prepare(&mut job, &mut ring);
        let mut rep = Count::default();
        run_batched(&mut job, &mut ring, setup, &mut rep, batch);
        assert_eq!(ctl.failure(), None);
        let ios = [reads, ops.len() as u64 - reads, 0];
        assert_eq!(rep.ios, ios, "depth {depth}");
        assert_eq!(data_blocks(&file, bs), want, "depth {depth}");
    }
}
