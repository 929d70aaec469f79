//! Names: which values a dump segment defines, sharded or not (SSA results, HLO instructions, function
//! arguments, HLO parameters), each with what it is (its op or its type); and a segment's digest.

use crate::keywords::name_char;
use crate::strings::is_ws;
use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashSet};
use std::hash::BuildHasher;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// One segment's definitions, in one byte arena: each name and what it is, spans of `store`, found
/// through a table of hashes (no allocation per definition: an HLO dump defines every instruction).
/// A later definition of a name wins, except that a parameter's `arg[N]` wins over an argument's. A name
/// outside the entry function is keyed with its function's prefix (`@f:%0`, `@f:arg[0]`). A segment of a
/// file that defines more than its scan holds (`Segments::held`) keeps none: each name asked of it is read
/// again from the file (`resolve`), so a long module's definitions never stay in memory.
#[derive(Default)]
pub struct Defined {
    store: Vec<u8>,
    table: HashTable<Entry>,
    prefix: Vec<u8>, // of the function the last `func.func` line scanned opened
    /// Where the segment's bytes are in its file, when they can be read again.
    source: Option<Source>,
    /// While a `resolve` reads: the only names defined.
    only: Option<FxHashSet<Box<[u8]>>>,
    /// How many ops of each kind the function scanned so far defines (see `OpCounts`).
    counts: OpCounts,
}

/// Per region an MLIR function's ops are scanned in so far, how many ops of each kind (its name and the
/// symbol after it) define values there: an op's place among those of its kind in its region is part of
/// what it is. A pass that renumbers values (Shardy's stages) may give `%14` to another `dot %13, %arg1`,
/// printed alike to the letter; the same op keeps its place among the ops of its kind in its region
/// (other regions, such as a body Shardy's export outlines into a function, count apart). Regions are
/// told by indentation: a line less indented than a region's ops closes it. HLO names are stable across
/// passes: an instruction needs no place.
#[derive(Default)]
struct OpCounts {
    levels: Vec<(usize, KindCounts)>, // (indentation, counts), innermost last
    kind: Vec<u8>,                    // (the kind asked last: made without allocating)
    /// Where the lines not yet read for the regions they close start, in the bytes scanned now.
    from: usize,
}

/// How many ops of each kind (by its bytes) a region defines.
type KindCounts = rustc_hash::FxHashMap<Box<[u8]>, u32>;

impl OpCounts {
    /// The regions deeper than `indent` closed.
    fn close(&mut self, indent: usize) {
        while self.levels.last().is_some_and(|&(i, _)| i > indent) {
            self.levels.pop();
        }
    }

    /// The regions the lines of `data[self.from..to]` close.
    fn close_lines(&mut self, data: &[u8], to: usize) {
        let mut at = self.from;
        while at < to {
            let end = memchr::memchr(b'\n', &data[at..to]).map_or(to, |q| at + q);
            let indent = data[at..end].iter().take_while(|&&c| c == b' ' || c == b'\t').count();
            if at + indent < end && !is_ws(data[at + indent]) {
                self.close(indent);
            }
            at = end + 1;
        }
        self.from = self.from.max(to);
    }

    /// The place (from 1) of the op `data[a..b]` (past `=`) among the ops of its kind in its region so
    /// far; None for an HLO instruction (`data[a..b]` its type, holding a `[`).
    fn place(&mut self, data: &[u8], a: usize, b: usize) -> Option<u32> {
        let token = &data[a..b];
        if memchr::memchr(b'[', token).is_some() {
            return None;
        }
        let line = memchr::memrchr(b'\n', &data[..a]).map_or(0, |q| q + 1);
        if line >= self.from {
            self.close_lines(data, line);
            self.from = memchr::memchr(b'\n', &data[a..]).map_or(data.len(), |q| a + q + 1);
        }
        let indent = data[line..].iter().take_while(|&&c| c == b' ' || c == b'\t').count();
        self.close(indent);
        if self.levels.last().is_none_or(|&(i, _)| i < indent) {
            self.levels.push((indent, Default::default()));
        }
        self.kind.clear();
        self.kind.extend_from_slice(op_name(token));
        if data.get(b) == Some(&b' ') && data.get(b + 1) == Some(&b'@') {
            self.kind.extend_from_slice(&data[b..name_end(data, b + 1)]);
        }
        let seen = &mut self.levels.last_mut()?.1;
        if let Some(n) = seen.get_mut(self.kind.as_slice()) {
            *n += 1;
            return Some(*n);
        }
        seen.insert(self.kind.as_slice().into(), 1);
        Some(1)
    }

    /// The end of the bytes scanned now: the regions their last lines close (none to close in HLO).
    fn scanned(&mut self, data: &[u8]) {
        if !self.levels.is_empty() {
            self.close_lines(data, data.len());
        }
        self.from = 0;
    }
}

/// A segment's file and its byte ranges there (more than one when segments are `merged`), and whether its
/// definitions were let go (then only the names `asked` are held).
#[derive(Clone, Default)]
struct Source {
    path: Arc<PathBuf>,
    ranges: Vec<(u64, u64)>,
    let_go: bool,
    asked: FxHashSet<Box<[u8]>>,
}

#[derive(Clone, Copy)]
struct Entry {
    key: (usize, usize),
    what: (usize, usize),
    param: bool,
}

/// The bytes a segment's definitions are read again in, at a time.
const READ_AGAIN: usize = 1 << 20;

