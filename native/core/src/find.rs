//! Literal finders: memmem searchers built once per process (one costs more to build than to run on a
//! short line), and the multi-needle finder the line finder and the keyword search share.

use aho_corasick::packed::{Config, MatchKind as PackedKind, Searcher};
use aho_corasick::{AhoCorasick, Input, MatchKind, Span};

/// Leftmost-first search for a few fixed needles. The packed (Teddy) searcher is called directly where
/// the CPU has it: through the automaton's generic entry each call paid a quarter of its time in
/// dispatch, and these searches are many and short (one per needle hit on a long sdy line).
pub enum Needles {
    Packed(Searcher),
    Automaton(AhoCorasick),
}

/// A needle found: its index in the list, and its span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    pub needle: usize,
    pub start: usize,
    pub end: usize,
}

impl Needles {
    pub fn new(needles: &[&[u8]]) -> Result<Self, String> {
        let packed = Config::new().match_kind(PackedKind::LeftmostFirst).builder().extend(needles).build();
        match packed {
            Some(s) => Ok(Needles::Packed(s)),
            None => AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(needles)
                .map(Needles::Automaton)
                .map_err(|e| e.to_string()),
        }
    }

    /// The leftmost needle starting in `hay[from..to]` and ending by `to` (offsets are into `hay`).
    #[inline]
    pub fn find(&self, hay: &[u8], from: usize, to: usize) -> Option<Hit> {
        if from > to {
            return None;
        }
        let m = match self {
            Needles::Packed(s) => s.find_in(hay, Span::from(from..to))?,
            Needles::Automaton(ac) => ac.find(Input::new(hay).span(from..to))?,
        };
        Some(Hit { needle: m.pattern().as_usize(), start: m.start(), end: m.end() })
    }
}

/// `memmem::Finder` for a literal, built on first use: `finder!(b"lit").find(hay)`.
#[macro_export]
macro_rules! finder {
    ($lit:expr) => {{
        static F: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($lit));
        &*F
    }};
}

/// The start of the last `needle` in `hay`. Short lines, searched from the end: the candidates are the
/// places of the needle's rarest byte, `needle[rare]`, which memrchr finds a vector at a time (a two-way
/// reverse search goes a byte at a time).
pub fn rfind_lit(hay: &[u8], needle: &[u8], rare: usize) -> Option<usize> {
    let b = *needle.get(rare)?;
    memchr::memrchr_iter(b, hay).filter_map(|i| i.checked_sub(rare)).find(|&s| hay[s..].starts_with(needle))
}

#[cfg(test)]
mod tests {
    use super::{rfind_lit, AhoCorasick, Hit, MatchKind, Needles};

    #[test]
    fn last_occurrence() {
        assert_eq!(rfind_lit(b"a : b : c", b" : ", 1), Some(5));
        assert_eq!(rfind_lit(b"x -> y -> z", b"->", 1), Some(7));
        assert_eq!(rfind_lit(b":x", b" : ", 1), None);
        assert_eq!(rfind_lit(b" : ", b" : ", 1), Some(0));
        assert_eq!(rfind_lit(b"", b"->", 1), None);
    }

    #[test]
    fn both_searchers_agree() {
        let pats: [&[u8]; 4] = [b"sdy.", b"sharding", b"{\n", b"return"];
        let packed = Needles::new(&pats).unwrap();
        let automaton =
            Needles::Automaton(AhoCorasick::builder().match_kind(MatchKind::LeftmostFirst).build(pats).unwrap());
        let hay = b"x {sdy.sharding = #sdy.sharding<@m, []>} {\n  return %0 : tensor<f32> sdy";
        for from in 0..=hay.len() {
            for to in from..=hay.len() {
                assert_eq!(packed.find(hay, from, to), automaton.find(hay, from, to), "{from}..{to}");
            }
        }
        assert_eq!(packed.find(hay, 0, hay.len()), Some(Hit { needle: 0, start: 3, end: 7 }));
        assert_eq!(packed.find(hay, 5, 3), None);
    }
}
