//! One error type for the whole core; the Python layer maps each variant to one exception
//! class (see `python/errors.rs` and `toolkit/flashback/errors.py`).

use std::io;

/// Everything that can go wrong in the core. Every message is one sentence that says what was
/// wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter (workload field, simulator key, size string...) is out of range or malformed.
    #[error("{0}")]
    InvalidValue(String),
    /// A target string names nothing usable (unknown preset, missing path...).
    #[error("{0}")]
    Target(String),
    /// A write was refused by the safety rules; nothing was written.
    #[error("{0}")]
    Refused(String),
    /// A capture file or other flashback file is malformed.
    #[error("{0}")]
    Format(String),
    /// An input in a foreign format (fio log, block trace) is malformed; names file and line.
    #[error("{0}")]
    Parse(String),
    /// An operating-system I/O error, with what flashback was doing.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Wraps an `io::Error` with a sentence fragment saying what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Format(format!("Arrow error: {e}"))
    }
}