/// The hash a name is found by (`get_hashed` takes it made once).
pub fn hash(key: &[u8]) -> u64 {
    FxBuildHasher.hash_one(key)
}

/// A key `alike` looks up: its hash, its bytes, and whether it `is_plain`.
pub struct Asked<'a> {
    pub hash: u64,
    pub key: &'a [u8],
    pub plain: bool,
}

/// Whether a key is a plain `%name` (no function, element or part), which a segment's names can tell.
pub fn is_plain(key: &[u8]) -> bool {
    key.first() == Some(&b'%') && !key.iter().any(|&b| b == b'#' || b == b':')
}

impl Defined {
    fn slice(&self, (a, b): (usize, usize)) -> &[u8] {
        &self.store[a..b]
    }

    /// The span of what `write` appends to the store.
    fn put(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> (usize, usize) {
        let a = self.store.len();
        write(&mut self.store);
        (a, self.store.len())
    }

    /// Records the name `key` writes (after `prefix`) as what `what` writes; a parameter is never replaced
    /// by an argument. `hashed`: the key's hash when the caller has it (made from the bytes the key was
    /// copied from: read back from the store just written, the key's bytes stalled the hash).
    fn define(
        &mut self,
        prefix: &[u8],
        key: impl FnOnce(&mut Vec<u8>),
        what: impl FnOnce(&mut Vec<u8>),
        param: bool,
        hashed: Option<u64>,
    ) {
        let key = self.put(|s| {
            s.extend_from_slice(prefix);
            key(s);
        });
        if self.only.as_ref().is_some_and(|only| !only.contains(&self.store[key.0..key.1])) {
            self.store.truncate(key.0);
            return;
        }
        let what = self.put(what);
        let entry = Entry { key, what, param };
        let store = &self.store;
        let at = |e: &Entry| &store[e.key.0..e.key.1];
        let k = at(&entry);
        // (one probe: most names are defined once)
        match self.table.entry(hashed.unwrap_or_else(|| hash(k)), |e| at(e) == k, |e| hash(at(e))) {
            hashbrown::hash_table::Entry::Occupied(e) if e.get().param && !param => {}
            hashbrown::hash_table::Entry::Occupied(mut e) => *e.get_mut() = entry,
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(entry);
            }
        }
    }

