//! Maps each core error variant to its class in `flashback.errors` (one hierarchy, defined in
//! Python so that classes can also derive from ValueError/OSError/PermissionError). The classes
//! are imported once by `import_exception!`; the mapping is one `match` on the variant.

use crate::error::Error;
use pyo3::prelude::*;

mod py {
    pyo3::import_exception!(flashback.errors, ParameterError);
    pyo3::import_exception!(flashback.errors, TargetError);
    pyo3::import_exception!(flashback.errors, SafetyError);
    pyo3::import_exception!(flashback.errors, CaptureFileError);
    pyo3::import_exception!(flashback.errors, ImportFormatError);
    pyo3::import_exception!(flashback.errors, DeviceError);
    pyo3::import_exception!(flashback.errors, InternalError);
}

/// Converts a core error into the matching `flashback.errors` exception.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::InvalidValue(_) => py::ParameterError::new_err(msg),
        Error::Target(_) => py::TargetError::new_err(msg),
        Error::Refused(_) => py::SafetyError::new_err(msg),
        Error::Format(_) => py::CaptureFileError::new_err(msg),
        Error::Parse(_) => py::ImportFormatError::new_err(msg),
        Error::Io { .. } => py::DeviceError::new_err(msg),
        Error::Internal(_) => py::InternalError::new_err(msg),
    }
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
