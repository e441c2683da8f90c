//! `Target`: an opened file, block device or simulated drive, and the workload parser.

use super::capture::ArrowTable;
use super::errors::IntoPy;
use super::util::{detached, json_to_py, run_detached, PyObserver};
use crate::run::RunOptions;
use crate::target::{OpenOptions, Target};
use crate::workload::Workload;
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

/// Validates fio-style workload fields (strings) and returns the normalised workload (a dict).
#[pyfunction]
fn parse_workload(py: Python<'_>, fields: BTreeMap<String, String>) -> PyResult<Bound<'_, PyAny>> {
    let w = Workload::from_pairs(fields.iter().map(|(k, v)| (k.as_str(), v.as_str()))).py_err()?;
    json_to_py(py, &w.to_json())
}

/// An opened target. Methods release the GIL while I/O or simulation runs.
///
/// The getters never wait on the target: its kind and size are fixed at open, the host bytes
/// written are published by the run as it goes, and the metadata is a snapshot taken after
/// each operation. So a progress callback, another thread or a notebook display can read a
/// target while it runs. Operations wait for the target with the GIL released (Ctrl-C
/// breaks the wait); starting one from the thread already running this target (a progress
/// callback) is refused with one sentence instead of deadlocking.
#[pyclass(module = "flashback._native", name = "NativeTarget")]
pub struct NativeTarget {
    inner: Mutex<Target>,
    spec: String,
    kind: &'static str,
    size_bytes: u64,
    state: Arc<Shared>,
}

#[pymethods]
impl NativeTarget {
    #[new]
    #[pyo3(signature = (spec, *, destroy=None, overwrite=false, create_size=None))]
    fn new(
        py: Python<'_>,
        spec: String,
        destroy: Option<String>,
        overwrite: bool,
        create_size: Option<u64>,
    ) -> PyResult<Self> {
        let opts = OpenOptions {
            destroy,
            overwrite,
            create_size,
        };
        let t = detached(py, || Target::open(&spec, &opts))?;
        let state = Arc::new(Shared::default());
        state.publish(&t);
        Ok(NativeTarget {
            kind: t.kind(),
            size_bytes: t.size_bytes(),
            inner: Mutex::new(t),
            spec,
            state,
        })
    }

    #[getter]
    fn spec(&self) -> String {
        self.spec.clone()
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    #[getter]
    fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Live during a run (updated with every closed interval).
    #[getter]
    fn host_written_bytes(&self) -> u64 {
        self.state.host_written.load(Ordering::Relaxed)
    }

    /// The target's metadata (a dict) as of the end of its last operation.
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.state.meta())
    }

    /// Runs a workload (fields as strings). Returns `(table, meta)`; Ctrl-C ends the run
    /// early with status `interrupted`. `stream_only` (with `capture_path`) returns no rows:
    /// they are in the file only. `own_session`: a real target's job runs in a forked child
    /// in a session of its own, as fio's does (`Target::run_in_own_session`).
    #[pyo3(signature = (fields, *, step="".to_string(), capture_path=None, progress=None, no_recording=false, stream_only=false, overwrite_capture=false, own_session=false))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python keywords")]
    fn run<'py>(
        &self,
        py: Python<'py>,
        fields: BTreeMap<String, String>,
        step: String,
        capture_path: Option<PathBuf>,
        progress: Option<Py<PyAny>>,
        no_recording: bool,
        stream_only: bool,
        overwrite_capture: bool,
        own_session: bool,
    ) -> PyResult<(ArrowTable, Bound<'py, PyAny>)> {
        let w =
            Workload::from_pairs(fields.iter().map(|(k, v)| (k.as_str(), v.as_str()))).py_err()?;
        let opts = RunOptions {
            step,
            capture_path,
            no_recording,
            stream_only,
            overwrite_capture,
            sys_root: None,
        };
        self.run_workload(py, &w, &opts, progress, own_session)
    }

    /// Replays a block trace (fio iolog v2/v3 or blkparse text) with the queue-depth, data and
    /// interval fields of `fields` (see [`crate::trace::trace_workload`]).
    #[pyo3(signature = (path, fields, *, time_scale=None, offset_scale=1.0, offset_shift=0, align=4096, step="trace".to_string(), capture_path=None, progress=None, overwrite_capture=false, own_session=false))]
    #[allow(clippy::too_many_arguments, reason = "mirrors the Python keywords")]
    fn run_trace<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        fields: BTreeMap<String, String>,
        time_scale: Option<f64>,
        offset_scale: f64,
        offset_shift: u64,
        align: u64,
        step: String,
        capture_path: Option<PathBuf>,
        progress: Option<Py<PyAny>>,
        overwrite_capture: bool,
        own_session: bool,
    ) -> PyResult<(ArrowTable, Bound<'py, PyAny>)> {
        let remap = crate::trace::Remap {
            offset_scale,
            offset_shift,
            align,
        };
        let pairs = fields.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let size = self.size_bytes;
        let w = detached(py, || {
            crate::trace::trace_workload(&path, pairs, &remap, time_scale, size)
        })?;
        let opts = RunOptions {
            step,
            capture_path,
            no_recording: false,
            stream_only: false,
            overwrite_capture,
            sys_root: None,
        };
        self.run_workload(py, &w, &opts, progress, own_session)
    }

    /// Discards `[offset, offset + size)` bytes (`size=None`: to the end).
    #[pyo3(signature = (offset=0, size=None))]
    fn discard(&self, py: Python<'_>, offset: u64, size: Option<u64>) -> PyResult<()> {
        self.with_target(py, |t| detached(py, || t.discard(offset, size)))
    }

    /// Idles for `seconds` (virtual time on a simulated drive). Returns False if interrupted.
    fn idle(&self, py: Python<'_>, seconds: f64) -> PyResult<bool> {
        let mut obs = PyObserver::new(None);
        self.with_target(py, |t| {
            run_detached(py, &mut obs, |obs| t.idle(seconds, obs))
        })?;
        Ok(!obs.interrupted)
    }

    /// Secure erase (simulated drive) or whole-span discard (real target).
    fn sanitize(&self, py: Python<'_>) -> PyResult<()> {
        self.with_target(py, |t| detached(py, || t.sanitize()))
    }
}

