//! Maps each core error variant to its class in `flashback.errors` (one hierarchy, defined in
//! Python so that classes can also derive from ValueError/OSError/PermissionError).

use crate::error::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

fn class_name(e: &Error) -> &'static str {
    match e {
        Error::InvalidValue(_) => "ParameterError",
        Error::Target(_) => "TargetError",
        Error::Refused(_) => "SafetyError",
        Error::Format(_) => "CaptureFileError",
        Error::Parse(_) => "ImportFormatError",
        Error::Io { .. } => "DeviceError",
        Error::Internal(_) => "InternalError",
    }
}

/// Converts a core error into the matching `flashback.errors` exception.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    Python::attach(|py| {
        let made = py
            .import("flashback.errors")
            .and_then(|m| m.getattr(class_name(&e)))
            .and_then(|cls| cls.call1((msg.clone(),)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(_) => PyRuntimeError::new_err(msg),
        }
    })
}

/// `Result<T, Error>` → `PyResult<T>`.
pub trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for crate::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
