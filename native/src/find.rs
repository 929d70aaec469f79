//! Literal finders: memmem searchers built once per process (one costs more to build than to run on a
//! short line).

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
    use super::rfind_lit;

    #[test]
    fn last_occurrence() {
        assert_eq!(rfind_lit(b"a : b : c", b" : ", 1), Some(5));
        assert_eq!(rfind_lit(b"x -> y -> z", b"->", 1), Some(7));
        assert_eq!(rfind_lit(b":x", b" : ", 1), None);
        assert_eq!(rfind_lit(b" : ", b" : ", 1), Some(0));
        assert_eq!(rfind_lit(b"", b"->", 1), None);
    }
}
