//! The table builder: each site appended as one row of columns, each distinct value, name, shape
//! tuple, scope and op interned once; the module numbering, the groups (distinct module, value,
//! shapes, name) and the pairs of an HLO and an sdy sharding one value carries on one line.

use crate::extract::{
    Site, COLLECTIVE_MESH, EXPECTED_ERROR, HLO, MODULE_START, SDY_MESH, SDY_ORIGINS, SDY_PER_VALUE, SDY_SHARDING,
    STABLEHLO_MESH,
};
use crate::shapes::Shape;
use crate::strings::Encoding;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

pub const NONE: u32 = 0xFFFF_FFFF;

/// A distinct value: (kind, site, raw, text, data, encoding).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    pub kind: u8,
    pub site: String,
    pub raw: Vec<u8>,
    pub text: Vec<u8>,
    pub data: Option<Vec<u8>>,
    pub encoding: Encoding,
}

/// Interns values of one type: each distinct one gets the next id.
pub struct Interner<T: Eq + Hash + Clone> {
    pub items: Vec<T>,
    index: HashMap<T, u32>,
}

impl<T: Eq + Hash + Clone> Default for Interner<T> {
    fn default() -> Self {
        Interner { items: Vec::new(), index: HashMap::new() }
    }
}

impl<T: Eq + Hash + Clone> Interner<T> {
    pub fn id(&mut self, item: T) -> u32 {
        if let Some(&i) = self.index.get(&item) {
            return i;
        }
        let i = self.items.len() as u32;
        self.items.push(item.clone());
        self.index.insert(item, i);
        i
    }
}

/// Values keyed by a hash of their parts, compared in full only on a hash hit (no key copies).
#[derive(Default)]
pub struct ValueInterner {
    pub items: Vec<Value>,
    index: HashMap<u64, Vec<u32>>,
}

fn value_hash(kind: u8, site: &str, raw: &[u8], text: &[u8], data: Option<&[u8]>, enc: &Encoding) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    kind.hash(&mut h);
    site.hash(&mut h);
    raw.hash(&mut h);
    text.hash(&mut h);
    data.hash(&mut h);
    enc.hash(&mut h);
    h.finish()
}

impl ValueInterner {
    pub fn id(&mut self, s: &Site) -> u32 {
        let text = s.text();
        let data = s.data.as_deref();
        let h = value_hash(s.kind, &s.site, &s.raw, text, data, &s.encoding);
        if let Some(ids) = self.index.get(&h) {
            for &i in ids {
                let v = &self.items[i as usize];
                if v.kind == s.kind
                    && v.site == s.site
                    && v.raw == s.raw
                    && v.text == text
                    && v.data.as_deref() == data
                    && v.encoding == s.encoding
                {
                    return i;
                }
            }
        }
        let i = self.items.len() as u32;
        self.items.push(Value {
            kind: s.kind,
            site: s.site.clone(),
            raw: s.raw.clone(),
            text: text.to_vec(),
            data: s.data.clone(),
            encoding: s.encoding,
        });
        self.index.entry(h).or_default().push(i);
        i
    }
}

pub const U32_COLUMNS: [&str; 13] = [
    "value", "name", "shapes", "scope", "op", "module", "line", "col", "end_line", "end_col", "target", "param",
    "flags",
];

/// A site's row before it is appended: the site and its physical line.
pub struct Row<'a> {
    pub site: Site,
    pub line_text: &'a [u8],
    /// Identity of the physical line (its file offset), so sites on one line share its text.
    pub line_key: u64,
    pub scope: u32,
}

struct LineEntry {
    name: u32,
    hlo: Option<u32>,
    sdy: Option<u32>,
}

