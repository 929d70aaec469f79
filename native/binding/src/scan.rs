//! `Scan` and `Scanner`, and the functions that make a scan (`scan_path`, `scan_bytes`), `sniff` and
//! `same_bytes`: the core's engine run with the interpreter's lock released, its table converted.

use crate::convert::{le_bytes, u32_at, Ints};
use crate::errors::{guarded, read_error};
use crate::views::{LineTexts, Names, Texts, Values};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use shardconv_scan::intern::TextInterner;
use shardconv_scan::keys::Keys;
use shardconv_scan::names::Segments;
use shardconv_scan::reader::files;
use shardconv_scan::reader::lines::{Engine, Options, CHUNK, MAX_LINE, OVERLAP};
use shardconv_scan::table::Table;
use shardconv_scan::table::NONE;
use shardconv_scan::{names, sniff, table};
use std::path::PathBuf;
use std::sync::Arc;

/// One file's (or buffer's) sites.
#[pyclass(module = "shardconv._native", frozen, get_all)]
pub struct Scan {
    pub(crate) kind: String,
    pub(crate) reason: String,
    pub(crate) size: u64,
    pub(crate) lines: u64,
    /// The module, function or HLO computation the input ends inside of (kind, name, the line that
    /// opens it, the input's last line): a cut file.
    pub(crate) open_end: Option<(String, String, u64, u64)>,
    pub(crate) values: Py<Values>,
    pub(crate) value_kinds: Py<PyBytes>,
    pub(crate) names: Py<Texts>,
    pub(crate) keys: Py<Texts>,
    pub(crate) result_key: u32,
    pub(crate) reads: Py<PyList>,
    pub(crate) shapes: Py<PyList>,
    pub(crate) scopes: Py<PyList>,
    pub(crate) ops: Py<PyList>,
    pub(crate) columns: Py<PyDict>,
    pub(crate) line_texts: Py<LineTexts>,
    pub(crate) groups: Py<PyList>,
    pub(crate) pairs: Py<PyList>,
    pub(crate) group_keys: Py<PyBytes>,
    pub(crate) pair_keys: Py<PyBytes>,
    pub(crate) modules: u32,
    pub(crate) suppressions: Py<PyList>,
    pub(crate) defined: Py<PyList>,
    pub(crate) digests: Py<PyList>,
    pub(crate) span_log: Py<PyBytes>,
    pub(crate) line_cuts: Py<PyDict>,
}

#[pymethods]
impl Scan {
    /// (group, start, end, line) of every grouped site whose group is in `groups`, in report order:
    /// where a fix's edits go, whether or not the scan kept each site's row.
    fn spans(&self, py: Python<'_>, groups: Vec<u32>) -> PyResult<Vec<(u32, u64, u64, u64)>> {
        guarded(|| {
            let wanted: std::collections::HashSet<u32> = groups.into_iter().collect();
            Ok(table::SpanLog::read(self.span_log.bind(py).as_bytes(), |g| wanted.contains(&g)))
        })
    }

    /// The sites in `a..b` whose u32 `column` holds any of `values`, in order: a few among many (module
    /// headers, meshes, one value's name), found in one pass over the column.
    fn sites_of(&self, py: Python<'_>, values: Vec<u32>, column: &str, within: (usize, usize)) -> PyResult<Vec<usize>> {
        let columns = self.columns.bind(py);
        let col = columns.get_item(column)?.ok_or_else(|| PyValueError::new_err(format!("no column {column}")))?;
        let col = col.cast_into::<PyBytes>()?;
        let col = col.as_bytes();
        let (a, b) = (within.0, within.1.min(col.len() / 4));
        let wanted: rustc_hash::FxHashSet<u32> = values.into_iter().collect();
        Ok((a..b).filter(|&i| wanted.contains(&u32_at(col, i))).collect())
    }

