//! The table builder: each site appended as one row of columns, each distinct value, name, shape
//! tuple, scope and op interned once; the module numbering, the groups (distinct module, value,
//! shapes, name) and the pairs of an HLO and an sdy sharding one value carries on one line.

use crate::extract::shapes::Shape;
use crate::extract::{physical_span, LineText, Name, Shapes, Site, SiteKind};
use crate::intern::{FxMap, Interner, TextInterner, ValueInterner};
use std::sync::Arc;

/// No id: a column's cell for a site without the thing (no name, no scope...).
pub const NONE: u32 = 0xFFFF_FFFF;

pub const U32_COLUMNS: [&str; 13] = [
    "value", "name", "shapes", "scope", "op", "module", "line", "col", "end_line", "end_col", "target", "param",
    "flags",
];

/// A site's row before it is appended: the site, and the text it was scanned in (at file offset
/// `text_off`), where its physical line is cut from when the row keeps it.
pub struct Row<'a> {
    pub site: &'a mut Site,
    pub text: &'a [u8],
    pub text_off: u64,
    pub scope: &'a mut Scope,
    /// Reads what a lazy scan left off the site (`Site::context`), once the site keeps a row.
    pub complete: &'a mut dyn FnMut(&mut Site),
}

pub type ScopeKey = (String, &'static str, bool);

/// The function or computation the sites being read are in, interned only once a row needs it (a
/// pass log opens hundreds of thousands of computations whose sites keep no row).
#[derive(Default)]
pub struct Scope {
    /// Whether a scope is open, and its name's bytes (kept in one buffer, line after line), kind and
    /// whether it is the entry.
    pub open: bool,
    pub name: Vec<u8>,
    pub kind: &'static str,
    pub entry: bool,
    pub id: Option<u32>,
}

impl Scope {
    /// A scope opened by a line: the same buffer holds its name.
    pub fn open(&mut self, name: &[u8], kind: &'static str, entry: bool) {
        self.name.clear();
        self.name.extend_from_slice(name);
        (self.open, self.kind, self.entry, self.id) = (true, kind, entry, None);
    }

    /// No scope (a module starts).
    pub fn reset(&mut self) {
        (self.open, self.id) = (false, None);
    }
}

/// A line longer than this, kept for a site in a table without every site's row, is kept as the
/// `LINE_WINDOW` bytes either side of the site (a pass log repeats its long signature lines per dump).
pub const LONG_LINE: usize = 2048;
pub const LINE_WINDOW: usize = 512;

impl Row<'_> {
    /// The site's physical line, its identity (its file offset) so sites on one line share it, and
    /// where in it the site starts (None for a line the site was reported at, not found on).
    fn physical_line(&self) -> (&[u8], u64, Option<usize>) {
        match &self.site.lt {
            LineText::Owned(v) => (v, u64::MAX - self.site.start, None),
            LineText::At(a) => {
                let (x, y) = physical_span(self.text, *a);
                let at = self.text_off.wrapping_add(x as u64);
                let rel = self.site.start.checked_sub(at).map(|r| r as usize);
                (&self.text[x..y], at, rel)
            }
        }
    }
}

struct LineEntry {
    hlo: Option<u32>,
    sdy: Option<u32>,
}

/// An HLO or sdy sharding a value carries on the line being read: its name, which kind, its group.
/// Kept in order and paired at the line's end, and only on a line that holds both kinds (most lines
/// hold one: an sdy signature line's hundreds of sites then need no index of names).
struct OnLine {
    name: Option<Name>,
    hlo: bool,
    group: u32,
}

