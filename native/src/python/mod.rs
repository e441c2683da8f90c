//! The one place where Rust meets Python. Each file converts types for one subsystem and
//! calls into the pure core; long calls go through [`util::run_detached`].

use pyo3::prelude::*;

mod capture;
mod errors;
mod pelt;
mod sim;
mod target;
mod util;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    capture::register(m)?;
    target::register(m)?;
    sim::register(m)?;
    pelt::register(m)?;
    Ok(())
}
