//! An MLIR op line, `%r, %s:2 = dialect.op ... : TYPES loc(...)`: the results it names, its op (a custom
//! call with its target), its location tail, and the lines that start a module.

use super::*;

/// The op of an MLIR line: `%r = op`, `%r = "op"(...)` or a line starting with the op (`from`: just past
/// the results' `=`, 0 when it names none); a custom call with its target.
pub(super) fn mlir_op(t: &[u8], from: usize) -> Option<(&[u8], Option<&[u8]>)> {
    let mut i = from;
    i += t[i..].iter().take_while(|&&b| is_ws(b)).count();
    let op: &[u8] = if t.get(i) == Some(&b'"') {
        let e = string_end(t, i)?;
        let op = &t[i + 1..e - 1];
        i = e;
        op
    } else {
        let e = i + t[i..].iter().take_while(|&&b| name_char(b)).count();
        let op = &t[i..e];
        i = e;
        op
    };
    if op.is_empty() || !op.contains(&b'.') && op != b"return" {
        return None;
    }
    if op.ends_with(b".custom_call") {
        let j = i + t[i..].iter().take_while(|&&b| is_ws(b)).count();
        let target = if t.get(j) == Some(&b'@') {
            let e = j + 1 + t[j + 1..].iter().take_while(|&&b| name_char(b)).count();
            Some(&t[j + 1..e])
        } else {
            attr_string(t, b"call_target_name = \"")
        };
        if target.is_some() {
            return Some((op, target));
        }
    }
    Some((op, None))
}

/// `^\s*(%[\w#.$\-]+)(?::\d+)?(?:\s*,\s*%[\w#.$\-]+(?::\d+)?)*\s*=`: the results an MLIR op's line names.
pub struct Results {
    /// the first result's name
    pub first: Span,
    /// just past the `=`
    pub end: usize,
    /// how many results (`%a:2, %b` names three)
    pub count: usize,
}

pub fn mlir_result(t: &[u8]) -> Option<Results> {
    // the end of one `%name` or `%name:N`, and how many results it names
    let value = |i: usize| -> Option<(usize, usize)> {
        if t.get(i) != Some(&b'%') {
            return None;
        }
        let e = i + 1 + t[i + 1..].iter().take_while(|&&b| ssa_char(b)).count();
        if e == i + 1 {
            return None;
        }
        if t.get(e) == Some(&b':') {
            let d = t[e + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
            if d > 0 {
                let digits = &t[e + 1..e + 1 + d];
                let n = digits.iter().fold(0usize, |n, b| n.saturating_mul(10).saturating_add(usize::from(b - b'0')));
                return Some((e + 1 + d, n));
            }
        }
        Some((e, 1))
    };
    let s = lstrip_len(t);
    let (mut i, mut count) = value(s)?;
    let name_end = s + 1 + t[s + 1..].iter().take_while(|&&b| ssa_char(b)).count();
    loop {
        let w = i + t[i..].iter().take_while(|&&b| is_ws(b)).count();
        if t.get(w) != Some(&b',') {
            break;
        }
        let w2 = w + 1 + t[w + 1..].iter().take_while(|&&b| is_ws(b)).count();
        match value(w2) {
            Some((e, n)) => (i, count) = (e, count.saturating_add(n)),
            None => break,
        }
    }
    let w = i + t[i..].iter().take_while(|&&b| is_ws(b)).count();
    if t.get(w) == Some(&b'=') {
        Some(Results { first: (s, name_end), end: w + 1, count })
    } else {
        None
    }
}

/// Start of the `\s+loc\((?:[^()]|\([^()]*\))*\)\s*$` tail of `t`, if it has one.
pub(super) fn loc_tail(t: &[u8]) -> Option<usize> {
    let n = t.len();
    let mut from = 0;
    while let Some(off) = crate::finder!(b"loc(").find(&t[from..]) {
        let p = from + off;
        from = p + 1;
        if p == 0 || !is_ws(t[p - 1]) {
            continue;
        }
        let mut s = p;
        while s > 0 && is_ws(t[s - 1]) {
            s -= 1;
        }
        // the loop over [^()] | \([^()]*\), then \) and blanks to the end
        let mut i = p + 4;
        let ok = loop {
            if i >= n {
                break false;
            }
            match t[i] {
                b')' => break t[i + 1..].iter().all(|&b| is_ws(b)),
                b'(' => match t[i + 1..].iter().position(|&b| b == b'(' || b == b')') {
                    Some(k) if t[i + 1 + k] == b')' => i = i + 1 + k + 1,
                    _ => break false,
                },
                _ => i += 1,
            }
        };
        if ok {
            return Some(s);
        }
    }
    None
}

pub(super) fn strip_loc(t: &[u8]) -> &[u8] {
    match loc_tail(t) {
        Some(s) => &t[..s],
        None => t,
    }
}

/// The result types of a type list printed without `->`: the last `count`, as `stablehlo.select`
/// prints its predicate's type before its result's (`: tensor<4xi1>, tensor<4xf32>`); all of them when
/// the line names no results or as many as it lists.
pub(super) fn last_types(all: Shapes, count: usize) -> Shapes {
    if count == 0 || count >= all.len() {
        return all;
    }
    Arc::new(all[all.len() - count..].to_vec())
}

/// `^\s*module\b`.
pub(super) fn mlir_module(t: &[u8]) -> bool {
    let s = lstrip_len(t);
    t[s..].starts_with(b"module") && !t.get(s + 6).is_some_and(|&b| is_word(b))
}

/// `\s*(?:HloModule\s|module\b|//\s*-----)` at the start.
pub fn module_start(t: &[u8]) -> bool {
    let s = lstrip_len(t);
    let r = &t[s..];
    if r.starts_with(b"HloModule") && r.get(9).is_some_and(|&b| is_ws(b)) {
        return true;
    }
    if r.starts_with(b"module") && !r.get(6).is_some_and(|&b| is_word(b)) {
        return true;
    }
    if r.starts_with(b"//") {
        let w = 2 + lstrip_len(&r[2..]);
        return r[w..].starts_with(b"-----");
    }
    false
}
