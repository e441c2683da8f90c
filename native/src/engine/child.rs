//! A real target's run in a child process of a session of its own, as fio runs a job.
//!
//! fio forks each job and the job calls `setsid()` (fio-3.33 `backend.c`: `if
//! (!o->use_thread) setsid();`). With `sched_autogroup_enabled`, a new session is a new
//! scheduler autogroup: CPU-busy work started from the same session (a build in the same
//! terminal, the other kernels of a Jupyter server) no longer shares the job's group, and a
//! QD1 job lands on one CPU with the device's completion work, taking turns with it (issue 29:
//! 14 of 18 runs fast in a session of its own against 3 of 18 without). A process cannot move
//! itself to another autogroup except by `setsid`, which a session's process-group leader (a
//! shell's job) may not call, so the run goes to a forked child.
//!
//! The child runs the in-process run ([`RealTarget::run`]) with an observer that sends each
//! batch of closed intervals to the parent over a pipe and reads the stop request from a
//! shared page. At the end it sends the result (the metadata and the target's host bytes
//! written; the rows were already sent) or the error with its kind, and `_exit`s: no atexit
//! handler, no destructor of the parent's objects, never Python. The parent hands the rows to
//! the real observer as they come, turns its `should_stop` into the stop request, and reaps
//! the child. A child killed by a signal (or the parent: `PR_SET_PDEATHSIG` sends the child
//! SIGTERM, which ends its run `interrupted` with the capture file whole) is an error naming
//! the signal; a streamed capture file keeps what was flushed, for `flashback.recover`.
//!
//! **What the child may call.** After `fork` in a multi-threaded process only the forking
//! thread exists in the child; a lock another thread held at the fork stays held forever.
//! - glibc's `fork` takes every malloc arena lock before forking and resets them in the child
//!   (its built-in atfork handling), so the allocator (Rust's global allocator is glibc's
//!   `malloc` here) works in the child. Python's allocator and polars' jemalloc are never
//!   called there.
//! - Our own process-wide locks ([`crate::engine::BATCHES`], the compressibility memo) are
//!   held by the forking thread across `fork` ([`ForkLocks`]) and released in both
//!   processes, so no other thread of ours can hold one at that instant; the lazily built
//!   tables the run reads (ATA counter units) are built before the fork.
//! - The rest is what the in-process run does on its own thread: files, `io_uring`, threads
//!   of its own (jobs, the telemetry sampler), all created after the fork.
//!
//! Only real targets run this way; `sim:` runs stay in the process.

use super::RealTarget;
use crate::capture::{DriveSample, IntervalRow, LatStats, SimTruth};
use crate::error::{Error, Result};
use crate::run::{Observer, RunOptions, RunOutput};
use crate::workload::Workload;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

/// Frame tags (child → parent). A frame is the tag, its payload's length (u32 LE), the payload.
const ROWS: u8 = 1;
const DONE: u8 = 2;
const FAILED: u8 = 3;

/// The child's exit status when its parent was gone before it could ask to be signalled when
/// the parent dies (it runs nothing).
const ORPHANED: i32 = 3;

/// Runs `w` on `t` in a forked child in a session of its own (see the module note); the
/// result is the in-process run's. Errors: the run's own, [`Error::Io`] when the child cannot
/// be started or was killed by a signal, [`Error::Internal`] when it ended without a result.
pub fn run(
    t: &mut RealTarget,
    w: &Workload,
    o: &RunOptions,
    obs: &mut dyn Observer,
) -> Result<RunOutput> {
    let stop = StopPage::new()?;
    let (rfd, wfd) = pipe()?;
    let parent = std::process::id() as libc::pid_t;
    crate::telemetry::ata_units::units();
    let pid = {
        let _locks = ForkLocks::take();
        // SAFETY: fork has no preconditions; the child only calls what the module note lists.
        unsafe { libc::fork() }
    };
    if pid < 0 {
        return Err(Error::io(
            "could not start the run's process (fork); pass session=\"shared\" to run in this process",
            io::Error::last_os_error(),
        ));
    }
    if pid == 0 {
        drop(rfd);
        child_main(t, w, o, &stop, wfd, parent);
    }
    drop(wfd);
    let mut child = Child { pid, reaped: false };
    let keep_rows = !(o.stream_only && o.capture_path.is_some());
    let got = receive(&rfd, &stop, obs, keep_rows);
    if got.is_err() {
        stop.request(); // the parent cannot follow the run: end it rather than wait it out
    }
    drop(rfd); // a child still writing gets EPIPE, not a full pipe nobody reads
    let status = child.reap();
    let (rows, end) = got?;
    match end {
        Some(Ok(done)) => {
            if done.rows != rows.len() {
                return Err(Error::Internal(format!(
                    "the run's process returned {} intervals and sent {}",
                    done.rows,
                    rows.len()
                )));
            }
            t.host_written = done.host_written_end;
            Ok(RunOutput {
                rows,
                meta: done.meta,
                with_sim: false,
            })
        }
        Some(Err(e)) => Err(e),
        None => Err(ended_without_result(pid, status)),
    }
}

