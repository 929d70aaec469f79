//! A `func.func` signature: where each argument's name and type are and where each result type starts,
//! so an attribute inside it is put on the argument or result it follows.

use super::*;

pub struct Signature {
    pub(super) open_paren: usize,
    pub(crate) close: Option<usize>,
    /// Where each argument's type starts (just past its `%name:` and the spaces after it).
    pub(crate) arg_ends: Vec<usize>,
    /// Each argument's name (`%arg0`), made into a `Name` only for a site that asks.
    pub(crate) arg_names: Vec<Span>,
    pub(super) result_types: Vec<usize>,
    /// The argument the last lookup found: a line's sites come in order, so the next is there or after.
    last_arg: std::cell::Cell<usize>,
}

/// `\bfunc\.func\b[^(]*?@[\w$.\-\"]+\s*\(`: the open paren of the first match.
fn func_open(t: &[u8]) -> Option<usize> {
    for p in crate::finder!(b"func.func").find_iter(t) {
        if p > 0 && is_word(t[p - 1]) {
            continue;
        }
        if t.get(p + 9).is_some_and(|&b| is_word(b)) {
            continue;
        }
        let from = p + 9;
        let Some(off) = memchr::memchr(b'(', &t[from..]) else { continue };
        let paren = from + off;
        let mut found = false;
        for at in memchr::memchr_iter(b'@', &t[from..paren]) {
            let a = from + at + 1;
            let e = a + t[a..paren].iter().take_while(|&&b| name_char(b) || b == b'"').count();
            if e > a && t[e..paren].iter().all(|&b| is_ws(b)) {
                found = true;
                break;
            }
        }
        if found {
            return Some(paren);
        }
    }
    None
}

const SIGNATURE_ENDS: [&[u8]; 3] = [b") -> ", b") {", b") attributes "];

fn signature_close(t: &[u8], open: usize) -> Option<usize> {
    let finders =
        [crate::finder!(SIGNATURE_ENDS[0]), crate::finder!(SIGNATURE_ENDS[1]), crate::finder!(SIGNATURE_ENDS[2])];
    for f in finders {
        if let Some(off) = f.find(&t[open..]) {
            let c = open + off;
            let seg = &t[open..c + 1];
            let o = memchr::memchr_iter(b'(', seg).count();
            let cl = memchr::memchr_iter(b')', seg).count();
            if o == cl {
                return Some(c + 1);
            }
        }
    }
    None
}

pub(crate) fn lex_signature(t: &[u8]) -> Option<Signature> {
    let open_paren = func_open(t)?;
    let close = signature_close(t, open_paren).or_else(|| match_close(t, open_paren));
    let stop = close.unwrap_or(t.len());
    let mut arg_ends = Vec::new();
    let mut arg_names = Vec::new();
    let mut i = open_paren;
    while let Some(off) = memchr::memchr(b'%', &t[i..stop]) {
        let p = i + off;
        let e = p + 1 + t[p + 1..stop].iter().take_while(|&&b| ssa_char(b)).count();
        if e > p + 1 && e < stop && t[e] == b':' {
            let end = e + 1 + t[e + 1..stop].iter().take_while(|&&b| is_ws(b)).count();
            arg_ends.push(end);
            arg_names.push((p, e));
            i = end;
        } else {
            i = p + 1;
        }
    }
    let result_types = close.map_or_else(Vec::new, |c| result_starts(t, c));
    Some(Signature { open_paren, close, arg_ends, arg_names, result_types, last_arg: Default::default() })
}

/// Where each result type of a function signature closing at `close` starts: one per top-level entry of
/// the list after ` -> ` (a `!stablehlo.token` or a `tuple<...>` is one result, like a `tensor<...>`),
/// or the one type that follows the arrow bare; none without an arrow.
fn result_starts(t: &[u8], close: usize) -> Vec<usize> {
    let skip_ws = |i: usize| i + t[i..].iter().take_while(|&&b| is_ws(b)).count();
    let arrow = skip_ws(close);
    if !t[arrow..].starts_with(b"->") {
        return Vec::new();
    }
    let open = skip_ws(arrow + 2);
    match t.get(open) {
        Some(b'(') => {}
        Some(b'{') | None => return Vec::new(),
        Some(_) => return vec![open],
    }
    let stop = match_close(t, open).map_or(t.len(), |e| e - 1);
    let (mut out, mut depth, mut entry, mut j) = (Vec::new(), 0usize, true, open + 1);
    while j < stop {
        let b = t[j];
        if entry && !is_ws(b) {
            out.push(j);
            entry = false;
        }
        match b {
            b'"' => {
                j = string_end(t, j).unwrap_or(stop);
                continue;
            }
            b'-' if t.get(j + 1) == Some(&b'>') => j += 1,
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' | b'>' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => entry = true,
            _ => {}
        }
        j += 1;
    }
    out
}

/// The function argument or result an attribute at `pos` of a signature belongs to: its name, and
/// where the text holding its tensor type starts (it ends at `pos`).
pub(super) fn func_context(sig: &Signature, t: &[u8], pos: usize) -> Option<(Name, usize)> {
    if sig.close.is_none_or(|c| pos < c) {
        let i = arg_before(&sig.arg_ends, pos, sig.last_arg.get())?;
        sig.last_arg.set(i);
        let (a, b) = sig.arg_names[i];
        return Some((name_of(&t[a..b]), sig.arg_ends[i].min(pos)));
    }
    let i = sig.result_types.partition_point(|&e| e <= pos).checked_sub(1)?;
    Some((compact_str::format_compact!("result[{i}]"), sig.result_types[i]))
}

/// The last of the sorted `ends` at or before `pos`, tried first at `hint` and the one after it.
fn arg_before(ends: &[usize], pos: usize, hint: usize) -> Option<usize> {
    let at = |i: usize| ends.get(i).is_some_and(|&e| e <= pos) && ends.get(i + 1).is_none_or(|&e| e > pos);
    if at(hint) {
        return Some(hint);
    }
    if at(hint + 1) {
        return Some(hint + 1);
    }
    ends.partition_point(|&e| e <= pos).checked_sub(1)
}
