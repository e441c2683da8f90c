//! Simulator bindings: the preset list, the one scale rule and `sim:` spec strings taken apart
//! and put together. (Targets go through `target.rs`.)
use super::errors::IntoPy;
use super::util::json_to_py;
use crate::sim::spec::{build_spec, split_spec};
use pyo3::prelude::*;

/// The simulator presets, as a list of dicts.
#[pyfunction]
fn sim_presets(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    json_to_py(py, &crate::sim::presets())
}

/// A scale (`"1/64"`, `"0.015625"`) as a fraction in (0, 1].
#[pyfunction]
fn parse_scale(field: &str, text: &str) -> PyResult<f64> {
    crate::units::parse_scale(field, text).py_err()
}

/// A spec's keys in order, as `(key, value)` pairs.
type Keys = Vec<(String, String)>;

/// `sim:<preset>?k=v&...` → `(preset, [(key, value), ...])`; `None` for a string that is not
/// a `sim:` spec.
#[pyfunction]
fn sim_spec_parse(spec: &str) -> PyResult<Option<(String, Keys)>> {
    if !spec.starts_with(crate::sim::spec::PREFIX) {
        return Ok(None);
    }
    let p = split_spec(spec).py_err()?;
    Ok(Some((p.preset, p.keys)))
}

/// `(preset, [(key, value), ...])` → `sim:<preset>?k=v&...`.
#[pyfunction]
fn sim_spec_build(preset: &str, keys: Keys) -> PyResult<String> {
    build_spec(preset, &keys).py_err()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim_presets, m)?)?;
    m.add_function(wrap_pyfunction!(parse_scale, m)?)?;
    m.add_function(wrap_pyfunction!(sim_spec_parse, m)?)?;
    m.add_function(wrap_pyfunction!(sim_spec_build, m)?)?;
    Ok(())
}