    /// What `segments` define together (a later one wins): the one segment's own names when only one
    /// defines any, as a pass log's dump (its header line's segment defines nothing).
    fn defined_in(&self, py: Python<'_>, segments: Vec<usize>) -> PyResult<Py<Names>> {
        let all = self.defined.bind(py);
        let mut held = Vec::new();
        for seg in segments {
            if let Ok(item) = all.get_item(seg) {
                let names = item.cast_into::<Names>()?;
                if !names.borrow().0.is_empty() {
                    held.push(names);
                }
            }
        }
        match held.len() {
            1 => Ok(held.remove(0).unbind()),
            _ => {
                let parts: Vec<PyRef<'_, Names>> = held.iter().map(|n| n.borrow()).collect();
                Py::new(py, Names(names::Defined::merged(parts.iter().map(|n| &n.0))))
            }
        }
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let n = self.columns.bind(py).get_item("line").ok().flatten().map_or(0, |b| b.len().unwrap_or(0) / 4);
        format!("<Scan {} {} bytes, {} sites, {} values>", self.kind, self.size, n, self.values.get().0.len())
    }
}

/// `build_scan` with Python's cyclic GC paused: the table's hundreds of thousands of tuples would
/// otherwise trigger collection after collection while they are made. An OSError for a scan that
/// cannot stand for its input (`Engine::unreadable`).
pub fn to_scan(py: Python<'_>, e: Engine) -> PyResult<Scan> {
    if let Some(why) = e.unreadable() {
        return Err(PyOSError::new_err(why));
    }
    let gc = py.import("gc")?;
    let was = gc.call_method0("isenabled")?.is_truthy()?;
    if was {
        gc.call_method0("disable")?;
    }
    let out = build_scan(py, e);
    if was {
        gc.call_method0("enable")?;
    }
    out
}

/// The table's Python objects, each part of the Rust table freed once it is converted (peak memory:
/// the table or its objects, mostly, not both).
fn build_scan(py: Python<'_>, mut e: Engine) -> PyResult<Scan> {
    let mut ints = Ints::new(py)?;
    e.release();
    let mut table = std::mem::take(&mut e.table);
    table.drop_indexes();
    let t = &mut table;
    let mut keys = e.keys.take();
    let value_kinds = PyBytes::new(py, &t.values.items.iter().map(|v| v.kind as u8).collect::<Vec<u8>>());
    let values = Py::new(py, Values(std::mem::take(&mut t.values.items)))?;
    let store = Arc::new(std::mem::take(&mut t.names));
    let names = Py::new(py, Texts::new(store.clone(), Vec::new()))?;
    let (reads, key_list) = key_texts(py, &mut ints, keys.as_mut(), store)?;
    let result_key = keys.as_ref().map_or(NONE, |k| k.result);
    let shapes = shape_list(py, t)?;
    let scopes = PyList::empty(py);
    for (name, kind, entry) in t.scopes.items() {
        scopes.append((name.as_str(), *kind, *entry).into_pyobject(py)?)?;
    }
    let ops = PyList::new(py, t.ops.items().into_iter().map(|n| &**n))?;
    let columns = take_columns(py, t, keys)?;
    let line_texts = Py::new(
        py,
        LineTexts {
            rows: std::mem::take(&mut t.line_texts),
            spans: std::mem::take(&mut t.line_spans),
            store: std::mem::take(&mut t.line_store),
        },
    )?;
    let line_cuts = PyDict::new(py);
    for (site, cut) in std::mem::take(&mut t.line_cuts) {
        line_cuts.set_item(ints.get(site)?, cut)?;
    }
    let span_log = PyBytes::new(py, &t.spans.bytes);
    t.spans = Default::default();
    let (group_keys, pair_keys) = t.module_keys();
    let (group_keys, pair_keys) =
        (le_bytes(py, &group_keys, u32::to_le_bytes)?, le_bytes(py, &pair_keys, u32::to_le_bytes)?);
    let groups = PyList::new(py, t.groups.iter().map(|g| ints.tuple(g)).collect::<PyResult<Vec<_>>>()?)?;
    let pairs = PyList::new(py, t.pairs.iter().map(|p| ints.tuple(p)).collect::<PyResult<Vec<_>>>()?)?;
    let suppressions = PyList::empty(py);
    for (line, col, rules, text, c) in &e.suppressions.found {
        suppressions.append((*line, *col, PyBytes::new(py, rules), PyBytes::new(py, text), *c).into_pyobject(py)?)?;
    }
    let lines = e.lines();
    let open_end = e.ends.open.take().map(|(kind, name, line, last)| (kind.to_string(), name, line, last));
    let (defined, digests) = segment_lists(py, e.segments.take().unwrap_or_default())?;
    Ok(Scan {
        kind: e.kind.to_string(),
        reason: e.reason.to_string(),
        size: e.size,
        lines,
        open_end,
        values,
        value_kinds: value_kinds.unbind(),
        names,
        keys: Py::new(py, key_list)?,
        result_key,
        reads: reads.unbind(),
        shapes: shapes.unbind(),
        scopes: scopes.unbind(),
        ops: ops.unbind(),
        columns: columns.unbind(),
        line_texts,
        groups: groups.unbind(),
        pairs: pairs.unbind(),
        group_keys: group_keys.unbind(),
        pair_keys: pair_keys.unbind(),
        modules: table.modules(),
        suppressions: suppressions.unbind(),
        defined: defined.unbind(),
        digests: digests.unbind(),
        span_log: span_log.unbind(),
        line_cuts: line_cuts.unbind(),
    })
}

