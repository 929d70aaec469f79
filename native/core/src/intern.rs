//! Interning: each distinct value, name, shape tuple, scope or op of a scan held once and numbered in
//! the order first met, so the table's columns hold small ids and Python converts each distinct thing
//! once.

use crate::extract::{Site, SiteKind};
use crate::strings::Encoding;
use hashbrown::HashTable;
use rustc_hash::FxHasher as Fx;
use std::borrow::Borrow;
use std::borrow::Cow;
use std::hash::{Hash, Hasher};

/// The interning maps' hasher: rustc's Fx, fast on the short keys a scan hashes (no DoS concern: the
/// keys are the scanned file's own bytes, and a collision only costs time).
pub type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// A distinct value: (kind, site, raw, text, data, encoding).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    pub kind: SiteKind,
    pub site: Cow<'static, str>,
    pub raw: Vec<u8>,
    text: Option<Vec<u8>>, // None: the same as raw (most values)
    pub data: Option<Vec<u8>>,
    pub encoding: Encoding,
}

impl Value {
    /// The decoded value (the raw bytes unless it sat in a string).
    pub fn text(&self) -> &[u8] {
        self.text.as_deref().unwrap_or(&self.raw)
    }

    /// Whether the decoded value is the raw bytes themselves.
    pub fn text_is_raw(&self) -> bool {
        self.text.is_none()
    }
}

/// Interns values of one type: each distinct one gets the next id (held once, in the map).
pub struct Interner<T: Eq + Hash> {
    index: FxMap<T, u32>,
}

impl<T: Eq + Hash> Default for Interner<T> {
    fn default() -> Self {
        Interner { index: FxMap::default() }
    }
}

impl<T: Eq + Hash> Interner<T> {
    pub fn id(&mut self, item: T) -> u32 {
        let next = self.index.len() as u32;
        *self.index.entry(item).or_insert(next)
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// The id of an item met before.
    pub fn get<Q>(&self, item: &Q) -> Option<u32>
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.index.get(item).copied()
    }

    pub fn reserve(&mut self, n: usize) {
        self.index.reserve(n);
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The items in id order.
    pub fn items(&self) -> Vec<&T> {
        let mut out: Vec<Option<&T>> = vec![None; self.index.len()];
        for (k, &i) in &self.index {
            out[i as usize] = Some(k);
        }
        out.into_iter().flatten().collect()
    }

    /// The id of a borrowed item, copied only when it is new.
    pub fn id_of<Q>(&mut self, item: &Q) -> u32
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ?Sized + ToOwned,
        T: From<Q::Owned>,
    {
        if let Some(&i) = self.index.get(item) {
            return i;
        }
        self.id(T::from(item.to_owned()))
    }
}

/// Strings interned into one arena, end to end, each found by its hash: a pass log whose dumps all
/// rename their values meets a million names, and a map of owned strings paid an allocation (and a
/// free) for each.
#[derive(Default)]
pub struct TextInterner {
    text: String,
    ends: Vec<usize>,
    index: HashTable<(u64, u32)>, // (hash, id): no rehash of the text on growth
}

fn text_hash(s: &str) -> u64 {
    let mut h = Fx::default();
    s.hash(&mut h);
    h.finish()
}

impl TextInterner {
    /// The item with id `i`.
    pub fn item(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.text.get(start..end)
    }

    fn find(&self, h: u64, s: &str) -> Option<u32> {
        self.index.find(h, |&(vh, i)| vh == h && self.item(i as usize) == Some(s)).map(|&(_, i)| i)
    }

    /// The id of `s`, stored when it is new.
    pub fn id_of(&mut self, s: &str) -> u32 {
        let h = text_hash(s);
        if let Some(i) = self.find(h, s) {
            return i;
        }
        let i = self.ends.len() as u32;
        self.text.push_str(s);
        self.ends.push(self.text.len());
        self.index.insert_unique(h, (h, i), |&(vh, _)| vh);
        i
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn reserve(&mut self, n: usize) {
        self.index.reserve(n, |&(vh, _)| vh);
        self.ends.reserve(n);
    }

    /// The items in id order.
    pub fn items(&self) -> Vec<&str> {
        (0..self.len()).filter_map(|i| self.item(i)).collect()
    }
}

/// Values keyed by a hash of their parts, compared in full only on a hash hit (no key copies).
#[derive(Default)]
pub struct ValueInterner {
    pub items: Vec<Value>,
    index: HashTable<(u64, u32)>, // (hash, id): no list per hash, no rehash of the bytes on growth
}

fn value_hash(kind: SiteKind, site: &str, raw: &[u8], text: &[u8], data: Option<&[u8]>, enc: &Encoding) -> u64 {
    let mut h = Fx::default();
    (kind as u8).hash(&mut h);
    site.hash(&mut h);
    raw.hash(&mut h);
    // a value whose text is its raw bytes (most are) hashes them once
    if !std::ptr::eq(text, raw) && text != raw {
        text.hash(&mut h);
    }
    data.hash(&mut h);
    enc.hash(&mut h);
    h.finish()
}

impl ValueInterner {
    pub fn id(&mut self, s: &Site, line: &[u8]) -> u32 {
        let raw = s.raw(line);
        let text = s.text(line);
        let data = s.data.as_deref();
        let h = value_hash(s.kind, &s.site, raw, text, data, &s.encoding);
        let items = &self.items;
        let same = |&(vh, i): &(u64, u32)| {
            let v = &items[i as usize];
            vh == h
                && v.kind == s.kind
                && v.site == s.site
                && v.raw == raw
                && v.text() == text
                && v.data.as_deref() == data
                && v.encoding == s.encoding
        };
        if let Some(&(_, i)) = self.index.find(h, same) {
            return i;
        }
        let i = self.items.len() as u32;
        self.items.push(Value {
            kind: s.kind,
            site: s.site.clone(),
            raw: raw.to_vec(),
            text: if text == raw { None } else { Some(text.to_vec()) },
            data: s.data.clone(),
            encoding: s.encoding,
        });
        self.index.insert_unique(h, (h, i), |&(vh, _)| vh);
        i
    }

    /// Frees the index (the items stay).
    pub fn drop_index(&mut self) {
        self.index = HashTable::new();
    }
}
