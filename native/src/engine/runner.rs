//! One run on a real target: checks the span and flags, picks the engine, starts the jobs, and
//! records their completions through the run's [`Session`].
//!
//! Every job is set up the same way before the common clock starts ([`Prepared::new`]: ring,
//! buffers, registration) and runs the same way ([`Prepared::run`]); only where its completions
//! go differs. One job runs on the calling thread and records directly ([`Direct`]). Several
//! jobs run on their own threads and send completion batches ([`Batcher`]) to the calling
//! thread, which is the one recorder ([`Collector`]): the percentiles of an interval are
//! computed over every job's completions.

use super::job::{Clock, Job};
use super::open::{Kind, Opened};
use super::preflight::{check, check_discard, select_engine, set_direct, Engine};
use super::report::{Batcher, Collector, Control, Direct, Reporter};
use super::{affinity, psync, uring};
use crate::error::{Error, Result};
use crate::run::{Observer, RunOptions, RunOutput, Session, Status};
use crate::workload::{job_slices, Budget, DataGen, EngineKind, OpStream, Rw, Workload};
use io_uring::IoUring;
use serde_json::json;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::sync_channel;
use std::sync::{Barrier, OnceLock};
use std::time::Instant;

/// A finished run and the target's cumulative host bytes written after it.
pub struct Done {
    pub output: RunOutput,
    pub host_written_end: u64,
}

/// A psync job's end time as the io_uring engine's statistics (no `io_uring_enter` calls).
fn psync_stats(end_ns: u64) -> uring::Stats {
    uring::Stats {
        end_ns,
        ..Default::default()
    }
}

fn make_job<'a>(
    t: &'a Opened,
    w: &Workload,
    slice: (u64, u64),
    j: usize,
    depth: usize,
    ctl: &'a Control,
    t0: Clock,
) -> Job<'a> {
    Job {
        file: &t.file,
        kind: t.kind,
        path: &t.path,
        stream: OpStream::new(w, slice.0, slice.1, j as u32),
        gen: DataGen::new(
            &w.data,
            w.seed
                .wrapping_add((j as u64).wrapping_mul(crate::rng::PHI)),
        ),
        bs: w.bs,
        writes: matches!(w.rw, Rw::Write | Rw::RandWrite | Rw::RandRw),
        reads: matches!(w.rw, Rw::Read | Rw::RandRead | Rw::RandRw),
        depth,
        ctl,
        t0,
        held: None,
    }
}

/// One job set up before the clock starts: with io_uring, its ring and what
/// [`uring::prepare`] made of it (buffers filled and registered).
struct Prepared<'a> {
    job: Job<'a>,
    ring: Option<(IoUring, uring::Setup)>,
    /// How long the set-up took, in ns.
    setup_ns: u64,
}

impl<'a> Prepared<'a> {
    /// Sets job `j` up for `engine`. Without a ring (the kernel refused one: `Err` carries
    /// why) the job is not set up; the caller falls back to psync or fails the run.
    #[allow(
        clippy::too_many_arguments,
        reason = "one job's set-up reads each of these once"
    )]
    fn new(
        t: &'a Opened,
        w: &Workload,
        slice: (u64, u64),
        j: usize,
        depth: usize,
        ctl: &'a Control,
        engine: Engine,
    ) -> std::result::Result<Self, std::io::Error> {
        let set_up = Instant::now();
        let ring = match engine {
            Engine::IoUring => Some(uring::build_ring(depth as u32)?),
            Engine::Psync => None,
        };
        let mut job = make_job(t, w, slice, j, depth, ctl, Clock::now());
        let ring = ring.map(|mut r| {
            let setup = uring::prepare(&mut job, &mut r);
            (r, setup)
        });
        Ok(Prepared {
            job,
            ring,
            setup_ns: set_up.elapsed().as_nanos() as u64,
        })
    }

    /// Runs the job to its end from `t0`, the run's clock origin, reporting to `rep`.
    fn run<R: Reporter>(self, t0: Clock, rep: &mut R) -> uring::Stats {
        let Prepared {
            mut job,
            ring,
            setup_ns,
        } = self;
        job.t0 = t0;
        let stats = match ring {
            Some((mut ring, setup)) => uring::run(&mut job, &mut ring, setup, rep),
            None => psync_stats(psync::run(&mut job, rep)),
        };
        uring::Stats { setup_ns, ..stats }
    }
}

