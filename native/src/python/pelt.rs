//! PELT bindings: a float64 buffer (numpy array, array.array) or sequence in, a list of
//! segment end indices out. The search runs with the GIL released.
use super::errors::IntoPy;
use super::util::detached;
use crate::pelt::{pelt_ends, pelt_jump, pelt_two_pass, Cost};
use crate::pelt_linear::{pelt_linear, split_costs_linear};
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;

fn to_vec(py: Python<'_>, signal: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    match PyBuffer::<f64>::get(signal) {
        Ok(buf) => buf.to_vec(py),
        Err(_) => signal.extract::<Vec<f64>>(),
    }
}

/// `pelt_search(signal, pen, min_size, cost="l2", jump=1, ends=None, two_pass=False)
/// -> list[int]`: exact PELT with segment ends on the grid of multiples of `jump` (then, with
/// `two_pass`, again near the breakpoints found), or only at the ascending candidate `ends`
/// (the last `len(signal)`) when given; ruptures' conventions (end indices, the last is
/// `len(signal)`).
#[pyfunction]
#[pyo3(signature = (signal, pen, min_size, cost = "l2", jump = 1, ends = None, two_pass = false))]
#[allow(clippy::too_many_arguments, reason = "mirrors the Python keywords")]
fn pelt_search(
    py: Python<'_>,
    signal: &Bound<'_, PyAny>,
    pen: f64,
    min_size: usize,
    cost: &str,
    jump: usize,
    ends: Option<Vec<usize>>,
    two_pass: bool,
) -> PyResult<Vec<usize>> {
    let x = to_vec(py, signal)?;
    let model = Cost::parse(cost).py_err()?;
    detached(py, || match &ends {
        Some(e) => pelt_ends(&x, pen, min_size, e, model),
        None if two_pass => pelt_two_pass(&x, pen, min_size, jump, model),
        None => pelt_jump(&x, pen, min_size, jump, model),
    })
}

/// `pelt_linear_search(x, y, pen, min_size) -> list[int]`: exact piecewise-linear PELT of
/// `y` against `x` (each segment its own least-squares line); segment end indices, the last
/// `len(y)`.
#[pyfunction]
fn pelt_linear_search(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    pen: f64,
    min_size: usize,
) -> PyResult<Vec<usize>> {
    let (xv, yv) = (to_vec(py, x)?, to_vec(py, y)?);
    detached(py, || pelt_linear(&xv, &yv, pen, min_size))
}

/// `linear_split_costs(x, y, lo, hi) -> list[float]`: residual sum of squares of two lines
/// fitted to `y[:k]` and `y[k:]`, for every `k` in `lo..=hi`.
#[pyfunction]
fn linear_split_costs(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    lo: usize,
    hi: usize,
) -> PyResult<Vec<f64>> {
    let (xv, yv) = (to_vec(py, x)?, to_vec(py, y)?);
    detached(py, || split_costs_linear(&xv, &yv, lo, hi))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pelt_search, m)?)?;
    m.add_function(wrap_pyfunction!(pelt_linear_search, m)?)?;
    m.add_function(wrap_pyfunction!(linear_split_costs, m)?)?;
    Ok(())
}