/// The error for a child that ended before sending its result, from its wait status (`None`:
/// not available, e.g. SIGCHLD ignored).
fn ended_without_result(pid: libc::pid_t, status: Option<i32>) -> Error {
    let what = format!(
        "the run's process (pid {pid}, in a session of its own; a streamed capture file keeps \
         the intervals written so far, for flashback recover) ended without a result"
    );
    match status {
        Some(s) if libc::WIFSIGNALED(s) => {
            let sig = libc::WTERMSIG(s);
            Error::io(
                what,
                io::Error::other(format!("killed by signal {sig} ({})", signal_name(sig))),
            )
        }
        Some(s) if libc::WIFEXITED(s) => {
            Error::Internal(format!("{what}: exit status {}", libc::WEXITSTATUS(s)))
        }
        _ => Error::Internal(format!("{what}; its exit status is not available")),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGHUP => "SIGHUP",
        libc::SIGPIPE => "SIGPIPE",
        _ => "see kill -l",
    }
}

/// What a finished child reports besides the rows.
struct Done {
    meta: serde_json::Value,
    rows: usize,
    host_written_end: u64,
}

/// Reads frames until the child closes the pipe: rows to `obs` (kept when `keep_rows`), the
/// observer's stop to the shared page. Returns the rows and the child's result (`None`: it
/// ended without one).
#[allow(clippy::type_complexity, reason = "one private return value")]
fn receive(
    rfd: &OwnedFd,
    stop: &StopPage,
    obs: &mut dyn Observer,
    keep_rows: bool,
) -> Result<(Vec<IntervalRow>, Option<Result<Done>>)> {
    let mut rows = Vec::new();
    let mut end = None;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut chunk = vec![0u8; 1 << 16];
    let mut asked = false;
    loop {
        if !asked && obs.should_stop() {
            stop.request();
            asked = true;
        }
        let mut p = libc::pollfd {
            fd: rfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, 50) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::io("waiting for the run's process failed", e));
        }
        if n == 0 {
            continue;
        }
        // SAFETY: chunk is a writable buffer of its length.
        let got = unsafe { libc::read(rfd.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
        if got < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::io("reading from the run's process failed", e));
        }
        if got == 0 {
            return Ok((rows, end));
        }
        buf.extend_from_slice(&chunk[..got as usize]);
        let mut at = 0;
        while buf.len() - at >= 5 {
            let len = u32::from_le_bytes(buf[at + 1..at + 5].try_into().expect("4 bytes")) as usize;
            if buf.len() - at - 5 < len {
                break;
            }
            let (tag, payload) = (buf[at], &buf[at + 5..at + 5 + len]);
            at += 5 + len;
            match tag {
                ROWS => {
                    let new = decode_rows(payload)?;
                    obs.on_rows(&new);
                    if keep_rows {
                        rows.extend(new);
                    }
                }
                DONE => end = Some(Ok(decode_done(payload)?)),
                FAILED => end = Some(Err(decode_error(payload)?)),
                _ => {
                    return Err(Error::Internal(format!(
                        "the run's process sent frame {tag}"
                    )))
                }
            }
        }
        buf.drain(..at);
    }
}

