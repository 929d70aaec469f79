//! The sites a keyword match gives, by its group (`keywords::Group`): HLO shardings, sdy attributes and
//! ops, meshes, a collective's mesh and axes, `num_partitions`, `unspecified_dims` and `expected-error`
//! markers. Propagation records are `records.rs`'s, `sdy.manual_computation`'s lists `region_list`'s.

use super::{
    attr_site, bad_value_end, generic_mesh_name, lossy, mesh_decl_name, mesh_device_ids_end, name_of,
    out_sharding_mesh, site_key, strip_quotes, symbol, Ctx, Extractor, Line, OpFrom, Site, SiteKind, FLAG_UNFINISHED,
};
use crate::keywords::{Group, Match};
use crate::strings::{lstrip_len, match_close, string_end, EscapeError, LineStart, PLAIN};
use std::borrow::Cow;

impl Extractor {
    /// Reads the value keyword match `m` starts on `ln`; where the scan goes on.
    pub(super) fn dispatch(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> Result<usize, EscapeError> {
        let (t, ms, me) = (ln.text, m.start, m.end);
        let sub = &t[m.sub.0..m.sub.1];
        Ok(match m.group {
            Group::Hlo => {
                let c = Self::hlo_ctx(ln);
                self.bracketed(ln, SiteKind::Hlo, "sharding=".into(), (me - 1, me), c, out)
            }
            Group::HloBad
            | Group::SdyBad
            | Group::NpBad
            | Group::MStrBad
            | Group::MeshBad
            | Group::ShMeshBad
            | Group::SdyOpBad => self.bad_value(ln, m, out),
            Group::HloFe => self.hlo_frontend_attr(ln, m, out)?,
            Group::HloNp | Group::Mnp => {
                let site = if m.group == Group::HloNp { "num_partitions" } else { "mhlo.num_partitions" };
                let c = Ctx { value: Some("module".into()), ..Ctx::NONE };
                out.push(self.occ(ln, SiteKind::NumPartitions, site.into(), m.sub, c));
                me
            }
            Group::MStr => {
                let key = site_key(sub);
                let c = self.mlir_context(ln, ms);
                let Some(end) = string_end(t, me - 1) else {
                    return Ok(self.unfinished_string(ln, key, me, c, out));
                };
                self.string_value(ln, key, me, end - 1, "mlir", c, out)?;
                end
            }
            Group::SdyAttr => self.sdy_attr(ln, m, out),
            Group::MeshDecl => {
                let c = Ctx { value: Some(symbol(strip_quotes(sub))), shapes: None, op: OpFrom::Named("sdy.mesh") };
                self.bracketed(ln, SiteKind::SdyMesh, "sdy.mesh".into(), (me - 1, me), c, out)
            }
            Group::SdyOp | Group::OpArg => {
                let (a, b) = if m.group == Group::SdyOp { (m.sub.0 - 4, m.sub.1) } else { (m.sub.0, m.sub.1 + 1) };
                let site = site_key(&t[a..b]);
                let c = self.mlir_context(ln, ms);
                self.bracketed(ln, SiteKind::SdyShardingBare, site, (me - 1, me), c, out)
            }
            Group::McList => self.region_list(ln, m, out),
            Group::MAxes => {
                let c = Ctx { shapes: None, ..self.mlir_context(ln, ms) };
                self.bracketed(ln, SiteKind::ManualAxes, "manual_axes".into(), (me - 1, me), c, out)
            }
            Group::Unspec => {
                let c = if crate::finder!(b"custom_call_target").find(t).is_some() {
                    Self::hlo_ctx(ln)
                } else {
                    self.mlir_context(ln, ms)
                };
                out.push(self.occ(ln, SiteKind::UnspecifiedDims, "unspecified_dims".into(), m.sub, c));
                me
            }
            Group::ShMesh => {
                let name = mesh_decl_name(&t[..ms]).map(|n| symbol(strip_quotes(n)));
                let c = Ctx { value: name, shapes: None, op: OpFrom::Named("sdy.mesh") };
                self.bracketed(ln, SiteKind::StablehloMesh, "stablehlo.mesh".into(), (me - 1, me), c, out)
            }
            Group::Collective => {
                // `replica_group_mesh_axes<mesh = @m, axes = [...]>`: the site is the whole `<...>`, the
                // value its mesh's name (none for an inline `#stablehlo.mesh<...>`).
                let name = (!sub.is_empty()).then(|| symbol(sub));
                let c = self.mlir_context(ln, ms);
                let open = ms + b"replica_group_mesh_axes".len();
                let c = Ctx { value: name, shapes: None, op: c.op };
                self.bracketed(ln, SiteKind::CollectiveMesh, "replica_groups".into(), (open, me), c, out)
            }
            Group::CollAxes => self.collective_axes(ln, m, out),
            Group::HloCollective => self.hlo_collective_mesh(ln, m, out),
            Group::Origins | Group::OriginName | Group::Edges | Group::Return => self.record(ln, m, out),
            Group::ShardGrid | Group::ShardSharding => self.shard_op(ln, m, out),
            Group::Expected => self.expected_error(ln, m, out),
        })
    }

    /// The value of `kind` keyed `site` whose bracket opens at `open`: its site to the matching close,
    /// the scan going on past it; unfinished, the scan going on at `resume`, when it does not close on
    /// its line.
    fn bracketed(
        &self,
        ln: &mut Line,
        kind: SiteKind,
        site: Cow<'static, str>,
        (open, resume): (usize, usize),
        c: Ctx,
        out: &mut Vec<Site>,
    ) -> usize {
        let Some(end) = match_close(ln.text, open) else {
            return self.unfinished(ln, resume, kind, site, open, c, out);
        };
        out.push(self.occ(ln, kind, site, (open, end), c));
        end
    }

    /// A keyword that always announces a value (`sharding=`, `sdy.sharding =`, `num_partitions=`,
    /// `mhlo.sharding =`, `sdy.mesh @m =`, `stablehlo.mesh =`, a constraint op's operand)
    /// with no value opening after it: the token there is the site, for the parser to say what is wrong (none on a `//` comment line or inside a string,
    /// as for a cut value); the scan goes on where the value starts.
    fn bad_value(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> usize {
        let (t, me) = (ln.text, m.end);
        if LineStart::hides(ln.start, t, me) {
            return me;
        }
        let (kind, site, c) = match m.group {
            Group::HloBad => (SiteKind::Hlo, "sharding=".into(), Self::hlo_ctx(ln)),
            Group::SdyBad => (SiteKind::SdySharding, "sdy.sharding".into(), self.mlir_context(ln, m.start)),
            Group::MStrBad => (SiteKind::Hlo, site_key(&t[m.sub.0..m.sub.1]), self.mlir_context(ln, m.start)),
            Group::MeshBad => {
                let name = symbol(strip_quotes(&t[m.sub.0..m.sub.1]));
                let c = Ctx { value: Some(name), shapes: None, op: OpFrom::Named("sdy.mesh") };
                (SiteKind::SdyMesh, "sdy.mesh".into(), c)
            }
            Group::ShMeshBad => {
                let name = mesh_decl_name(&t[..m.start]).map(|n| symbol(strip_quotes(n)));
                let c = Ctx { value: name, shapes: None, op: OpFrom::Named("sdy.mesh") };
                (SiteKind::StablehloMesh, "stablehlo.mesh".into(), c)
            }
            Group::SdyOpBad => {
                let site = site_key(&t[m.sub.0 - 4..m.sub.1]);
                (SiteKind::SdyShardingBare, site, self.mlir_context(ln, m.start))
            }
            _ => {
                let c = Ctx { value: Some("module".into()), ..Ctx::NONE };
                (SiteKind::NumPartitions, site_key(&t[m.sub.0..m.sub.1]), c)
            }
        };
        let end = bad_value_end(t, me);
        let mut s = self.occ(ln, kind, site, (me, end), c);
        if end == me {
            s.flags |= FLAG_UNFINISHED; // the line ends after `=`: a value cut before its first byte
        }
        out.push(s);
        me
    }

    /// An HLO frontend attribute `xla.sdy.KEY=`: a string value (`xla.sdy.sharding="..."`), or a dict of
    /// meshes (`xla.sdy.meshes={mesh = #sdy.mesh<...>}`).
    fn hlo_frontend_attr(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> Result<usize, EscapeError> {
        let (t, me) = (ln.text, m.end);
        let key = site_key(&t[m.sub.0..m.sub.1]);
        let c = Self::hlo_ctx(ln);
        if t[me - 1] == b'"' {
            let Some(end) = string_end(t, me - 1) else {
                return Ok(self.unfinished_string(ln, key, me, c, out));
            };
            self.string_value(ln, key, me, end - 1, "c", c, out)?;
            return Ok(end);
        }
        let Some(end) = match_close(t, me - 1) else {
            return Ok(self.unfinished(ln, me, SiteKind::SdyMesh, key, me - 1, c, out));
        };
        let data = t[me - 1..end].to_vec();
        self.mesh_dict(ln, &key, me - 1, end, &data, PLAIN, out);
        Ok(end)
    }

    /// `#sdy.sharding<...>`, `#sdy.sharding_per_value<...>` or `#sdy.mesh<...>` (a mesh of a generic
    /// `"sdy.mesh"() <{...}>` op is that mesh's declaration).
    fn sdy_attr(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> usize {
        let (t, ms, me) = (ln.text, m.start, m.end);
        let kind = match &t[m.sub.0..m.sub.1] {
            b"sharding" => SiteKind::SdySharding,
            b"sharding_per_value" => SiteKind::SdyPerValue,
            _ => SiteKind::SdyMesh,
        };
        let Some(end) = match_close(t, me - 1) else {
            let c = if kind == SiteKind::SdyMesh { Ctx::NONE } else { self.mlir_context(ln, ms) };
            let site = attr_site(t, ms, kind);
            return self.unfinished(ln, me, kind, site, ms, c, out);
        };
        if let Some(name) = generic_mesh_name(t).filter(|_| kind == SiteKind::SdyMesh) {
            let c = Ctx { value: Some(symbol(name)), shapes: None, op: OpFrom::Named("sdy.mesh") };
            out.push(self.occ(ln, SiteKind::SdyMesh, "sdy.mesh".into(), (ms, end), c));
            return end;
        }
        let c = if kind == SiteKind::SdyMesh { Ctx::NONE } else { self.mlir_context(ln, ms) };
        let site = attr_site(t, ms, kind);
        out.push(self.occ(ln, kind, site, (ms, end), c));
        end
    }

    /// The axes a collective names (`sdy.all_gather [{}, {"y"}]`), keyed by the mesh its `out_sharding`
    /// names (an axis the mesh lacks is the finding); the scan goes on inside them.
    fn collective_axes(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> usize {
        let (t, me) = (ln.text, m.end);
        let a = m.sub.1 + lstrip_len(&t[m.sub.1..]);
        let c = self.mlir_context(ln, m.start);
        let site = format!("sdy.{}", lossy(&t[m.sub.0..m.sub.1]));
        let Some(end) = match_close(t, me - 1) else {
            let c = Ctx { value: None, shapes: c.shapes, op: OpFrom::Mlir };
            return self.unfinished(ln, me, SiteKind::CollectiveAxes, site.into(), a, c, out);
        };
        let mesh = out_sharding_mesh(t, end).map(name_of);
        let c = Ctx { value: mesh, shapes: c.shapes, op: OpFrom::Mlir };
        out.push(self.occ(ln, SiteKind::CollectiveAxes, site.into(), (a, end), c));
        me
    }

    /// `replica_groups=mesh['x'=2,'y'=2] {'y'}`: a collective's own mesh (its device ids and the axes
    /// after it included), never a sharding's.
    fn hlo_collective_mesh(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> usize {
        let (t, me) = (ln.text, m.end);
        let c = Ctx { op: Self::hlo_ctx(ln).op, ..Ctx::NONE };
        let site = || Cow::Borrowed("replica_groups=");
        let Some(close) = match_close(t, me - 1) else {
            return self.unfinished(ln, me, SiteKind::CollectiveMesh, site(), m.sub.0, c, out);
        };
        let close = mesh_device_ids_end(t, close);
        let w = close + t[close..].iter().take_while(|&&b| b == b' ').count();
        let end = match t.get(w) {
            Some(b'{') => match match_close(t, w) {
                Some(end) => end,
                None => return self.unfinished(ln, me, SiteKind::CollectiveMesh, site(), m.sub.0, c, out),
            },
            _ => close,
        };
        out.push(self.occ(ln, SiteKind::CollectiveMesh, site(), (m.sub.0, end), c));
        end
    }

    /// A lit `expected-error` marker; its target line is its own, or the one `@above`, `@below` or
    /// `@+N` / `@-N` lines away.
    fn expected_error(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> usize {
        let t = ln.text;
        let sub = &t[m.sub.0..m.sub.1];
        let delta: i64 = match sub {
            b"" => 0,
            b"@above" => -1,
            b"@below" => 1,
            _ => {
                let s = std::str::from_utf8(&sub[1..]).unwrap_or("0");
                s.parse::<i64>().unwrap_or(if sub[1] == b'-' { i64::MIN / 2 } else { i64::MAX / 2 })
            }
        };
        let mut s = self.occ(ln, SiteKind::ExpectedError, "expected-error".into(), (m.start, m.end), Ctx::NONE);
        s.target = Some((ln.lineno as i64).saturating_add(delta));
        out.push(s);
        m.end
    }
}
