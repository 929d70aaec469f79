//! Errors as Python sees them: a panic becomes a RuntimeError (never unwinding into the interpreter),
//! a file that cannot be read an OSError as Python words it.

use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use shardconv_scan::reader::files::ReadError;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Runs `f`, turning a panic into a RuntimeError (never unwinding into the interpreter).
pub fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!("shardconv native core failed: {msg}")))
        }
    }
}

/// The OSError Python raises for `e` on `path`: errno, the system's words (without Rust's
/// ` (os error N)`), and the file name.
pub fn os_error(e: std::io::Error, path: &Path) -> PyErr {
    match e.raw_os_error() {
        Some(code) => {
            let text = e.to_string();
            let words = text.strip_suffix(&format!(" (os error {code})")).unwrap_or(&text);
            PyOSError::new_err((code, words.to_string(), path.as_os_str().to_os_string()))
        }
        None => PyOSError::new_err(format!("{}: {e}", path.display())),
    }
}

/// The OSError for a dump file that could not be read whole.
pub fn read_error(e: ReadError) -> PyErr {
    match e {
        ReadError::Io(e, path) => os_error(e, &path),
        ReadError::IsDir(path) => PyOSError::new_err((21, "Is a directory".to_string(), path.into_os_string())),
        changed @ ReadError::ChangedSize { .. } => PyOSError::new_err(changed.to_string()),
    }
}