#[derive(Default)]
pub struct Table {
    pub values: ValueInterner,
    pub names: Interner<String>,
    pub shapes: Interner<Vec<Shape>>,
    pub scopes: Interner<(String, &'static str, bool)>,
    pub ops: Interner<String>,
    pub u32s: [Vec<u32>; 13],
    pub starts: Vec<u64>,
    pub ends: Vec<u64>,
    /// (site index, index into `line_store`).
    pub line_texts: Vec<(u32, u32)>,
    pub line_store: Vec<Vec<u8>>,
    last_line: Option<(u64, u32)>,
    pub groups: Vec<[u32; 6]>,
    group_index: HashMap<[u32; 4], u32>,
    pub pairs: Vec<[u32; 4]>,
    pair_index: HashMap<[u32; 3], u32>,
    module: u32,
    filled: bool,
    line: Option<u64>,
    line_module: u32,
    on_line: Vec<LineEntry>,
}

fn clamp32(v: u64) -> u32 {
    if v >= u64::from(NONE) {
        NONE - 1
    } else {
        v as u32
    }
}

impl Table {
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// Modules used: a header starts a new one once the current one holds a site.
    pub fn modules(&self) -> u32 {
        self.module + u32::from(self.filled)
    }

    pub fn push(&mut self, row: Row) {
        let s = row.site;
        let index = self.starts.len() as u32;
        let kind = s.kind;
        let value = self.values.id(&s);
        let name = s.value.map_or(NONE, |v| self.names.id(v));
        let shapes = s.shapes.map_or(NONE, |v| self.shapes.id(v));
        let op = s.op.map_or(NONE, |v| self.ops.id(v));
        if kind == MODULE_START {
            if self.filled {
                self.module += 1;
                self.filled = false;
            }
        } else if kind < SDY_ORIGINS {
            self.filled = true;
        }
        let module = self.module;
        let target = match s.target {
            Some(t) if t < 0 => 0,
            Some(t) => clamp32(t as u64),
            None => NONE,
        };
        let cols = [
            value,
            name,
            shapes,
            row.scope,
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
        let mut keep_line = kind == MODULE_START || kind == EXPECTED_ERROR;
        if kind != MODULE_START {
            // the reference's pairing: per line, per value name, the last HLO and sdy sharding
            if self.line != Some(s.line) {
                self.pair_line();
                self.line = Some(s.line);
            }
            self.line_module = module;
        }
        // propagation records and operand lists (kinds from SDY_ORIGINS on) are sites, never values to check
        if kind != MODULE_START && kind != EXPECTED_ERROR && kind < SDY_ORIGINS {
            let named = matches!(kind, SDY_MESH | STABLEHLO_MESH | COLLECTIVE_MESH);
            let key = [module, value, shapes, if named { name } else { NONE }];
            let group = match self.group_index.get(&key) {
                Some(&g) => {
                    self.groups[g as usize][5] += 1;
                    g
                }
                None => {
                    let g = self.groups.len() as u32;
                    self.groups.push([module, value, shapes, key[3], index, 1]);
                    self.group_index.insert(key, g);
                    keep_line = true;
                    g
                }
            };
            let hlo = kind == HLO && (s.site == "sharding=" || s.site == "mhlo.sharding");
            let sdy = (kind == SDY_SHARDING || kind == SDY_PER_VALUE)
                && (s.site == "xla.sdy.sharding" || s.site == "sdy.sharding");
            if hlo || sdy {
                let at = match self.on_line.iter().position(|e| e.name == name) {
                    Some(i) => i,
                    None => {
                        self.on_line.push(LineEntry { name, hlo: None, sdy: None });
                        self.on_line.len() - 1
                    }
                };
                if hlo {
                    self.on_line[at].hlo = Some(group);
                } else {
                    self.on_line[at].sdy = Some(group);
                }
            }
        }
        if keep_line {
            let id = match self.last_line {
                Some((k, id)) if k == row.line_key => id,
                _ => {
                    let id = self.line_store.len() as u32;
                    self.line_store.push(row.line_text.to_vec());
                    self.last_line = Some((row.line_key, id));
                    id
                }
            };
            self.line_texts.push((index, id));
        }
    }

    fn pair_line(&mut self) {
        let module = self.line_module;
        for e in std::mem::take(&mut self.on_line) {
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
