//! Literal finders built once per process (a memmem searcher costs more to build than to run on a
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

/// `memmem::FinderRev` for a literal, built on first use.
#[macro_export]
macro_rules! rfinder {
    ($lit:expr) => {{
        static F: std::sync::LazyLock<memchr::memmem::FinderRev<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::FinderRev::new($lit));
        &*F
    }};
}
