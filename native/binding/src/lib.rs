//! `shardconv._native`: the scanning core under shardconv. Reads a dump once (a file in chunks, bytes,
//! or a stream fed piece by piece) and returns its sites as one table of columns. No panic crosses into
//! Python (a last-resort guard turns one into RuntimeError); I/O problems are OSError.

mod arguments;
pub mod cutter;
mod cutting;
pub mod ends;
pub mod extract;
pub mod files;
pub mod find;
pub mod follow;
mod follower;
pub mod keys;
pub mod keywords;
pub mod lines;
pub mod names;
pub mod repeats;
pub mod scopes;
pub mod shapes;
pub mod sniffer;
pub mod strings;
pub mod suppress;
pub mod table;
pub mod utf8;
pub mod windows;

use lines::{Engine, Options, CHUNK, MAX_LINE, OVERLAP};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use table::NONE;

/// Runs `f`, turning a panic into a RuntimeError (never unwinding into the interpreter).
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
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

/// The `i`th little-endian u32 of a column (NONE past its end).
fn u32_at(column: &[u8], i: usize) -> u32 {
    column.get(4 * i..4 * i + 4).map_or(NONE, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// One file's (or buffer's) sites.
#[pyclass(module = "shardconv._native", frozen, get_all)]
pub struct Scan {
    kind: String,
    reason: String,
    size: u64,
    lines: u64,
    /// The module, function or HLO computation the input ends inside of (kind, name, the line that
    /// opens it, the input's last line): a cut file.
    open_end: Option<(String, String, u64, u64)>,
    values: Py<Values>,
    value_kinds: Py<PyBytes>,
    names: Py<Texts>,
    keys: Py<Texts>,
    result_key: u32,
    reads: Py<PyList>,
    shapes: Py<PyList>,
    scopes: Py<PyList>,
    ops: Py<PyList>,
    columns: Py<PyDict>,
    line_texts: Py<LineTexts>,
    groups: Py<PyList>,
    pairs: Py<PyList>,
    group_keys: Py<PyBytes>,
    pair_keys: Py<PyBytes>,
    modules: u32,
    suppressions: Py<PyList>,
    defined: Py<PyList>,
    digests: Py<PyList>,
    span_log: Py<PyBytes>,
    line_cuts: Py<PyDict>,
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
                if !names.get().0.is_empty() {
                    held.push(names);
                }
            }
        }
        match held.len() {
            1 => Ok(held.remove(0).unbind()),
            _ => Py::new(py, Names(names::Defined::merged(held.iter().map(|n| &n.get().0)))),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let n = self.columns.bind(py).get_item("line").ok().flatten().map_or(0, |b| b.len().unwrap_or(0) / 4);
        format!("<Scan {} {} bytes, {} sites, {} values>", self.kind, self.size, n, self.values.get().0.len())
    }
}

/// One segment's definitions (`Scan.defined`), kept native: a dump defines every instruction, and trace
/// asks about a few sharded values only. Read with `get`, `in`, `len` and `items`.
#[pyclass(module = "shardconv._native", frozen)]
pub struct Names(names::Defined);

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
    rows: Vec<(u32, u32)>, // (site index, index into `spans`), by site index
    spans: Vec<(usize, usize)>,
    store: Vec<u8>,
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

const SMALL_INTS: usize = 1 << 16;

/// Python ints for the table's numbers, each small one (and NONE) made once and shared.
struct Ints<'py> {
    py: Python<'py>,
    small: Vec<Option<Bound<'py, PyAny>>>,
    none: Bound<'py, PyAny>,
}

impl<'py> Ints<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        Ok(Ints { py, small: Vec::new(), none: NONE.into_pyobject(py)?.into_any() })
    }

    fn get(&mut self, v: u32) -> PyResult<Bound<'py, PyAny>> {
        if v == table::NONE {
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

    fn tuple(&mut self, vs: &[u32]) -> PyResult<Bound<'py, PyTuple>> {
        let items = vs.iter().map(|&v| self.get(v)).collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(self.py, items)
    }
}

/// What a module holds, as bytes a module's key slices: per group its value, shapes and name ids;
/// per pair its two groups, counted from its module's first group (equal modules, equal bytes).
fn module_keys<'py>(
    py: Python<'py>,
    groups: &[[u32; 6]],
    pairs: &[[u32; 4]],
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let parts: Vec<u32> = groups.iter().flat_map(|g| [g[1], g[2], g[3]]).collect();
    let mut first = std::collections::HashMap::new(); // module -> its first group
    for (i, g) in groups.iter().enumerate() {
        first.entry(g[0]).or_insert(i as u32);
    }
    let relative: Vec<u32> = pairs
        .iter()
        .flat_map(|p| {
            let base = first.get(&p[0]).copied().unwrap_or(0);
            [p[1].wrapping_sub(base), p[2].wrapping_sub(base)]
        })
        .collect();
    Ok((le_bytes(py, &parts, u32::to_le_bytes)?, le_bytes(py, &relative, u32::to_le_bytes)?))
}