/// The child: its own session, signalled if the parent dies, the run, the result, `_exit`.
fn child_main(
    t: &mut RealTarget,
    w: &Workload,
    o: &RunOptions,
    stop: &StopPage,
    wfd: OwnedFd,
    parent: libc::pid_t,
) -> ! {
    // SAFETY: plain system calls; the handler only stores to an atomic (async-signal-safe).
    unsafe {
        libc::setsid();
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        // the parent may have died before the line above: then no signal would come
        if libc::getppid() != parent {
            libc::_exit(ORPHANED);
        }
        STOP.store(stop.0, Ordering::SeqCst);
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut unblock: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut unblock);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaction(sig, &sa, std::ptr::null_mut());
            libc::sigaddset(&mut unblock, sig);
        }
        // the forking thread's mask is inherited: a thread that blocked these would make
        // the child deaf to its parent's death
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &unblock, std::ptr::null_mut());
        // a parent gone mid-run: writes fail with EPIPE and the run still ends cleanly
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    close_inherited(&[t.t.file.as_raw_fd(), wfd.as_raw_fd()]);
    let mut pipe = PipeObserver {
        fd: wfd,
        stop,
        gone: false,
        frame: Vec::new(),
    };
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        RealTarget::run(t, w, o, &mut pipe)
    }))
    .unwrap_or_else(|p| Err(Error::from_panic(p.as_ref())));
    let mut frame = Vec::new();
    match out {
        Ok(out) => {
            let done = serde_json::json!({
                "meta": out.meta,
                "rows": out.rows.len(),
                "host_written_end": t.host_written,
            });
            put_frame(&mut frame, DONE, done.to_string().as_bytes());
        }
        Err(e) => put_frame(&mut frame, FAILED, &encode_error(&e)),
    }
    pipe.send(&frame);
    // SAFETY: ends the child without running the parent's atexit handlers or destructors.
    unsafe { libc::_exit(0) }
}

/// Closes every descriptor the child inherited but stdio and `keep` (the target, the pipe):
/// the parent's other files, sockets and pipes, which the child would otherwise hold open for
/// the whole run (a lock on another run's capture file, the write end of a pipe another
/// thread waits to see closed). `close_range(2)` where the kernel has it (5.9), else each
/// descriptor listed in `/proc/self/fd`.
fn close_inherited(keep: &[std::os::fd::RawFd]) {
    let mut keep: Vec<u32> = keep.iter().map(|&f| f as u32).chain([0, 1, 2]).collect();
    keep.sort_unstable();
    keep.dedup();
    let mut from = 0u32;
    let mut ranges = vec![];
    for &k in &keep {
        if k > from {
            ranges.push((from, k - 1));
        }
        from = k + 1;
    }
    ranges.push((from, u32::MAX));
    // SAFETY: closes descriptors of this (single-threaded) child only; none is in use.
    let closed = ranges
        .iter()
        .all(|&(a, b)| unsafe { libc::syscall(libc::SYS_close_range, a, b, 0) } == 0);
    if closed {
        return;
    }
    let listed: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(d) => d
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
        Err(_) => return,
    };
    for fd in listed {
        if !keep.contains(&(fd as u32)) {
            // SAFETY: as above; the directory's own descriptor is already closed (EBADF).
            unsafe { libc::close(fd) };
        }
    }
}

/// The shared page's stop word in the child, for its signal handler.
static STOP: AtomicPtr<AtomicU32> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn on_signal(_sig: libc::c_int) {
    let p = STOP.load(Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: the page stays mapped for the child's life.
        unsafe { (*p).store(1, Ordering::SeqCst) };
    }
}

/// The child's observer: rows to the pipe, the stop request from the shared page.
struct PipeObserver<'a> {
    fd: OwnedFd,
    stop: &'a StopPage,
    /// the parent closed its end: rows are no longer sent and the run stops
    gone: bool,
    frame: Vec<u8>,
}

