//! Repeats: a sharding constraint line met again. A program that repeats a layer constrains value after
//! value the same way (`%17 = sdy.sharding_constraint %16 <@mesh, [{"batch"}, {}]> : tensor<64x64xf32>`
//! on every layer, only the numbers of its values changing), and a scan that keeps each group's first
//! site only needs such a line's group, counted once more, and its value's place. Only a line of that
//! exact shape whose numbered names cannot hold a keyword is taken, and only when it gave one site.

use crate::keywords::{digits, lit};
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

/// Constraint lines remembered before the map starts again (it stays small whatever the dump).
const CAP: usize = 4096;

/// What a line gave: the group of its one site, and its value's span from the `<` the value starts at.
#[derive(Clone, Copy)]
pub struct Seen {
    pub group: u32,
    pub start: u64,
    pub end: u64,
}

/// The constraint lines of one module met so far, by their op and the bytes from their value on (looked
/// up by a hash of the line's own bytes: nothing is copied to ask).
#[derive(Default)]
pub struct Repeats {
    module: u32,
    seen: HashTable<Entry>,
}

struct Entry {
    hash: u64,
    op: u8,
    tail: Box<[u8]>,
    seen: Seen,
}

fn hash(op: u8, tail: &[u8]) -> u64 {
    FxBuildHasher.hash_one((op, tail))
}

const OPS: [&[u8]; 2] = [b"sdy.sharding_constraint ", b"sdy.reshard "];

/// `^[ \t]+%\d+ = (sdy.sharding_constraint|sdy.reshard) %(\d+(#\d+)?|arg\d+) <`: which op, and where its
/// `<` is. (Indented, as an op in a function is: such a line opens no scope whatever its end.)
pub fn constraint_line(t: &[u8]) -> Option<(u8, usize)> {
    let mut i = t.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    if i == 0 {
        return None;
    }
    i = digits(t, lit(t, i, b"%")?)?;
    i = lit(t, i, b" = ")?;
    let (op, after) = OPS.iter().enumerate().find_map(|(k, o)| Some((k as u8, lit(t, i, o)?)))?;
    i = lit(t, after, b"%")?;
    i = match lit(t, i, b"arg") {
        Some(a) => digits(t, a)?,
        None => {
            let d = digits(t, i)?;
            lit(t, d, b"#").and_then(|h| digits(t, h)).unwrap_or(d)
        }
    };
    let v = lit(t, i, b" ")?;
    (t.get(v) == Some(&b'<')).then_some((op, v))
}

impl Repeats {
    /// The lines met in `module` (those of another module are forgotten: groups are a module's own).
    fn in_module(&mut self, module: u32) {
        if module != self.module {
            self.seen.clear();
            self.module = module;
        }
    }

    /// What the line of `op` whose value starts at `tail` gave when it was met in `module`.
    pub fn get(&mut self, module: u32, op: u8, tail: &[u8]) -> Option<Seen> {
        self.in_module(module);
        let h = hash(op, tail);
        self.seen.find(h, |e| e.hash == h && e.op == op && *e.tail == *tail).map(|e| e.seen)
    }

    pub fn put(&mut self, module: u32, op: u8, tail: &[u8], seen: Seen) {
        self.in_module(module);
        if self.seen.len() >= CAP {
            self.seen.clear();
        }
        let h = hash(op, tail);
        self.seen.insert_unique(h, Entry { hash: h, op, tail: tail.into(), seen }, |e| e.hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_taken() {
        let at = |t: &[u8]| constraint_line(t).map(|(op, v)| (op, t[v]));
        assert_eq!(at(b"    %17 = sdy.sharding_constraint %16 <@mesh, [{}]> : tensor<8xf32>"), Some((0, b'<')));
        assert_eq!(at(b"  %3 = sdy.reshard %arg1 <@mesh, [{}]> : tensor<8xf32>"), Some((1, b'<')));
        assert_eq!(at(b"  %3 = sdy.reshard %2#1 <@mesh, [{}]> : tensor<8xf32>"), Some((1, b'<')));
        // names that could hold a keyword, other ops, results, and spacing go the long way
        for t in [
            &b"  %sharding = sdy.sharding_constraint %1 <@mesh, [{}]>"[..],
            b"  %1 = sdy.sharding_constraint %sdy.x <@mesh, [{}]>",
            b"  %1:2 = sdy.sharding_constraint %0 <@mesh, [{}]>",
            b"  %1 = sdy.sharding_constraint  %0 <@mesh, [{}]>",
            b"  %1 = sdy.sharding_constraint %0 #sdy.sharding<@mesh, [{}]>",
            b"  %1 = stablehlo.add %0 <@mesh, [{}]>",
            b"  %1 = \"sdy.sharding_constraint\"(%0) <{sharding = #sdy.sharding<@mesh, [{}]>}>",
            b"%1 = sdy.sharding_constraint %0 <@mesh, [{}]> : tensor<8xf32> {",
        ] {
            assert_eq!(constraint_line(t), None, "{}", String::from_utf8_lossy(t));
        }
    }

    #[test]
    fn a_module_forgets_the_last_ones() {
        let mut r = Repeats::default();
        let seen = Seen { group: 3, start: 0, end: 9 };
        r.put(0, 0, b"<@mesh, [{}]>", seen);
        assert_eq!(r.get(0, 0, b"<@mesh, [{}]>").map(|s| s.group), Some(3));
        assert!(r.get(0, 1, b"<@mesh, [{}]>").is_none());
        assert!(r.get(1, 0, b"<@mesh, [{}]>").is_none());
        assert!(r.get(0, 0, b"<@mesh, [{}]>").is_none());
    }
}