    /// The definitions of `parts` together, a later part's winning (as one mapping updated by each).
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a Defined>) -> Defined {
        let parts: Vec<&Defined> = parts.into_iter().collect();
        if parts.iter().any(|d| d.let_go()) {
            // (read again, each part's range in turn, as the mapping they make together)
            let ranges = parts.iter().filter_map(|d| d.source.as_ref()).flat_map(|s| s.ranges.clone()).collect();
            let path = parts.iter().find_map(|d| d.source.as_ref().map(|s| s.path.clone())).unwrap_or_default();
            let source = Source { path, ranges, let_go: true, asked: FxHashSet::default() };
            return Defined { source: Some(source), ..Defined::default() };
        }
        let mut out = Defined::default();
        for d in parts {
            for (k, v) in d.items() {
                // (as a parameter's: it replaces whatever an earlier part said; nothing is scanned after)
                out.define(b"", |s| s.extend_from_slice(k), |s| s.extend_from_slice(v), true, Some(hash(k)));
            }
        }
        out
    }

    /// What the segment defines `key` as.
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.get_hashed(hash(key), key)
    }

    /// `get` of a key whose `hash` is made.
    pub fn get_hashed(&self, h: u64, key: &[u8]) -> Option<&[u8]> {
        let e = self.table.find(h, |e| self.slice(e.key) == key)?;
        Some(self.slice(e.what))
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether it defines nothing (a segment whose definitions were let go may define anything).
    pub fn is_empty(&self) -> bool {
        self.table.is_empty() && !self.let_go()
    }

    /// Whether its definitions were let go: only the names `resolve`d are held.
    pub fn let_go(&self) -> bool {
        self.source.as_ref().is_some_and(|s| s.let_go)
    }

    /// The segment's bytes are those of `path` from `start` on (its end is told by `ends_at`).
    fn starts_at(&mut self, path: Arc<PathBuf>, start: u64) {
        self.source = Some(Source { path, ranges: vec![(start, u64::MAX)], ..Source::default() });
    }

    fn ends_at(&mut self, end: u64) {
        if let Some(r) = self.source.as_mut().and_then(|s| s.ranges.last_mut()) {
            r.1 = end;
        }
    }

    /// Lets the definitions held go: each name is read again from the file when asked (`resolve`).
    fn let_definitions_go(&mut self) {
        if let Some(s) = self.source.as_mut() {
            s.let_go = true;
            (self.store, self.table) = (Vec::new(), HashTable::new());
        }
    }

    /// Makes sure the definitions of `names` are held (read again from the segment's file, past those
    /// asked before, when they were let go): `get` and `alike` answer for them as they would have
    /// before. An error when the file cannot be read again.
    pub fn resolve<'a>(&mut self, names: impl IntoIterator<Item = &'a [u8]>) -> io::Result<()> {
        let Some(source) = self.source.as_mut().filter(|s| s.let_go) else { return Ok(()) };
        let new: FxHashSet<Box<[u8]>> =
            names.into_iter().filter(|n| !source.asked.contains(*n)).map(Box::from).collect();
        if new.is_empty() {
            return Ok(());
        }
        source.asked.extend(new.iter().cloned());
        let (path, ranges) = (source.path.clone(), source.ranges.clone());
        let mut file = std::fs::File::open(&*path)?;
        let size = file.metadata()?.len();
        if ranges.iter().any(|&(_, b)| b != u64::MAX && b > size) {
            return Err(io::Error::other("the file changed since it was read"));
        }
        for (a, b) in ranges {
            let mut part = Defined { only: Some(new.clone()), ..Defined::default() };
            part.read_again(&mut file, a, b)?;
            for (k, v) in part.items() {
                // (a later range wins, as in `merged`)
                self.define(b"", |s| s.extend_from_slice(k), |s| s.extend_from_slice(v), true, Some(hash(k)));
            }
        }
        Ok(())
    }

    /// `scan` over bytes `a..b` of `file`, read a mebibyte at a time and handed on in whole lines.
    fn read_again(&mut self, file: &mut std::fs::File, a: u64, b: u64) -> io::Result<()> {
        file.seek(SeekFrom::Start(a))?;
        let mut reader = file.take(b.saturating_sub(a));
        let mut buf: Vec<u8> = Vec::with_capacity(READ_AGAIN + (1 << 16));
        loop {
            let got = reader.by_ref().take(READ_AGAIN as u64).read_to_end(&mut buf)?;
            let whole = if got == 0 { buf.len() } else { memchr::memrchr(b'\n', &buf).map_or(0, |n| n + 1) };
            self.scan(&buf[..whole]);
            buf.drain(..whole);
            if got == 0 {
                return Ok(());
            }
        }
    }

    /// Of `keys`, the indices of those a plain `%name` (see `is_plain`) that both `self` and `other`
    /// define alike, and the indices of the keys that are not plain (left to the caller).
    pub fn alike(&self, other: &Defined, keys: &[Asked]) -> (Vec<usize>, Vec<usize>) {
        let (mut same, mut other_keys) = (Vec::new(), Vec::new());
        for (i, k) in keys.iter().enumerate() {
            if !k.plain {
                other_keys.push(i);
            } else if let Some(what) = self.get_hashed(k.hash, k.key) {
                if other.get_hashed(k.hash, k.key) == Some(what) {
                    same.push(i);
                }
            }
        }
        (same, other_keys)
    }

    /// Every (name, what) pair, in no particular order.
    pub fn items(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.table.iter().map(|e| (self.slice(e.key), self.slice(e.what)))
    }

    /// `names_in` over complete lines: each function's part with that function's prefix.
    pub fn scan(&mut self, data: &[u8]) {
        // (room for the definitions a dump this long likely holds: about one per 100 bytes)
        let store = &self.store;
        self.table.reserve(data.len() / 100, |e| hash(&store[e.key.0..e.key.1]));
        self.store.reserve(data.len() / 8);
        let mut from = 0;
        for (at, prefix) in crate::scopes::function_lines(data) {
            self.scan_scope(&data[from..at]);
            self.prefix = prefix;
            self.counts.levels.clear();
            from = at;
        }
        self.scan_scope(&data[from..]);
    }

    /// `result[i]` of the entry function whose `func.func @main(...) -> ...` line is `line` (no other line
    /// defines any), each as its type: a result is followed by position, and one of another type is
    /// another value.
    fn define_results(&mut self, line: &[u8]) {
        if !matches!(crate::scopes::scope_of(line), crate::scopes::ScopeLine::Open(_, "func", true)) {
            return;
        }
        for (i, ty) in result_types(line).into_iter().enumerate() {
            let key = |s: &mut Vec<u8>| {
                s.extend_from_slice(b"result[");
                s.extend_from_slice(i.to_string().as_bytes());
                s.push(b']');
            };
            self.define(b"", key, |s| s.extend_from_slice(ty), false, None);
        }
    }

    /// `define` of an SSA name, copied from the dump (and hashed from it there, in the entry function).
    fn define_name(&mut self, prefix: &[u8], name: &[u8], what: impl FnOnce(&mut Vec<u8>)) {
        let hashed = prefix.is_empty().then(|| hash(name));
        self.define(prefix, |s| s.extend_from_slice(name), what, false, hashed);
    }

    /// The definitions of `data`, all in the function of the prefix in force.
    fn scan_scope(&mut self, data: &[u8]) {
        let prefix = std::mem::take(&mut self.prefix);
        if prefix.is_empty() {
            self.define_results(&data[..memchr::memchr(b'\n', data).unwrap_or(data.len())]);
        }
        // (%[\w$.\-]+)(?::\d+)? = (\S+), found from its ` = ` back (an HLO line has one, and two or three
        // `%` operands and callees besides its definition's)
        let mut i = 0; // where the next definition may start: past the last one's first token
        let mut at = 0;
        while let Some(off) = crate::finder!(b" = ").find(&data[at..]) {
            let q = at + off;
            at = q + 1;
            let Some((p, e)) = defined_at(data, q, i) else { continue };
            let a = q + 3;
            let b = a + data[a..].iter().take_while(|&&c| !is_ws(c)).count();
            if b == a {
                continue;
            }
            let place = self.counts.place(data, a, b);
            let defined_as = |s: &mut Vec<u8>| {
                what(data, a, b, s);
                if let Some(n) = place {
                    let _ = write!(s, " #{n}"); // (into the buffer itself: no string made an op; a Vec takes any write)
                }
            };
            self.define_name(&prefix, &data[p..e], defined_as);
            for (r, e) in earlier_results(data, p, i) {
                self.define_name(&prefix, &data[r..e], defined_as);
            }
            (i, at) = (b, b);
        }
        self.counts.scanned(data);
        // %arg(\d+): ([^\s,)]+)
        let mut i = 0;
        while let Some(off) = crate::finder!(b"%arg").find(&data[i..]) {
            let p = i + off;
            let a = p + 4;
            let d = data[a..].iter().take_while(|b| b.is_ascii_digit()).count();
            i = p + 1;
            if d == 0 || !data[a + d..].starts_with(b": ") {
                continue;
            }
            let t = a + d + 2;
            let e = t + data[t..].iter().take_while(|&&c| !is_ws(c) && c != b',' && c != b')').count();
            if e == t {
                continue;
            }
            self.define(&prefix, |s| arg_key(&data[a..a + d], s), |s| s.extend_from_slice(&data[t..e]), false, None);
            i = e;
        }
        // = (\S+) parameter\((\d+)\)
        let mut i = 0;
        while let Some(off) = crate::finder!(b" parameter(").find(&data[i..]) {
            let q = i + off;
            i = q + 1;
            let a = data[..q].iter().rposition(|&c| is_ws(c)).map_or(0, |p| p + 1);
            if a == q || a < 2 || &data[a - 2..a] != b"= " {
                continue;
            }
            let d0 = q + 11;
            let d = data[d0..].iter().take_while(|b| b.is_ascii_digit()).count();
            if d == 0 || data.get(d0 + d) != Some(&b')') {
                continue;
            }
            self.define(&prefix, |s| arg_key(&data[d0..d0 + d], s), |s| s.extend_from_slice(&data[a..q]), true, None);
            i = d0 + d + 1;
        }
        self.prefix = prefix;
    }
}

