//! An HLO instruction line, `[ROOT] %name = TYPE opcode(operands), attrs`: its name, the shapes of its
//! type, its opcode (a custom call with its target) and parameter number.

use super::*;

/// `^\s*(?:ROOT\s+)?(%?[\w.\-]+)\s*=\s*`: (name span, end).
fn hlo_instr(t: &[u8]) -> Option<((usize, usize), usize, bool)> {
    let s = lstrip_len(t);
    let name_ok = |b: u8| is_word(b) || b == b'.' || b == b'-';
    let try_name = |a: usize| -> Option<((usize, usize), usize)> {
        let mut i = a;
        if t.get(i) == Some(&b'%') {
            i += 1;
        }
        let e = i + t[i..].iter().take_while(|&&b| name_ok(b)).count();
        if e == i {
            return None;
        }
        let k = e + t[e..].iter().take_while(|&&b| is_ws(b)).count();
        if t.get(k) != Some(&b'=') {
            return None;
        }
        let end = k + 1 + t[k + 1..].iter().take_while(|&&b| is_ws(b)).count();
        Some(((a, e), end))
    };
    if t[s..].starts_with(b"ROOT") {
        let w = s + 4 + t[s + 4..].iter().take_while(|&&b| is_ws(b)).count();
        if w > s + 4 {
            if let Some((n, e)) = try_name(w) {
                return Some((n, e, true));
            }
        }
    }
    try_name(s).map(|(n, e)| (n, e, false))
}

pub(super) fn hlo_context(t: &[u8], memo: &mut Memo) -> (Option<Span>, Option<Shapes>) {
    let Some((name, p, _)) = hlo_instr(t) else { return (None, None) };
    let name = Some(name);
    if t.get(p) == Some(&b'(') {
        return match match_close(t, p) {
            Some(end) if end > 0 => (name, Some(memo.hlo_shapes(&t[p..end]))),
            _ => (name, None),
        };
    }
    match hlo_array(t, p) {
        Some(e) => (name, Some(memo.hlo_shapes(&t[p..e]))),
        None => {
            if t[p..].starts_with(b"token[]") {
                (name, Some(Arc::new(vec![Vec::new()])))
            } else {
                (name, None)
            }
        }
    }
}

/// `[a-z][a-z0-9]*\[[^\]]*\]` at `p`: its end.
fn hlo_array(t: &[u8], p: usize) -> Option<usize> {
    if !t.get(p)?.is_ascii_lowercase() {
        return None;
    }
    let e = p + 1 + t[p + 1..].iter().take_while(|&&b| b.is_ascii_lowercase() || b.is_ascii_digit()).count();
    if t.get(e) != Some(&b'[') {
        return None;
    }
    let c = memchr::memchr(b']', &t[e + 1..])?;
    Some(e + 1 + c + 1)
}

/// The opcode of the HLO instruction on this line (`custom-call` with its target), its parameter
/// number, and whether it is the ROOT.
pub(super) fn hlo_op(t: &[u8], memo: &mut Memo) -> (Option<Arc<str>>, Option<u32>, bool) {
    let Some((_, p, root)) = hlo_instr(t) else { return (None, None, false) };
    let mut i = p;
    if t.get(i) == Some(&b'(') {
        match match_close(t, i) {
            Some(e) => i = e,
            None => return (None, None, root),
        }
    } else if let Some(e) = hlo_array(t, i) {
        i = e;
        if t.get(i) == Some(&b'{') {
            i = match_close(t, i).unwrap_or(i);
        }
    } else {
        i += t[i..].iter().take_while(|&&b| !is_ws(b)).count();
    }
    i += t[i..].iter().take_while(|&&b| is_ws(b)).count();
    let e = i + t[i..].iter().take_while(|&&b| is_word(b) || b == b'-').count();
    if e == i {
        return (None, None, root);
    }
    let op = &t[i..e];
    if op == b"custom-call" {
        if let Some(target) = attr_string(t, b"custom_call_target=\"") {
            return (Some(memo.custom_call(target)), None, root);
        }
    }
    let mut param = None;
    if op == b"parameter" && t.get(e) == Some(&b'(') {
        let d = t[e + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if d > 0 && d <= 9 && t.get(e + 1 + d) == Some(&b')') {
            param = std::str::from_utf8(&t[e + 1..e + 1 + d]).ok().and_then(|s| s.parse().ok());
        }
    }
    (Some(memo.op(op, || lossy(op))), param, root)
}

/// The body of the string that follows `prefix` (which ends with its opening quote).
pub(super) fn attr_string<'t>(t: &'t [u8], prefix: &[u8]) -> Option<&'t [u8]> {
    let f = if prefix == b"custom_call_target=\"" {
        crate::finder!(b"custom_call_target=\"")
    } else {
        crate::finder!(b"call_target_name = \"")
    };
    let p = f.find(t)? + prefix.len();
    let e = string_end(t, p - 1)?;
    Some(&t[p..e - 1])
}
