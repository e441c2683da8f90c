//! Simulator bindings: the preset list. (Targets go through `target.rs`.)
use pyo3::prelude::*;

/// The simulator presets as a JSON string.
#[pyfunction]
fn sim_presets_json() -> String {
    crate::sim::presets().to_string()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim_presets_json, m)?)?;
    Ok(())
}
