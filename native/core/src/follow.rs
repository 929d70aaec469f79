//! Following one sequence of dumps (trace): each dump's sharded values by key, and against the dumps
//! before, which of them may have gained, changed or lost their sharding. Most values of a dump read as
//! they did where they were last seen, or are new names no dump before defined: those are settled here,
//! and only the others go back to Python, which words the changes.

use crate::names::{hash, is_plain, Asked, Defined};
use hashbrown::HashTable;
use std::collections::VecDeque;
use std::sync::Arc;

/// Fresh dumps a value may be missing from (another function's dumps) and still be compared.
pub const FORGET: u64 = 64;
/// Fresh dumps between two sweeps of the values forgotten (memory holds a quarter more dumps' values).
const SWEEP: u64 = FORGET / 4;

/// What a value's sighting says, as far as following needs: whether two say the same (one reading).
pub trait Same {
    fn same(&self, other: &Self) -> bool;
}

/// One dump's sharded values by key (`arg[0]`, `result[1]`, `%3`, `@f:%0#1`), in order of first
/// sighting, with the sightings of each, and the caller's `tag` for the dump (what it needs to word a
/// change against it). The keys sit end to end in one string, each with its hash, made once: a pass log
/// whose dumps all rename their values meets a million keys. Sightings are added in site order, then
/// grouped by key once (`seal`): one vector for all, not one per value.
pub struct DumpValues<S, T> {
    text: String,
    keys: Vec<(u64, u32)>, // per key: its hash, where it ends in `text`
    plain: Vec<bool>,      // per key: whether it `is_plain` (made once: each key is looked up twice)
    at: HashTable<u32>,    // key index, by the key's hash
    added: Vec<(u32, S)>,  // (key index, sighting) as added
    sightings: Vec<S>,     // grouped by key, once sealed
    ends: Vec<u32>,        // where each key's sightings end in `sightings`
    pub tag: T,
}

impl<S, T> DumpValues<S, T> {
    pub fn new(tag: T) -> Self {
        Self::with_room(tag, 0)
    }

    /// A dump's values, with room for `sites` sightings (and as many keys at most).
    pub fn with_room(tag: T, sites: usize) -> Self {
        let (sightings, ends) = Default::default();
        let text = String::with_capacity(sites * 8); // (most keys are short: `%123`, `arg[4]`)
        let (keys, at, added) = (Vec::with_capacity(sites), HashTable::with_capacity(sites), Vec::with_capacity(sites));
        let plain = Vec::with_capacity(sites);
        DumpValues { text, keys, plain, at, added, sightings, ends, tag }
    }

    /// The `i`th key.
    pub fn key(&self, i: usize) -> &str {
        &self.text[self.span(i)]
    }

    /// Where the `i`th key sits in `text`.
    fn span(&self, i: usize) -> std::ops::Range<usize> {
        key_span(&self.keys, i)
    }

    /// The `i`th key's bytes (compared without `str`'s boundary checks).
    fn key_bytes(&self, i: usize) -> &[u8] {
        &self.text.as_bytes()[self.span(i)]
    }

    fn hash_of(&self, i: usize) -> u64 {
        self.keys[i].0
    }

    /// The index of the key `key` (of hash `h`).
    fn find(&self, h: u64, key: &[u8]) -> Option<usize> {
        self.at.find(h, |&i| self.key_bytes(i as usize) == key).map(|&i| i as usize)
    }

    /// `s` added to the sightings of `key` (its first makes the key); returns the key's index.
    pub fn add(&mut self, key: &str, s: S) -> usize {
        let h = hash(key.as_bytes());
        let (text, keys) = (&self.text, &self.keys);
        // (one probe: most keys are new to the dump; `self` is borrowed by the table, so its parts are named)
        let same = |&j: &u32| &text.as_bytes()[key_span(keys, j as usize)] == key.as_bytes();
        let i = match self.at.entry(h, same, |&j| keys[j as usize].0) {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get() as usize,
            hashbrown::hash_table::Entry::Vacant(v) => {
                let i = keys.len();
                v.insert(i as u32);
                self.text.push_str(key);
                self.keys.push((h, self.text.len() as u32));
                self.plain.push(is_plain(key.as_bytes()));
                i
            }
        };
        self.push(i, s);
        i
    }

    /// `s` added to the sightings of the `i`th key.
    pub fn push(&mut self, i: usize, s: S) {
        self.added.push((i as u32, s));
    }

