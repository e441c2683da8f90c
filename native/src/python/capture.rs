//! Capture tables cross into Python through the Arrow C stream interface (zero copy, no
//! pyarrow): `pl.DataFrame(ArrowTable)` imports them.

use super::errors::IntoPy;
use super::util::{detached, json_to_py};
use crate::capture::IntervalRow;
use crate::capture::{ipc, read};
use crate::error::Error;
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::path::PathBuf;

/// An Arrow table held by Rust, exported with `__arrow_c_stream__`.
#[pyclass(module = "flashback._native", frozen)]
pub struct ArrowTable {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl ArrowTable {
    pub fn from_rows(rows: &[IntervalRow], with_sim: bool, meta_json: &str) -> crate::Result<Self> {
        let schema = ipc::schema(with_sim, meta_json);
        let batch = ipc::rows_to_batch(&schema, rows)?;
        Ok(ArrowTable {
            schema,
            batches: vec![batch],
        })
    }
}

#[pymethods]
impl ArrowTable {
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // we always export our own schema
        let it = RecordBatchIterator::new(
            self.batches.clone().into_iter().map(Ok),
            self.schema.clone(),
        );
        let stream = FFI_ArrowArrayStream::new(Box::new(it));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    #[getter]
    fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// Reads a capture file: `(table, meta, torn, damage)`, `meta` a dict (checked). With
/// `salvage`, reading stops at the first torn or damaged batch or wrong ending and `damage`
/// says what was found there; without it, those are errors.
#[pyfunction]
#[pyo3(signature = (path, salvage=false))]
fn read_capture<'py>(
    py: Python<'py>,
    path: PathBuf,
    salvage: bool,
) -> PyResult<(ArrowTable, Bound<'py, PyAny>, bool, Option<String>)> {
    let rc = detached(py, || read::read_capture(&path, salvage))?;
    let meta = json_to_py(py, &rc.meta)?;
    Ok((
        ArrowTable {
            schema: rc.schema,
            batches: rc.batches,
        },
        meta,
        rc.torn,
        rc.damage,
    ))
}

/// Parses and checks a capture's metadata JSON (of the file `path`, named in the error):
/// the dict, or `CaptureFileError`.
#[pyfunction]
fn parse_capture_meta<'py>(
    py: Python<'py>,
    path: PathBuf,
    meta_json: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let v = read::parse_meta(&path, meta_json).py_err()?;
    json_to_py(py, &v)
}

/// Imports any object with `__arrow_c_stream__` (a polars DataFrame) into record batches.
fn import_stream(obj: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule holds an ArrowArrayStream; from_raw moves it out and marks the
    // original released, as the PyCapsule interface requires of consumers.
    let stream =
        unsafe { FFI_ArrowArrayStream::from_raw(ptr.as_ptr() as *mut FFI_ArrowArrayStream) };
    let reader = RecordBatchStreamReader::try_new(stream).map_err(|e| {
        super::errors::to_py(Error::Format(format!("could not import the table: {e}")))
    })?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(|e| {
        super::errors::to_py(Error::Format(format!("could not import the table: {e}")))
    })?;
    Ok((schema, batches))
}

/// Writes a table (any `__arrow_c_stream__` object) as a capture file with `meta_json`,
/// atomically.
#[pyfunction]
fn write_capture(
    py: Python<'_>,
    path: PathBuf,
    table: &Bound<'_, PyAny>,
    meta_json: String,
) -> PyResult<()> {
    let (schema, batches) = import_stream(table)?;
    detached(py, || ipc::write_table(&path, &schema, batches, meta_json))
}

/// The capture's column table (`capture::columns::COLUMNS`), one dict per column in file
/// order: `name`, `dtype` (`f64`/`u64`/`str`), `unit`, `nullable`, `kind`
/// (`counter`/`cumulative`/`gauge`/`label`) and `group` (`base`/`sim`/`drive`/`import`).
#[pyfunction]
fn capture_columns(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyList>> {
    let out = pyo3::types::PyList::empty(py);
    for c in crate::capture::columns::COLUMNS {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("name", c.name)?;
        d.set_item("dtype", c.dtype_name())?;
        d.set_item("unit", c.unit)?;
        d.set_item("nullable", c.nullable)?;
        d.set_item("kind", c.kind.as_str())?;
        d.set_item("group", c.group.as_str())?;
        out.append(d)?;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ArrowTable>()?;
    m.add_function(wrap_pyfunction!(capture_columns, m)?)?;
    m.add_function(wrap_pyfunction!(read_capture, m)?)?;
    m.add_function(wrap_pyfunction!(parse_capture_meta, m)?)?;
    m.add_function(wrap_pyfunction!(write_capture, m)?)?;
    Ok(())
}
