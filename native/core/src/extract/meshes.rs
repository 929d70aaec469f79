//! Meshes named outside a keyword's own value: an HLO mesh's device ids, the entries of a meshes
//! dictionary held in a string, an op's `out_sharding=<MESH`, and a mesh declaration's name.

use super::*;

/// Past an HLO mesh's `, device_ids=(...)` (iota or list) after its `]` at `close`, when it has one.
pub(super) fn mesh_device_ids_end(t: &[u8], close: usize) -> usize {
    const IDS: &[u8] = b", device_ids=(";
    match t.get(close..close + IDS.len()) {
        Some(w) if w == IDS => match_close(t, close + IDS.len() - 1).unwrap_or(close),
        _ => close,
    }
}

/// `([\w$.\-]+|"[^"]*")\s*=\s*(#sdy\.mesh<)` searched from `pos` in `data`: (name span, start of the
/// `#sdy.mesh<`, match end).
fn mesh_entry(data: &[u8], mut pos: usize) -> Option<((usize, usize), usize, usize)> {
    let n = data.len();
    let tail = |e: usize| -> Option<(usize, usize)> {
        let w = e + lstrip_len(&data[e..]);
        if data.get(w) != Some(&b'=') {
            return None;
        }
        let w2 = w + 1 + lstrip_len(&data[w + 1..]);
        if data[w2..].starts_with(b"#sdy.mesh<") {
            Some((w2, w2 + 10))
        } else {
            None
        }
    };
    while pos < n {
        let c = data[pos];
        if name_char(c) {
            let e = pos + data[pos..].iter().take_while(|&&b| name_char(b)).count();
            if let Some((m2, mend)) = tail(e) {
                return Some(((pos, e), m2, mend));
            }
            pos = e;
        } else if c == b'"' {
            if let Some(q) = memchr::memchr(b'"', &data[pos + 1..]) {
                let e = pos + 1 + q + 1;
                if let Some((m2, mend)) = tail(e) {
                    return Some(((pos, e), m2, mend));
                }
            }
            pos += 1;
        } else {
            pos += 1;
        }
    }
    None
}

/// The mesh an op's `out_sharding=<MESH, ...>` after `from` names: `@name`, or an inline `mesh<...>`.
pub(super) fn out_sharding_mesh(t: &[u8], from: usize) -> Option<&[u8]> {
    let p = from + memmem::find(&t[from..], b"out_sharding=<")? + 14;
    if t.get(p) == Some(&b'@') {
        let e = p + 1 + t[p + 1..].iter().take_while(|&&b| name_char(b)).count();
        return if e > p + 1 { Some(&t[p..e]) } else { None };
    }
    let k = if t[p..].starts_with(b"#sdy.mesh<") {
        p + 9
    } else if t[p..].starts_with(b"mesh<") {
        p + 4
    } else {
        return None;
    };
    match_close(t, k).map(|e| &t[p..e])
}

/// A mesh declared in generic form, `"sdy.mesh"() <{mesh = #sdy.mesh<...>, sym_name = "NAME"}>` (the
/// line's op is `"sdy.mesh"`): the name its first `sym_name = "NAME"` gives.
pub(super) fn generic_mesh_name(t: &[u8]) -> Option<&[u8]> {
    if !t[lstrip_len(t)..].starts_with(b"\"sdy.mesh\"(") {
        return None;
    }
    let p = memmem::find(t, b"sym_name = \"")? + 12;
    let q = memchr::memchr(b'"', &t[p..])?;
    Some(&t[p..p + q])
}

/// `sdy\.mesh\s+@([\w$.\-]+|"(?:[^"\\]|\\.)*")` searched in `t`: the name.
pub(super) fn mesh_decl_name(t: &[u8]) -> Option<&[u8]> {
    for p in crate::finder!(b"sdy.mesh").find_iter(t) {
        let j = p + 8;
        let k = j + t[j..].iter().take_while(|&&b| is_ws(b)).count();
        if k == j || t.get(k) != Some(&b'@') {
            continue;
        }
        let a = k + 1;
        match t.get(a) {
            Some(&b) if name_char(b) => {
                let e = a + t[a..].iter().take_while(|&&b| name_char(b)).count();
                return Some(&t[a..e]);
            }
            Some(b'"') => {
                let mut i = a + 1;
                let end = loop {
                    match t.get(i) {
                        None => break None,
                        Some(b'"') => break Some(i + 1),
                        Some(b'\\') => match t.get(i + 1) {
                            None | Some(b'\n') => break None,
                            Some(_) => i += 2,
                        },
                        Some(_) => i += 1,
                    }
                };
                if let Some(e) = end {
                    return Some(&t[a..e]);
                }
            }
            _ => {}
        }
    }
    None
}

impl Extractor {
    /// `{mesh = #sdy.mesh<...>, other = #sdy.mesh<...>}`: one `SdyMesh` site per entry.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mesh_dict(
        &mut self,
        ln: &mut Line,
        key: &str,
        a: usize,
        b: usize,
        data: &[u8],
        enc: Encoding,
        out: &mut Vec<Site>,
    ) {
        let raw = ln.text[a..b].to_vec();
        let mut cursor = 0usize;
        let mut pos = 0usize;
        while let Some((name, m2, mend)) = mesh_entry(data, pos) {
            pos = mend;
            let nm = symbol(strip_quotes(&data[name.0..name.1]));
            let Some(end) = match_close(data, m2 + 9) else {
                // an entry whose `<` does not close inside the dict: unfinished, the dict's rest its text
                let mut s = self.occ(
                    ln,
                    SiteKind::SdyMesh,
                    Cow::Owned(key.to_string()),
                    (a, b),
                    Ctx { value: Some(nm), ..Ctx::NONE },
                );
                s.text = Some(data[m2..].to_vec());
                s.encoding = WHOLE;
                s.flags |= FLAG_UNFINISHED;
                out.push(s);
                continue;
            };
            let mesh_text = &data[m2..end];
            let encoded = if enc.outer != "none" { encode_layered(mesh_text, &enc) } else { mesh_text.to_vec() };
            let at =
                if cursor <= raw.len() { memmem::find(&raw[cursor..], &encoded).map(|o| o + cursor) } else { None };
            let (sa, sb) = match at {
                Some(at) => (a + at, a + at + encoded.len()),
                None => (a, b),
            };
            if let Some(at) = at {
                cursor = at + encoded.len();
            }
            let mut s = self.occ(
                ln,
                SiteKind::SdyMesh,
                Cow::Owned(key.to_string()),
                (sa, sb),
                Ctx { value: Some(nm), ..Ctx::NONE },
            );
            s.text = Some(mesh_text.to_vec());
            s.encoding = if at.is_some() { enc } else { WHOLE };
            out.push(s);
        }
    }
}