    /// The sightings grouped by key, each key's in the order added (once: sealing again does nothing).
    pub fn seal(&mut self) {
        if self.ends.len() == self.keys.len() && self.added.is_empty() {
            return;
        }
        let mut added = std::mem::take(&mut self.added);
        added.sort_by_key(|&(k, _)| k); // (stable: each key's sightings keep their order)
        self.ends = vec![0; self.keys.len()];
        self.sightings.reserve(added.len());
        for (k, s) in added {
            self.sightings.push(s);
            self.ends[k as usize] = self.sightings.len() as u32;
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The `i`th key and its sightings (once sealed).
    pub fn get(&self, i: usize) -> (&str, &[S]) {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        (self.key(i), &self.sightings[start..self.ends[i] as usize])
    }

    /// Whether every value is an argument or a result (what is left after SPMD partitioning).
    pub fn positional(&self) -> bool {
        (0..self.len()).all(|i| self.key_bytes(i).starts_with(b"arg[") || entry_result(self.key_bytes(i)))
    }

    /// Each key of `keys` (indices), to look up.
    fn asked(&self, keys: &[usize]) -> Vec<Asked<'_>> {
        keys.iter().map(|&i| Asked { hash: self.hash_of(i), key: self.key_bytes(i), plain: self.plain[i] }).collect()
    }
}

/// Where key `i` sits in the text of keys whose ends are `keys` (each key's hash, its end).
fn key_span(keys: &[(u64, u32)], i: usize) -> std::ops::Range<usize> {
    let start = if i == 0 { 0 } else { keys[i - 1].1 as usize };
    start..keys[i].1 as usize
}

/// A value of a dump, where its sightings are: the dump's values and its index there.
pub struct At<S, T> {
    pub values: Arc<DumpValues<S, T>>,
    pub index: usize,
    /// The count (among the dumps read fresh) of that dump.
    pub count: u64,
}

impl<S, T> At<S, T> {
    fn new(values: &Arc<DumpValues<S, T>>, index: usize, count: u64) -> Self {
        At { values: values.clone(), index, count }
    }

    pub fn sightings(&self) -> &[S] {
        self.values.get(self.index).1
    }
}

/// What a value of the dump read now may be, against the dump before and where it was last seen.
pub enum Now<S, T> {
    /// Sharded here, not in the dump before, which defined it alike (or a result of the same module).
    Gained,
    /// Sharded where it was last seen (`At`), and not read as it was there.
    Changed(At<S, T>),
    /// Not in the dump before, and not a plain `%name` the scan's names can tell: the caller asks
    /// whether both dumps define it alike (a gain), and else compares it with where it was last seen.
    Ask(Option<At<S, T>>),
}

/// What a value of the dump before, missing from the dump read now, may be.
pub enum Gone {
    /// Both dumps define it alike: it lost its sharding.
    Lost,
    /// Not a plain `%name`: the caller asks whether both dumps define it alike.
    Ask,
}

/// What following a dump will look up in the names of the dumps (where a long segment let its
/// definitions go, only these are read again from its file): values new since the dump before and
/// values of the dump before missing now (in both dumps' names; indices into the dump read now and the
/// dump before), and values that may read otherwise than where last seen (there and now; each with the
/// count of the dump it was last seen in).
pub struct Wanted {
    pub new: Vec<usize>,
    pub missing: Vec<usize>,
    pub changed: Vec<(usize, u64)>,
}

/// One fresh dump followed: its values in order with what each may be (values read as they were, and
/// values new to this dump that are not gains, are left out), and the values of the dump before it has
/// not (in that dump's order).
pub struct Step<S, T> {
    pub values: Arc<DumpValues<S, T>>,
    pub now: Vec<(usize, Now<S, T>)>,
    pub gone: Vec<(At<S, T>, Gone)>,
}

/// What following one sequence of dumps remembers: where each value was last seen (forgotten when
/// missing from the last `FORGET` dumps read fresh, so memory stays flat whatever the names), and the
/// dumps read fresh that places may still name, in order, each with its count (the last: the dump
/// before the one read now). A place is three numbers: an `At` (a shared pointer, counted atomically)
/// is made only for a value handed back.
pub struct Follower<S, T> {
    last: HashTable<Place>, // by the key's hash; a value forgotten may stay until the next sweep
    dumps: VecDeque<(u64, Arc<DumpValues<S, T>>)>,
}

/// Where a value was last seen: that dump's count, the value's index there, and its key's hash.
#[derive(Clone, Copy)]
struct Place {
    count: u64,
    index: u32,
    hash: u64,
}

impl<S, T> Default for Follower<S, T> {
    fn default() -> Self {
        Follower { last: HashTable::new(), dumps: VecDeque::new() }
    }
}

/// Whether a value last seen in dump `seen` is forgotten when dump `now` is read: missing from the
/// `FORGET` dumps read fresh before it.
fn forgotten(seen: u64, now: u64) -> bool {
    seen + FORGET < now
}

/// Whether `key` is a function result of the entry: followed by position, gained with its module.
fn entry_result(key: &[u8]) -> bool {
    key.starts_with(b"result[")
}

/// The dump of count `count` among `dumps` (held while any place names it).
fn dump_of<S, T>(dumps: &VecDeque<(u64, Arc<DumpValues<S, T>>)>, count: u64) -> &Arc<DumpValues<S, T>> {
    let first = dumps.front().map_or(0, |&(c, _)| c);
    &dumps[(count - first) as usize].1
}

impl<S, T> Follower<S, T> {
    /// The values of the dump read fresh last.
    pub fn last(&self) -> Option<&DumpValues<S, T>> {
        self.dumps.back().map(|(_, d)| &**d)
    }

