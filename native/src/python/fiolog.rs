//! fio log bindings: the plain per-I/O reader's columns handed to numpy without a copy (each a
//! `LogColumn`, read-only, exporting its values through the buffer protocol), and the
//! per-interval latency statistics computed over numpy arrays read in place.

use super::util::detached;
use crate::fiolog::{self, Field, Samples};
use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use std::borrow::Cow;
use std::ffi::{c_int, c_void, CStr};
use std::path::PathBuf;

enum Data {
    F64(Vec<f64>),
    I64(Vec<i64>),
}

/// One column of numbers owned by Rust; `numpy.frombuffer(col, dtype)` views it in place.
#[pyclass(module = "flashback._native", frozen)]
pub struct LogColumn {
    data: Data,
    /// The item count, where the buffer protocol's `shape` points.
    items: isize,
}

#[pymethods]
impl LogColumn {
    /// # Safety
    /// `view` is the `Py_buffer` CPython passes; it is filled with a pointer into this
    /// object's own vector, which is never changed (the class is frozen) and lives while the
    /// view holds its reference to the object.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        if flags & pyo3::ffi::PyBUF_WRITABLE == pyo3::ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("a LogColumn is read-only"));
        }
        let this = slf.get();
        let (ptr, len, format): (*const c_void, usize, &'static CStr) = match &this.data {
            Data::F64(v) => (v.as_ptr().cast(), v.len(), c"d"),
            Data::I64(v) => (v.as_ptr().cast(), v.len(), c"q"),
        };
        let shape = std::ptr::addr_of!(this.items) as *mut isize;
        // SAFETY: `view` is non-null and CPython's to fill; every pointer stored in it points
        // into `slf` (its vector, or the view's own fields) or at a static string, and `slf`
        // is kept alive by the reference stored in `view.obj`.
        unsafe {
            (*view).obj = slf.clone().into_any().into_ptr();
            (*view).buf = ptr as *mut c_void;
            (*view).len = (len * 8) as isize;
            (*view).readonly = 1;
            (*view).itemsize = 8;
            (*view).format = if flags & pyo3::ffi::PyBUF_FORMAT == pyo3::ffi::PyBUF_FORMAT {
                format.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if flags & pyo3::ffi::PyBUF_ND == pyo3::ffi::PyBUF_ND {
                shape
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if flags & pyo3::ffi::PyBUF_STRIDES == pyo3::ffi::PyBUF_STRIDES {
                std::ptr::addr_of_mut!((*view).itemsize)
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.items as usize
    }
}

fn column(py: Python<'_>, data: Data) -> PyResult<Py<LogColumn>> {
    let items = match &data {
        Data::F64(v) => v.len(),
        Data::I64(v) => v.len(),
    } as isize;
    Py::new(py, LogColumn { data, items })
}

type ReadResult = (
    usize,
    Py<LogColumn>,
    Py<LogColumn>,
    Vec<Py<PyAny>>,
    Vec<i64>,
    Vec<i64>,
    bool,
);

/// `read_fio_log(path, time_back_ms) -> (rows, t_ms, value, rest, lows, highs, t_sorted) |
/// None`: a plain per-I/O fio log's columns (times and values as float64, each later field an
/// int when it holds one value throughout, else an int64 column), each field's smallest and
/// largest value, and whether the times never step back; `None` for anything else (see
/// `fiolog::read`), which the caller reads its general way.
#[pyfunction]
fn read_fio_log(py: Python<'_>, path: PathBuf, time_back_ms: i64) -> PyResult<Option<ReadResult>> {
    let Some(c) = detached(py, || Ok(fiolog::read_plain(&path, time_back_ms)))? else {
        return Ok(None);
    };
    let rest = c
        .rest
        .into_iter()
        .map(|f| -> PyResult<Py<PyAny>> {
            Ok(match f {
                Field::Constant(v) => v.into_pyobject(py)?.into_any().unbind(),
                Field::Values(v) => column(py, Data::I64(v))?.into_any(),
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Some((
        c.rows,
        column(py, Data::F64(c.t_ms))?,
        column(py, Data::F64(c.value))?,
        rest,
        c.lows,
        c.highs,
        c.t_sorted,
    )))
}

/// A buffer's items: borrowed in place when C-contiguous and aligned, else copied.
fn items<'a, T: Element + Copy>(py: Python<'_>, buf: &'a PyBuffer<T>) -> PyResult<Cow<'a, [T]>> {
    let n = buf.item_count();
    let ptr = buf.buf_ptr() as *const T;
    if n == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    if buf.is_c_contiguous() && ptr.is_aligned() {
        // SAFETY: a C-contiguous buffer of `n` items of `T` (PyBuffer::get checked the item
        // format), aligned, held exported (its owner alive and not resizable) while `buf` is.
        return Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(ptr, n) }));
    }
    Ok(Cow::Owned(buf.to_vec(py)?))
}

/// One log's `(t_ms, value, ddir or None)` buffers.
type LogArgs<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Option<Bound<'py, PyAny>>,
);

type Stats = (
    Py<LogColumn>,
    Py<LogColumn>,
    Py<LogColumn>,
    Py<LogColumn>,
    Py<LogColumn>,
);

/// `fio_interval_latency(logs, d, edges, scale) -> (mean, p50, p99, p999, max) | None`:
/// exact per-interval statistics of direction `d`'s samples of `logs` (each `(t_ms, value,
/// ddir or None)`, float64/float64/int64 buffers; `None`: every row is of direction `d`)
/// pooled, values times `scale`, NaN for empty intervals; `None` when a value is not an
/// integer in [0, 2⁵³) (the caller's numpy path keeps those).
#[pyfunction]
fn fio_interval_latency(
    py: Python<'_>,
    logs: Vec<LogArgs<'_>>,
    d: i64,
    edges: Bound<'_, PyAny>,
    scale: f64,
) -> PyResult<Option<Stats>> {
    let mut bufs = Vec::with_capacity(logs.len());
    for (t, v, dd) in &logs {
        let dd = dd.as_ref().map(PyBuffer::<i64>::get).transpose()?;
        bufs.push((PyBuffer::<f64>::get(t)?, PyBuffer::<f64>::get(v)?, dd));
    }
    let edges_buf = PyBuffer::<f64>::get(&edges)?;
    let edges = items(py, &edges_buf)?;
    let mut cols = Vec::with_capacity(bufs.len());
    for (t, v, dd) in &bufs {
        let dd = dd.as_ref().map(|b| items(py, b)).transpose()?;
        cols.push((items(py, t)?, items(py, v)?, dd));
    }
    if edges.len() < 2
        || cols.iter().any(|(t, v, dd)| {
            t.len() != v.len() || dd.as_ref().is_some_and(|dd| dd.len() != t.len())
        })
    {
        return Err(PyBufferError::new_err(
            "fio_interval_latency needs two edges or more and equal-length columns",
        ));
    }
    let samples: Vec<Samples> = cols
        .iter()
        .map(|(t, v, dd)| Samples {
            t_ms: t,
            value: v,
            ddir: dd.as_deref(),
        })
        .collect();
    let Some(s) = detached(py, || {
        Ok(fiolog::interval_latency(&samples, d, &edges, scale))
    })?
    else {
        return Ok(None);
    };
    Ok(Some((
        column(py, Data::F64(s.mean))?,
        column(py, Data::F64(s.p50))?,
        column(py, Data::F64(s.p99))?,
        column(py, Data::F64(s.p999))?,
        column(py, Data::F64(s.max))?,
    )))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LogColumn>()?;
    m.add_function(wrap_pyfunction!(read_fio_log, m)?)?;
    m.add_function(wrap_pyfunction!(fio_interval_latency, m)?)?;
    Ok(())
}