/// `Scan.reads` (each read's parts) and `Scan.keys` (the names, then the other keys) of a scan made with
/// names; empty ones without.
fn key_texts<'py>(
    py: Python<'py>,
    ints: &mut Ints<'py>,
    keys: Option<&mut Keys>,
    store: Arc<TextInterner>,
) -> PyResult<(Bound<'py, PyList>, Texts)> {
    let reads = PyList::empty(py);
    let Some(k) = keys else { return Ok((reads, Texts::new(Arc::default(), Vec::new()))) };
    for r in &k.read_items {
        reads.append(ints.tuple(r)?)?;
    }
    Ok((reads, Texts::new(store, std::mem::take(&mut k.extra))))
}

/// `Scan.shapes`: per distinct shape tuple, a tuple of its shapes' dims.
fn shape_list<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyList>> {
    let shapes = PyList::empty(py);
    for tup in t.shapes.items() {
        let inner = PyList::empty(py);
        for s in tup {
            inner.append(PyTuple::new(py, s.iter().copied())?)?;
        }
        shapes.append(PyTuple::new(py, inner.iter())?)?;
    }
    Ok(shapes)
}

/// `Scan.columns`: each column's little-endian bytes by name (`key` and `read` with names), each freed
/// from the table once converted.
fn take_columns<'py>(py: Python<'py>, t: &mut Table, keys: Option<Keys>) -> PyResult<Bound<'py, PyDict>> {
    let columns = PyDict::new(py);
    if let Some(k) = keys {
        columns.set_item("key", le_bytes(py, &k.column, u32::to_le_bytes)?)?;
        columns.set_item("read", le_bytes(py, &k.reads, u32::to_le_bytes)?)?;
    }
    for (name, col) in table::U32_COLUMNS.iter().zip(t.u32s.iter()) {
        columns.set_item(*name, le_bytes(py, col, u32::to_le_bytes)?)?;
    }
    columns.set_item("start", le_bytes(py, &t.starts, u64::to_le_bytes)?)?;
    columns.set_item("end", le_bytes(py, &t.ends, u64::to_le_bytes)?)?;
    t.u32s = Default::default();
    (t.starts, t.ends) = (Vec::new(), Vec::new());
    Ok(columns)
}

