//! Arguments alike: JAX gives every argument of a kind the same type and sharding, so a function line of a
//! large model repeats a few argument attributes hundreds of times. A scan that keeps each group's first
//! site (`check`) reads the first of each in full; the extractor passes over the others (`Skip`) once
//! that first gave one sdy sharding, and the table counts each as that site again, in line order.

use crate::extract::{name_of, Signature, Site, Skip, Span};
use crate::keywords::{digits, lit};
use crate::strings::match_close;
use crate::table::{pairing, Table};

/// The kinds of argument a line is searched for (a model's arguments are of a few).
const FIRSTS: usize = 16;
const ATTR: &[u8] = b" {sdy.sharding = ";
const VALUE: &[u8] = b"#sdy.sharding<";

/// `tensor<(\d+x|\?x)*[a-z]{1,2}\d{1,3}> {sdy.sharding = #sdy.sharding<...>}` at `start` (an argument's
/// type, just past its `%name: `): where its value starts, and the end of its `}`. Only a type
/// no keyword can hide in (dimensions and a short element type: `f32`, `bf16`), and that attribute alone.
fn argument_attr(t: &[u8], start: usize) -> Option<(usize, usize)> {
    let mut i = lit(t, start, b"tensor<")?;
    while let Some(d) = digits(t, i).or_else(|| lit(t, i, b"?")) {
        i = lit(t, d, b"x")?;
    }
    let letters = t[i..].iter().take(3).take_while(|b| b.is_ascii_lowercase()).count();
    let d = digits(t, i + letters).filter(|&d| (1..=2).contains(&letters) && d - (i + letters) <= 3)?;
    let value = lit(t, lit(t, d, b">")?, ATTR)?;
    let close = match_close(t, lit(t, value, VALUE)? - 1)?;
    (t.get(close) == Some(&b'}')).then_some((value, close + 1))
}

/// One function line's arguments of that shape, each marked with the first like it.
#[derive(Default)]
pub struct Arguments {
    /// The extractor's view, in line order.
    pub skip: Vec<Skip>,
    names: Vec<Span>,
    /// The first argument of each kind the line holds (their places in `skip`), up to `FIRSTS` kinds.
    firsts: Vec<usize>,
    counted: usize,
    /// Whether the line gave an HLO sharding (an sdy one pairs only with that).
    pub hlo_on_line: bool,
    /// The group each of the line's sites joined, in order.
    pub joined: Vec<Option<u32>>,
}

impl Arguments {
    /// The arguments of the function line `t` (its signature `sig`) whose attributes are their sharding.
    /// One whose bytes start with a first's is that first again: `argument_attr` reads nothing past the
    /// `}` that ends the span it gives.
    pub fn find(&mut self, t: &[u8], sig: &Signature) {
        self.clear();
        for (&a, name) in sig.arg_ends.iter().zip(&sig.arg_names) {
            let skip = &self.skip;
            let first = self.firsts.iter().copied().find(|&k| t[a..].starts_with(&t[skip[k].start..skip[k].end]));
            let (attr, end) = match first {
                Some(k) => (a + (skip[k].attr - skip[k].start), a + (skip[k].end - skip[k].start)),
                None => {
                    let Some(span) = argument_attr(t, a) else { continue };
                    span
                }
            };
            if sig.close.is_some_and(|c| end > c) {
                break;
            }
            if first.is_none() && self.firsts.len() < FIRSTS {
                self.firsts.push(self.skip.len());
            }
            self.skip.push(Skip { start: a, attr, end, first, sites: None, taken: false });
            self.names.push(*name);
        }
    }

    /// Forgets the line's arguments (their room stays for the next line's).
    pub fn clear(&mut self) {
        self.skip.clear();
        self.names.clear();
        self.firsts.clear();
        self.joined.clear();
        self.counted = 0;
    }

