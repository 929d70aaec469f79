//! Values held in string attributes (`mhlo.sharding = "{...}"`, `xla.sdy.sharding = "#sdy.sharding<...>"`,
//! a meshes dictionary): decoded through their escapes, their kind read off their first bytes or key.

use super::*;

fn looks_textual(data: &[u8]) -> bool {
    if data.is_empty() {
        return true;
    }
    let s = lstrip_len(data);
    data.get(s) == Some(&b'{') && data.iter().all(|&b| b >= 0x20 || matches!(b, 0x09 | 0x0a | 0x0d))
}

/// The kind of value a string under `key` holds, from its first bytes `text` as written (which may be cut
/// short, even inside the prefix): None when it holds none the scan reads (as `string_value` decides).
pub(super) fn string_kind(key: &str, text: &[u8]) -> Option<SiteKind> {
    if key == "mhlo.sharding" || key == "mhlo.spmd_output_sharding" {
        return Some(SiteKind::Hlo);
    }
    if text.starts_with(b"{") {
        let meshes = key.ends_with("meshes") || crate::finder!(b"#sdy.mesh").find(text).is_some();
        return meshes.then_some(SiteKind::SdyMesh);
    }
    if text.is_empty() {
        return key_kind(key);
    }
    STRING_PREFIXES
        .iter()
        .find(|(p, _)| text.starts_with(p) || p.starts_with(text))
        .map(|&(_, kind)| kind)
        .or_else(|| key_kind(key))
}

/// The kind of value a frontend attribute's key announces, whatever its string holds (a string no
/// prefix matches is then a broken value of that kind, not silently none).
fn key_kind(key: &str) -> Option<SiteKind> {
    match key {
        "xla.sdy.sharding" => Some(SiteKind::SdySharding),
        "xla.sdy.in_shardings" | "xla.sdy.out_shardings" => Some(SiteKind::SdyPerValue),
        "xla.sdy.manual_axes" => Some(SiteKind::ManualAxes),
        "xla.sdy.meshes" => Some(SiteKind::SdyMesh),
        _ => None,
    }
}

/// The prefixes of the values a string may hold, each with its kind (the longer of two alike first).
const STRING_PREFIXES: [(&[u8], SiteKind); 4] = [
    (b"#sdy.sharding_per_value<", SiteKind::SdyPerValue),
    (b"#sdy.sharding<", SiteKind::SdySharding),
    (b"#sdy.mesh<", SiteKind::SdyMesh),
    (b"#sdy<manual_axes", SiteKind::ManualAxes),
];

impl Extractor {
    /// A string value whose closing quote is missing (its opening quote is at `a - 1`): unfinished, of the
    /// kind its key and first bytes say; nothing when they name no value the scan reads.
    pub(super) fn unfinished_string(
        &self,
        ln: &mut Line,
        key: Cow<'static, str>,
        a: usize,
        c: Ctx,
        out: &mut Vec<Site>,
    ) -> usize {
        let tail = &ln.text[a..];
        let Some(kind) = string_kind(&key, rstrip(tail)) else { return a };
        let c = match kind {
            SiteKind::SdyMesh => Ctx { value: c.value, ..Ctx::NONE },
            SiteKind::Hlo if key == "mhlo.spmd_output_sharding" => {
                Ctx { value: Some("module".into()), shapes: c.shapes, op: OpFrom::None }
            }
            _ => c,
        };
        self.unfinished(ln, a, kind, key, a - 1, c, out)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn string_value(
        &mut self,
        ln: &mut Line,
        key: Cow<'static, str>,
        a: usize,
        b: usize,
        outer: &str,
        c: Ctx,
        out: &mut Vec<Site>,
    ) -> Result<(), EscapeError> {
        let raw = &ln.text[a..b];
        let Ok((data, enc)) = decode_layered(raw, outer) else {
            let Some(kind) = string_kind(&key, raw) else { return Err(EscapeError) };
            let mut s = self.occ(ln, kind, key, (a - 1, b + 1), c);
            s.flags |= FLAG_UNDECODABLE;
            out.push(s);
            return Ok(());
        };
        if key == "mhlo.sharding" || key == "mhlo.spmd_output_sharding" {
            let textual = looks_textual(&data);
            let (value, op) = if key == "mhlo.spmd_output_sharding" {
                (Some("module".into()), OpFrom::None)
            } else {
                (c.value, c.op)
            };
            let mut s = self.occ(ln, SiteKind::Hlo, key, (a, b), Ctx { value, shapes: c.shapes, op });
            if textual {
                s.text = Some(data);
            } else {
                s.text = Some(Vec::new());
                s.data = Some(data);
            }
            s.encoding = enc;
            out.push(s);
            return Ok(());
        }
        let text = unicode_strip(&data);
        if text.starts_with(b"{") && crate::finder!(b"#sdy.mesh").find(text).is_some() {
            self.mesh_dict(ln, &key, a, b, &data, enc, out);
            return Ok(());
        }
        let by_prefix = STRING_PREFIXES.iter().find(|(prefix, _)| text.starts_with(prefix)).map(|&(_, kind)| kind);
        if let Some(kind) = by_prefix.or_else(|| key_kind(&key)) {
            let shapes = if kind == SiteKind::SdyMesh { None } else { c.shapes };
            let op = if kind == SiteKind::SdyMesh { OpFrom::None } else { c.op };
            let mut s = self.occ(ln, kind, key, (a, b), Ctx { value: c.value, shapes, op });
            s.text = Some(text.to_vec());
            s.encoding = enc;
            out.push(s);
        }
        Ok(())
    }
}