/// `Scan.defined` and `Scan.digests`: per segment, its definitions and its digest.
fn segment_lists(py: Python<'_>, segments: Segments) -> PyResult<(Bound<'_, PyList>, Bound<'_, PyList>)> {
    let defined = PyList::empty(py);
    for d in segments.defined {
        defined.append(Names(d))?;
    }
    Ok((defined, PyList::new(py, segments.digests)?))
}

fn options(chunk: usize, max_line: usize, overlap: usize, names: bool, every_site: bool) -> PyResult<Options> {
    let o = Options { chunk, max_line, overlap, names, every_site };
    o.check().map_err(PyValueError::new_err)?;
    Ok(o)
}

fn engine(o: Options) -> PyResult<Engine> {
    Engine::new(o).map_err(PyValueError::new_err)
}

/// (kind, reason) of a dump from its first `SNIFF_BYTES`.
#[pyfunction]
#[pyo3(name = "sniff")]
pub fn sniff_head(head: &[u8]) -> PyResult<(String, String)> {
    guarded(|| {
        let (k, r) = sniff::sniff(head);
        Ok((k.to_string(), r.to_string()))
    })
}

/// Whether the regular files at `a` and `b` hold the same bytes (false when either cannot be read), found
/// with the interpreter's lock released.
#[pyfunction]
pub fn same_bytes(py: Python<'_>, a: PathBuf, b: PathBuf) -> PyResult<bool> {
    py.detach(|| guarded(|| Ok(files::same_bytes(&a, &b))))
}

#[pyfunction]
#[pyo3(signature = (path, *, chunk=CHUNK, max_line=MAX_LINE, overlap=OVERLAP, names=false, every_site=true))]
pub fn scan_path(
    py: Python<'_>,
    path: PathBuf,
    chunk: usize,
    max_line: usize,
    overlap: usize,
    names: bool,
    every_site: bool,
) -> PyResult<Scan> {
    let o = options(chunk, max_line, overlap, names, every_site)?;
    let eng = py.detach(|| guarded(|| files::read_file(&path, engine(o)?).map_err(read_error)))?;
    guarded(|| to_scan(py, eng))
}

#[pyfunction]
#[pyo3(signature = (data, *, chunk=CHUNK, max_line=MAX_LINE, overlap=OVERLAP, names=false, every_site=true))]
pub fn scan_bytes(
    py: Python<'_>,
    data: &[u8],
    chunk: usize,
    max_line: usize,
    overlap: usize,
    names: bool,
    every_site: bool,
) -> PyResult<Scan> {
    let o = options(chunk, max_line, overlap, names, every_site)?;
    let eng = py.detach(|| {
        guarded(|| {
            let mut e = engine(o)?;
            e.size_hint(data.len() as u64);
            e.feed(data);
            e.finish();
            Ok(e)
        })
    })?;
    guarded(|| to_scan(py, eng))
}

/// A scan fed piece by piece (stdin, any stream): `feed` each piece, then `finish`.
#[pyclass(module = "shardconv._native")]
pub struct Scanner {
    engine: Option<Engine>,
}

#[pymethods]
impl Scanner {
    #[new]
    #[pyo3(signature = (*, chunk=CHUNK, max_line=MAX_LINE, overlap=OVERLAP, names=false, every_site=true))]
    fn new(chunk: usize, max_line: usize, overlap: usize, names: bool, every_site: bool) -> PyResult<Self> {
        Ok(Scanner { engine: Some(engine(options(chunk, max_line, overlap, names, every_site)?)?) })
    }

    fn feed(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let Some(e) = self.engine.as_mut() else {
            return Err(PyValueError::new_err("feed() after finish()"));
        };
        py.detach(|| {
            guarded(|| {
                e.feed(data);
                Ok(())
            })
        })
    }

    fn finish(&mut self, py: Python<'_>) -> PyResult<Scan> {
        let Some(mut e) = self.engine.take() else {
            return Err(PyValueError::new_err("finish() called twice"));
        };
        py.detach(|| {
            guarded(|| {
                e.finish();
                Ok(())
            })
        })?;
        guarded(|| to_scan(py, e))
    }
}