/// The `%name` whose definition's ` = ` is at `q` (directly after the name, or after a `:N` result
/// number), starting at `from` or later: its span. Names run over `name_char`s, so the `%` that starts one
/// is the first byte before the run.
fn defined_at(data: &[u8], q: usize, from: usize) -> Option<(usize, usize)> {
    let start = |end: usize| end - data[from..end].iter().rev().take_while(|&&c| name_char(c)).count();
    let r = start(q);
    if r == q || r == from {
        return None;
    }
    if data[r - 1] == b'%' {
        return Some((r - 1, q));
    }
    let c = r - 1; // `%name:N = `: the digits, their colon, and the name before it
    if data[c] != b':' || !data[r..q].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let r = start(c);
    (r < c && r > from && data[r - 1] == b'%').then_some((r - 1, c))
}

/// The results an op lists before the one whose `%` is at `p` (`%values, %indices = mhlo.topk`:
/// `%values`), at `from` or later, last first; none unless they open the line (`(%iterArg = %0,
/// %iterArg_0 = %1)` of a while lists no results).
fn earlier_results(data: &[u8], p: usize, from: usize) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut first = p;
    while let Some((r, e)) = earlier_result(data, first, from) {
        found.push((r, e));
        first = r;
    }
    if found.is_empty() {
        return found;
    }
    let line_start = memchr::memrchr(b'\n', &data[..first]).map_or(0, |n| n + 1);
    if !data[line_start..first].iter().all(|&c| c == b' ' || c == b'\t') {
        return Vec::new();
    }
    found
}

/// The result an op lists right before the one whose `%` is at `p` (`%values, %indices = mhlo.topk`:
/// `%values` before `%indices`), at `from` or later: its name's span (without a `:N` result count).
fn earlier_result(data: &[u8], p: usize, from: usize) -> Option<(usize, usize)> {
    if p < from + 2 || &data[p - 2..p] != b", " {
        return None;
    }
    let mut e = p - 2;
    let digits = data[from..e].iter().rev().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 && e - digits > from && data[e - digits - 1] == b':' {
        e -= digits + 1;
    }
    let r = e - data[from..e].iter().rev().take_while(|&&c| name_char(c)).count();
    (r < e && r > from && data[r - 1] == b'%').then_some((r - 1, e))
}

/// `arg[N]`, the key of argument or parameter `N`.
fn arg_key(n: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(b"arg[");
    out.extend_from_slice(n);
    out.push(b']');
}

/// What an SSA definition is: an HLO instruction its type (`data[a..b]` holds a `[`; its name is stable
/// across passes), an MLIR op the op, the symbol right after it (a custom call's target, a call's
/// callee), the operands it names before its attributes and its result type, since a pass that renumbers values gives `%23`
/// to another `dot_general`, `%37 = reshape %36` of another type is another value, and so is
/// `%2 = custom_call @CustomSPMDPartitioning(%1)` where `%2 = custom_call @xla.sdy.LocalToGlobalShape(%1)` was.
fn what(data: &[u8], a: usize, b: usize, out: &mut Vec<u8>) {
    let token = &data[a..b];
    out.extend_from_slice(op_name(token));
    if memchr::memchr(b'[', token).is_some() {
        return;
    }
    // (one pass over the rest of the line, short: a search call per operand cost more than the bytes)
    let mut i = b;
    if data.get(b) == Some(&b' ') && data.get(b + 1) == Some(&b'@') {
        i = name_end(data, b + 1); // the symbol right after the op: a custom call's target, a call's callee
        out.push(b' ');
        out.extend_from_slice(&data[b + 1..i]);
    }
    while let Some(&c) = data.get(i) {
        match c {
            b'{' | b'\n' => break,
            b'%' => {
                let e = name_end(data, i);
                if e > i + 1 {
                    out.push(b' ');
                    out.extend_from_slice(&data[i..e]);
                }
                i = e;
            }
            _ => i += 1,
        }
    }
    if let Some(ty) = result_type(&data[b..]) {
        out.extend_from_slice(b" : ");
        out.extend_from_slice(ty);
    }
}