impl PipeObserver<'_> {
    fn send(&mut self, bytes: &[u8]) {
        let mut at = 0;
        while at < bytes.len() && !self.gone {
            // SAFETY: a valid fd and the unsent part of `bytes`.
            let n = unsafe {
                libc::write(
                    self.fd.as_raw_fd(),
                    bytes[at..].as_ptr().cast(),
                    bytes.len() - at,
                )
            };
            if n < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                self.gone = true;
                self.stop.request();
            } else {
                at += n as usize;
            }
        }
    }
}

impl Observer for PipeObserver<'_> {
    fn on_rows(&mut self, rows: &[IntervalRow]) {
        let mut frame = std::mem::take(&mut self.frame);
        frame.clear();
        let mut payload = Vec::with_capacity(rows.len() * 200);
        encode_rows(rows, &mut payload);
        put_frame(&mut frame, ROWS, &payload);
        self.send(&frame);
        self.frame = frame;
    }

    fn should_stop(&mut self) -> bool {
        self.stop.requested()
    }
}

/// One page shared by parent and child: the stop request (parent, or a signal in the child).
struct StopPage(*mut AtomicU32);

impl StopPage {
    fn new() -> Result<Self> {
        // SAFETY: an anonymous shared mapping of one page, checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::io(
                "could not map the page shared with the run's process",
                io::Error::last_os_error(),
            ));
        }
        Ok(StopPage(p.cast()))
    }

    fn request(&self) {
        // SAFETY: mapped until drop; zero-filled, a valid AtomicU32.
        unsafe { (*self.0).store(1, Ordering::SeqCst) }
    }

    fn requested(&self) -> bool {
        // SAFETY: as in `request`.
        unsafe { (*self.0).load(Ordering::Relaxed) != 0 }
    }
}

impl Drop for StopPage {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe { libc::munmap(self.0.cast(), 4096) };
    }
}

/// The child until reaped; dropped unreaped (the parent unwinding from a panic) it is killed
/// and waited for, so no zombie is left and nothing waits on a pipe nobody reads.
struct Child {
    pid: libc::pid_t,
    reaped: bool,
}

impl Child {
    /// Waits for the child; its wait status (`None`: not available).
    fn reap(&mut self) -> Option<i32> {
        let mut status = 0;
        loop {
            // SAFETY: waits for our own child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r == self.pid {
                self.reaped = true;
                return Some(status);
            }
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                self.reaped = true;
                return None;
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            // SAFETY: signals our own child, not yet reaped.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
            self.reap();
        }
    }
}

/// The locks of ours a run takes, held across `fork` (see the module note).
struct ForkLocks {
    _batches: std::sync::MutexGuard<'static, (usize, usize)>,
    _ratios: std::sync::MutexGuard<'static, std::collections::HashMap<(String, u64), f64>>,
}