    /// The count of the dump read fresh last.
    pub fn last_count(&self) -> Option<u64> {
        self.dumps.back().map(|&(at, _)| at)
    }

    /// The values of the dump of count `count` (among the dumps read fresh), while held.
    pub fn dump(&self, count: u64) -> Option<&DumpValues<S, T>> {
        let first = self.dumps.front()?.0;
        self.dumps.get(count.checked_sub(first)? as usize).map(|(_, d)| &**d)
    }
}

impl<S: Same, T> Follower<S, T> {
    /// Follows the dump read fresh with values `values` and names `names` (`before`: the names of the
    /// dump before, `same_module`: whether it is of the same module).
    pub fn step(
        &mut self,
        mut values: DumpValues<S, T>,
        names: &Defined,
        before: Option<&Defined>,
        same_module: bool,
    ) -> Step<S, T> {
        values.seal();
        let values = Arc::new(values);
        let count = self.dumps.back().map_or(0, |&(at, _)| at + 1);
        let previous = self.dumps.back().map(|(at, d)| (*at, d.clone()));
        self.dumps.push_back((count, values.clone()));
        // (each value now last seen here, and where it was before: one lookup a value)
        let held: Vec<_> = (0..values.len()).map(|i| self.remember(&values, i, count)).collect();
        let (fate, gone) = match (before, &previous) {
            (Some(before), Some((at, previous))) => {
                (fates(&values, &held, before, names, same_module, *at), gone(previous, &values, names, before, *at))
            }
            _ => (vec![Fate::Old; values.len()], Vec::new()),
        };
        let mut now = Vec::new();
        for (i, (&fate, held)) in fate.iter().zip(held).enumerate() {
            let what = match (fate, held) {
                (Fate::Gained, _) => Now::Gained,
                (Fate::Ask, held) => Now::Ask(held.map(|p| self.at(p))),
                (Fate::Old, Some(p)) if !read_alike(self.sightings(p), values.get(i).1) => Now::Changed(self.at(p)),
                _ => continue,
            };
            now.push((i, what));
        }
        self.sweep(count);
        Step { values, now, gone }
    }

    /// What following the dump of `values` (read fresh next) will look up in the dumps' names (see
    /// `Wanted`); its sightings are grouped by key.
    pub fn wanted(&self, values: &mut DumpValues<S, T>) -> Wanted {
        values.seal();
        let previous = self.dumps.back().map(|&(at, _)| at);
        let count = previous.map_or(0, |at| at + 1);
        let mut w = Wanted { new: Vec::new(), missing: Vec::new(), changed: Vec::new() };
        for i in 0..values.len() {
            let held = self.held(values, i, count);
            if previous.is_some() && held.is_none_or(|p| Some(p.count) != previous) {
                w.new.push(i);
            }
            if let Some(p) = held.filter(|&p| !read_alike(self.sightings(p), values.get(i).1)) {
                w.changed.push((i, p.count));
            }
        }
        if let Some(before) = self.last() {
            w.missing =
                (0..before.len()).filter(|&i| values.find(before.hash_of(i), before.key_bytes(i)).is_none()).collect();
        }
        w
    }