/// A column's little-endian bytes, written straight into the Python object.
fn le_bytes<'py, T: Copy, const N: usize>(
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

/// `build_scan` with Python's cyclic GC paused: the table's hundreds of thousands of tuples would
/// otherwise trigger collection after collection while they are made. An OSError for a scan that
/// cannot stand for its input (`Engine::unreadable`).
fn to_scan(py: Python<'_>, e: Engine) -> PyResult<Scan> {
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

/// Builds a distinct value's Python tuple `(kind, site, raw, text, data, encoding)`: a text equal to the
/// raw bytes is the raw bytes object itself, and each site key and encoding it meets is made once.
#[derive(Default)]
struct Tuples<'py> {
    sites: rustc_hash::FxHashMap<Cow<'static, str>, Bound<'py, PyAny>>,
    encodings: Vec<(strings::Encoding, Bound<'py, PyAny>)>,
}

impl<'py> Tuples<'py> {
    fn tuple(&mut self, py: Python<'py>, v: &table::Value) -> PyResult<Bound<'py, PyTuple>> {
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
        PyTuple::new(py, [v.kind.into_pyobject(py)?.into_any(), site, raw, text, data, enc])
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
    names: Arc<table::TextInterner>,
    extra: Vec<String>,
    made: Vec<std::sync::OnceLock<Py<PyString>>>,
}

impl Texts {
    fn new(names: Arc<table::TextInterner>, extra: Vec<String>) -> Self {
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
pub struct Values(Vec<table::Value>);

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

/// The table's Python objects, each part of the Rust table freed once it is converted (peak memory:
/// the table or its objects, mostly, not both).
fn build_scan(py: Python<'_>, mut e: Engine) -> PyResult<Scan> {
    let mut ints = Ints::new(py)?;
    e.release();
    let mut table = std::mem::take(&mut e.table);
    table.drop_indexes();
    let t = &mut table;
    let mut keys = e.keys.take();
    let value_kinds = PyBytes::new(py, &t.values.items.iter().map(|v| v.kind).collect::<Vec<u8>>());
    let values = Py::new(py, Values(std::mem::take(&mut t.values.items)))?;
    let store = Arc::new(std::mem::take(&mut t.names));
    let names = Py::new(py, Texts::new(store.clone(), Vec::new()))?;
    let reads = PyList::empty(py);
    let key_list = match &mut keys {
        Some(k) => {
            for r in &k.read_items {
                reads.append(ints.tuple(r)?)?;
            }
            Texts::new(store, std::mem::take(&mut k.extra))
        }
        None => Texts::new(Arc::default(), Vec::new()),
    };
    let result_key = keys.as_ref().map_or(NONE, |k| k.result);
    let shapes = PyList::empty(py);
    for tup in t.shapes.items() {
        let inner = PyList::empty(py);
        for s in tup {
            inner.append(PyTuple::new(py, s.iter().copied())?)?;
        }
        shapes.append(PyTuple::new(py, inner.iter())?)?;
    }
    let scopes = PyList::empty(py);
    for (name, kind, entry) in t.scopes.items() {
        scopes.append((name.as_str(), *kind, *entry).into_pyobject(py)?)?;
    }
    let ops = PyList::new(py, t.ops.items().into_iter().map(|n| &**n))?;
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
    let (group_keys, pair_keys) = module_keys(py, &t.groups, &t.pairs)?;
    let groups = PyList::new(py, t.groups.iter().map(|g| ints.tuple(g)).collect::<PyResult<Vec<_>>>()?)?;
    let pairs = PyList::new(py, t.pairs.iter().map(|p| ints.tuple(p)).collect::<PyResult<Vec<_>>>()?)?;
    let suppressions = PyList::empty(py);
    for (line, col, rules, text, c) in &e.suppressions.found {
        suppressions.append((*line, *col, PyBytes::new(py, rules), PyBytes::new(py, text), *c).into_pyobject(py)?)?;
    }
    let defined = PyList::empty(py);
    let digests = PyList::empty(py);
    let lines = e.lines();
    let open_end = e.ends.open.take().map(|(kind, name, line, last)| (kind.to_string(), name, line, last));
    let e_names = e.defined;
    for d in e_names {
        defined.append(Names(d))?;
    }
    for d in &e.digests {
        digests.append(*d)?;
    }
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
fn sniff_head(head: &[u8]) -> PyResult<(String, String)> {
    guarded(|| {
        let (k, r) = sniffer::sniff(head);
        Ok((k.to_string(), r.to_string()))
    })
}

/// The OSError Python raises for `e` on `path`: errno, the system's words (without Rust's
/// ` (os error N)`), and the file name.
fn os_error(e: std::io::Error, path: &Path) -> PyErr {
    match e.raw_os_error() {
        Some(code) => {
            let text = e.to_string();
            let words = text.strip_suffix(&format!(" (os error {code})")).unwrap_or(&text);
            PyOSError::new_err((code, words.to_string(), path.as_os_str().to_os_string()))
        }
        None => PyOSError::new_err(format!("{}: {e}", path.display())),
    }
}

/// A file longer than this is read by a thread of its own (starting one costs more than a short read).
const READ_AHEAD_BYTES: u64 = 8 << 20;

/// Scan a dump file read in chunks (memory stays bounded); OSError if it cannot be read or changes
/// size while it is read.
fn read_file(path: &Path, mut eng: Engine) -> Result<Engine, PyErr> {
    let mut f = std::fs::File::open(path).map_err(|e| os_error(e, path))?;
    let meta = f.metadata().map_err(|e| os_error(e, path))?;
    if meta.is_dir() {
        return Err(PyOSError::new_err((21, "Is a directory".to_string(), path.as_os_str().to_os_string())));
    }
    let regular = meta.is_file();
    let expected = meta.len();
    if regular {
        eng.size_hint(expected);
    }
    let limit = if regular { expected } else { u64::MAX };
    // (a long file is read by a thread of its own while this one scans)
    let read =
        if expected > READ_AHEAD_BYTES { eng.read_all_ahead(&mut f, limit) } else { eng.read_all(&mut f, limit) };
    read.map_err(|e| os_error(e, path))?;
    if regular {
        let now = f.metadata().map_err(|e| os_error(e, path))?.len();
        let read = if eng.skipping() { expected } else { eng.size };
        kept_size(path, expected, now, read)?;
    }
    eng.finish();
    Ok(eng)
}

/// The one check that a regular file kept its size while it was read (`expected` bytes when opened,
/// `now` after, `read` of them read; a skipped file's is its size): an OSError naming it if not.
fn kept_size(path: &Path, expected: u64, now: u64, read: u64) -> PyResult<()> {
    if now == expected && read == expected {
        return Ok(());
    }
    Err(PyOSError::new_err(format!(
        "{}: the file changed size while it was read ({expected} bytes, then {now}; {read} read)",
        path.display()
    )))
}

/// Whether the regular files at `a` and `b` hold the same bytes (false when either cannot be read), found
/// with the interpreter's lock released.
#[pyfunction]
fn same_bytes(py: Python<'_>, a: PathBuf, b: PathBuf) -> PyResult<bool> {
    py.detach(|| guarded(|| Ok(files::same_bytes(&a, &b))))
}

#[pyfunction]
#[pyo3(signature = (path, *, chunk=CHUNK, max_line=MAX_LINE, overlap=OVERLAP, names=false, every_site=true))]
fn scan_path(
    py: Python<'_>,
    path: PathBuf,
    chunk: usize,
    max_line: usize,
    overlap: usize,
    names: bool,
    every_site: bool,
) -> PyResult<Scan> {
    let o = options(chunk, max_line, overlap, names, every_site)?;
    let eng = py.detach(|| guarded(|| read_file(&path, engine(o)?)))?;
    guarded(|| to_scan(py, eng))
}

#[pyfunction]
#[pyo3(signature = (data, *, chunk=CHUNK, max_line=MAX_LINE, overlap=OVERLAP, names=false, every_site=true))]
fn scan_bytes(
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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("NONE", table::NONE)?;
    m.add("SITE_KINDS", PyTuple::new(m.py(), extract::SITE_KINDS)?)?;
    m.add("SNIFF_BYTES", sniffer::SNIFF_BYTES)?;
    m.add("FORGET", follow::FORGET)?;
    m.add_function(wrap_pyfunction!(sniff_head, m)?)?;
    m.add_function(wrap_pyfunction!(scan_path, m)?)?;
    m.add_function(wrap_pyfunction!(same_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(scan_bytes, m)?)?;
    m.add_class::<Scan>()?;
    m.add_class::<Scanner>()?;
    m.add_class::<Names>()?;
    m.add_class::<follower::Follower>()?;
    m.add_class::<cutting::Cutter>()?;
    m.add_class::<cutting::PieceJob>()?;
    m.add_class::<LineTexts>()?;
    m.add_class::<Values>()?;
    m.add_class::<Texts>()?;
    Ok(())
}