    /// Counts the arguments passed over that start before `before` (an offset in the line `t`, at file
    /// offset `at`), as the first like each was counted: `sites` and `joined` are the line's so far; an
    /// argument's name goes with it only when the line holds an HLO sharding it may pair with.
    pub fn count_before(&mut self, before: u64, (t, at): (&[u8], u64), sites: &[Site], table: &mut Table) {
        while let Some(arg) = self.skip.get(self.counted).filter(|s| (s.start as u64) < before) {
            let k = self.counted;
            self.counted += 1;
            // (one taken has a first, and that first's one site: see `extract::passed_over`)
            let Some(first) = arg.first.map(|f| self.skip[f]).filter(|_| arg.taken) else { continue };
            let Some((n, _)) = first.sites else { continue };
            let (Some(s), Some(&Some(group))) = (sites.get(n), self.joined.get(n)) else { continue };
            let from = at + first.start as u64;
            let base = at + arg.start as u64;
            let (a, b) = self.names[k];
            let name = pairing(s).filter(|_| self.hlo_on_line).map(|_| name_of(&t[a..b]));
            table.repeat(group, base + (s.start - from), base + (s.end - from), s.line, name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_argument_marked_with_the_first_like_it() {
        let arg = |i: usize, axes: &str| {
            format!("%arg{i}: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@m, [{axes}, {{}}]>}}")
        };
        let args = [arg(0, "{\"a\"}"), arg(1, "{}"), arg(2, "{\"a\"}"), "%x: tensor<8xindex>".into(), arg(10, "{}")];
        let line = format!("  func.func @main({}) -> tensor<8xf32> {{", args.join(", "));
        let t = line.as_bytes();
        let mut found = Arguments::default();
        found.find(t, &crate::extract::lex_signature(t).unwrap());
        let firsts: Vec<_> = found.skip.iter().map(|s| s.first).collect();
        assert_eq!(firsts, [None, None, Some(0), Some(1)]); // (the index type's argument is read in full)
        let last = found.skip[3];
        assert_eq!(&t[last.start..last.end], &t[found.skip[1].start..found.skip[1].end]);
        assert!(t[last.attr..].starts_with(b"#sdy.sharding<@m, [{}, {}]>}) -> "));
        found.clear();
        assert!(found.skip.is_empty() && found.firsts.is_empty());
    }

    #[test]
    fn an_argument_taken() {
        let t = b"(%arg0: tensor<8x?xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}, %arg1";
        let (attr, end) = argument_attr(t, 8).unwrap();
        assert!(t[attr..].starts_with(b"#sdy.sharding<") && t[..attr].ends_with(b"bf16> {sdy.sharding = "));
        assert!(t[..end].ends_with(b"{}]>}") && t[end..].starts_with(b", %arg1"));
        let scalar = b"tensor<f32> {sdy.sharding = #sdy.sharding<@m, []>}";
        assert_eq!(argument_attr(scalar, 0), Some((28, scalar.len())));
        // other types, other attributes, more of them, an open value: read in full
        for t in [
            &b"tensor<8xcomplex<f32>> {sdy.sharding = #sdy.sharding<@m, [{}]>}"[..],
            b"tensor<8xindex> {sdy.sharding = #sdy.sharding<@m, [{}]>}",
            b"tensor<8xf32, #enc> {sdy.sharding = #sdy.sharding<@m, [{}]>}",
            b"tensor<8xf32> {mhlo.sharding = \"{replicated}\", sdy.sharding = #sdy.sharding<@m, [{}]>}",
            b"tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>, jax.buffer_donor = true}",
            b"tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{}]",
            b"tensor<8xf32> {sdy.sharding = #sdy.sharding_per_value<[<@m, []>]>}",
            b"tensor<8xf3210> {sdy.sharding = #sdy.sharding<@m, [{}]>}",
        ] {
            assert_eq!(argument_attr(t, 0), None, "{}", String::from_utf8_lossy(t));
        }
    }
}
