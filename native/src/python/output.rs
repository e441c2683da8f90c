//! `OutputFile` and `check_output`: the guarded writer (`crate::output`) for Python writers.
//! Bindings only: the rule lives in the core.

use super::errors::IntoPy;
use super::util::detached;
use crate::error::Error;
use crate::output;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Mutex;

/// A file being written through flashback's one guarded writer: write to `fileno()`, then
/// `commit()` publishes it (or `abort()` discards it; dropping it uncommitted also does).
#[pyclass(module = "flashback._native", name = "OutputFile")]
pub struct PyOutputFile {
    inner: Mutex<Option<output::OutputFile>>,
    path: PathBuf,
}

fn closed() -> PyErr {
    super::errors::to_py(Error::InvalidValue(
        "this output file was already committed or aborted".into(),
    ))
}

#[pymethods]
impl PyOutputFile {
    #[new]
    #[pyo3(signature = (path, *, overwrite=false, staging=None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        overwrite: bool,
        staging: Option<PathBuf>,
    ) -> PyResult<Self> {
        let o = detached(py, || {
            output::OutputFile::create_staged(&path, overwrite, staging.as_deref())
        })?;
        Ok(PyOutputFile {
            path: o.path().to_path_buf(),
            inner: Mutex::new(Some(o)),
        })
    }

    /// The resolved destination (symlinks followed).
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The temporary's file descriptor (valid until commit or abort).
    fn fileno(&self) -> PyResult<i32> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.as_ref().map(|o| o.raw_fd()).ok_or_else(closed)
    }

    /// Syncs and publishes the file; returns its resolved path.
    fn commit(&self, py: Python<'_>) -> PyResult<PathBuf> {
        let o = self
            .inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(closed)?;
        detached(py, || o.commit())
    }

    /// Discards the temporary; the destination is untouched. Idempotent.
    fn abort(&self) {
        if let Some(o) = self.inner.lock().unwrap_or_else(|p| p.into_inner()).take() {
            o.abort();
        }
    }
}

/// Checks before any long work that `path` could be written; returns the resolved path.
#[pyfunction]
#[pyo3(signature = (path, *, overwrite=false))]
fn check_output(path: PathBuf, overwrite: bool) -> PyResult<PathBuf> {
    output::check_output(&path, overwrite).py_err()
}

/// The error for a failed write of `path` (`errno`, e.g. ENOSPC), as the writer words it.
#[pyfunction]
#[pyo3(signature = (path, errno, *, existed))]
fn output_write_error(path: PathBuf, errno: i32, existed: bool) -> PyErr {
    super::errors::to_py(output::write_error(
        &path,
        existed,
        std::io::Error::from_raw_os_error(errno),
    ))
}

/// While `on`, the writer never uses `O_TMPFILE` (fault injection): the test suite uses it to
/// exercise the named-temporary fallback taken on file systems without it.
#[pyfunction]
fn _force_named_temporaries_for_tests(on: bool) {
    output::FORCE_NAMED_TEMPORARIES.store(on, std::sync::atomic::Ordering::Relaxed);
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyOutputFile>()?;
    m.add_function(wrap_pyfunction!(_force_named_temporaries_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(check_output, m)?)?;
    m.add_function(wrap_pyfunction!(output_write_error, m)?)?;
    Ok(())
}
