//! Real-drive access: purge, the device and platform records, and the purge's test entry
//! with every outside party faked.

use super::errors::IntoPy;
use super::util::{detached, json_to_py};
use crate::drive::{purge, record};
use crate::error::Error;
use pyo3::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn request(
    device: String,
    destroy: Vec<String>,
    method: String,
    verify_samples: u64,
) -> purge::Request {
    purge::Request {
        device,
        destroy,
        method,
        verify_samples,
    }
}

/// Plans, and unless `plan`, runs a device-native purge of `device`; returns the plan or the
/// record (a dict). A TRIM/zero-fill fallback comes back as a plan for the caller to run.
#[pyfunction]
#[pyo3(signature = (device, *, destroy, method, plan, verify_samples))]
fn purge_device<'py>(
    py: Python<'py>,
    device: String,
    destroy: Vec<String>,
    method: String,
    plan: bool,
    verify_samples: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let req = request(device, destroy, method, verify_samples);
    let v = detached(py, || purge::run_on_system(&req, plan))?;
    json_to_py(py, &v)
}

/// The purge with fakes (tests only): returns `(plan or record, commands the fake received)`.
#[pyfunction]
#[pyo3(signature = (device, *, destroy, method, plan, verify_samples, sys_root, nvme_spec_json=None, busy=BTreeMap::new(), media_path=None))]
#[allow(clippy::too_many_arguments, reason = "mirrors the Python keywords")]
fn _purge_with_fakes<'py>(
    py: Python<'py>,
    device: String,
    destroy: Vec<String>,
    method: String,
    plan: bool,
    verify_samples: u64,
    sys_root: PathBuf,
    nvme_spec_json: Option<String>,
    busy: BTreeMap<String, String>,
    media_path: Option<PathBuf>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let spec = nvme_spec_json
        .map(|s| {
            serde_json::from_str(&s)
                .map_err(|e| Error::InvalidValue(format!("fake controller spec: {e}")))
        })
        .transpose()
        .py_err()?;
    let req = request(device, destroy, method, verify_samples);
    let (v, sent) = detached(py, || {
        purge::run_with_fakes(
            &req,
            plan,
            &sys_root,
            spec.as_ref(),
            &busy,
            media_path.as_deref(),
        )
    })?;
    Ok((
        json_to_py(py, &v)?,
        json_to_py(py, &serde_json::Value::Array(sent))?,
    ))
}

/// Names of the purge methods, in the order `auto` tries them.
#[pyfunction]
fn purge_methods() -> Vec<&'static str> {
    purge::method_names()
}

/// The device record of block device `name` read under `root` (a dict). NVMe Identify is
/// added when `root` is `/` and the controller accepts admin commands (root).
#[pyfunction]
#[pyo3(signature = (name, *, root=PathBuf::from("/"), redact_serial=None))]
fn device_record<'py>(
    py: Python<'py>,
    name: String,
    root: PathBuf,
    redact_serial: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let redact = redact_serial.unwrap_or_else(record::redact_from_env);
    let v = record::device_record_on(&root, &name, redact);
    json_to_py(py, &v)
}

/// The platform record read under `root` (a dict).
#[pyfunction]
#[pyo3(signature = (*, root=PathBuf::from("/")))]
fn platform_record(py: Python<'_>, root: PathBuf) -> PyResult<Bound<'_, PyAny>> {
    json_to_py(py, &record::platform_record(&root))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(purge_device, m)?)?;
    m.add_function(wrap_pyfunction!(_purge_with_fakes, m)?)?;
    m.add_function(wrap_pyfunction!(purge_methods, m)?)?;
    m.add_function(wrap_pyfunction!(device_record, m)?)?;
    m.add_function(wrap_pyfunction!(platform_record, m)?)?;
    Ok(())
}
