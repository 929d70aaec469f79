//! `Cutter` and `PieceJob`, the log cutter (`shardconv_scan::cut`) as Python sees it: a file (or a stream's
//! `read`) cut into jobs with the interpreter's lock released, each job run on a scanning thread.

use crate::errors::{guarded, os_error, read_error};
use crate::scan::to_scan;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use shardconv_scan::cut::{self, CutOptions, Made};
use shardconv_scan::reader::files::kept_size;
use shardconv_scan::reader::lines::{Options, CHUNK, MAX_LINE, OVERLAP};
use std::fs::File;
use std::io::{self, Read, Take};
use std::path::PathBuf;
use std::sync::Arc;

/// What a log is read from: a file the core opened (read no further than a byte past its size when
/// opened: one that grows meanwhile is an error, not a read without end), or a Python stream's `read`
/// (stdin), whose error, if it raises one, is kept to be raised as it was.
enum Source {
    File(Take<File>),
    Stream { read: Py<PyAny>, error: Option<PyErr> },
}

impl Read for Source {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File(f) => f.read(out),
            Source::Stream { read, error } => Python::attach(|py| {
                let got = read.call1(py, (out.len(),)).and_then(|b| Ok(b.into_bound(py).cast_into::<PyBytes>()?));
                match got {
                    Ok(b) if b.as_bytes().len() <= out.len() => {
                        let b = b.as_bytes(); // (copied once, from the stream's bytes into the read buffer)
                        out[..b.len()].copy_from_slice(b);
                        Ok(b.len())
                    }
                    Ok(_) => Err(io::Error::other("read() returned more bytes than asked for")),
                    Err(e) => {
                        *error = Some(e);
                        Err(io::Error::other("the stream's read() raised"))
                    }
                }
            }),
        }
    }
}

impl cut::Fill for Source {
    fn fill(&mut self, buf: &mut Vec<u8>, n: usize) -> io::Result<usize> {
        match self {
            Source::File(f) => cut::fill_from(f, buf, n),
            Source::Stream { .. } => cut::fill_from(self, buf, n),
        }
    }
}

/// A long dump cut into jobs (see `pieces.py`): `next_job` reads on until the next job is whole.
#[pyclass(module = "shardconv._native")]
pub struct Cutter {
    inner: cut::Cutter<Source>,
    what: String,
    /// The file's size when opened, and the file to ask it again (a regular file's only).
    sized: Option<(u64, File)>,
    path: Option<PathBuf>,
}

