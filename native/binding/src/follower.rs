//! `Follower`, trace's following of one sequence of dumps (`shardconv_scan::follow`) as Python sees it: each fresh
//! dump's sites read into its values natively, and only the values that may have changed handed back.

use crate::convert::u32_at;
use crate::errors::guarded;
use crate::scan::Scan;
use crate::views::Names;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use shardconv_scan::follow::{self, At, DumpValues, Gone, Now, Same, Wanted};
use shardconv_scan::table::NONE;

/// A value's sighting: its reading (a Python object: equal readings are one object) and where it sits.
pub struct Sighting(Py<PyAny>, u64, u32);

impl Same for Sighting {
    fn same(&self, other: &Self) -> bool {
        self.0.is(&other.0)
    }
}

/// A dump read fresh: the caller's object for it, handed back with the values last seen there, and the
/// names it defines.
pub struct Tag {
    tag: Py<PyAny>,
    names: Py<Names>,
}

/// What following one sequence of dumps remembers (see `follow::Follower`).
#[pyclass(module = "shardconv._native")]
pub struct Follower {
    inner: follow::Follower<Sighting, Tag>,
    slots: KeySlots,
}

/// Per key of a scan (by its number there), its index among the values of the dump being read: each
/// entry stamped with the dump that set it, so the slots serve dump after dump without being cleared.
#[derive(Default)]
struct KeySlots {
    at: Vec<(u32, u32)>, // (stamp, index)
    stamp: u32,
}

impl KeySlots {
    /// Empties the slots for a dump of a scan with `keys` keys.
    fn begin(&mut self, keys: usize) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.at.fill((0, 0));
            self.stamp = 1;
        }
        if self.at.len() < keys {
            self.at.resize(keys, (0, 0));
        }
    }

    fn get(&self, k: u32) -> Option<usize> {
        self.at.get(k as usize).filter(|&&(s, _)| s == self.stamp).map(|&(_, i)| i as usize)
    }

    fn set(&mut self, k: u32, i: usize) {
        if let Some(slot) = self.at.get_mut(k as usize) {
            *slot = (self.stamp, i as u32);
        }
    }
}

/// A Python list of `(reading, line, col)` tuples.
fn listed<'py>(py: Python<'py>, sightings: &[Sighting]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, sightings.iter().map(|s| (s.0.bind(py), s.1, s.2)))
}

/// `(key, sightings there, that dump's tag)` of a value where it was seen.
fn seen_at<'py>(py: Python<'py>, at: &At<Sighting, Tag>) -> PyResult<Bound<'py, PyAny>> {
    let (key, sightings) = at.values.get(at.index);
    Ok((PyString::new(py, key), listed(py, sightings)?, at.values.tag.tag.bind(py)).into_pyobject(py)?.into_any())
}

#[pymethods]
impl Follower {
    #[new]
    fn new() -> Self {
        Follower { inner: follow::Follower::default(), slots: KeySlots::default() }
    }

    /// Follows the dump read fresh of sites `a..b` of `scan` (`readings`, `lines` and `parts` as the
    /// sites are read: see `read_values`), which defines `names`, known to the caller as `tag`;
    /// `same_module`: whether the dump before is of its module. Returns (its number of values, whether
    /// all are arguments or results, [(ask, key, sightings, where last seen or None)] per value that
    /// may have changed, in its order (neither asked nor seen before: gained), [(ask, where seen)] per
    /// value of the dump before it has not (not asked: lost)).
    #[allow(clippy::too_many_arguments)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        scan: &Scan,
        sites: (usize, usize),
        readings: &Bound<'py, PyList>,
        lines: u64,
        parts: &Bound<'py, PyAny>,
        names: Bound<'py, Names>,
        tag: Py<PyAny>,
        same_module: bool,
    ) -> PyResult<(usize, bool, Bound<'py, PyList>, Bound<'py, PyList>)> {
        guarded(|| {
            let tag = Tag { tag, names: names.clone().unbind() };
            let mut values = read_values(py, scan, sites, (readings, lines, parts), tag, &mut self.slots)?;
            let (n, positional) = (values.len(), values.positional());
            let before = self.inner.last().map(|b| b.tag.names.bind(py).clone());
            let wanted = self.inner.wanted(&mut values);
            held_wanted(py, &values, &self.inner, &wanted)?;
            let step = {
                let (now_names, before_names) = (names.borrow(), before.as_ref().map(|b| b.borrow()));
                self.inner.step(values, &now_names.0, before_names.as_ref().map(|b| &b.0), same_module)
            };
            let now = PyList::empty(py);
            for (i, what) in &step.now {
                let (key, sightings) = step.values.get(*i);
                let (ask, held) = match what {
                    Now::Gained => (false, None),
                    Now::Changed(at) => (false, Some(at)),
                    Now::Ask(at) => (true, at.as_ref()),
                };
                let held = held.map(|at| seen_at(py, at)).transpose()?;
                now.append((ask, PyString::new(py, key), listed(py, sightings)?, held))?;
            }
            let gone = PyList::empty(py);
            for (at, what) in &step.gone {
                gone.append((matches!(what, Gone::Ask), seen_at(py, at)?))?;
            }
            Ok((n, positional, now, gone))
        })
    }
}

