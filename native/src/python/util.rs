//! The one wrapper every long call goes through: release the GIL, poll for Ctrl-C, forward
//! progress rows to a Python callback, convert the error.

use super::errors::IntoPy;
use crate::capture::columns::{self, Get};
use crate::capture::IntervalRow;
use crate::run::Observer;
use pyo3::prelude::*;
use std::time::{Duration, Instant};

/// Observer that checks Python signals (Ctrl-C) and calls `progress(dict)` with each row: one
/// key per column of the capture table (`capture::columns`) the row's capture carries, `None`
/// for a null value.
pub struct PyObserver {
    progress: Option<Py<PyAny>>,
    pub interrupted: bool,
    last_poll: Instant,
    pub callback_error: Option<PyErr>,
    /// The target's live state: its host bytes written follow each closed interval.
    live: Option<std::sync::Arc<super::target::Shared>>,
}

impl PyObserver {
    pub fn new(progress: Option<Py<PyAny>>) -> Self {
        PyObserver {
            progress,
            interrupted: false,
            // a second ago: the first poll is due at once (now, on a clock younger than that)
            last_poll: Instant::now()
                .checked_sub(Duration::from_secs(1))
                .unwrap_or_else(Instant::now),
            callback_error: None,
            live: None,
        }
    }

    /// Publishes each closed interval's cumulative host bytes written to `state`.
    pub fn live(mut self, state: std::sync::Arc<super::target::Shared>) -> Self {
        self.live = Some(state);
        self
    }
}

impl Observer for PyObserver {
    fn on_rows(&mut self, rows: &[IntervalRow]) {
        if let (Some(s), Some(last)) = (&self.live, rows.last()) {
            s.host_written.store(
                last.host_written_bytes,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        let Some(cb) = &self.progress else { return };
        if self.callback_error.is_some() || self.interrupted {
            return;
        }
        Python::attach(|py| {
            for r in rows {
                let d = pyo3::types::PyDict::new(py);
                let res = (|| -> PyResult<()> {
                    for c in columns::written(r.sim.is_some()) {
                        match c.get {
                            Get::F64(g) => d.set_item(c.name, g(r))?,
                            Get::U64(g) => d.set_item(c.name, g(r))?,
                            Get::Str(g) => d.set_item(c.name, g(r))?,
                            Get::ImportedF64 => {}
                        }
                    }
                    cb.call1(py, (d,))?;
                    Ok(())
                })();
                if let Err(e) = res {
                    // Ctrl-C lands in whatever Python code runs next, often this callback
                    // (a progress bar): it stops the run as a polled Ctrl-C does, keeping the
                    // capture, rather than failing the call and losing the rows.
                    if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                        self.interrupted = true;
                    } else {
                        self.callback_error = Some(e);
                    }
                    break;
                }
            }
        });
    }

    fn should_stop(&mut self) -> bool {
        if self.interrupted || self.callback_error.is_some() {
            return true;
        }
        if self.last_poll.elapsed() < Duration::from_millis(50) {
            return false;
        }
        self.last_poll = Instant::now();
        let sig = Python::attach(|py| py.check_signals());
        if let Err(e) = sig {
            // KeyboardInterrupt: stop cleanly; the capture is marked `interrupted`.
            Python::attach(|py| {
                if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    self.callback_error = Some(e);
                }
            });
            self.interrupted = true;
        }
        self.interrupted || self.callback_error.is_some()
    }
}

/// Runs `f` with the GIL released and converts its error. A panic in the core becomes
/// `flashback.errors.InternalError` rather than pyo3's `PanicException`, which derives from
/// `BaseException` and so escapes every `except Exception`.
pub fn detached<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> crate::Result<T> + Send,
) -> PyResult<T> {
    py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .unwrap_or_else(|p| Err(crate::error::Error::from_panic(p.as_ref())))
    })
    .py_err()
}

/// [`detached`] with an observer; a progress-callback error wins over the call's own result.
pub fn run_detached<T: Send>(
    py: Python<'_>,
    obs: &mut PyObserver,
    f: impl FnOnce(&mut PyObserver) -> crate::Result<T> + Send,
) -> PyResult<T> {
    let out = detached(py, || f(obs));
    if let Some(e) = obs.callback_error.take() {
        return Err(e);
    }
    out
}

/// A JSON value as the Python object `json.loads` would give (dicts keep their key order).
pub fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::types::{PyDict, PyList};
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                dict.set_item(k, json_to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}