/// Every grouped site's place, compact (LEB128 varints, deltas zigzagged): group, start, length, line.
/// About 5 bytes a site, so a table that keeps only each group's first row still has every span.
#[derive(Default)]
pub struct SpanLog {
    pub bytes: Vec<u8>,
    start: u64,
    line: u64,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(from: u64, to: u64) -> u64 {
    let d = to.wrapping_sub(from) as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(from: u64, z: u64) -> u64 {
    let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
    from.wrapping_add(d as u64)
}

/// The next varint of `b` at `*at`, or None at the end (or a truncated one).
fn get_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

impl SpanLog {
    fn push(&mut self, group: u32, start: u64, end: u64, line: u64) {
        put_varint(&mut self.bytes, u64::from(group));
        put_varint(&mut self.bytes, zigzag(self.start, start));
        put_varint(&mut self.bytes, end.saturating_sub(start));
        put_varint(&mut self.bytes, zigzag(self.line, line));
        (self.start, self.line) = (start, line);
    }

    /// The (group, start, end, line) of every site whose group `wanted` says yes to, in report order.
    pub fn read(bytes: &[u8], wanted: impl Fn(u32) -> bool) -> Vec<(u32, u64, u64, u64)> {
        let (mut at, mut start, mut line) = (0usize, 0u64, 0u64);
        let mut out = Vec::new();
        while at < bytes.len() {
            let fields = (|| {
                let g = get_varint(bytes, &mut at)?;
                let s = get_varint(bytes, &mut at)?;
                let n = get_varint(bytes, &mut at)?;
                let l = get_varint(bytes, &mut at)?;
                Some((g, s, n, l))
            })();
            let Some((g, s, n, l)) = fields else { break };
            start = unzigzag(start, s);
            line = unzigzag(line, l);
            let g = g as u32;
            if wanted(g) {
                out.push((g, start, start.saturating_add(n), line));
            }
        }
        out
    }
}

#[derive(Default)]
pub struct Table {
    pub values: ValueInterner,
    pub names: TextInterner,
    pub shapes: Interner<Vec<Shape>>,
    pub scopes: Interner<ScopeKey>,
    pub ops: Interner<Box<str>>,
    pub u32s: [Vec<u32>; 13],
    pub starts: Vec<u64>,
    pub ends: Vec<u64>,
    /// (site index, index into `line_spans`).
    pub line_texts: Vec<(u32, u32)>,
    /// The distinct physical lines kept, one after the other, and where each is.
    pub line_store: Vec<u8>,
    pub line_spans: Vec<(usize, usize)>,
    /// (row, byte of its line its kept text starts at) for the rows whose long line is kept as a window.
    pub line_cuts: Vec<(u32, u32)>,
    last_line: Option<(u64, u32)>,
    pub groups: Vec<[u32; 6]>,
    group_index: FxMap<[u32; 4], u32>,
    pub pairs: Vec<[u32; 4]>,
    pair_index: FxMap<[u32; 3], u32>,
    module: u32,
    filled: bool,
    line: Option<u64>,
    line_module: u32,
    on_line: Vec<OnLine>,
    /// The pairing of a line holding both: each value name's last HLO and sdy sharding, in the order
    /// the names first came (kept for their room, line after line).
    entries: Vec<LineEntry>,
    entry_index: FxMap<Option<Name>, usize>,
    /// The last tensor-type tuples and op names met, and their ids.
    shape_ids: ArcIds<Vec<Shape>>,
    op_ids: ArcIds<str>,
    /// Whether every site keeps its row; else only each group's first site, module headers and
    /// expected-error markers do (the propagation records none), and `spans` holds every place.
    pub every_site: bool,
    pub spans: SpanLog,
}

/// The last few `Arc`s met and their ids: the extractor shares one `Arc` per distinct text (a tuple of
/// tensor types, an op's name), so a pointer finds most without hashing what it points to.
struct ArcIds<T: ?Sized>([Option<(Arc<T>, u32)>; 8]);

impl<T: ?Sized> Default for ArcIds<T> {
    fn default() -> Self {
        ArcIds(Default::default())
    }
}

impl<T: ?Sized> ArcIds<T> {
    /// The id of `a`: the one met lately at the same address, else `intern(a)`'s.
    fn id(&mut self, a: &Arc<T>, intern: impl FnOnce(&T) -> u32) -> u32 {
        let slot = (Arc::as_ptr(a) as *const u8 as usize >> 4) % self.0.len();
        if let Some((known, id)) = &self.0[slot] {
            if Arc::ptr_eq(known, a) {
                return *id;
            }
        }
        let id = intern(a);
        self.0[slot] = Some((a.clone(), id));
        id
    }
}

/// Whether a site pairs with the others of its line: Some(true) for an HLO sharding, Some(false) for
/// an sdy one, None for any other site.
pub fn pairing(s: &Site) -> Option<bool> {
    let hlo = s.kind == SiteKind::Hlo && (s.site == "sharding=" || s.site == "mhlo.sharding");
    let sdy = (s.kind == SiteKind::SdySharding || s.kind == SiteKind::SdyPerValue)
        && (s.site == "xla.sdy.sharding" || s.site == "sdy.sharding");
    (hlo || sdy).then_some(hlo)
}

/// Whether sites of `kind` form groups: propagation records and operand lists (kinds from SdyOrigins
/// on) are sites, never values to check, and module headers and expected-error markers are neither.
fn grouped(kind: SiteKind) -> bool {
    kind != SiteKind::ModuleStart && kind != SiteKind::ExpectedError && kind < SiteKind::SdyOrigins
}

fn clamp32(v: u64) -> u32 {
    if v >= u64::from(NONE) {
        NONE - 1
    } else {
        v as u32
    }
}

impl Table {
    pub fn new(every_site: bool) -> Self {
        Table { every_site, ..Table::default() }
    }

    /// Room for the rows an input of `size` bytes likely gives (about one site per 256 bytes in real
    /// dumps), so the columns do not grow by copying; more than that grows as usual.
    pub fn reserve_for(&mut self, size: u64) {
        self.spans.bytes.reserve((size / 48).min(1 << 26) as usize);
        if !self.every_site {
            return;
        }
        let rows = (size / 256).min(1 << 24) as usize;
        for c in &mut self.u32s {
            c.reserve(rows);
        }
        self.starts.reserve(rows);
        self.ends.reserve(rows);
        self.groups.reserve(rows / 2);
        self.line_texts.reserve(rows / 2);
        self.line_spans.reserve(rows / 2);
        self.line_store.reserve((size / 8).min(1 << 28) as usize);
        self.names.reserve(rows);
    }

    /// Frees the maps only the scan needed (the items stay).
    pub fn drop_indexes(&mut self) {
        self.group_index = FxMap::default();
        self.pair_index = FxMap::default();
        self.values.drop_index();
        self.on_line = Vec::new();
        self.entries = Vec::new();
        self.entry_index = FxMap::default();
        self.shape_ids = Default::default();
        self.op_ids = Default::default();
    }

    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// The rows from `from` on (but row `skip`) put in `scope`: a long line's own sites, read in windows
    /// before its end said what it opens.
    pub fn rescope(&mut self, from: usize, skip: Option<usize>, scope: &mut Scope) {
        let id = self.scope_id(scope);
        for (i, cell) in self.u32s[3].iter_mut().enumerate().skip(from) {
            if Some(i) != skip {
                *cell = id;
            }
        }
    }

    /// The id of `scope` (interned on its first row), NONE when none is open.
    fn scope_id(&mut self, scope: &mut Scope) -> u32 {
        match (scope.open, scope.id) {
            (false, _) => NONE,
            (true, Some(id)) => id,
            (true, None) => {
                let key = (String::from_utf8_lossy(&scope.name).into_owned(), scope.kind, scope.entry);
                let id = self.scopes.id_of(&key);
                scope.id = Some(id);
                id
            }
        }
    }

    /// Modules used: a header starts a new one once the current one holds a site.
    pub fn modules(&self) -> u32 {
        self.module + u32::from(self.filled)
    }

    /// What each module holds, as the keys a module's slice reads: per group its value, shapes and name
    /// ids; per pair its two groups, counted from its module's first group (equal modules, equal keys).
    pub fn module_keys(&self) -> (Vec<u32>, Vec<u32>) {
        let parts: Vec<u32> = self.groups.iter().flat_map(|g| [g[1], g[2], g[3]]).collect();
        let mut first = std::collections::HashMap::new(); // module -> its first group
        for (i, g) in self.groups.iter().enumerate() {
            first.entry(g[0]).or_insert(i as u32);
        }
        let relative = self
            .pairs
            .iter()
            .flat_map(|p| {
                let base = first.get(&p[0]).copied().unwrap_or(0);
                [p[1].wrapping_sub(base), p[2].wrapping_sub(base)]
            })
            .collect();
        (parts, relative)
    }

    /// Takes a site into the table; the group it joins, if it has one.
    pub fn push(&mut self, mut row: Row) -> Option<u32> {
        let s = &row.site;
        let kind = s.kind;
        let grouped = grouped(kind);
        if !self.every_site && kind >= SiteKind::SdyOrigins {
            return None;
        }
        let value = self.values.id(s, row.text);
        let shapes = s.shapes.as_ref().map_or(NONE, |v| self.shapes_id(v));
        if kind == SiteKind::ModuleStart {
            if self.filled {
                self.module += 1;
                self.filled = false;
                // a group or pair of an earlier module is never met again: keep the maps small
                self.group_index.clear();
                self.pair_index.retain(|k, _| k[0] == self.line_module);
            }
        } else if kind < SiteKind::SdyOrigins {
            self.filled = true;
        }
        let module = self.module;
        if kind != SiteKind::ModuleStart {
            self.reading_line(s.line);
        }
        let named = matches!(
            kind,
            SiteKind::SdyMesh
                | SiteKind::StablehloMesh
                | SiteKind::CollectiveMesh
                | SiteKind::CollectiveAxes
                | SiteKind::ShardGrid
                | SiteKind::ShardSharding
        );
        let key_name = if named { self.name_id(&s.value) } else { NONE };
        let index = self.starts.len() as u32;
        let mut keep = self.every_site || !grouped;
        let mut keep_line = kind == SiteKind::ModuleStart || kind == SiteKind::ExpectedError;
        let group = if grouped {
            let key = [module, value, shapes, key_name];
            let group = match self.group_index.get(&key) {
                Some(&g) => {
                    self.groups[g as usize][5] += 1;
                    g
                }
                None => {
                    let g = self.groups.len() as u32;
                    self.groups.push([module, value, shapes, key[3], index, 1]);
                    self.group_index.insert(key, g);
                    (keep, keep_line) = (true, true);
                    g
                }
            };
            self.spans.push(group, s.start, s.end, s.line);
            Some(group)
        } else {
            None
        };
        if keep {
            self.keep_row(&mut row, named, key_name, [value, shapes, module, index], keep_line);
        }
        if let Some(group) = group {
            self.pair_site(row.site, group);
        }
        group
    }

    /// A site of line `line` comes: the line before is paired when this is another (per line and value
    /// name, its last HLO sharding with its last sdy one).
    fn reading_line(&mut self, line: u64) {
        if self.line != Some(line) {
            self.pair_line();
            self.line = Some(line);
        }
        self.line_module = self.module;
    }

    /// The module the next site is in.
    pub fn module(&self) -> u32 {
        self.module
    }

    /// A site of `group` again, at `start..end` on line `line`, as `push` counts one that keeps no row
    /// (a constraint's value, an argument's attribute: see `repeats`); an sdy sharding that pairs on its
    /// line comes with its value's `name`.
    pub fn repeat(&mut self, group: u32, start: u64, end: u64, line: u64, sdy_pair: Option<Name>) {
        self.reading_line(line);
        self.filled = true;
        self.groups[group as usize][5] += 1;
        self.spans.push(group, start, end, line);
        if let Some(name) = sdy_pair {
            self.on_line.push(OnLine { name: Some(name), hlo: false, group });
        }
    }

    /// The row of a site that keeps one (and its physical line, or a window of it, when `keep_line`);
    /// `ids` are its value, shapes, module and row index.
    fn keep_row(&mut self, row: &mut Row, named: bool, key_name: u32, ids: [u32; 4], keep_line: bool) {
        let [value, shapes, module, index] = ids;
        (row.complete)(row.site);
        let s = &row.site;
        let kind = s.kind;
        let grouped = grouped(kind);
        let name = if named { key_name } else { self.name_id(&s.value) };
        let scope = self.scope_id(row.scope);
        self.push_row(scope, s, [value, name, shapes, module]);
        if keep_line {
            let (text, key, rel) = row.physical_line();
            let whole = self.every_site || !grouped || kind == SiteKind::NumPartitions || text.len() <= LONG_LINE;
            match rel {
                Some(rel) if !whole => self.keep_window(index, text, rel),
                _ => self.keep_line(index, key, text),
            }
        }
    }

    /// The id of a tuple of tensor types: by its `Arc` if it was met lately, else by its contents.
    fn shapes_id(&mut self, shapes: &Shapes) -> u32 {
        let interned = &mut self.shapes;
        self.shape_ids.id(shapes, |v| interned.id_of(v.as_slice()))
    }

    fn name_id(&mut self, name: &Option<Name>) -> u32 {
        name.as_deref().map_or(NONE, |v| self.names.id_of(v))
    }

    /// An HLO or sdy sharding a value carries: noted for its line's pairing (the site's name moves here).
    fn pair_site(&mut self, s: &mut Site, group: u32) {
        if let Some(hlo) = pairing(s) {
            self.on_line.push(OnLine { name: std::mem::take(&mut s.value), hlo, group });
        }
    }

    /// The site's row of columns; `ids` are its value, name, shapes and module.
    fn push_row(&mut self, scope: u32, s: &Site, ids: [u32; 4]) {
        let [value, name, shapes, module] = ids;
        let ops = &mut self.ops;
        let op = s.op.as_ref().map_or(NONE, |v| self.op_ids.id(v, |v| ops.id_of(v)));
        let target = match s.target {
            Some(t) if t < 0 => 0,
            Some(t) => clamp32(t as u64),
            None => NONE,
        };
        let cols = [
            value,
            name,
            shapes,
            scope,
            op,
            module,
            clamp32(s.line),
            clamp32(s.col),
            clamp32(s.end_line),
            clamp32(s.end_col),
            target,
            s.param.unwrap_or(NONE),
            s.flags,
        ];
        for (c, v) in self.u32s.iter_mut().zip(cols) {
            c.push(v);
        }
        self.starts.push(s.start);
        self.ends.push(s.end);
    }

    /// The `LINE_WINDOW` bytes either side of byte `rel` of a long line, for row `index`.
    fn keep_window(&mut self, index: u32, text: &[u8], rel: usize) {
        let a = rel.min(text.len()).saturating_sub(LINE_WINDOW);
        let b = rel.saturating_add(LINE_WINDOW).min(text.len());
        let id = self.line_spans.len() as u32;
        self.line_spans.push((self.line_store.len(), b - a));
        self.line_store.extend_from_slice(&text[a..b]);
        self.last_line = None;
        self.line_texts.push((index, id));
        self.line_cuts.push((index, a as u32));
    }

    /// The physical line of row `index`, kept once per line.
    fn keep_line(&mut self, index: u32, line_key: u64, line_text: &[u8]) {
        let id = match self.last_line {
            Some((k, id)) if k == line_key => id,
            _ => {
                let id = self.line_spans.len() as u32;
                let at = self.line_store.len();
                self.line_store.extend_from_slice(line_text);
                self.line_spans.push((at, line_text.len()));
                self.last_line = Some((line_key, id));
                id
            }
        };
        self.line_texts.push((index, id));
    }

    fn pair_line(&mut self) {
        let both = self.on_line.iter().any(|s| s.hlo) && self.on_line.iter().any(|s| !s.hlo);
        if !both {
            self.on_line.clear();
            return;
        }
        // drained, not taken: the entries' room serves line after line
        for site in self.on_line.drain(..) {
            let at = match self.entry_index.get(&site.name) {
                Some(&i) => i,
                None => {
                    self.entries.push(LineEntry { hlo: None, sdy: None });
                    self.entry_index.insert(site.name, self.entries.len() - 1);
                    self.entries.len() - 1
                }
            };
            if site.hlo {
                self.entries[at].hlo = Some(site.group);
            } else {
                self.entries[at].sdy = Some(site.group);
            }
        }
        self.entry_index.clear();
        let module = self.line_module;
        for e in self.entries.drain(..) {
            if let (Some(h), Some(s)) = (e.hlo, e.sdy) {
                let key = [module, h, s];
                match self.pair_index.get(&key) {
                    Some(&p) => self.pairs[p as usize][3] += 1,
                    None => {
                        self.pair_index.insert(key, self.pairs.len() as u32);
                        self.pairs.push([module, h, s, 1]);
                    }
                }
            }
        }
    }

    /// Pairs the last line's values; call once after the last site.
    pub fn finish(&mut self) {
        self.pair_line();
    }
}

#[cfg(test)]
mod tests {
    use super::TextInterner;
    use crate::reader::lines::{Engine, Options};

    #[test]
    fn text_interner_ids_in_order() {
        let mut t = TextInterner::default();
        t.reserve(2);
        let names = ["%a", "", "%arg0", "%a", "result[0]", "", "%é"];
        let ids: Vec<u32> = names.iter().map(|n| t.id_of(n)).collect();
        assert_eq!(ids, vec![0, 1, 2, 0, 3, 1, 4]);
        assert_eq!(t.items(), vec!["%a", "", "%arg0", "result[0]", "%é"]);
        assert_eq!((t.id_of("%arg0"), t.len()), (2, 5));
        assert!(!t.items().contains(&"%b"));
        for i in 0..5000 {
            assert_eq!(t.id_of(&format!("%v{i}")), 5 + i); // grows past its room, ids stay
        }
        assert_eq!(t.item(5004), Some("%v4999"));
        assert_eq!((t.id_of("%a"), t.len()), (0, 5005));
    }

    #[test]
    fn groups_and_pairs() {
        let data = b"HloModule m\n  %a = f32[8]{0} parameter(0), sharding={replicated}, frontend_attributes={xla.sdy.sharding=\"#sdy.sharding<@m, [{}]>\"}\n  %b = f32[8]{0} parameter(1), sharding={replicated}, frontend_attributes={xla.sdy.sharding=\"#sdy.sharding<@m, [{}]>\"}\nHloModule n, num_partitions=1\n  %c = f32[8]{0} parameter(0), sharding={replicated}\n";
        let mut e = Engine::new(Options::default()).unwrap();
        e.feed(data);
        e.finish();
        let t = &e.table;
        assert_eq!(t.modules(), 2);
        assert_eq!(t.groups.len(), 4); // a bare `HloModule n` line would hold no keyword: not a header
        assert_eq!(t.groups[0][5], 2); // the HLO sharding, twice in module 0
        assert_eq!(t.pairs, vec![[0, 0, 1, 2]]);
        assert_eq!(t.groups[3][0], 1);
    }
}