/// Makes sure the names following the dump of `values` looks up (`wanted`) are held where a long segment
/// let its definitions go (`Defined::resolve` reads them again from its file): by the dump read now,
/// each of them; by the dump before, those of new and missing values the dump read now defines (a name
/// one of them does not define is no value both define alike) and those of values that may read
/// otherwise; by an earlier dump, those of the values that may read otherwise than there. Only these:
/// the dump of a long module where every value is sharded holds none of its definitions.
fn held_wanted(
    py: Python<'_>,
    values: &DumpValues<Sighting, Tag>,
    follower: &follow::Follower<Sighting, Tag>,
    wanted: &Wanted,
) -> PyResult<()> {
    let again = |e: std::io::Error| PyOSError::new_err(format!("cannot read a long dump's definitions again: {e}"));
    let resolve = |names: &Bound<'_, Names>, asked: Vec<&[u8]>| -> PyResult<()> {
        if asked.is_empty() || !names.borrow().0.let_go() {
            return Ok(());
        }
        names.borrow_mut().0.resolve(asked).map_err(again)
    };
    let names = values.tag.names.bind(py);
    let before = follower.last();
    let changed = |i: usize| asked_as(values.key(i));
    let theirs: Vec<Vec<&[u8]>> =
        before.map(|b| wanted.missing.iter().map(|&i| asked_as(b.key(i))).collect()).unwrap_or_default();
    let new: Vec<Vec<&[u8]>> = wanted.new.iter().map(|&i| asked_as(values.key(i))).collect();
    let own = wanted.changed.iter().flat_map(|&(i, _)| changed(i));
    resolve(names, new.iter().chain(&theirs).flatten().copied().chain(own).collect())?;
    let mut earlier: Vec<(u64, Vec<&[u8]>)> = Vec::new(); // (a dump's count, the names asked of it)
    if let Some(count) = follower.last_count() {
        let defined = names.borrow();
        let both = new.iter().chain(&theirs).flatten().copied().filter(|k| defined.0.get(k).is_some());
        earlier.push((count, both.collect()));
    }
    for &(i, count) in &wanted.changed {
        match earlier.iter_mut().find(|(c, _)| *c == count) {
            Some((_, asked)) => asked.extend(changed(i)),
            None => earlier.push((count, changed(i))),
        }
    }
    for (count, asked) in earlier {
        if let Some(d) = follower.dump(count).filter(|d| !d.tag.names.bind(py).is(names)) {
            resolve(d.tag.names.bind(py), asked)?;
        }
    }
    Ok(())
}

/// The names a value's key is looked up by: itself, and each part of it before a `#` or `:` (the value
/// `@f:%r` of `@f:%r:in[0]`, `%r` of `%r#1`).
fn asked_as(key: &str) -> Vec<&[u8]> {
    let b = key.as_bytes();
    std::iter::once(b)
        .chain(b.iter().enumerate().filter(|&(_, &c)| c == b'#' || c == b':').map(|(i, _)| &b[..i]))
        .collect()
}

/// Every sharded value of sites `a..b` of `scan`, by key, in order of first sighting: per site, its
/// reading is `readings[r]` (`r`, its read); where that is None, and for the key `result`, `parts(site)`
/// gives the site's (key, reading) pairs. `tag`: the caller's for the dump; `slots`: where the scan's
/// keys are among the values.
fn read_values<'py>(
    py: Python<'py>,
    scan: &Scan,
    (a, b): (usize, usize),
    (readings, lines, parts): (&Bound<'py, PyList>, u64, &Bound<'py, PyAny>),
    tag: Tag,
    slots: &mut KeySlots,
) -> PyResult<DumpValues<Sighting, Tag>> {
    let columns = scan.columns.bind(py);
    let column = |name: &str| -> PyResult<Bound<'py, PyBytes>> {
        Ok(columns.get_item(name)?.ok_or_else(|| PyValueError::new_err("a scan made without names"))?.cast_into()?)
    };
    let (key, read, line, col) = (column("key")?, column("read")?, column("line")?, column("col")?);
    let (key, read, line, col) = (key.as_bytes(), read.as_bytes(), line.as_bytes(), col.as_bytes());
    let keys = scan.keys.get();
    let b = b.min(key.len() / 4);
    let mut values = DumpValues::with_room(tag, b.saturating_sub(a));
    slots.begin(keys.count());
    for i in a..b {
        let k = u32_at(key, i);
        if k == NONE {
            continue;
        }
        let (at_line, at_col) = (u64::from(u32_at(line, i)) + lines, u32_at(col, i));
        let one = if k == scan.result_key { None } else { readings.get_item(u32_at(read, i) as usize).ok() };
        match one.filter(|r| !r.is_none()) {
            Some(r) => {
                let sighting = Sighting(r.unbind(), at_line, at_col);
                match slots.get(k) {
                    Some(at) => values.push(at, sighting),
                    None => {
                        let name =
                            keys.get(k as usize).ok_or_else(|| PyValueError::new_err("a key past the scan's"))?;
                        slots.set(k, values.add(name, sighting));
                    }
                }
            }
            None => {
                for pair in parts.call1((i,))?.try_iter()? {
                    let (name, r): (Bound<'py, PyString>, Bound<'py, PyAny>) = pair?.extract()?;
                    values.add(name.to_str()?, Sighting(r.unbind(), at_line, at_col));
                }
            }
        }
    }
    Ok(values)
}
