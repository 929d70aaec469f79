//! Shardy's propagation records (`sdy-add-propagation-debug-info`, written by XLA's `shardy-verbose`
//! dumps): per value, the origin of each axis (`sdy.sharding_origins`), the name of an op that is an
//! origin (`sdy.sharding_origin_name`), and the edges propagation moved axes along
//! (`sdy.propagation_edges`), each a site of its own kind; and the operands of the op or `return`
//! carrying them (kind `operands`, text `%a, %b`), so an edge's `operand-N` names a value.

use super::{complete_on, site_key, Ctx, Extractor, Line, OpFrom, Site, SiteKind};
use crate::keywords::{name_char, ssa_char, Group, Match};
use crate::strings::{is_ws, lstrip_len, match_close, string_end};

const EDGES_OPEN: usize = b"#sdy.propagation_edges<".len();

/// The `%` operands of the op on `t` (after its results and op name), up to its attributes, a
/// bracketed argument or its type: (span of the list, the names joined by ", "). An op that prints its
/// attributes first (`stablehlo.optimization_barrier {...} %a, %b : ...`) has its operands after them.
pub fn operands(t: &[u8]) -> Option<(usize, usize, Vec<u8>)> {
    let mut i = super::mlir_result(t).map_or(lstrip_len(t), |r| r.end);
    i += t[i..].iter().take_while(|&&b| is_ws(b)).count();
    if t.get(i) == Some(&b'"') {
        i = string_end(t, i)?;
    } else {
        i += t[i..].iter().take_while(|&&b| name_char(b)).count();
    }
    let w = i + t[i..].iter().take_while(|&&b| is_ws(b)).count();
    if w > i && t.get(w) == Some(&b'{') {
        i = match_close(t, w)?;
    }
    let (mut first, mut last) = (None, i);
    let mut names: Vec<u8> = Vec::new();
    while i < t.len() {
        match t[i] {
            b'{' | b'<' | b'[' => break,
            b':' if i > 0 && is_ws(t[i - 1]) && t.get(i + 1).is_some_and(|&b| is_ws(b)) => break,
            b'%' => {
                let e = i + 1 + t[i + 1..].iter().take_while(|&&b| ssa_char(b)).count();
                if e > i + 1 {
                    if !names.is_empty() {
                        names.extend_from_slice(b", ");
                    }
                    names.extend_from_slice(&t[i..e]);
                    first.get_or_insert(i);
                    last = e;
                }
                i = e;
            }
            _ => i += 1,
        }
    }
    first.map(|a| (a, last, names))
}

impl Extractor {
    /// `mlir_context` without an op's tensor types (a record needs only its value's name and op).
    fn record_context(&mut self, ln: &mut Line, pos: usize) -> Ctx {
        if ln.signature().is_some_and(|sig| sig.open_paren < pos) {
            return self.mlir_context(ln, pos);
        }
        Ctx { value: ln.body().0, shapes: None, op: OpFrom::Mlir }
    }

