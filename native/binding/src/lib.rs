//! `shardconv._native`: the scanning core (`shardconv-scan`, native/core) as Python sees it. This crate
//! only registers the classes and converts types: the engine runs with the interpreter's lock released,
//! no panic crosses into Python (a last-resort guard turns one into RuntimeError), and a file that cannot
//! be read is an OSError.
//!
//! - `scan`: `Scan`, `Scanner`, `scan_path`, `scan_bytes`, `sniff`, `same_bytes`
//! - `views`: `Names`, `LineTexts`, `Texts`, `Values` (a scan's parts kept native until read)
//! - `cutter`: `Cutter`, `PieceJob`; `follower`: `Follower`
//! - `convert`: ints, columns and value tuples; `errors`: panics and I/O errors as Python's

// (deny, not forbid: PyO3's macros allow the unsafe code they generate; none is written here)
#![deny(unsafe_code)]

mod convert;
mod cutter;
mod errors;
mod follower;
mod scan;
mod views;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use scan::{same_bytes, scan_bytes, scan_path, sniff_head, Scan, Scanner};
use shardconv_scan::{extract, follow, sniff, table};
use views::{LineTexts, Names, Texts, Values};

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("NONE", table::NONE)?;
    m.add("SITE_KINDS", PyTuple::new(m.py(), extract::SiteKind::names())?)?;
    m.add("SNIFF_BYTES", sniff::SNIFF_BYTES)?;
    m.add("FORGET", follow::FORGET)?;
    m.add_function(wrap_pyfunction!(sniff_head, m)?)?;
    m.add_function(wrap_pyfunction!(scan_path, m)?)?;
    m.add_function(wrap_pyfunction!(same_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(scan_bytes, m)?)?;
    m.add_class::<Scan>()?;
    m.add_class::<Scanner>()?;
    m.add_class::<Names>()?;
    m.add_class::<follower::Follower>()?;
    m.add_class::<cutter::Cutter>()?;
    m.add_class::<cutter::PieceJob>()?;
    m.add_class::<LineTexts>()?;
    m.add_class::<Values>()?;
    m.add_class::<Texts>()?;
    Ok(())
}