#[pymethods]
impl Cutter {
    /// Cuts `source` (a path, or a stream's `read`) before the `lines` (each with its line break first).
    #[new]
    #[pyo3(signature = (source, *, lines, dump_line, function_line, repeats, holding, holding_line,
                        piece_bytes, held_bytes, feed_bytes, read_size, names, every_site=true, placed=false,
                        whole_modules=false, drain=false, names_held=usize::MAX))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        source: &Bound<'_, PyAny>,
        lines: Vec<Vec<u8>>,
        dump_line: Vec<u8>,
        function_line: Vec<u8>,
        repeats: bool,
        holding: Vec<Vec<u8>>,
        holding_line: Option<u64>,
        piece_bytes: usize,
        held_bytes: usize,
        feed_bytes: usize,
        read_size: usize,
        names: bool,
        every_site: bool,
        placed: bool,
        whole_modules: bool,
        drain: bool,
        names_held: usize,
    ) -> PyResult<Self> {
        if lines.iter().chain([&dump_line, &function_line]).any(|l| l.first() != Some(&b'\n')) {
            return Err(PyValueError::new_err("a cut line starts with its line break"));
        }
        let engine = Options { chunk: CHUNK, max_line: MAX_LINE, overlap: OVERLAP, names, every_site };
        let mut opts = CutOptions {
            lines,
            dump_line,
            function_line,
            repeats,
            holding,
            holding_line,
            piece_bytes,
            held_bytes,
            feed_bytes,
            read_size,
            engine,
            placed,
            whole_modules,
            drain: drain && every_site && !names,
            names_file: None,
            names_held,
        };
        let (src, path, sized) = match source.cast::<PyString>() {
            Ok(path) => {
                let path: PathBuf = path.extract()?;
                let f = File::open(&path).map_err(|e| os_error(e, &path))?;
                let meta = f.metadata().map_err(|e| os_error(e, &path))?;
                let sized = if meta.is_file() {
                    Some((meta.len(), f.try_clone().map_err(|e| os_error(e, &path))?))
                } else {
                    None
                };
                let limit = sized.as_ref().map_or(u64::MAX, |(n, _)| n.saturating_add(1));
                if sized.is_some() {
                    opts.names_file = Some(Arc::new(path.clone())); // (a regular file can be read again)
                }
                (Source::File(f.take(limit)), Some(path), sized)
            }
            Err(_) => (Source::Stream { read: source.clone().unbind(), error: None }, None, None),
        };
        let what = path.as_ref().map_or_else(|| "the stream".to_owned(), |p| p.display().to_string());
        Ok(Cutter { inner: cut::Cutter::new(src, opts), what, sized, path })
    }

    /// The next job, in order (None at the end), read and cut with the interpreter's lock released.
    fn next_job(&mut self, py: Python<'_>) -> PyResult<Option<PieceJob>> {
        let inner = &mut self.inner;
        let got = py.detach(|| guarded(|| Ok(inner.next_job())))?;
        match got {
            Ok(Ok(job)) => Ok(job.map(|j| PieceJob { job: Some(j) })),
            Ok(Err(e)) => Err(PyValueError::new_err(e)),
            Err(e) => Err(match (self.inner.source(), &self.path) {
                (Source::Stream { error, .. }, _) if error.is_some() => {
                    error.take().unwrap_or_else(|| os_error(e, std::path::Path::new("")))
                }
                (_, Some(path)) => os_error(e, path),
                (_, None) => PyOSError::new_err(format!("{}: {e}", self.what)),
            }),
        }
    }

    /// The bytes read so far.
    #[getter]
    fn total(&self) -> u64 {
        self.inner.total()
    }

    /// Whether the sniff skipped the log (only its head is read).
    #[getter]
    fn skipped(&self) -> bool {
        self.inner.skipped
    }

    /// After the last job: an OSError when a regular file changed size while it was read (the scan of
    /// a whole file's check); nothing for anything else.
    fn check_size(&self) -> PyResult<()> {
        let (Some((then, f)), Some(path)) = (&self.sized, &self.path) else { return Ok(()) };
        let now = f.metadata().map_err(|e| os_error(e, path))?.len();
        let read = if self.inner.skipped { *then } else { self.inner.total() };
        kept_size(path, *then, now, read).map_err(read_error)
    }
}

/// A job made: its pieces in order (Scans, the parts drained of a piece then its own, or (size, lines,
/// records) left unscanned), then (text, lines) per dump left unscanned.
type JobMade<'py> = (Vec<Bound<'py, PyAny>>, Vec<(Bound<'py, PyBytes>, u64)>);

/// One job of a cut log: a piece to scan, then the dumps after it left unscanned.
#[pyclass(module = "shardconv._native")]
pub struct PieceJob {
    job: Option<cut::Job>,
}

#[pymethods]
impl PieceJob {
    /// Whether the job holds a piece to scan (else only repeats).
    #[getter]
    fn has_piece(&self) -> bool {
        self.job.as_ref().is_some_and(|j| j.piece.is_some())
    }

    /// How many dumps it leaves unscanned.
    #[getter]
    fn repeats(&self) -> usize {
        self.job.as_ref().map_or(0, |j| j.repeats.len())
    }

    /// ([its pieces: Scans, or (size, lines, records) for one left unscanned]; [(text, lines)] per dump
    /// left unscanned), the piece scanned with the interpreter's lock released. Once only.
    fn run<'py>(&mut self, py: Python<'py>) -> PyResult<JobMade<'py>> {
        let Some(job) = self.job.take() else {
            return Err(PyValueError::new_err("a job runs once"));
        };
        let (parts, piece, repeats) = (job.parts, job.piece, job.repeats);
        let made = py.detach(|| guarded(|| Ok(piece.map(cut::Held::run))))?;
        let (engines, unscanned) = match made {
            Some(Made::Scanned(engines)) => (engines, None),
            Some(Made::Unscanned { size, lines, records }) => (Vec::new(), Some((size, lines, records))),
            None => (Vec::new(), None),
        };
        let mut pieces = Vec::new();
        for engine in parts.into_iter().chain(engines) {
            pieces.push(Bound::new(py, guarded(|| to_scan(py, engine))?)?.into_any());
        }
        if let Some(u) = unscanned {
            pieces.push(u.into_pyobject(py)?.into_any());
        }
        let repeats = repeats.iter().map(|(text, lines)| (PyBytes::new(py, text), *lines)).collect();
        Ok((pieces, repeats))
    }
}
