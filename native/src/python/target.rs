//! `Target`: an opened file, block device or simulated drive, and the workload parser.

use super::capture::ArrowTable;
use super::errors::IntoPy;
use super::util::{detached, run_detached, PyObserver};
use crate::run::RunOptions;
use crate::target::{OpenOptions, Target};
use crate::workload::Workload;
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Validates fio-style workload fields (strings) and returns the normalised workload as JSON.
#[pyfunction]
fn parse_workload(fields: BTreeMap<String, String>) -> PyResult<String> {
    let w = Workload::from_pairs(fields.iter().map(|(k, v)| (k.as_str(), v.as_str()))).py_err()?;
    Ok(w.to_json().to_string())
}

/// An opened target. Methods release the GIL while I/O or simulation runs.
#[pyclass(module = "flashback._native", name = "NativeTarget")]
pub struct NativeTarget {
    inner: Mutex<Target>,
    spec: String,
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
        Ok(NativeTarget {
            inner: Mutex::new(t),
            spec,
        })
    }

    #[getter]
    fn spec(&self) -> String {
        self.spec.clone()
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.lock().unwrap().kind()
    }

    #[getter]
    fn size_bytes(&self) -> u64 {
        self.inner.lock().unwrap().size_bytes()
    }

    #[getter]
    fn host_written_bytes(&self) -> u64 {
        self.inner.lock().unwrap().host_written_bytes()
    }

    fn meta_json(&self) -> String {
        self.inner.lock().unwrap().meta().to_string()
    }

    /// Runs a workload (fields as strings). Returns `(table, meta_json)`; Ctrl-C ends the run
    /// early with status `interrupted`.
    #[pyo3(signature = (fields, *, step="".to_string(), capture_path=None, progress=None, no_recording=false))]
    fn run(
        &self,
        py: Python<'_>,
        fields: BTreeMap<String, String>,
        step: String,
        capture_path: Option<PathBuf>,
        progress: Option<Py<PyAny>>,
        no_recording: bool,
    ) -> PyResult<(ArrowTable, String)> {
        let w =
            Workload::from_pairs(fields.iter().map(|(k, v)| (k.as_str(), v.as_str()))).py_err()?;
        let opts = RunOptions {
            step,
            capture_path,
            no_recording,
        };
        let mut obs = PyObserver::new(progress);
        let out = run_detached(py, &mut obs, |obs| {
            self.inner.lock().unwrap().run(&w, &opts, obs)
        })?;
        let table =
            ArrowTable::from_rows(&out.rows, out.with_sim, &out.meta.to_string()).py_err()?;
        Ok((table, out.meta.to_string()))
    }

    /// Replays a block trace (fio iolog v2/v3 or blkparse text) with the queue-depth, data and
    /// interval fields of `fields`. `time_scale=None` issues as fast as possible; otherwise
    /// each op waits for its recorded time × `time_scale`.
    #[pyo3(signature = (path, fields, *, time_scale=None, offset_scale=1.0, offset_shift=0, align=4096, step="trace".to_string(), capture_path=None, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn run_trace(
        &self,
        py: Python<'_>,
        path: PathBuf,
        mut fields: BTreeMap<String, String>,
        time_scale: Option<f64>,
        offset_scale: f64,
        offset_shift: u64,
        align: u64,
        step: String,
        capture_path: Option<PathBuf>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(ArrowTable, String)> {
        if let Some(k) = time_scale {
            if !(k > 0.0 && k.is_finite()) {
                return Err(super::errors::to_py(crate::Error::InvalidValue(format!(
                    "time_scale={k} is not a positive factor; use 1.0 for recorded timing or None for as fast as possible"
                ))));
            }
        }
        let trace = detached(py, || crate::trace::read_trace(&path))?;
        let size = self.inner.lock().unwrap().size_bytes();
        let remap = crate::trace::Remap {
            offset_scale,
            offset_shift,
            align,
        };
        let ops = trace.remapped(&remap, size).py_err()?;
        let writes = ops.iter().any(|o| o.kind != crate::workload::OpKind::Read);
        let max_len = ops.iter().map(|o| o.len).max().unwrap_or(align);
        fields.insert(
            "rw".into(),
            if writes { "randrw" } else { "randread" }.into(),
        );
        fields.insert("bs".into(), max_len.to_string());
        fields.remove("size");
        fields.remove("offset");
        let mut w =
            Workload::from_pairs(fields.iter().map(|(k, v)| (k.as_str(), v.as_str()))).py_err()?;
        w.trace = Some(std::sync::Arc::new(ops));
        w.trace_time_scale = time_scale;
        let opts = RunOptions {
            step,
            capture_path,
            no_recording: false,
        };
        let mut obs = PyObserver::new(progress);
        let out = run_detached(py, &mut obs, |obs| {
            self.inner.lock().unwrap().run(&w, &opts, obs)
        })?;
        let table =
            ArrowTable::from_rows(&out.rows, out.with_sim, &out.meta.to_string()).py_err()?;
        Ok((table, out.meta.to_string()))
    }

    /// Discards `[offset, offset + size)` bytes (`size=None`: to the end).
    #[pyo3(signature = (offset=0, size=None))]
    fn discard(&self, py: Python<'_>, offset: u64, size: Option<u64>) -> PyResult<()> {
        detached(py, || self.inner.lock().unwrap().discard(offset, size))
    }

    /// Idles for `seconds` (virtual time on a simulated drive). Returns False if interrupted.
    fn idle(&self, py: Python<'_>, seconds: f64) -> PyResult<bool> {
        let mut obs = PyObserver::new(None);
        run_detached(py, &mut obs, |obs| {
            self.inner.lock().unwrap().idle(seconds, obs)
        })?;
        Ok(!obs.interrupted)
    }

    /// Secure erase (simulated drive) or whole-span discard (real target).
    fn sanitize(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || self.inner.lock().unwrap().sanitize())
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