/// The op a value is followed by: Shardy's export turns a constraint into a reshard of the same operand,
/// the same value.
fn op_name(token: &[u8]) -> &[u8] {
    if token == b"sdy.reshard" {
        b"sdy.sharding_constraint"
    } else {
        token
    }
}

/// The result type an MLIR op's line (`rest`: from after its op name) ends with: what follows its last
/// ` : ` before any trailing ` attributes {...}` (a `while`'s), after the `->` of a function type
/// (`(tensor<8xf32>) -> tensor<2x4xf32>`); None when the line has no type (an op whose region opens on it).
fn result_type(rest: &[u8]) -> Option<&[u8]> {
    let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    // (searchers built once, not per definition: a dump defines hundreds of values on short lines)
    let line = &line[..crate::finder!(b" attributes {").find(line).unwrap_or(line.len())];
    let ty = &line[crate::find::rfind_lit(line, b" : ", 1)? + 3..];
    let ty = ty.trim_ascii_end().strip_suffix(b"{").unwrap_or(ty);
    let ty = crate::find::rfind_lit(ty, b"->", 1).map_or(ty, |p| &ty[p + 2..]);
    let ty = ty.trim_ascii();
    (!ty.is_empty()).then_some(ty)
}

/// The result types a `func.func` line lists after its arguments' `) -> `: one type, or each of a
/// parenthesized list, without its attributes (`tensor<8xf32> {sdy.sharding = ...}`); none when the
/// line lists none.
fn result_types(line: &[u8]) -> Vec<&[u8]> {
    let Some(open) =
        crate::finder!(b"func.func").find(line).and_then(|p| memchr::memchr(b'(', &line[p..]).map(|o| p + o))
    else {
        return Vec::new();
    };
    let Some(rest) = closing(line, open).and_then(|c| line[c + 1..].strip_prefix(b" -> ")) else {
        return Vec::new();
    };
    if rest.first() != Some(&b'(') {
        return vec![bare_type(rest)];
    }
    let Some(end) = closing(rest, 0) else { return Vec::new() };
    let mut types = Vec::new();
    let (mut from, mut at) = (1, 1);
    while let Some(comma) = top_level(rest, at, end, b',') {
        types.push(bare_type(&rest[from..comma]));
        (from, at) = (comma + 1, comma + 1);
    }
    types.push(bare_type(&rest[from..end]));
    types
}

/// A type without the attributes or body after it (what precedes ` {` or ` attributes`), trimmed.
fn bare_type(text: &[u8]) -> &[u8] {
    let brace = crate::finder!(b" {").find(text).unwrap_or(text.len());
    let end = crate::finder!(b" attributes").find(&text[..brace]).unwrap_or(brace);
    text[..end].trim_ascii()
}

/// The index of the bracket closing the one at `data[open]`, nesting `()`, `[]`, `{}` and `<>` (not the
/// `>` of `->`), strings skipped.
fn closing(data: &[u8], open: usize) -> Option<usize> {
    top_level(data, open + 1, data.len(), b')').filter(|&c| data[c] == b')')
}