impl ForkLocks {
    fn take() -> Self {
        ForkLocks {
            _batches: super::BATCHES.lock().unwrap_or_else(|p| p.into_inner()),
            _ratios: crate::workload::compress_ratio_cache()
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        }
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::io(
            "could not make the pipe to the run's process",
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: two new descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn put_frame(out: &mut Vec<u8>, tag: u8, payload: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
}

// --- rows, bit for bit -------------------------------------------------------------------

fn put_u64(o: &mut Vec<u8>, v: u64) {
    o.extend_from_slice(&v.to_le_bytes());
}
fn put_f64(o: &mut Vec<u8>, v: f64) {
    put_u64(o, v.to_bits());
}
fn put_opt_u64(o: &mut Vec<u8>, v: Option<u64>) {
    o.push(u8::from(v.is_some()));
    put_u64(o, v.unwrap_or(0));
}
fn put_opt_f64(o: &mut Vec<u8>, v: Option<f64>) {
    put_opt_u64(o, v.map(f64::to_bits));
}
fn put_str(o: &mut Vec<u8>, s: &str) {
    put_u64(o, s.len() as u64);
    o.extend_from_slice(s.as_bytes());
}

/// Every field of every row (destructured: a field added to a row fails to compile here
/// until it is sent too).
fn encode_rows(rows: &[IntervalRow], o: &mut Vec<u8>) {
    put_u64(o, rows.len() as u64);
    for r in rows {
        let IntervalRow {
            t_s,
            interval_s,
            ios,
            bytes,
            lat,
            host_written_bytes,
            step,
            sim,
            wa,
            drive,
        } = r;
        put_f64(o, *t_s);
        put_f64(o, *interval_s);
        ios.iter().chain(bytes).for_each(|&v| put_u64(o, v));
        for l in lat {
            o.push(u8::from(l.is_some()));
            let LatStats {
                mean_us,
                p50_us,
                p99_us,
                p999_us,
                max_us,
            } = l.unwrap_or_default();
            for v in [mean_us, p50_us, p99_us, p999_us, max_us] {
                put_f64(o, v);
            }
        }
        put_u64(o, *host_written_bytes);
        put_str(o, step);
        o.push(u8::from(sim.is_some()));
        let SimTruth {
            nand_written_bytes,
            gc_copied_bytes,
            free_blocks,
        } = sim.unwrap_or_default();
        for v in [nand_written_bytes, gc_copied_bytes, free_blocks] {
            put_u64(o, v);
        }
        put_opt_f64(o, *wa);
        let DriveSample {
            temp_c,
            throttle,
            power_state,
            host_written_bytes,
            nand_written_bytes,
            sample_age_s,
        } = *drive;
        put_opt_f64(o, temp_c);
        put_opt_u64(o, throttle);
        put_opt_u64(o, power_state);
        put_opt_u64(o, host_written_bytes);
        put_opt_u64(o, nand_written_bytes);
        put_opt_f64(o, sample_age_s);
    }
}

/// Reads what [`encode_rows`] wrote.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        if self.0.len() < n {
            return Err(Error::Internal(
                "the run's process sent a truncated frame".into(),
            ));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn opt_u64(&mut self) -> Result<Option<u64>> {
        let some = self.u8()? != 0;
        let v = self.u64()?;
        Ok(some.then_some(v))
    }
    fn opt_f64(&mut self) -> Result<Option<f64>> {
        Ok(self.opt_u64()?.map(f64::from_bits))
    }
    fn string(&mut self) -> Result<String> {
        let n = self.u64()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| {
            Error::Internal("the run's process sent a string that is not UTF-8".into())
        })
    }
}

fn decode_rows(payload: &[u8]) -> Result<Vec<IntervalRow>> {
    let mut r = Reader(payload);
    let n = r.u64()? as usize;
    let mut rows = Vec::with_capacity(n.min(payload.len()));
    for _ in 0..n {
        let t_s = r.f64()?;
        let interval_s = r.f64()?;
        let mut ios = [0; 3];
        let mut bytes = [0; 3];
        for v in ios.iter_mut().chain(bytes.iter_mut()) {
            *v = r.u64()?;
        }
        let mut lat = [None; 2];
        for l in &mut lat {
            let some = r.u8()? != 0;
            let s = LatStats {
                mean_us: r.f64()?,
                p50_us: r.f64()?,
                p99_us: r.f64()?,
                p999_us: r.f64()?,
                max_us: r.f64()?,
            };
            *l = some.then_some(s);
        }
        let host_written_bytes = r.u64()?;
        let step = r.string()?;
        let some = r.u8()? != 0;
        let sim = SimTruth {
            nand_written_bytes: r.u64()?,
            gc_copied_bytes: r.u64()?,
            free_blocks: r.u64()?,
        };
        let wa = r.opt_f64()?;
        let drive = DriveSample {
            temp_c: r.opt_f64()?,
            throttle: r.opt_u64()?,
            power_state: r.opt_u64()?,
            host_written_bytes: r.opt_u64()?,
            nand_written_bytes: r.opt_u64()?,
            sample_age_s: r.opt_f64()?,
        };
        rows.push(IntervalRow {
            t_s,
            interval_s,
            ios,
            bytes,
            lat,
            host_written_bytes,
            step,
            sim: some.then_some(sim),
            wa,
            drive,
        });
    }
    Ok(rows)
}

fn decode_done(payload: &[u8]) -> Result<Done> {
    let bad = || Error::Internal("the run's process sent a malformed result".into());
    let v: serde_json::Value = serde_json::from_slice(payload).map_err(|_| bad())?;
    Ok(Done {
        rows: v["rows"].as_u64().ok_or_else(bad)? as usize,
        host_written_end: v["host_written_end"].as_u64().ok_or_else(bad)?,
        meta: v["meta"].clone(),
    })
}

/// An error as its variant, message and, for I/O errors, the OS error number, so the parent
/// raises the same exception with the same sentence.
fn encode_error(e: &Error) -> Vec<u8> {
    let mut o = Vec::new();
    let (kind, text, os) = match e {
        Error::InvalidValue(m) => (0, m.clone(), None),
        Error::Target(m) => (1, m.clone(), None),
        Error::Refused(m) => (2, m.clone(), None),
        Error::Format(m) => (3, m.clone(), None),
        Error::Parse(m) => (4, m.clone(), None),
        Error::Io { context, source } => (
            5,
            context.clone(),
            Some((source.raw_os_error(), source.to_string())),
        ),
        Error::Internal(m) => (6, m.clone(), None),
    };
    o.push(kind);
    put_str(&mut o, &text);
    if let Some((code, msg)) = os {
        put_opt_u64(&mut o, code.map(|c| c as u32 as u64));
        put_str(&mut o, &msg);
    }
    o
}

fn decode_error(payload: &[u8]) -> Result<Error> {
    let mut r = Reader(payload);
    let kind = r.u8()?;
    let text = r.string()?;
    Ok(match kind {
        0 => Error::InvalidValue(text),
        1 => Error::Target(text),
        2 => Error::Refused(text),
        3 => Error::Format(text),
        4 => Error::Parse(text),
        5 => {
            let code = r.opt_u64()?;
            let msg = r.string()?;
            let source = match code {
                Some(c) => io::Error::from_raw_os_error(c as u32 as i32),
                None => io::Error::other(msg),
            };
            Error::Io {
                context: text,
                source,
            }
        }
        _ => Error::Internal(text),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows with every optional field both set and unset, and values whose bits a text form
    /// would not keep (NaN payloads, negative zero, subnormals), come back bit for bit.
    #[test]
    fn rows_cross_the_pipe_bit_for_bit() {
        let odd = [
            f64::NAN,
            -0.0,
            f64::MIN_POSITIVE / 3.0,
            1.0 / 3.0,
            f64::INFINITY,
        ];
        let mut rows = vec![];
        for (i, &x) in odd.iter().enumerate() {
            let some = i % 2 == 0;
            rows.push(IntervalRow {
                t_s: x,
                interval_s: 0.1 + i as f64,
                ios: [i as u64, u64::MAX, 7],
                bytes: [1, 2, u64::MAX - i as u64],
                lat: [
                    some.then_some(LatStats {
                        mean_us: x,
                        p50_us: 1.5,
                        p99_us: 2.5,
                        p999_us: 3.5,
                        max_us: 4.5,
                    }),
                    (!some).then_some(LatStats {
                        mean_us: 9.0,
                        p50_us: x,
                        p99_us: 0.0,
                        p999_us: -1.0,
                        max_us: 1e300,
                    }),
                ],
                host_written_bytes: 1 << (i * 8),
                step: format!("step ✓ {i}"),
                sim: some.then_some(SimTruth {
                    nand_written_bytes: 3,
                    gc_copied_bytes: 4,
                    free_blocks: i as u64,
                }),
                wa: (!some).then_some(x),
                drive: DriveSample {
                    temp_c: some.then_some(x),
                    throttle: (!some).then_some(2),
                    power_state: some.then_some(0),
                    host_written_bytes: Some(5),
                    nand_written_bytes: None,
                    sample_age_s: (!some).then_some(-0.0),
                },
            });
        }
        let mut b = vec![];
        encode_rows(&rows, &mut b);
        let back = decode_rows(&b).unwrap();
        let bits = |r: &IntervalRow| {
            let mut v = vec![];
            encode_rows(std::slice::from_ref(r), &mut v);
            v
        };
        assert_eq!(back.len(), rows.len());
        for (a, b) in rows.iter().zip(&back) {
            assert_eq!(bits(a), bits(b));
            assert_eq!(a.t_s.to_bits(), b.t_s.to_bits());
            assert_eq!(a.step, b.step);
            assert_eq!(a.sim, b.sim);
        }
        // a cut frame is an error, not rows made up
        assert!(decode_rows(&b[..b.len() - 1]).is_err());
    }

    /// A run in the child writes what the in-process run writes (same offsets, same data),
    /// returns the same totals and rows, and carries the target's host bytes written back.
    #[test]
    fn a_run_in_its_own_session_writes_and_returns_what_the_in_process_run_does() {
        use crate::target::OpenOptions;
        let d = tempfile::tempdir().unwrap();
        let w = Workload::from_pairs([
            ("rw", "randwrite"),
            ("bs", "4k"),
            ("size", "1m"),
            ("loops", "1"),
            ("interval", "0.001s"),
            ("direct", "false"),
            ("seed", "7"),
        ])
        .unwrap();
        let mut outs = vec![];
        for (i, own) in [false, true].into_iter().enumerate() {
            let p = d.path().join(format!("t{i}.bin"));
            let o = OpenOptions {
                create_size: Some(1 << 20),
                ..Default::default()
            };
            let mut t = RealTarget::open(p.to_str().unwrap(), &o).unwrap();
            let mut rows = Rows(vec![]);
            let out = if own {
                t.run_in_own_session(&w, &RunOptions::default(), &mut rows)
            } else {
                t.run(&w, &RunOptions::default(), &mut rows)
            }
            .unwrap();
            assert_eq!(t.host_written, 1 << 20);
            assert_eq!(out.rows, rows.0, "the rows returned are the rows observed");
            outs.push((std::fs::read(&p).unwrap(), out));
        }
        let ((a, x), (b, y)) = (&outs[0], &outs[1]);
        assert!(a == b, "the two runs wrote different bytes");
        assert_eq!(x.meta["totals"], y.meta["totals"]);
        assert_eq!(x.meta["status"], "complete");
        assert_eq!(y.meta["status"], "complete");
        let keys =
            |m: &serde_json::Value| m.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&x.meta), keys(&y.meta));
    }

    struct Rows(Vec<IntervalRow>);
    impl Observer for Rows {
        fn on_rows(&mut self, rows: &[IntervalRow]) {
            self.0.extend_from_slice(rows);
        }
    }

    /// A run refused in the child comes back as the same error.
    #[test]
    fn an_error_in_the_child_is_the_parents_with_its_kind() {
        use crate::target::OpenOptions;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.bin");
        let o = OpenOptions {
            create_size: Some(1 << 20),
            ..Default::default()
        };
        let mut t = RealTarget::open(p.to_str().unwrap(), &o).unwrap();
        let w = Workload::from_pairs([("rw", "read"), ("offset", "2m")]).unwrap();
        let a = t
            .run(&w, &RunOptions::default(), &mut crate::run::Quiet)
            .unwrap_err();
        let b = t
            .run_in_own_session(&w, &RunOptions::default(), &mut crate::run::Quiet)
            .unwrap_err();
        assert_eq!(std::mem::discriminant(&a), std::mem::discriminant(&b));
        assert_eq!(a.to_string(), b.to_string());
    }

    /// Each error kind comes back as the same variant with the same sentence.
    #[test]
    fn errors_cross_the_pipe_with_their_kind_and_sentence() {
        let all = [
            Error::InvalidValue("a".into()),
            Error::Target("b".into()),
            Error::Refused("c".into()),
            Error::Format("d".into()),
            Error::Parse("e".into()),
            Error::io("writing x", io::Error::from_raw_os_error(libc::ENOSPC)),
            Error::io("reading y", io::Error::other("torn")),
            Error::Internal("f".into()),
        ];
        for e in all {
            let back = decode_error(&encode_error(&e)).unwrap();
            assert_eq!(
                std::mem::discriminant(&back),
                std::mem::discriminant(&e),
                "{e}"
            );
            assert_eq!(back.to_string(), e.to_string());
        }
    }
}
