//! The one place where Rust meets Python. Each file converts types for one subsystem and
//! calls into the pure core; long calls go through [`util::run_detached`].

use pyo3::prelude::*;

mod capture;
mod drive;
mod errors;
mod fiolog;
mod output;
mod pelt;
mod sim;
mod target;
mod util;

/// Panics inside the core on purpose, through the same wrapper as every long call: the test
/// suite uses it to prove a panic reaches Python as `flashback.errors.InternalError`.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    util::detached(py, || -> crate::Result<()> {
        panic!("deliberate panic from _panic_for_tests")
    })
}

/// While `on`, the io_uring engine treats every queued trim as refused by the kernel until one
/// succeeds (fault injection): the test suite uses it to exercise the synchronous fallback on a
/// kernel that supports queued discards.
#[pyfunction]
fn _refuse_queued_trims_for_tests(on: bool) {
    crate::engine::REFUSE_QUEUED_TRIMS.store(on, std::sync::atomic::Ordering::Relaxed);
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(_refuse_queued_trims_for_tests, m)?)?;
    capture::register(m)?;
    drive::register(m)?;
    target::register(m)?;
    sim::register(m)?;
    pelt::register(m)?;
    fiolog::register(m)?;
    output::register(m)?;
    Ok(())
}
