//! Conversions of the core's table to Python objects: ints made once, little-endian columns, value
//! tuples.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use rustc_hash::FxHashMap;
use shardconv_scan::{intern, strings, table::NONE};
use std::borrow::Cow;

/// The `i`th little-endian u32 of a column (NONE past its end).
pub fn u32_at(column: &[u8], i: usize) -> u32 {
    column.get(4 * i..4 * i + 4).map_or(NONE, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

const SMALL_INTS: usize = 1 << 16;

/// Python ints for the table's numbers, each small one (and NONE) made once and shared.
pub struct Ints<'py> {
    py: Python<'py>,
    small: Vec<Option<Bound<'py, PyAny>>>,
    none: Bound<'py, PyAny>,
}

impl<'py> Ints<'py> {
    pub fn new(py: Python<'py>) -> PyResult<Self> {
        Ok(Ints { py, small: Vec::new(), none: NONE.into_pyobject(py)?.into_any() })
    }

    pub fn get(&mut self, v: u32) -> PyResult<Bound<'py, PyAny>> {
        if v == NONE {
            return Ok(self.none.clone());
        }
        let i = v as usize;
        if i < SMALL_INTS && i >= self.small.len() {
            self.small.resize(i + 1, None); // (grown as far as a scan's numbers go: most scans are small)
        }
        match self.small.get_mut(i) {
            Some(Some(b)) => Ok(b.clone()),
            Some(slot) => {
                let b = v.into_pyobject(self.py)?.into_any();
                *slot = Some(b.clone());
                Ok(b)
            }
            None => Ok(v.into_pyobject(self.py)?.into_any()),
        }
    }

    pub fn tuple(&mut self, vs: &[u32]) -> PyResult<Bound<'py, PyTuple>> {
        let items = vs.iter().map(|&v| self.get(v)).collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(self.py, items)
    }
}

/// A column's little-endian bytes, written straight into the Python object.
pub fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    v: &[T],
    to: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, v.len() * N, |buf| {
        for (chunk, &x) in buf.chunks_exact_mut(N).zip(v) {
            chunk.copy_from_slice(&to(x));
        }
        Ok(())
    })
}

/// Builds a distinct value's Python tuple `(kind, site, raw, text, data, encoding)`: a text equal to the
/// raw bytes is the raw bytes object itself, and each site key and encoding it meets is made once.
#[derive(Default)]
pub struct Tuples<'py> {
    sites: FxHashMap<Cow<'static, str>, Bound<'py, PyAny>>,
    encodings: Vec<(strings::Encoding, Bound<'py, PyAny>)>,
}

impl<'py> Tuples<'py> {
    pub fn tuple(&mut self, py: Python<'py>, v: &intern::Value) -> PyResult<Bound<'py, PyTuple>> {
        let site = match self.sites.get(v.site.as_ref()) {
            Some(s) => s.clone(),
            None => {
                let s = pyo3::types::PyString::new(py, &v.site).into_any();
                self.sites.insert(v.site.clone(), s.clone());
                s
            }
        };
        let enc = match self.encodings.iter().find(|(e, _)| *e == v.encoding) {
            Some((_, t)) => t.clone(),
            None => {
                let e = &v.encoding;
                let t = (e.outer, e.quote_style, e.inner, e.inner_quoted).into_pyobject(py)?.into_any();
                self.encodings.push((v.encoding, t.clone()));
                t
            }
        };
        let raw = PyBytes::new(py, &v.raw).into_any();
        let text = if v.text_is_raw() { raw.clone() } else { PyBytes::new(py, v.text()).into_any() };
        let data = match &v.data {
            Some(d) => PyBytes::new(py, d).into_any(),
            None => py.None().into_bound(py),
        };
        PyTuple::new(py, [(v.kind as u8).into_pyobject(py)?.into_any(), site, raw, text, data, enc])
    }
}