    /// Where the `i`th value of `values` was last seen, unless forgotten by dump `count`.
    fn held(&self, values: &DumpValues<S, T>, i: usize, count: u64) -> Option<Place> {
        let key = values.key_bytes(i);
        let same = |p: &Place| dump_of(&self.dumps, p.count).key_bytes(p.index as usize) == key;
        self.last.find(values.hash_of(i), same).copied().filter(|p| !forgotten(p.count, count))
    }

    /// The `i`th value of `values` (dump `count`, the last of `dumps`) as last seen there; returns where
    /// it was before, unless forgotten since.
    fn remember(&mut self, values: &DumpValues<S, T>, i: usize, count: u64) -> Option<Place> {
        let place = Place { count, index: i as u32, hash: values.hash_of(i) };
        let (dumps, key) = (&self.dumps, values.key_bytes(i));
        let same = |p: &Place| dump_of(dumps, p.count).key_bytes(p.index as usize) == key;
        // (one probe: in a log whose dumps rename their values, most keys are new)
        match self.last.entry(place.hash, same, |p| p.hash) {
            hashbrown::hash_table::Entry::Occupied(mut e) => {
                Some(std::mem::replace(e.get_mut(), place)).filter(|was| !forgotten(was.count, count))
            }
            hashbrown::hash_table::Entry::Vacant(v) => {
                v.insert(place);
                None
            }
        }
    }

    fn sightings(&self, p: Place) -> &[S] {
        dump_of(&self.dumps, p.count).get(p.index as usize).1
    }

    /// `p` handed back: its dump shared.
    fn at(&self, p: Place) -> At<S, T> {
        At::new(dump_of(&self.dumps, p.count), p.index as usize, p.count)
    }

