//! Read-only views of a scan's parts kept native (`Scan.defined`, `line_texts`, `names`, `keys`,
//! `values`): each made a Python object only when it is read.

use crate::convert::Tuples;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use shardconv_scan::{intern, names};
use std::sync::Arc;

/// One segment's definitions (`Scan.defined`), kept native: a dump defines every instruction, and trace
/// asks about a few sharded values only. Read with `get`, `in`, `len` and `items`; of a long segment whose
/// definitions were let go, only the names trace's follower asked about are held (`Defined::resolve`).
#[pyclass(module = "shardconv._native")]
pub struct Names(pub names::Defined);

#[pymethods]
impl Names {
    /// What the segment defines `key` as, or `default`.
    #[pyo3(signature = (key, default=None))]
    fn get<'py>(&self, py: Python<'py>, key: &[u8], default: Option<Bound<'py, PyAny>>) -> Option<Bound<'py, PyAny>> {
        match self.0.get(key) {
            Some(v) => Some(PyBytes::new(py, v).into_any()),
            None => default,
        }
    }

    fn __contains__(&self, key: &[u8]) -> bool {
        self.0.get(key).is_some()
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.0.items().map(|(k, v)| (PyBytes::new(py, k), PyBytes::new(py, v))))
    }

    fn __repr__(&self) -> String {
        format!("<Names of {} values>", self.0.len())
    }
}

/// The physical lines a scan kept (`Scan.line_texts`), by site index, kept natively: an every-site scan
/// keeps one for each of hundreds of thousands of sites, and a reader asks for a few. Reads like a
/// read-only mapping of site index to the line's bytes.
#[pyclass(module = "shardconv._native", frozen)]
pub struct LineTexts {
    pub rows: Vec<(u32, u32)>, // (site index, index into `spans`), by site index
    pub spans: Vec<(usize, usize)>,
    pub store: Vec<u8>,
}

impl LineTexts {
    /// The kept line `id` (an index into `spans`).
    fn text(&self, id: u32) -> Option<&[u8]> {
        let &(a, n) = self.spans.get(id as usize)?;
        self.store.get(a..a + n)
    }

    fn line(&self, site: u64) -> Option<&[u8]> {
        let i = self.rows.binary_search_by_key(&site, |&(s, _)| u64::from(s)).ok()?;
        self.text(self.rows[i].1)
    }
}

#[pymethods]
impl LineTexts {
    /// The line kept for site `site`, or `default`.
    #[pyo3(signature = (site, default=None))]
    fn get<'py>(&self, py: Python<'py>, site: u64, default: Option<Bound<'py, PyAny>>) -> Option<Bound<'py, PyAny>> {
        match self.line(site) {
            Some(b) => Some(PyBytes::new(py, b).into_any()),
            None => default,
        }
    }

    fn __contains__(&self, site: u64) -> bool {
        self.line(site).is_some()
    }

    fn __len__(&self) -> usize {
        self.rows.len()
    }

    /// Every (site index, line) pair, by site index.
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let lines = self.rows.iter().filter_map(|&(s, id)| Some((s, PyBytes::new(py, self.text(id)?))));
        PyList::new(py, lines)
    }

    fn __repr__(&self) -> String {
        format!("<LineTexts of {} sites>", self.rows.len())
    }
}

/// The item a Python sequence index `i` names in a sequence of `len` (negative: from the end), if any.
fn sequence_index(i: isize, len: usize) -> Option<usize> {
    let at = if i < 0 { i.checked_add(len as isize) } else { Some(i) };
    at.and_then(|i| usize::try_from(i).ok())
}

/// A scan's strings (`Scan.names`, and `Scan.keys`: the names, then the other keys), kept native and
/// each made a Python string once, when it is read: a pass log's piece names ten thousand values, and
/// trace reads their keys natively. Reads like a read-only sequence.
#[pyclass(module = "shardconv._native", frozen, sequence)]
pub struct Texts {
    names: Arc<intern::TextInterner>,
    extra: Vec<String>,
    made: Vec<std::sync::OnceLock<Py<PyString>>>,
}

impl Texts {
    pub fn new(names: Arc<intern::TextInterner>, extra: Vec<String>) -> Self {
        let made = (0..names.len() + extra.len()).map(|_| std::sync::OnceLock::new()).collect();
        Texts { names, extra, made }
    }

    /// How many strings there are.
    pub fn count(&self) -> usize {
        self.made.len()
    }

    /// The `i`th string.
    pub fn get(&self, i: usize) -> Option<&str> {
        match i.checked_sub(self.names.len()) {
            None => self.names.item(i),
            Some(j) => self.extra.get(j).map(String::as_str),
        }
    }

    fn item<'py>(&self, py: Python<'py>, i: usize) -> Option<Bound<'py, PyString>> {
        let made = self.made.get(i)?;
        let text = self.get(i)?;
        Some(made.get_or_init(|| PyString::new(py, text).unbind()).bind(py).clone())
    }
}

#[pymethods]
impl Texts {
    fn __len__(&self) -> usize {
        self.count()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyString>> {
        sequence_index(i, self.made.len())
            .and_then(|i| self.item(py, i))
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("string index out of range"))
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let all: Vec<_> = (0..self.made.len()).filter_map(|i| self.item(py, i)).collect();
        PyList::new(py, all)?.try_iter().map(Bound::into_any)
    }

    fn __contains__(&self, text: &str) -> bool {
        (0..self.made.len()).any(|i| self.get(i) == Some(text))
    }

    fn __repr__(&self) -> String {
        format!("<Texts: {}>", self.made.len())
    }
}

/// The distinct values (`Scan.values`), kept native and made into tuples as they are read: an explain
/// scan holds a hundred thousand propagation records and reads a few. Reads like a read-only sequence.
#[pyclass(module = "shardconv._native", frozen, sequence)]
pub struct Values(pub Vec<intern::Value>);

#[pymethods]
impl Values {
    fn __len__(&self) -> usize {
        self.0.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyTuple>> {
        match sequence_index(i, self.0.len()).and_then(|i| self.0.get(i)) {
            Some(v) => Tuples::default().tuple(py, v),
            None => Err(pyo3::exceptions::PyIndexError::new_err("value index out of range")),
        }
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut tuples = Tuples::default();
        let all = self.0.iter().map(|v| tuples.tuple(py, v)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, all)?.try_iter().map(Bound::into_any)
    }

    fn __repr__(&self) -> String {
        format!("<Values: {}>", self.0.len())
    }
}