impl NativeTarget {
    /// Runs `w` with a progress observer (`own_session`: see [`Target::run_in_own_session`]);
    /// returns the table and the metadata as a dict.
    fn run_workload<'py>(
        &self,
        py: Python<'py>,
        w: &Workload,
        opts: &RunOptions,
        progress: Option<Py<PyAny>>,
        own_session: bool,
    ) -> PyResult<(ArrowTable, Bound<'py, PyAny>)> {
        if let (Some(p), false) = (&opts.capture_path, self.kind == "sim") {
            crate::output::check_not_target(p, std::path::Path::new(&self.spec)).py_err()?;
        }
        let mut obs = PyObserver::new(progress).live(self.state.clone());
        let out = self.with_target(py, |t| {
            run_detached(py, &mut obs, |obs| match own_session {
                true => t.run_in_own_session(w, opts, obs),
                false => t.run(w, opts, obs),
            })
        })?;
        let table =
            ArrowTable::from_rows(&out.rows, out.with_sim, &out.meta.to_string()).py_err()?;
        Ok((table, json_to_py(py, &out.meta)?))
    }

    /// Runs `f` on the target, waiting for it with the GIL released, and republishes the
    /// target's state afterwards. Refuses a call from the thread that is already running it.
    fn with_target<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Target) -> PyResult<T>,
    ) -> PyResult<T> {
        let me = current_thread();
        if self.state.busy_thread.load(Ordering::Acquire) == me {
            return Err(super::errors::to_py(crate::Error::InvalidValue(format!(
                "target {} is busy running in this thread; a progress callback may read its properties but cannot start another operation on it",
                self.spec
            ))));
        }
        let mut guard = lock_released(py, &self.inner)?;
        let state = self.state.clone();
        state.busy_thread.store(me, Ordering::Release);
        let _busy = BusyGuard(&state);
        let out = f(&mut guard);
        state.publish(&guard);
        out
    }
}

/// State readable while the target runs: never behind the target's lock.
#[derive(Default)]
pub struct Shared {
    pub host_written: AtomicU64,
    meta: Mutex<serde_json::Value>,
    /// The thread running the target (0: none).
    busy_thread: AtomicU64,
}

impl Shared {
    fn publish(&self, t: &Target) {
        self.host_written
            .store(t.host_written_bytes(), Ordering::Relaxed);
        let m = t.meta();
        *self.meta.lock().unwrap_or_else(|p| p.into_inner()) = m;
    }

    fn meta(&self) -> serde_json::Value {
        self.meta.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

struct BusyGuard<'a>(&'a Shared);
impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.busy_thread.store(0, Ordering::Release);
    }
}

fn current_thread() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    (unsafe { libc::pthread_self() }) as u64
}

/// Locks `m` without holding the GIL while waiting; Ctrl-C (or any pending signal exception)
/// ends the wait. A lock poisoned by a panic is taken anyway: the panic was already reported.
fn lock_released<'a, T>(py: Python<'_>, m: &'a Mutex<T>) -> PyResult<MutexGuard<'a, T>> {
    loop {
        match m.try_lock() {
            Ok(g) => return Ok(g),
            Err(TryLockError::Poisoned(p)) => return Ok(p.into_inner()),
            Err(TryLockError::WouldBlock) => {
                py.detach(|| std::thread::sleep(std::time::Duration::from_millis(5)));
                py.check_signals()?;
            }
        }
    }
}

/// Bytes in a fio-style size string.
#[pyfunction]
fn parse_size(field: &str, text: &str) -> PyResult<u64> {
    crate::units::parse_size(field, text).py_err()
}

/// Seconds in a duration string.
#[pyfunction]
fn parse_duration(field: &str, text: &str) -> PyResult<f64> {
    crate::units::parse_duration(field, text).py_err()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_workload, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_class::<NativeTarget>()?;
    Ok(())
}