    /// Once every `SWEEP` dumps (after dump `count`), drops the values forgotten by the next, and the
    /// dumps no place names any more: one pass over the table, not a lookup per value of each dump
    /// that leaves the window.
    fn sweep(&mut self, count: u64) {
        if count.is_multiple_of(SWEEP) {
            self.last.retain(|p| !forgotten(p.count, count + 1));
            while self.dumps.front().is_some_and(|&(c, _)| forgotten(c, count + 1)) {
                self.dumps.pop_front();
            }
        }
    }
}

/// Per value of `values` (`held`: where each was seen before): gained since the dump before (dump
/// `previous`), to ask about, or neither.
fn fates<S, T>(
    values: &DumpValues<S, T>,
    held: &[Option<Place>],
    before: &Defined,
    names: &Defined,
    same_module: bool,
    previous: u64,
) -> Vec<Fate> {
    let mut fate = vec![Fate::Old; values.len()];
    let in_before = |i: usize| held[i].as_ref().is_some_and(|a| a.count == previous);
    let new: Vec<usize> = (0..values.len()).filter(|&i| !in_before(i)).collect();
    let keys = values.asked(&new);
    let (alike, others) = before.alike(names, &keys);
    for j in alike {
        fate[new[j]] = Fate::Gained;
    }
    for j in others {
        fate[new[j]] = match (entry_result(keys[j].key), same_module) {
            (true, true) if typed_alike(before, names, &keys[j]) => Fate::Gained,
            (true, _) => Fate::Old,
            _ => Fate::Ask,
        };
    }
    fate
}

/// Whether an entry result is of one type in both dumps, as far as their function lines tell (an HLO
/// dump's results are not named: there, its module decides alone).
fn typed_alike(before: &Defined, names: &Defined, key: &Asked) -> bool {
    match (before.get_hashed(key.hash, key.key), names.get_hashed(key.hash, key.key)) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

#[derive(Clone, Copy)]
enum Fate {
    Old,
    Gained,
    Ask,
}

/// Whether a value reads as it did: one sighting on each side, saying the same.
fn read_alike<S: Same>(held: &[S], now: &[S]) -> bool {
    matches!((held, now), ([a], [b]) if a.same(b))
}

/// The values of `previous` (dump `count`) missing from `values` that may have lost their sharding:
/// both dumps define them alike, or (not plain) the caller is to ask.
fn gone<S, T>(
    previous: &Arc<DumpValues<S, T>>,
    values: &DumpValues<S, T>,
    names: &Defined,
    before: &Defined,
    count: u64,
) -> Vec<(At<S, T>, Gone)> {
    let missing: Vec<usize> =
        (0..previous.len()).filter(|&i| values.find(previous.hash_of(i), previous.key_bytes(i)).is_none()).collect();
    let keys = previous.asked(&missing);
    let (alike, others) = names.alike(before, &keys);
    let mut out: Vec<(usize, Gone)> = alike.into_iter().map(|j| (j, Gone::Lost)).collect();
    out.extend(others.into_iter().filter(|&j| !entry_result(keys[j].key)).map(|j| (j, Gone::Ask)));
    out.sort_by_key(|&(j, _)| j);
    out.into_iter().map(|(j, g)| (At::new(previous, missing[j], count), g)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Same for u32 {
        fn same(&self, other: &Self) -> bool {
            self == other
        }
    }

    fn names(text: &str) -> Defined {
        let mut d = Defined::default();
        d.scan(text.as_bytes());
        d
    }

    /// A dump tagged `tag` holding `(key, reading)` sightings in order.
    fn dump(tag: u32, sightings: &[(&str, u32)]) -> DumpValues<u32, u32> {
        let mut v = DumpValues::new(tag);
        for &(key, reading) in sightings {
            v.add(key, reading);
        }
        v
    }

    /// `(key, what, tag of where last seen)` per value reported now.
    fn now(step: &Step<u32, u32>) -> Vec<(String, &'static str, Option<u32>)> {
        let tag = |at: &Option<&At<u32, u32>>| at.map(|a| a.values.tag);
        step.now
            .iter()
            .map(|(i, what)| {
                let (key, what, at) = match what {
                    Now::Gained => (step.values.get(*i).0, "gained", None),
                    Now::Changed(at) => (step.values.get(*i).0, "changed", Some(at)),
                    Now::Ask(at) => (step.values.get(*i).0, "ask", at.as_ref()),
                };
                (key.to_string(), what, tag(&at))
            })
            .collect()
    }

    fn gone(step: &Step<u32, u32>) -> Vec<(String, bool)> {
        step.gone.iter().map(|(at, g)| (at.values.get(at.index).0.to_string(), matches!(g, Gone::Lost))).collect()
    }

    const A: &str = "%a = stablehlo.add %x\n%b = stablehlo.mul %x\n";

    #[test]
    fn sightings_are_grouped_by_key_in_order_of_first_sighting() {
        let mut v = dump(0, &[("%b", 1), ("%a", 2), ("%b", 3)]);
        v.seal();
        assert_eq!(v.get(0), ("%b", &[1, 3][..]));
        assert_eq!(v.get(1), ("%a", &[2][..]));
        assert!(!v.positional());
        assert!(dump(0, &[("arg[0]", 1), ("result[0]", 2)]).positional());
    }

    #[test]
    fn only_values_not_read_as_they_were_are_reported() {
        let mut f = Follower::default();
        let first = f.step(dump(0, &[("%a", 1), ("%b", 2)]), &names(A), None, true);
        assert!(first.now.is_empty() && first.gone.is_empty());
        let second = f.step(dump(1, &[("%a", 1), ("%b", 5)]), &names(A), Some(&names(A)), true);
        assert_eq!(now(&second), [("%b".into(), "changed", Some(0))]);
        // two sightings on either side are compared by the caller, whatever they say
        let third = f.step(dump(2, &[("%a", 1), ("%a", 1), ("%b", 5)]), &names(A), Some(&names(A)), true);
        assert_eq!(now(&third), [("%a".into(), "changed", Some(1))]);
    }

    #[test]
    fn a_value_new_to_a_dump_is_gained_when_both_define_it_alike() {
        let mut f = Follower::default();
        f.step(dump(0, &[("%a", 1), ("result[0]", 1)]), &names(A), None, true);
        let defined = names(A);
        let renamed = names("%b = stablehlo.sub %x\n");
        let step = f.step(
            dump(1, &[("%a", 1), ("%b", 2), ("result[0]", 1), ("result[1]", 3), ("%c#1", 4)]),
            &renamed,
            Some(&defined),
            true,
        );
        // %b is another op than in the dump before; a result of the same module is gained by position
        assert_eq!(now(&step), [("result[1]".into(), "gained", None), ("%c#1".into(), "ask", None)]);
        let other_module = f.step(dump(2, &[("%a", 1), ("result[2]", 3)]), &renamed, Some(&renamed), false);
        assert!(now(&other_module).is_empty());
        // a result of another type (its function line says) is another value, even in the same module
        let (eight, one) =
            (names("func.func @main() -> tensor<8xf32> {\n"), names("func.func @main() -> tensor<1xf32> {\n"));
        let mut g = Follower::default();
        g.step(dump(4, &[("%a", 1)]), &eight, None, true);
        assert!(now(&g.step(dump(5, &[("%a", 1), ("result[0]", 2)]), &one, Some(&eight), true)).is_empty());
        let gained = g.step(dump(6, &[("%a", 1), ("result[0]", 2)]), &one, Some(&one), true);
        assert!(now(&gained).is_empty()); // (read as in dump 5)
        g.step(dump(7, &[("%a", 1)]), &one, Some(&one), true);
        let back = g.step(dump(8, &[("%a", 1), ("result[0]", 3)]), &one, Some(&one), true);
        assert_eq!(now(&back), [("result[0]".into(), "gained", None)]);
        let alike = f.step(dump(3, &[("%a", 1), ("%b", 2)]), &defined, Some(&defined), true);
        assert_eq!(now(&alike), [("%b".into(), "gained", None)]);
    }

    #[test]
    fn values_of_the_dump_before_missing_now_are_lost_when_both_define_them_alike() {
        let mut f = Follower::default();
        f.step(dump(0, &[("%b", 2), ("@f:%0", 1), ("%a", 1), ("result[0]", 1)]), &names(A), None, true);
        let step = f.step(dump(1, &[]), &names(A), Some(&names(A)), true);
        // (in the dump before's order; a result is followed by position, never lost by name)
        assert_eq!(gone(&step), [("%b".into(), true), ("@f:%0".into(), false), ("%a".into(), true)]);
        assert!(f.step(dump(2, &[]), &names(""), Some(&names(A)), true).gone.is_empty());
    }

    #[test]
    fn only_new_missing_and_moved_values_are_wanted() {
        // (what a long segment's names are read again for: a dump whose every value reads as in the dump
        // before wants none, however many it holds)
        let mut f = Follower::default();
        let mut first = dump(0, &[("%a", 1), ("%b", 2), ("%c", 3)]);
        let w = f.wanted(&mut first);
        assert!(w.new.is_empty() && w.missing.is_empty() && w.changed.is_empty()); // (nothing to compare with)
        f.step(first, &names(A), None, true);
        let mut same = dump(1, &[("%a", 1), ("%b", 2), ("%c", 3)]);
        let w = f.wanted(&mut same);
        assert!(w.new.is_empty() && w.missing.is_empty() && w.changed.is_empty());
        f.step(same, &names(A), Some(&names(A)), true);
        let mut next = dump(2, &[("%a", 1), ("%d", 4), ("%b", 5)]);
        let w = f.wanted(&mut next);
        assert_eq!((w.new, w.missing, w.changed), (vec![1], vec![2], vec![(2, 1)]));
        f.step(next, &names(A), Some(&names(A)), true);
        // (a value back after a dump without it: new, and moved since where it was last seen)
        let w = f.wanted(&mut dump(3, &[("%c", 6)]));
        assert_eq!((w.new, w.missing, w.changed), (vec![0], vec![0, 1, 2], vec![(0, 1)]));
    }

    #[test]
    fn values_forgotten_leave_memory_whatever_the_names() {
        // a pass log whose dumps rename every value: where each was last seen stays bounded
        let mut f = Follower::default();
        let pool: Vec<String> = (0..1500).map(|i| format!("%{i}")).collect();
        for d in 0..500u32 {
            let keys: Vec<(&str, u32)> = pool[3 * d as usize..][..3].iter().map(|k| (k.as_str(), d)).collect();
            f.step(dump(d, &keys), &names(""), Some(&names("")), true);
            assert!(f.last.len() as u64 <= 3 * (FORGET + SWEEP), "{} values held after dump {d}", f.last.len());
            assert!(f.dumps.len() as u64 <= FORGET + SWEEP + 1, "{} dumps held after dump {d}", f.dumps.len());
        }
        assert!(f.last.len() as u64 >= 3 * FORGET);
    }

    #[test]
    fn a_value_missing_from_forget_dumps_is_forgotten() {
        for (between, compared) in [(FORGET - 1, true), (FORGET, false)] {
            let mut f = Follower::default();
            f.step(dump(0, &[("%a", 1)]), &names(A), None, true);
            for i in 0..between {
                f.step(dump(1 + i as u32, &[("%z", 1)]), &names(""), Some(&names("")), true);
            }
            let back = f.step(dump(99, &[("%a", 2)]), &names(A), Some(&names("")), true);
            let expected: Vec<_> = if compared { vec![("%a".to_string(), "changed", Some(0))] } else { vec![] };
            assert_eq!(now(&back), expected, "after {between} dumps without it");
        }
    }
}