/// The first `want` (`,` or `)`) in `data[from..to]` outside brackets opened there and strings; a closing
/// bracket of a depth not opened there ends the search (at it).
fn top_level(data: &[u8], from: usize, to: usize, want: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i < to {
        let c = data[i];
        match c {
            b'"' => {
                i = crate::strings::string_end(data, i)?;
                continue;
            }
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b'>' if i > 0 && data[i - 1] == b'-' => {}
            b')' | b']' | b'}' | b'>' if depth > 0 => depth -= 1,
            _ if c == want && depth == 0 => return Some(i),
            b')' | b']' | b'}' | b'>' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The end of the `%name` whose `%` is at `data[p]` (`p + 1` when no name follows).
fn name_end(data: &[u8], p: usize) -> usize {
    p + 1 + data[p + 1..].iter().take_while(|&&c| name_char(c)).count()
}

/// A streaming 64-bit hash (equal bytes, equal hash, however they are split). Four lanes take the
/// words of each 32-byte block in turn: four chains of multiplies run side by side (one chain was a
/// twentieth of a piece's scan, every byte after each module's header going through it).
pub struct Digest {
    lanes: [u64; 4],
    len: u64,
    carry: [u8; BLOCK],
    held: usize,
}

const BLOCK: usize = 32;
const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Default for Digest {
    fn default() -> Self {
        let lanes = [0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89];
        Digest { lanes, len: 0, carry: [0; BLOCK], held: 0 }
    }
}

/// One 32-byte block into the four lanes, a word each.
fn block(lanes: &mut [u64; 4], b: &[u8]) {
    for (lane, w) in lanes.iter_mut().zip(b.chunks_exact(8)) {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        *lane = (lane.rotate_left(23) ^ u64::from_le_bytes(x)).wrapping_mul(K);
    }
}

impl Digest {
    pub fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        if self.held > 0 {
            let take = (BLOCK - self.held).min(data.len());
            self.carry[self.held..self.held + take].copy_from_slice(&data[..take]);
            self.held += take;
            data = &data[take..];
            if self.held < BLOCK {
                return;
            }
            block(&mut self.lanes, &self.carry);
            self.held = 0;
        }
        let mut blocks = data.chunks_exact(BLOCK);
        for b in &mut blocks {
            block(&mut self.lanes, b);
        }
        let rest = blocks.remainder();
        self.carry[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    pub fn finish(&self) -> u64 {
        let mut tail = [0u8; BLOCK];
        tail[..self.held].copy_from_slice(&self.carry[..self.held]);
        let mut lanes = self.lanes;
        block(&mut lanes, &tail);
        let mut h = self.len;
        for lane in lanes {
            h = (h.rotate_left(23) ^ lane).wrapping_mul(K);
        }
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^ (h >> 32)
    }
}

/// What `trace` asks of a scan besides its sites: per segment of the input (a module header starts
/// one), the values it defines and a digest of its bytes after the header line. Fed the bytes the engine
/// has read, up to a file offset at a time.
#[derive(Default)]
pub struct Segments {
    pub defined: Vec<Defined>,
    pub digests: Vec<u64>,
    /// The file offset read up to.
    pos: u64,
    digest: Digest,
    /// Where the open segment's digest starts (past its header line).
    digest_from: u64,
    /// Where the open segment starts.
    start: u64,
    /// The file this input can be read again from, and the file offset of the input's first byte: a
    /// segment defining more than `held` bytes of names and what they are lets them go
    /// (`Defined::resolve`).
    pub reread: Option<(Arc<PathBuf>, u64)>,
    pub held: usize,
}

impl Segments {
    /// Segments of an input that starts at file offset `offset`.
    pub fn new(offset: u64) -> Self {
        Segments {
            defined: vec![Defined::default()],
            pos: offset,
            digest_from: offset,
            start: offset,
            ..Segments::default()
        }
    }

    /// A file to read the input again from (`reread`), past `held` bytes of definitions in a segment.
    pub fn read_again_from(&mut self, path: Arc<PathBuf>, at: u64, held: usize) {
        self.reread = Some((path, at));
        self.held = held;
        self.opened();
    }

    /// The open segment (begun at `start`) tells where its bytes are in the file, when it can be read again.
    fn opened(&mut self) {
        if let (Some((path, at)), Some(d)) = (&self.reread, self.defined.last_mut()) {
            d.starts_at(path.clone(), at + self.start);
        }
    }

    /// A module header at file offset `at` (`buf` holds the bytes from file offset `buf_off`): the open
    /// segment ends there and a new one begins, its digest after the header line.
    pub fn header(&mut self, at: u64, buf: &[u8], buf_off: u64) {
        self.read_to(at, true, buf, buf_off);
        self.defined.push(Defined::default());
        self.start = at;
        self.opened();
        let rel = at.saturating_sub(buf_off) as usize;
        let end =
            if rel <= buf.len() { memchr::memchr(b'\n', &buf[rel..]).map_or(buf.len(), |q| rel + q + 1) } else { rel };
        self.digest_from = buf_off + end as u64;
    }

    /// Definitions and digest over the bytes up to file offset `to` (`buf` holds them from file offset
    /// `buf_off`); `close`: the open segment's digest is finished there.
    pub fn read_to(&mut self, to: u64, close: bool, buf: &[u8], buf_off: u64) {
        let lo = self.pos.max(buf_off);
        if to > lo {
            let a = (lo - buf_off) as usize;
            let b = ((to - buf_off) as usize).min(buf.len());
            if a < b {
                if let Some(d) = self.defined.last_mut().filter(|d| !d.let_go()) {
                    d.scan(&buf[a..b]);
                    if d.store.len() > self.held && self.reread.is_some() {
                        d.let_definitions_go();
                    }
                }
                let da = self.digest_from.max(lo);
                if da < to {
                    let x = ((da - buf_off) as usize).min(b);
                    self.digest.update(&buf[x..b]);
                }
            }
            self.pos = to;
        }
        if close {
            if let (Some((_, at)), Some(d)) = (&self.reread, self.defined.last_mut()) {
                d.ends_at(at + to);
            }
            self.digests.push(self.digest.finish());
            self.digest = Digest::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::collections::HashMap;

    #[test]
    fn a_segment_that_let_its_definitions_go_reads_those_asked_again_from_its_file() {
        let text: &[u8] = b"  %x.1 = f32[8]{0} parameter(0)\n  %0 = stablehlo.add %a\n  %0 = stablehlo.mul %b\n\
            func.func @f(%arg0: tensor<8xf32>) {\n  %0 = stablehlo.dot %arg0\n";
        let path = std::env::temp_dir().join(format!("shardconv-names-{}", std::process::id()));
        std::fs::write(&path, [b"head\n".as_slice(), text].concat()).unwrap();
        let mut s = Segments::new(0);
        s.read_again_from(Arc::new(path.clone()), 5, 0); // (the input starts 5 bytes into the file)
        s.read_to(text.len() as u64, true, text, 0);
        let mut whole = Defined::default();
        whole.scan(text);
        let d = &mut s.defined[0];
        assert!(d.let_go() && !d.is_empty() && d.items().next().is_none()); // (nothing held, yet not empty)
        d.resolve([&b"%0"[..], b"@f:%0", b"@f:arg[0]", b"%nowhere"]).unwrap();
        for key in [&b"%0"[..], b"@f:%0", b"@f:arg[0]", b"%nowhere"] {
            assert_eq!(d.get(key), whole.get(key), "{}", String::from_utf8_lossy(key));
        }
        assert_eq!(d.get(b"arg[0]"), None); // (not asked: not held)
        d.resolve([&b"arg[0]"[..]]).unwrap();
        assert_eq!(d.get(b"arg[0]"), whole.get(b"arg[0]"));
        assert_eq!(d.get(b"%0"), Some(&b"stablehlo.mul %b #1"[..])); // (the later definition wins, as held)
        std::fs::write(&path, b"head\n").unwrap(); // a file cut since: an error, never names of other bytes
        assert!(d.resolve([&b"%x.1"[..]]).is_err());
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn defined() {
        let mut d = Defined::default();
        d.scan(b"  %x.1 = f32[8]{0} parameter(0)\n  %0:2 = stablehlo.add %a\n  %1 = stablehlo.dot %b, %c {x = %d}\nfunc(%arg0: tensor<8xf32>, %arg1: i32)\n  %values, %r:2, %indices = mhlo.topk(%a, k = 4)\n  %w:2 = stablehlo.while(%iterArg = %a, %iterArg_0 = %b)");
        let m: HashMap<_, _> = d.items().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        assert_eq!(m[&b"%x.1".to_vec()], b"f32[8]{0}");
        assert_eq!(m[&b"%0".to_vec()], b"stablehlo.add %a #1");
        assert_eq!(m[&b"%1".to_vec()], b"stablehlo.dot %b %c #1"); // operands stop at the attributes
        assert_eq!(m[&b"arg[0]".to_vec()], b"f32[8]{0}");
        assert_eq!(m[&b"arg[1]".to_vec()], b"i32");
        // an op that names its results apart defines each of them
        for name in [&b"%values"[..], b"%r", b"%indices"] {
            assert_eq!(m[&name.to_vec()], b"mhlo.topk(%a, #1");
        }
        // a while's loop arguments are no results: `%a` is not redefined as `%iterArg_0`'s init
        assert_eq!(m[&b"%iterArg_0".to_vec()], b"%b) #1");
        assert!(!m.contains_key(&b"%a"[..]));
    }

    #[test]
    fn an_mlir_op_is_defined_with_its_result_type() {
        let mut d = Defined::default();
        d.scan(b"%0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{\"x\"}, {}]>]>} : tensor<8x1xi32>\n%37 = stablehlo.reshape %36 : (tensor<8x32x16xi32>) -> tensor<8x32x2x8xi32>\n%1 = stablehlo.custom_call @f(%0) {a = 1 : i64} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<i32>)\n");
        let m: HashMap<_, _> = d.items().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        assert_eq!(m[&b"%0".to_vec()], b"stablehlo.negate %arg0 : tensor<8x1xi32> #1");
        assert_eq!(m[&b"%37".to_vec()], b"stablehlo.reshape %36 : tensor<8x32x2x8xi32> #1");
        assert_eq!(m[&b"%1".to_vec()], b"stablehlo.custom_call @f %0 : (tensor<8xf32>, tensor<i32>) #1");
        let mut r = Defined::default();
        r.scan(b"module {\n  func.func @main(%arg0: tensor<8xf32> {a = {b = \"->)\"}}) -> (tensor<8x1xi32> {s = #m<[{\"x\"}, {}]>, e = #p<[{x = r -> [o]}]>}, tensor<f32>) {\n  }\n  func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n");
        let m: HashMap<_, _> = r.items().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        assert_eq!(m[&b"result[0]".to_vec()], b"tensor<8x1xi32>");
        assert_eq!(m[&b"result[1]".to_vec()], b"tensor<f32>");
        assert!(!m.contains_key(&b"@f:result[0]"[..]) && m.len() == 4, "{m:?}"); // (and each arg[0])
        let mut w = Defined::default();
        w.scan(b"%5:2 = stablehlo.while(%iterArg = %0) : tensor<i32>, tensor<3xf32> attributes {s = 1 : i64}\n");
        let m: HashMap<_, _> = w.items().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        assert_eq!(m[&b"%5".to_vec()], b"stablehlo.while(%iterArg %0 : tensor<i32>, tensor<3xf32> #1");
    }

    #[test]
    fn an_mlir_op_is_defined_with_its_place_among_the_ops_of_its_kind() {
        // (Shardy's stages renumber values: `%14` of the next stage is another `dot %13, %arg1`, printed
        // alike to the letter, after a dump whose `%14` was its first dot)
        let (mut a, mut b) = (Defined::default(), Defined::default());
        a.scan(b"func.func @main(%arg1: tensor<4xf32>) {\n  %14 = stablehlo.dot %13, %arg1 : tensor<4xf32>\n  %19 = stablehlo.dot %18, %arg1 : tensor<4xf32>\n");
        b.scan(b"func.func @main(%arg1: tensor<4xf32>) {\n  %10 = stablehlo.dot %9, %arg1 : tensor<4xf32>\n  %14 = stablehlo.dot %13, %arg1 : tensor<4xf32>\n");
        assert_eq!(a.get(b"%14"), Some(&b"stablehlo.dot %13 %arg1 : tensor<4xf32> #1"[..]));
        assert_eq!(b.get(b"%14"), Some(&b"stablehlo.dot %13 %arg1 : tensor<4xf32> #2"[..]));
        let asked = [Asked { hash: hash(b"%14"), key: b"%14", plain: true }];
        assert_eq!(a.alike(&b, &asked), (vec![], vec![]));
        // kinds apart (a call's callee, a custom call's target); a constraint is counted with reshards;
        // the count carries over the chunks a function is scanned in and starts again in the next one
        let mut d = Defined::default();
        d.scan(b"func.func @main() {\n  %0 = stablehlo.custom_call @a(%x)\n  %1 = stablehlo.custom_call @b(%x)\n  %2 = sdy.sharding_constraint %1\n");
        d.scan(
            b"  %3 = sdy.reshard %2\n  %4 = stablehlo.custom_call @b(%x)\n}\nfunc.func @f() {\n  %0 = sdy.reshard %y\n",
        );
        let places: Vec<_> = [&b"%0"[..], b"%1", b"%2", b"%3", b"%4", b"@f:%0"]
            .iter()
            .map(|k| String::from_utf8_lossy(d.get(k).unwrap()).rsplit(' ').next().unwrap().to_string())
            .collect();
        assert_eq!(places, ["#1", "#1", "#1", "#2", "#2", "#1"]);
        // each region counts apart (told by indentation): a body Shardy's export outlines takes none of
        // the places of the region around it; sibling regions count apart, the outer one carries on
        let mut r = Defined::default();
        r.scan(b"func.func @main() {\n  %0 = stablehlo.add %x\n  %1 = sdy.manual_computation(%0) {\n    %2 = stablehlo.add %a\n  } : tensor<4xf32>\n  %3 = stablehlo.case(%1) ({\n    %4 = stablehlo.add %b\n    stablehlo.return %4\n  }, {\n    %5 = stablehlo.add %c\n\n    %6 = stablehlo.add %c\n  })\n  %7 = stablehlo.add %3\n");
        let places: Vec<_> = ["%0", "%2", "%4", "%5", "%6", "%7"]
            .iter()
            .map(|k| String::from_utf8_lossy(r.get(k.as_bytes()).unwrap()).rsplit(' ').next().unwrap().to_string())
            .collect();
        assert_eq!(places, ["#1", "#1", "#1", "#1", "#2", "#2"]);
    }

    #[test]
    fn alike_looks_up_plain_names_and_hands_back_the_rest() {
        let (mut a, mut b) = (Defined::default(), Defined::default());
        a.scan(b"%0 = stablehlo.add %x\n%1 = stablehlo.mul %y\n");
        b.scan(b"%0 = stablehlo.add %x\n%1 = stablehlo.dot %y\n");
        let keys = ["%0", "%1", "%2", "@f:%0", "%0#1", "arg[0]", "%0:in[0]"];
        let hashed: Vec<Asked> = keys
            .iter()
            .map(|k| Asked { hash: hash(k.as_bytes()), key: k.as_bytes(), plain: is_plain(k.as_bytes()) })
            .collect();
        assert_eq!(a.alike(&b, &hashed), (vec![0], vec![3, 4, 5, 6]));
    }

    #[test]
    fn scoped_by_function() {
        let mut d = Defined::default();
        d.scan(
            b"module @m {\n  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = stablehlo.add %arg0\n",
        );
        // a later region, as the engine hands them over: the scope carries on
        d.scan(b"  }\n  func.func private @body(%arg0: tensor<2xf32>) {\n    %0 = stablehlo.broadcast %arg0\n  }\n}\n");
        let m: HashMap<_, _> = d.items().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        assert_eq!(m[&b"%0".to_vec()], b"stablehlo.add %arg0 #1");
        assert_eq!(m[&b"@body:%0".to_vec()], b"stablehlo.broadcast %arg0 #1");
        assert_eq!(m[&b"@body:arg[0]".to_vec()], b"tensor<2xf32>");
        assert_eq!(m[&b"arg[0]".to_vec()], b"tensor<4xf32>");
        // an HLO computation's names are the module's own (unique): bare, and the entry's parameters,
        // printed last, win
        let mut h = Defined::default();
        h.scan(b"%fused.1 (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n}\n\nENTRY %main.2 (a: f32[16]) -> f32[16] {\n  %a = f32[16]{0} parameter(0)\n}\n");
        assert_eq!(h.get(b"%p"), Some(&b"f32[8]{0}"[..]));
        assert_eq!(h.get(b"arg[0]"), Some(&b"f32[16]{0}"[..]));
    }

    #[test]
    fn digest_splits() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        let whole = |d: &[u8]| {
            let mut a = Digest::default();
            a.update(d);
            a.finish()
        };
        for cuts in [&[3usize, 17][..], &[31, 32, 33], &[1, 2, 64, 100, 299], &[0, 0, 150]] {
            let mut b = Digest::default();
            let mut at = 0;
            for &c in cuts {
                b.update(&data[at..c.max(at)]);
                at = c.max(at);
            }
            b.update(&data[at..]);
            assert_eq!(whole(&data), b.finish(), "cut at {cuts:?}");
        }
        // other bytes, or the same bytes longer or shorter, hash otherwise
        let mut other = data.clone();
        other[200] ^= 1;
        assert_ne!(whole(&data), whole(&other));
        assert_ne!(whole(&data[..299]), whole(&data));
        assert_ne!(whole(&[0; 32]), whole(&[0; 33]));
    }
}
