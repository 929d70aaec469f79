//! Scopes: the lines that open a function (`func.func @f(`) or an HLO computation (`[ENTRY] %c (...) {`),
//! and those that start a module (no scope). The site table's scope column and the definitions' function
//! prefixes read lines the same way.

use crate::extract::module_start;
use crate::strings::{is_word, is_ws, rstrip};

/// A scope: (its name's bytes, "func" | "computation", is_entry), or a module start (no scope).
pub enum ScopeLine<'a> {
    Open(&'a [u8], &'static str, bool),
    Reset,
    Nothing,
}

pub fn scope_of(line: &[u8]) -> ScopeLine<'_> {
    scope_in(line, true)
}

/// `scope_of` a line that holds no `func.func` unless `may_hold_func` (its caller searched a whole
/// buffer for them at once).
pub fn scope_in(line: &[u8], may_hold_func: bool) -> ScopeLine<'_> {
    let line = rstrip(line);
    scope_by_start(line, may_hold_func).unwrap_or_else(|| computation(line))
}

/// What a line's start says of its scope, whatever its end: a module start, or a line holding
/// `func.func` (a function, if a name follows); None when only its end can say (an HLO computation's
/// `{`). The first window of a line longer than the scan's reads it so.
pub fn scope_by_start(line: &[u8], may_hold_func: bool) -> Option<ScopeLine<'_>> {
    let body = &line[line.iter().position(|&b| !is_ws(b)).unwrap_or(line.len())..];
    if body.starts_with(b"HloModule") || module_start(line) {
        return Some(ScopeLine::Reset);
    }
    let p = if may_hold_func { crate::finder!(b"func.func").find(line)? } else { return None };
    let Some(at) = memchr::memchr(b'@', &line[p..]) else { return Some(ScopeLine::Nothing) };
    let a = p + at + 1;
    let name = if line.get(a) == Some(&b'"') {
        let e = crate::strings::string_end(line, a).unwrap_or(line.len());
        &line[a + 1..e.saturating_sub(1).max(a + 1)]
    } else {
        &line[a..a + line[a..].iter().take_while(|&&b| crate::keywords::name_char(b)).count()]
    };
    Some(ScopeLine::Open(name, "func", name == b"main"))
}

/// The HLO computation a line (its blanks stripped from its end) opens: `[ENTRY] %c (...) {` at column 0.
fn computation(line: &[u8]) -> ScopeLine<'_> {
    if line.first().is_none_or(|&b| is_ws(b)) || !line.ends_with(b"{") {
        return ScopeLine::Nothing;
    }
    let mut rest = line;
    let entry = rest.starts_with(b"ENTRY") && rest.get(5).is_some_and(|&b| is_ws(b));
    if entry {
        rest = &rest[5..];
        rest = &rest[rest.iter().position(|&b| !is_ws(b)).unwrap_or(rest.len())..];
    }
    let r = rest.strip_prefix(b"%").unwrap_or(rest);
    let n = r.iter().take_while(|&&b| is_word(b) || b == b'.' || b == b'-').count();
    if n == 0 || !matches!(r.get(n), Some(b' ' | b'(' | b'{')) {
        return ScopeLine::Nothing;
    }
    ScopeLine::Open(&r[..n], "computation", entry)
}

/// The prefix a definition's key takes after a line holding `func.func`, as trace keys a value: none in
/// the entry function (or after a module start), `@name:` in any other; None for a line that opens no
/// function. (Each function numbers its values from `%0`: `%0` of `@f` is not `%0` of `@main`. An HLO
/// computation's instruction names are the module's own, unique, and keyed bare.)
pub fn key_prefix(line: &[u8]) -> Option<Vec<u8>> {
    match scope_of(line) {
        ScopeLine::Open(_, "func", true) | ScopeLine::Reset => Some(Vec::new()),
        ScopeLine::Open(name, "func", false) => Some(format!("@{}:", String::from_utf8_lossy(name)).into_bytes()),
        _ => None,
    }
}

/// The lines of `data` (complete lines) that open a function: where each starts and the key prefix it
/// gives what follows.
pub fn function_lines(data: &[u8]) -> Vec<(usize, Vec<u8>)> {
    let mut starts: Vec<usize> = crate::finder!(b"func.func")
        .find_iter(data)
        .map(|p| memchr::memrchr(b'\n', &data[..p]).map_or(0, |q| q + 1))
        .collect();
    starts.dedup();
    let line_at = |a: usize| &data[a..memchr::memchr(b'\n', &data[a..]).map_or(data.len(), |q| a + q)];
    starts.into_iter().filter_map(|a| Some((a, key_prefix(line_at(a))?))).collect()
}