/// Runs `w.jobs` jobs on their own threads, each set up before the common clock starts, their
/// completions merged by the calling thread into `session`; a recording error goes to
/// `rec_error`.
#[allow(clippy::too_many_arguments, reason = "one run's state, borrowed apart")]
fn run_jobs(
    t: &Opened,
    w: &Workload,
    engine: Engine,
    depth: usize,
    slices: &[(u64, u64)],
    ctl: &Control,
    session: &mut Session<'_>,
    rec_error: &mut Option<Error>,
) -> uring::Stats {
    let jobs = w.jobs as usize;
    let (tx, rx) = sync_channel(1024);
    let mut spare_tx = Vec::with_capacity(jobs);
    let mut spare_rx = Vec::with_capacity(jobs);
    for _ in 0..jobs {
        let (a, b) = sync_channel(8);
        spare_tx.push(a);
        spare_rx.push(Some(b));
    }
    let mut collector = Collector::new(w.interval_s, spare_tx);
    let ready = Barrier::new(jobs + 1);
    let start = OnceLock::new();
    let (ready, start) = (&ready, &start);
    let ends = std::thread::scope(|sc| {
        let mut handles = Vec::with_capacity(jobs);
        for (j, spare) in spare_rx.iter_mut().enumerate() {
            let tx = tx.clone();
            let spare = spare.take().expect("one spare channel per job");
            let slice = slices[j];
            handles.push(sc.spawn(move || {
                // pinned before its ring and buffers are set up, as fio pins a job
                let _pinned = affinity::pin_job(w, j)
                    .map_err(|e| ctl.fail(format!("could not pin job {j} to cpus_allowed ({e})")))
                    .ok();
                let job = Prepared::new(t, w, slice, j, depth, ctl, engine)
                    .map_err(|e| {
                        ctl.fail(format!(
                            "could not set up io_uring for job {j} ({e}); use engine=psync"
                        ))
                    })
                    .ok();
                ready.wait(); // every job is set up
                ready.wait();
                let t0 = *start
                    .get()
                    .expect("start time set before the second barrier");
                let mut rep = Batcher::new(j, w.interval_s, tx, spare);
                // A bug in a job fails the run (the capture keeps what was recorded)
                // instead of silently dropping the job's share of the I/O.
                let stats = match job {
                    Some(job) if !ctl.halted() => {
                        catch_unwind(AssertUnwindSafe(|| job.run(t0, &mut rep))).unwrap_or_else(
                            |p| {
                                ctl.fail(format!("job {j}: {}", Error::from_panic(p.as_ref())));
                                uring::Stats::default()
                            },
                        )
                    }
                    _ => uring::Stats::default(),
                };
                rep.done();
                stats
            }));
        }
        drop(tx);
        ready.wait(); // every job is set up
        let _ = start.set(Clock::now());
        ready.wait();
        if let Err(e) = collector.run(session, &rx, ctl) {
            rec_error.get_or_insert(e);
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect::<Vec<uring::Stats>>()
    });
    uring::Stats {
        end_ns: ends.iter().map(|s| s.end_ns).max().unwrap_or(0),
        enters: ends.iter().map(|s| s.enters).sum(),
        inflight_ns: ends.iter().map(|s| s.inflight_ns).sum(),
        first_submit_ns: ends.iter().filter_map(|s| s.first_submit_ns).min(),
        setup_ns: ends.iter().map(|s| s.setup_ns).max().unwrap_or(0),
    }
}

/// Runs `w` on the opened target `t`.
pub fn run(
    t: &Opened,
    w: &Workload,
    o: &RunOptions,
    target_meta: serde_json::Value,
    host_written_start: u64,
    obs: &mut dyn Observer,
) -> Result<Done> {
    let (offset, len) = check(t, w)?;
    affinity::check(w)?;
    let reads = matches!(w.rw, Rw::Read | Rw::RandRead | Rw::RandRw);
    let laid_out_bytes = if reads && t.kind == Kind::File {
        super::layout::lay_out(t, offset, len, obs)?
    } else {
        0
    };
    let trims = matches!(w.rw, Rw::Trim | Rw::RandTrim);
    if trims {
        check_discard(t)?;
    }
    set_direct(t, w.direct)?;
    let (mut engine, mut note) = select_engine(w)?;
    let depth = match engine {
        Engine::IoUring => w.iodepth as usize,
        Engine::Psync => 1,
    };
    let deadline = w
        .time_s
        .map(|s| crate::units::time_limit_ns(s, w.interval_s));
    let ctl = Control::new(deadline, Budget::of(w));
    let slices = job_slices(offset, len, w.bs, w.jobs);
    let mut session = Session::start(w, o, target_meta, false, host_written_start, obs)?;
    // the drive's telemetry, sampled off the I/O path (none for files and loop devices)
    let telemetry = crate::telemetry::plan::Plan::for_target(
        t.kind == Kind::Block,
        &t.path,
        o.sys_root
            .as_deref()
            .unwrap_or(std::path::Path::new("/sys")),
    );
    session.add_meta("smart_start", telemetry.snapshot());
    if let Some(r) = telemetry.reader() {
        session.attach_telemetry(r);
    }

    let mut rec_error: Option<Error> = None;
    let stats = if w.jobs == 1 {
        // the job runs on this thread, pinned while it runs, as fio pins a job
        let pinned = affinity::pin_job(w, 0);
        let job = match &pinned {
            Err(e) => {
                ctl.fail(format!("could not pin the job to cpus_allowed ({e})"));
                None
            }
            Ok(_) => match Prepared::new(t, w, slices[0], 0, depth, &ctl, engine) {
                Ok(job) => Some(job),
                Err(e) if w.engine == EngineKind::Auto => {
                    engine = Engine::Psync;
                    note = Some(format!("io_uring unavailable ({e}); fell back to psync"));
                    Prepared::new(t, w, slices[0], 0, depth, &ctl, engine).ok()
                }
                Err(e) => {
                    ctl.fail(format!("could not set up io_uring ({e}); use engine=psync"));
                    None
                }
            },
        };
        // the clock starts once everything is set up
        let mut rep = Direct::new(&mut session, &ctl, w.interval_s);
        let stats = job.map_or_else(uring::Stats::default, |job| job.run(Clock::now(), &mut rep));
        rec_error = rep.error.take();
        stats
    } else {
        run_jobs(
            t,
            w,
            engine,
            depth,
            &slices,
            &ctl,
            &mut session,
            &mut rec_error,
        )
    };
    // past the deadline when commands in flight at it were reaped: the run and its last
    // interval end at the last completion, as fio's runtime does (`Session::finish`)
    let raw_end = stats.end_ns;
    let status = match (ctl.failure(), &rec_error) {
        (Some(m), _) => Status::Failed(m),
        (None, Some(e)) => Status::Failed(e.to_string()),
        (None, None) if ctl.was_interrupted() => Status::Interrupted,
        _ => Status::Complete,
    };
    let written = session.total_bytes[1];
    // How trims reached the device: queued at `iodepth` through io_uring, or one at a time.
    let trim_issue = trims.then(|| match engine {
        Engine::IoUring if depth > 1 && !ctl.trims_were_synchronous() => "queued",
        _ => "synchronous",
    });
    let extra = json!({
        "engine": engine.name(),
        "engine_note": note,
        "trim_issue": trim_issue,
        "iodepth_effective": depth,
        // `io_uring_enter` calls of every job together (null for psync)
        "io_uring_enters": (engine == Engine::IoUring).then_some(stats.enters),
        // time-weighted mean of the I/Os in flight over the run, every job's together (each
        // counted from when its latency starts to when the enter returning its completion
        // returns: the capture's IOPS × mean latency, measured by the engine; null for psync)
        "inflight_mean": (engine == Engine::IoUring && raw_end > 0)
            .then(|| stats.inflight_ns as f64 / raw_end as f64),
        // set-up before the clock started (ring, buffers filled and registered), and when the
        // first I/O's latency started after it, in ns (null for psync / without I/O)
        "setup_ns": (engine == Engine::IoUring).then_some(stats.setup_ns),
        "first_submit_ns": stats.first_submit_ns,
        "span": { "offset": offset, "size": len },
        "laid_out_bytes": laid_out_bytes,
    });
    let smart_end = telemetry.snapshot();
    session.add_meta("smart_end", smart_end);
    session.add_meta("telemetry", telemetry.finish());
    let output = session.finish(raw_end, status, extra)?;
    Ok(Done {
        output,
        host_written_end: host_written_start + written,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::report::Reporter;
    use crate::run::Quiet;
    use crate::target::OpenOptions;
    use crate::workload::OpKind;

    /// Forwards every completion and keeps its latency: a run whose latencies we can observe.
    struct Tee<R> {
        inner: R,
        lat_ns: Vec<u64>,
    }

    impl<R: Reporter> Reporter for Tee<R> {
        fn complete(&mut self, t_ns: u64, kind: OpKind, bytes: u64, lat_ns: u64) {
            self.lat_ns.push(lat_ns);
            self.inner.complete(t_ns, kind, bytes, lat_ns);
        }
        fn heartbeat(&mut self, t_ns: u64) {
            self.inner.heartbeat(t_ns);
        }
    }

    /// A file target of `size` bytes created in a new temporary directory (kept alive by the
    /// returned guard).
    fn file_target(size: u64) -> (tempfile::TempDir, Opened) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.bin");
        let o = OpenOptions {
            create_size: Some(size),
            ..Default::default()
        };
        let t = super::super::open::open(p.to_str().unwrap(), &o).unwrap();
        (d, t)
    }

    /// A file target of `size` bytes entirely in the page cache (reads complete in the enter
    /// that submits them), and a buffered one-pass 4 KiB random read of it at `iodepth`.
    fn page_cached_randread(size: u64, iodepth: &str) -> (tempfile::TempDir, Opened, Workload) {
        let (d, t) = file_target(size);
        let w = Workload::from_pairs([
            ("rw", "randread"),
            ("bs", "4k"),
            ("iodepth", iodepth),
            ("loops", "1"),
            ("direct", "false"),
        ])
        .unwrap();
        set_direct(&t, false).unwrap();
        std::fs::read(d.path().join("t.bin")).unwrap();
        (d, t, w)
    }

    /// Issue 23 item 15: an offset near 2^64 plus a size wrapped past the bounds check.
    #[test]
    fn offset_plus_size_past_2_pow_64_is_refused_not_wrapped() {
        let (_d, t) = file_target(1 << 20);
        let w = Workload::from_pairs([
            ("rw", "write"),
            ("offset", "4096"),
            ("size", "18446744073709547520"),
        ])
        .unwrap();
        let e = check(&t, &w).unwrap_err();
        assert!(matches!(e, Error::InvalidValue(_)), "{e}");
        assert!(e.to_string().contains("more than 2^64"), "{e}");
    }

    /// At `t/io_uring -s32 -c32` batches, a wait for 32 completions hands the refills over in
    /// the same `io_uring_enter`, as `t/io_uring` does: page-cached reads complete as they are
    /// submitted, so each round of 32 I/Os is one enter (the QD1 split into a submitting and a
    /// waiting enter made it two: 0.063 vs t/io_uring's 0.031 syscalls per I/O).
    #[test]
    fn a_batch_of_completions_is_waited_for_in_the_enter_that_submits() {
        let (_d, t, w) = page_cached_randread(16 << 20, "32");
        let ctl = Control::new(None, Budget::of(&w));
        let mut quiet = Quiet;
        let mut session = Session::start(
            &w,
            &RunOptions::default(),
            serde_json::json!({}),
            false,
            0,
            &mut quiet,
        )
        .unwrap();
        let mut ring = uring::build_ring(32).unwrap();
        let mut job = make_job(&t, &w, (0, 16 << 20), 0, 32, &ctl, Clock::now());
        let setup = uring::prepare(&mut job, &mut ring);
        job.t0 = Clock::now();
        let mut rep = Direct::new(&mut session, &ctl, w.interval_s);
        let stats = uring::run_batched(&mut job, &mut ring, setup, &mut rep, (32, 32));
        let ios = 4096;
        assert_eq!(session.total_ios[0], ios);
        // one enter per 32 I/Os, and a few to arm and remove the run's timeout
        assert!(stats.enters <= ios / 32 + 8, "{} enters", stats.enters);
    }

    /// Submission entries the kernel has consumed from a ring, as it reports them in
    /// `/proc/self/fdinfo`.
    fn sq_head(ring_fd: i32) -> u64 {
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{ring_fd}")).unwrap();
        let line = info.lines().find(|l| l.starts_with("SqHead:")).unwrap();
        line["SqHead:".len()..].trim().parse().unwrap()
    }

    /// Records, each time completions are reported, how many more entries the kernel has taken
    /// from the ring than completions have been reported, counting these.
    struct SqProbe<R> {
        inner: R,
        ring_fd: i32,
        reported: u64,
        ahead: Vec<u64>,
    }

    impl<R: Reporter> Reporter for SqProbe<R> {
        fn complete(&mut self, t_ns: u64, kind: OpKind, bytes: u64, lat_ns: u64) {
            self.complete_all(t_ns, kind, bytes, &[lat_ns]);
        }
        fn complete_all(&mut self, t_ns: u64, kind: OpKind, bytes: u64, lat_ns: &[u64]) {
            self.reported += lat_ns.len() as u64;
            self.ahead.push(sq_head(self.ring_fd) - self.reported);
            self.inner.complete_all(t_ns, kind, bytes, lat_ns);
        }
        fn heartbeat(&mut self, t_ns: u64) {
            self.inner.heartbeat(t_ns);
        }
    }

    /// At QD1 the next I/O is handed to the kernel before the last completion is reported, as
    /// fio submits before its bookkeeping: reported first, every I/O waited in the submission
    /// queue through the reporting (issue 29: QD1 at 0.56 of fio's IOPS on a quiet machine).
    #[test]
    fn at_qd1_the_next_io_is_in_the_kernel_while_the_last_is_reported() {
        use std::os::unix::io::AsRawFd;
        let (_d, t, w) = page_cached_randread(1 << 20, "1");
        let ctl = Control::new(None, Budget::of(&w));
        let mut quiet = Quiet;
        let meta = serde_json::json!({});
        let mut session =
            Session::start(&w, &RunOptions::default(), meta, false, 0, &mut quiet).unwrap();
        let mut ring = uring::build_ring(1).unwrap();
        let ring_fd = ring.as_raw_fd();
        let mut job = make_job(&t, &w, (0, 1 << 20), 0, 1, &ctl, Clock::now());
        let setup = uring::prepare(&mut job, &mut ring);
        job.t0 = Clock::now();
        let mut rep = SqProbe {
            inner: Direct::new(&mut session, &ctl, w.interval_s),
            ring_fd,
            reported: 0,
            ahead: vec![],
        };
        let stats = uring::run(&mut job, &mut ring, setup, &mut rep);
        let ahead = rep.ahead;
        let ios = 256;
        assert_eq!(session.total_ios[0], ios);
        assert_eq!(ahead.len() as u64, ios, "one report per I/O at QD1");
        // the kernel holds one entry more while each completion is reported (the next I/O)
        // than after the last, when there is no next I/O (besides it: the run's timeout)
        let (last, before) = ahead.split_last().unwrap();
        let held_back = before.iter().filter(|&&a| a != last + 1).count();
        assert_eq!(
            held_back, 0,
            "reported before the next I/O was handed over: {ahead:?}"
        );
        // A read of cached pages completes inside the enter that submits it where the
        // filesystem takes it without blocking (ext4, xfs, btrfs); then the completion is in the
        // ring when the engine comes to wait, and it makes no second enter (fio's getevents reaps
        // before it enters; the old wait entered the kernel for it: 2 enters per I/O). Where the
        // kernel hands the read to a worker (tmpfs), a submitting and a waiting enter per I/O.
        if completes_inline(&t) {
            // an eighth spare: a page reclaimed meanwhile is read by a worker, and waited for
            assert!(
                stats.enters <= ios + ios / 8 + 4,
                "{} enters for {ios} I/Os",
                stats.enters
            );
        } else {
            assert!(
                stats.enters >= 2 * ios && stats.enters <= 2 * ios + 4,
                "{}",
                stats.enters
            );
        }
    }

    /// Whether a 4 KiB read of `t` (cached) is complete when the `io_uring_enter` that submits
    /// it returns, on a ring built as the engine builds its own.
    fn completes_inline(t: &Opened) -> bool {
        use std::os::unix::io::AsRawFd;
        let mut ring = uring::build_ring(1).unwrap();
        let mut buf = vec![0u8; 4096];
        let sqe = io_uring::opcode::Read::new(
            io_uring::types::Fd(t.file.as_raw_fd()),
            buf.as_mut_ptr(),
            4096,
        )
        .build();
        // SAFETY: `buf` outlives the read, which is reaped below before it is dropped.
        unsafe { ring.submission().push(&sqe).unwrap() };
        ring.submit().unwrap();
        let inline = ring.completion().len() == 1;
        ring.submit_and_wait(usize::from(!inline)).unwrap();
        ring.completion().for_each(drop);
        drop(buf);
        inline
    }

    /// A real io_uring run on a file, over many intervals: the metadata's whole-run percentiles
    /// are those of the raw per-I/O latencies the engine reported, to the histogram's precision
    /// (never below, at most 1/1024 above, never above the max); max and mean are exact.
    #[test]
    fn whole_run_latency_is_that_of_every_io_of_a_real_run() {
        let (_d, t) = file_target(8 << 20);
        let w = Workload::from_pairs([
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("iodepth", "16"),
            ("loops", "2"),
            ("interval", "0.002s"),
            ("direct", "false"),
        ])
        .unwrap();
        set_direct(&t, false).unwrap();
        let ctl = Control::new(None, Budget::of(&w));
        let mut quiet = Quiet;
        let meta = serde_json::json!({});
        let mut session =
            Session::start(&w, &RunOptions::default(), meta, false, 0, &mut quiet).unwrap();
        let mut ring = uring::build_ring(16).unwrap();
        let mut job = make_job(&t, &w, (0, 8 << 20), 0, 16, &ctl, Clock::now());
        let setup = uring::prepare(&mut job, &mut ring);
        job.t0 = Clock::now();
        let mut rep = Tee {
            inner: Direct::new(&mut session, &ctl, w.interval_s),
            lat_ns: vec![],
        };
        let stats = uring::run(&mut job, &mut ring, setup, &mut rep);
        let Tee { lat_ns, .. } = rep;
        let out = session
            .finish(stats.end_ns, Status::Complete, serde_json::json!({}))
            .unwrap();
        assert_eq!(lat_ns.len(), 4096);
        assert!(stats.enters > 0 && stats.enters <= 4096);
        // the in-flight integral counts each I/O from its latency's start to its reap: the
        // sum of the latencies reported, to the ns
        assert_eq!(
            stats.inflight_ns,
            lat_ns.iter().map(|&l| u128::from(l)).sum::<u128>()
        );
        let first = stats.first_submit_ns.unwrap();
        assert!(first <= stats.end_ns);
        let s = &out.meta["latency"]["write"];
        let mut lats: Vec<u64> = lat_ns.iter().map(|&l| l.max(1)).collect();
        lats.sort_unstable();
        let max = *lats.last().unwrap();
        assert_eq!(s["max_us"].as_f64().unwrap(), max as f64 / 1e3);
        let mean = lat_ns.iter().sum::<u64>() as f64 / lat_ns.len() as f64 / 1e3;
        assert!((s["mean_us"].as_f64().unwrap() - mean).abs() < 1e-6);
        for (q, key) in [
            (0.5, "p50_us"),
            (0.99, "p99_us"),
            (0.999, "p999_us"),
            (0.9999, "p9999_us"),
        ] {
            let rank = ((q * lats.len() as f64).ceil() as usize).max(1);
            let want = lats[rank - 1] as f64 / 1e3;
            let got = s[key].as_f64().unwrap();
            assert!(
                got >= want && got <= want * (1.0 + 1.0 / 1024.0),
                "{key}: {got} vs {want}"
            );
        }
        assert!(out.rows.len() > 1, "the run spans several intervals");
    }
}
