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
    /// A bug: flashback's own code hit a state it assumes cannot happen (a caught panic).
    #[error("flashback hit an internal error, which is a bug in flashback; please report it with the call that raised it ({0})")]
    Internal(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error for a caught panic, with the panic's message.
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Self {
        Error::Internal(panic_message(payload))
    }

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

/// The message a panic was raised with (`panic!("...")` payloads are `&str` or `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}