    /// One record (or a `return`) at `m`: its site, and the operands site of its op once per line.
    pub(super) fn record(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> usize {
        let t = ln.text;
        let (ms, me) = (m.start, m.end);
        let key = site_key(&t[m.sub.0..m.sub.1]);
        if m.group == Group::Return {
            if let Some((a, b, names)) = operands(t) {
                let op = if t[ms..].starts_with(b"sdy.") { "sdy.return" } else { "return" };
                let mut s =
                    self.occ(ln, SiteKind::Operands, op.into(), (a, b), Ctx { op: OpFrom::Named(op), ..Ctx::NONE });
                s.text = Some(names);
                out.push(s);
                return b;
            }
            return me;
        }
        let (kind, a, end) = match m.group {
            Group::OriginName => match string_end(t, me - 1) {
                Some(e) => (SiteKind::SdyOriginName, me, e - 1),
                None => return me,
            },
            _ => {
                let open = if t[me - 1] == b'<' { me - EDGES_OPEN } else { me - 1 };
                match match_close(t, me - 1) {
                    Some(e) => {
                        (if m.group == Group::Origins { SiteKind::SdyOrigins } else { SiteKind::SdyEdges }, open, e)
                    }
                    None => return me,
                }
            }
        };
        let mut c = self.record_context(ln, ms);
        if c.value.is_none() {
            // a manual computation's closing line `} {sdy...} : (...)`: the op is the one whose in/out
            // shardings were just reported for this line (another op's closing line, inside one still
            // open, names no value: the reader finds its op above it)
            let listed = out.iter().rposition(|s| s.kind == SiteKind::SdyPerValueList);
            if let Some(i) = listed {
                complete_on(ln, &mut out[i]);
                let prev = &out[i];
                c = Ctx { value: prev.value.clone(), ..Ctx::NONE };
                let op = prev.op.clone();
                let mut s = self.occ(ln, kind, key, (a, end), Ctx { value: c.value, ..Ctx::NONE });
                s.op = op;
                out.push(s);
                return end + usize::from(kind == SiteKind::SdyOriginName);
            }
        }
        let on_op = c.op == OpFrom::Mlir;
        let value = c.value.clone();
        let shapes = c.shapes;
        out.push(self.occ(ln, kind, key, (a, end), Ctx { value: c.value, shapes, op: c.op }));
        if on_op && !out.iter().any(|s| s.kind == SiteKind::Operands) {
            if let Some((x, y, names)) = operands(t) {
                let mut s = self.occ(
                    ln,
                    SiteKind::Operands,
                    "operands".into(),
                    (x, y),
                    Ctx { value, shapes: None, op: OpFrom::Mlir },
                );
                s.text = Some(names);
                out.push(s);
            }
        }
        end + usize::from(kind == SiteKind::SdyOriginName)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(t: &[u8]) -> Vec<Site> {
        Extractor::default().scan(t, 0, 1, 0)
    }

    #[test]
    fn operand_lists() {
        let o = |t: &[u8]| operands(t).map(|(_, _, n)| String::from_utf8(n).unwrap());
        assert_eq!(o(b"  %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT] {x}").as_deref(), Some("%arg0, %arg1"));
        assert_eq!(o(b"%7 = stablehlo.reduce(%5 init: %6) applies stablehlo.maximum {").as_deref(), Some("%5, %6"));
        assert_eq!(o(b"%1 = sdy.reshard %0 <@mesh, [{}]> {a}").as_deref(), Some("%0"));
        assert_eq!(o(b"%2 = \"stablehlo.add\"(%a, %b#1) {x} : tensor<f32>").as_deref(), Some("%a, %b#1"));
        assert_eq!(o(b"    return %5, %6 : tensor<f32>, tensor<f32>").as_deref(), Some("%5, %6"));
        assert_eq!(o(b"%2 = sdy.constant dense<0.0> : tensor<f32>"), None);
        let barrier = b"%8:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}]>]>} %7, %arg2 : t";
        assert_eq!(o(barrier).as_deref(), Some("%7, %arg2"));
    }

    #[test]
    fn records_on_an_op() {
        let t = b"    %1 = sdy.reshard %0 <@mesh, [{\"data\"}]> {sdy.propagation_edges = #sdy.propagation_edges<[{step-0 = [{\"data\" = result-0 -> [operand-0]}]}]>, sdy.sharding_origin_name = \"constraint_0\", sdy.sharding_origins = {data = \"self\"}} : tensor<16xf32>";
        let s = sites(t);
        let kinds: Vec<SiteKind> = s.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            vec![
                SiteKind::SdyShardingBare,
                SiteKind::SdyEdges,
                SiteKind::Operands,
                SiteKind::SdyOriginName,
                SiteKind::SdyOrigins
            ]
        );
        assert!(s[1].raw(t).starts_with(b"#sdy.propagation_edges<[{step-0") && s[1].raw(t).ends_with(b"]}]>"));
        assert_eq!(s[2].text(t), b"%0");
        assert_eq!(s[3].raw(t), b"constraint_0");
        assert_eq!(s[4].raw(t), b"{data = \"self\"}");
        for x in &s {
            assert_eq!(x.value.as_deref(), Some("%1"));
            assert_eq!(x.op.as_deref(), Some("sdy.reshard"));
        }
    }

    #[test]
    fn records_on_a_signature_and_a_region() {
        let t = b"  func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}]>, sdy.sharding_origins = {data = \"input: 0\"}}) -> (tensor<16xf32> {sdy.sharding_origins = {data = \"output: 0\"}}) {";
        let s = sites(t);
        assert_eq!(s.len(), 3);
        assert_eq!((s[1].kind, s[1].value.as_deref()), (SiteKind::SdyOrigins, Some("%arg0")));
        assert_eq!((s[2].kind, s[2].value.as_deref()), (SiteKind::SdyOrigins, Some("result[0]")));
        let mut e = Extractor::default();
        e.scan(b"  %1 = sdy.manual_computation(%0) in_shardings=[<@m, [{\"x\"}]>] out_shardings=[<@m, [{\"x\"}]>] manual_axes={\"x\"} (%a: tensor<4xf32>) {", 0, 1, 0);
        let close = b"  } {sdy.block_arg_sharding_origins = [{x = \"self\"}], sdy.sharding_origin_name = \"mc_0\"} : (tensor<8xf32>) -> tensor<8xf32>";
        let s = e.scan(close, 200, 3, 0);
        let named: Vec<_> = s.iter().filter(|x| x.kind == SiteKind::SdyOriginName).collect();
        assert_eq!(named.len(), 1);
        assert_eq!(named[0].value.as_deref(), Some("%1"));
        assert_eq!(named[0].op.as_deref(), Some("sdy.manual_computation"));
        assert_eq!(named[0].raw(close), b"mc_0");
    }

    #[test]
    fn records_closing_a_region_inside_a_manual_computation_name_no_value() {
        let mut e = Extractor::default();
        e.scan(b"  %1 = sdy.manual_computation(%0) in_shardings=[<@m, [{\"x\"}]>] out_shardings=[<@m, [{\"x\"}]>] manual_axes={\"x\"} (%a: tensor<4xf32>) {", 0, 1, 0);
        e.scan(b"    %2 = \"stablehlo.all_reduce\"(%a) ({", 100, 2, 0);
        let close = b"    }) {sdy.propagation_edges = #sdy.propagation_edges<[{step-4 = [{\"y\" = operand-0 -> [result-0]}]}]>, sdy.sharding_origins = [{y = \"mc_0_input: 1\"}]} : (tensor<4xf32>) -> tensor<4xf32>";
        let s = e.scan(close, 200, 5, 0);
        assert_eq!(s.iter().map(|x| x.kind).collect::<Vec<_>>(), vec![SiteKind::SdyEdges, SiteKind::SdyOrigins]);
        assert!(s.iter().all(|x| x.value.is_none()), "the all_reduce's records are not the manual computation's");
    }
}
