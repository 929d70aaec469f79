//! Extraction: the sharding-related values on one logical line of a dump (HLO text or MLIR; both
//! syntaxes are tried, so mixed logs work), each with its span and the tensor type and value name it
//! annotates, and the op that defines that value. Just enough lexing to cut values out.
//!
//! Here: the `Extractor` (a line's keywords to sites, the regions a manual computation closes later).
//! - `keyword_sites`, `records`, `shard`: the sites each keyword form gives
//! - `string_values`, `meshes`: values held in strings, and meshes named outside their value
//! - `line`: the line being scanned and the context its sites read, each part computed once
//! - `signature`, `hlo_instruction`, `mlir_op`: a `func.func` signature, an HLO instruction line, an
//!   MLIR op line
//! - `site`, `site_kind`, `memo`, `shapes`: the site record and its kinds, the types and ops a dump
//!   repeats, tensor types to dims
//! - `arguments`, `repeats`: check's fast paths (a signature's arguments alike, constraint lines met before)

use crate::extract::shapes::{hlo_shapes, mlir_shapes, Shape};
use crate::keywords::{match_at, name_char, ssa_char, Match, NeedleHits, Needles, Searcher};
use crate::strings::{
    decode_layered, encode_layered, is_word, is_ws, lstrip_len, match_close, rstrip, string_end, unicode_strip,
    Encoding, EscapeError, LineStart, PLAIN, WHOLE,
};
use memchr::memmem;
use std::borrow::Cow;
use std::sync::Arc;

pub type Shapes = Arc<Vec<Shape>>;

pub mod arguments;
mod hlo_instruction;
mod keyword_sites;
mod line;
mod memo;
mod meshes;
mod mlir_op;
mod records;
pub mod repeats;
pub mod shapes;
mod shard;
mod signature;
mod site;
mod site_kind;
mod string_values;

use hlo_instruction::*;
pub use line::*;
pub use memo::*;
use meshes::*;
pub use mlir_op::*;
pub use signature::*;
pub use site::*;
pub use site_kind::SiteKind;

/// What a site annotates: its value's name, tensor types, and where its op comes from.
struct Ctx {
    value: Option<Name>,
    shapes: Option<Shapes>,
    op: OpFrom,
}

impl Ctx {
    /// No value, type or op (a mesh's).
    const NONE: Ctx = Ctx { value: None, shapes: None, op: OpFrom::None };
}

/// `([\w.]+)\s*=\s*$` in the 64 bytes before `start`: the attribute a `#sdy...` value is assigned to.
fn attr_site(t: &[u8], start: usize, kind: SiteKind) -> Cow<'static, str> {
    let lo = start.saturating_sub(64);
    let w = &t[lo..start];
    let e = rstrip(w).len();
    if e > 0 && w[e - 1] == b'=' {
        let k = rstrip(&w[..e - 1]).len();
        let a = w[..k].iter().rposition(|&b| !(is_word(b) || b == b'.')).map_or(0, |p| p + 1);
        if a < k {
            return site_key(&w[a..k]);
        }
    }
    kind.name().into()
}

struct Pending {
    indent: usize,
    lineno: u64,
    ins: Vec<Site>,
    outs: Vec<Site>,
}

/// Whether `s` is a manual or named computation's `in_shardings` / `out_shardings` (`region_list`'s).
pub fn is_region_list(s: &Site) -> bool {
    s.kind == SiteKind::SdyPerValueList
}

/// Stateful per file: remembers open manual computations until their closing line.
pub struct Extractor {
    needles: &'static Needles,
    pending: Vec<Pending>,
    /// Leave each site's op, param and flags to `complete` (see `Site::context`).
    lazy: bool,
    /// Lent to each line being scanned (a box moves without building an empty memo in its place).
    memo: Option<Box<Memo>>,
    /// The indent of the line last scanned from its start: a long line's later windows and its rest
    /// have it.
    indent: usize,
    /// Whether the text scanned is a window of a longer line (`scan_window`).
    window: bool,
}

/// `^(\s*)\}\s*({...}\s*)?:\s*(.*)$` (the region, its op's attributes, its types): (indent, the types).
fn close_region(t: &[u8]) -> Option<(usize, &[u8])> {
    let s = lstrip_len(t);
    if t.get(s) != Some(&b'}') {
        return None;
    }
    let mut i = s + 1;
    i += lstrip_len(&t[i..]);
    if t.get(i) == Some(&b'{') {
        // the op's attributes, printed after its region (`} {sdy.result_sharding_origins = ...} : ...`)
        i = match_close(t, i)?;
        i += lstrip_len(&t[i..]);
    }
    if t.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    i += lstrip_len(&t[i..]);
    let e = memchr::memchr(b'\n', &t[i..]).map_or(t.len(), |p| i + p);
    if e == t.len() || e == t.len() - 1 {
        Some((s, &t[i..e]))
    } else {
        None
    }
}

impl Default for Extractor {
    fn default() -> Self {
        Extractor { needles: Needles::shared(), pending: Vec::new(), lazy: false, memo: None, indent: 0, window: false }
    }
}

impl Extractor {
    /// An extractor that leaves each site's op, param and flags to `complete` when `lazy`.
    pub fn new(lazy: bool) -> Self {
        Extractor { lazy, ..Extractor::default() }
    }

    pub fn pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// A long line's `in_shardings` / `out_shardings` sites read in its windows (`is_region_list`), its
    /// end (on line `lineno`, the indent its start had) opening their region: they wait for its closing
    /// line, as the whole line's would, with those its rest gives.
    pub fn hold_region(&mut self, lineno: u64, sites: Vec<Site>) {
        let (ins, outs) = sites.into_iter().partition(|s| s.site == "in_shardings");
        self.pending.push(Pending { indent: self.indent, lineno, ins, outs });
    }

    /// Sites still waiting for a closing line at end of file (types unknown).
    pub fn finish(&mut self) -> Vec<Site> {
        let mut out = Vec::new();
        for p in self.pending.drain(..) {
            out.extend(p.ins);
            out.extend(p.outs);
        }
        out
    }

    /// Every site on the line; `offset` is the file offset of `text[0]`.
    pub fn scan(&mut self, text: &[u8], offset: u64, lineno: u64, col_base: u64) -> Vec<Site> {
        let mut out = Vec::new();
        self.scan_into(text, offset, lineno, col_base, &mut out);
        out
    }

    /// `scan` into `out` (emptied first), so one vector serves every line.
    pub fn scan_into(&mut self, text: &[u8], offset: u64, lineno: u64, col_base: u64, out: &mut Vec<Site>) {
        let ln = self.scan_line(text, (offset, lineno, col_base), None, out);
        self.release(ln);
    }

    /// `scan_into`, handing back the line with what was read off it, for `complete_on` to finish the
    /// sites that keep a row; `release` gives the line's memo back. `start`: what the line's bytes
    /// before `text` leave open (None: `text` starts its line).
    pub fn scan_line<'a>(
        &mut self,
        text: &'a [u8],
        at: (u64, u64, u64),
        start: Option<LineStart>,
        out: &mut Vec<Site>,
    ) -> Line<'a> {
        let needles = self.needles;
        self.scan_line_with(text, at, out, needles, Known { start, ..Known::default() }, &mut [])
    }

    /// `scan_line` of a window of a line longer than it: whether a list's region opens is for the line's
    /// end to say (`hold_region`), not the window's.
    pub fn scan_window<'a>(
        &mut self,
        text: &'a [u8],
        at: (u64, u64, u64),
        start: Option<LineStart>,
        out: &mut Vec<Site>,
    ) -> Line<'a> {
        self.window = true;
        let ln = self.scan_line(text, at, start, out);
        self.window = false;
        ln
    }

    /// `scan_line` with its needles from `hits`, what the caller already `known`s of the line, and the
    /// keywords it counts itself (`skip`); `at` is the file offset, line and column base of `text[0]`.
    pub fn scan_line_with<'a>(
        &mut self,
        text: &'a [u8],
        at: (u64, u64, u64),
        out: &mut Vec<Site>,
        hits: impl NeedleHits,
        known: Known,
        skip: &mut [Skip],
    ) -> Line<'a> {
        let col_base = at.2;
        if col_base == 0 {
            self.indent = lstrip_len(text);
        }
        out.clear();
        let mut ln = Line::new(self.memo.take().unwrap_or_default(), text, at, known);
        if col_base == 0 && module_start(text) {
            out.push(self.occ(&mut ln, SiteKind::ModuleStart, "module".into(), (0, 0), Ctx::NONE));
        }
        if !self.pending.is_empty() {
            self.close(&mut ln, out);
        }
        let (mut pos, mut next_skip) = (0, 0);
        let mut searcher = Searcher::new(hits);
        while let Some(m) = searcher.search(text, pos) {
            let arg = argument_at(skip, &mut next_skip, m.start);
            if let Some(end) = arg.and_then(|k| passed_over(skip, k)) {
                pos = end;
                continue;
            }
            let before = out.len();
            pos = match self.dispatch(&mut ln, &m, out) {
                Ok(p) => p,
                Err(EscapeError) => m.end,
            };
            if let Some(k) = arg {
                skip[k].sites = Some((before, out.len()));
            }
            if pos <= m.start {
                pos = m.end;
            }
        }
        ln
    }

    /// Takes back the memo a line of `scan_line` borrowed.
    pub fn release(&mut self, ln: Line) {
        self.memo = Some(ln.memo);
    }

    fn close(&mut self, ln: &mut Line, out: &mut Vec<Site>) {
        let Some((indent, sig)) = close_region(ln.text) else { return };
        if self.pending.last().is_none_or(|p| p.indent != indent) {
            return;
        }
        let Some(p) = self.pending.pop() else { return };
        let sig = strip_loc(sig);
        let (ins, outs) = match crate::find::rfind_lit(sig, b"->", 1) {
            Some(a) => (mlir_shapes(&sig[..a]), mlir_shapes(&sig[a..])),
            None => (Vec::new(), mlir_shapes(sig)),
        };
        let (ins, outs) = (Arc::new(ins), Arc::new(outs));
        for mut s in p.ins {
            s.shapes = Some(ins.clone());
            out.push(s);
        }
        for mut s in p.outs {
            s.shapes = Some(outs.clone());
            out.push(s);
        }
    }

    /// The site of `kind` keyed `site` at `ln.text[a..b]`, in context `c` (its value's name and type, and
    /// where its op comes from: read now, or later when the extractor is lazy).
    fn occ(&self, ln: &mut Line, kind: SiteKind, site: Cow<'static, str>, (a, b): (usize, usize), c: Ctx) -> Site {
        let Ctx { value, shapes, op } = c;
        let (line, col) = ln.position(a);
        let (end_line, end_col) = ln.position(b);
        let ((op, param, flags), context) =
            if self.lazy { ((None, None, 0), Some(op)) } else { (op_context(ln, op), None) };
        Site {
            kind,
            site,
            line,
            col,
            end_line,
            end_col,
            start: ln.offset + a as u64,
            end: ln.offset + b as u64,
            raw: Raw::At(a, b),
            text: None,
            data: None,
            encoding: PLAIN,
            value,
            shapes,
            target: None,
            lt: LineText::At(a),
            op,
            param,
            flags,
            context,
        }
    }

    fn hlo_ctx(ln: &mut Line) -> Ctx {
        let (value, shapes) = ln.hlo_context();
        Ctx { value, shapes, op: OpFrom::Hlo }
    }

    /// A value of `kind` that starts at `a` and does not end on its line: a site to the line's end,
    /// flagged `FLAG_UNFINISHED`, the scan going on at `resume` as before. None where the value is no value
    /// of the dump: on a `//` comment line (a test's pattern may be cut on purpose) or inside a string the
    /// dump's syntax does not know (a JSON file's).
    #[allow(clippy::too_many_arguments)]
    fn unfinished(
        &self,
        ln: &mut Line,
        resume: usize,
        kind: SiteKind,
        site: Cow<'static, str>,
        a: usize,
        c: Ctx,
        out: &mut Vec<Site>,
    ) -> usize {
        let t = ln.text;
        if !LineStart::hides(ln.start, t, a) {
            let end = rstrip(t).len().max(a);
            let mut s = self.occ(ln, kind, site, (a, end), c);
            s.flags |= FLAG_UNFINISHED;
            out.push(s);
        }
        resume
    }

    /// Value name and type(s) an MLIR attribute at `pos` belongs to: a function argument or result, an
    /// op's results, or the module.
    fn mlir_context(&mut self, ln: &mut Line, pos: usize) -> Ctx {
        let t = ln.text;
        if let Some(sig) = ln.signature() {
            if sig.open_paren < pos {
                let (value, shapes) = match func_context(sig, t, pos) {
                    Some((name, a)) => (Some(name), ln.memo.first_mlir_shape(&t[a..pos])),
                    None => (None, None),
                };
                return Ctx { value, shapes, op: OpFrom::Func };
            }
        }
        if mlir_module(t) {
            return Ctx { value: Some("module".into()), ..Ctx::NONE };
        }
        let (name, colon, body) = ln.body();
        let shapes = match colon {
            Some(colon) if colon >= pos => {
                let tail = &body[colon + 3..];
                match crate::find::rfind_lit(tail, b"->", 1) {
                    Some(a) => ln.memo.mlir_shapes(&tail[a + 2..]),
                    None => {
                        let count = ln.result_count();
                        ln.memo.mlir_shapes(tail).map(|all| last_types(all, count))
                    }
                }
            }
            _ => None,
        };
        Ctx { value: name, shapes, op: OpFrom::Mlir }
    }

    /// `in_shardings=[...]` / `out_shardings=[...]` of a manual or named computation.
    fn region_list(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> usize {
        let t = ln.text;
        let key: Cow<'static, str> =
            if &t[m.sub.0..m.sub.1] == b"in_shardings" { "in_shardings".into() } else { "out_shardings".into() };
        let c = self.mlir_context(ln, m.start);
        let Some(end) = match_close(t, m.end - 1) else {
            let c = Ctx { shapes: None, ..c };
            return self.unfinished(ln, m.end, SiteKind::SdyPerValueList, key, m.end - 1, c, out);
        };
        let is_in = key == "in_shardings";
        let mut site = self.occ(
            ln,
            SiteKind::SdyPerValueList,
            key,
            (m.end - 1, end),
            Ctx { value: c.value, shapes: None, op: c.op },
        );
        let closes_later = !self.window && rstrip(t).ends_with(b"{");
        if closes_later {
            complete_on(ln, &mut site);
            site.own(t);
        }
        if !closes_later {
            site.shapes = c.shapes;
            out.push(site);
            return end;
        }
        let indent = if ln.col_base == 0 { lstrip_len(t) } else { self.indent };
        let new = self.pending.last().is_none_or(|p| p.lineno != ln.lineno || p.indent != indent);
        if new {
            self.pending.push(Pending { indent, lineno: ln.lineno, ins: Vec::new(), outs: Vec::new() });
        }
        if let Some(p) = self.pending.last_mut() {
            if is_in {
                p.ins.push(site);
            } else {
                p.outs.push(site);
            }
        }
        end
    }
}

/// The end of a value no parser reads, starting at `a`: its token (up to a blank, `,` or `}`, a `<...>`
/// in it taken whole), else the rest of its line.
fn bad_value_end(t: &[u8], a: usize) -> usize {
    let line_end = memchr::memchr(b'\n', &t[a..]).map_or(t.len(), |i| a + i);
    let rest = rstrip(&t[a..line_end]);
    let mut i = 0;
    while i < rest.len() && !is_ws(rest[i]) && rest[i] != b',' && rest[i] != b'}' {
        if rest[i] == b'<' {
            match match_close(rest, i) {
                Some(e) => i = e,
                None => return a + rest.len(),
            }
        } else {
            i += 1;
        }
    }
    a + if i == 0 { rest.len() } else { i }
}

/// The keyword match at `s`, for tests.
pub fn keyword_at(t: &[u8], s: usize) -> Option<Match> {
    match_at(t, s)
}

#[cfg(test)]
mod tests {
    use super::string_values::string_kind;
    use super::*;

    fn sites(t: &[u8]) -> Vec<Site> {
        Extractor::default().scan(t, 0, 1, 0)
    }

    #[test]
    fn a_mesh_declared_in_generic_form_is_named_by_its_sym_name() {
        let s = sites(b"  \"sdy.mesh\"() <{mesh = #sdy.mesh<[\"x\"=2]>, sym_name = \"gm\"}> : () -> ()");
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].kind, &*s[0].site, s[0].value.as_deref()), (SiteKind::SdyMesh, "sdy.mesh", Some("@gm")));
        assert_eq!((s[0].col, s[0].end_col), (25, 43)); // `#sdy.mesh<...>`, as written
        let inline = sites(b"  %0 = \"sdy.other\"() <{mesh = #sdy.mesh<[\"x\"=2]>, sym_name = \"gm\"}> : () -> ()");
        assert_eq!((inline[0].kind, inline[0].value.as_deref()), (SiteKind::SdyMesh, None));
    }

    #[test]
    fn a_value_that_does_not_end_on_its_line_is_an_unfinished_site_to_its_end() {
        let s =
            sites(b"  %p = f32[8]{0} parameter(0), frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"a\"=2}}");
        assert_eq!(
            (s[0].kind, s[0].flags, s[0].text.as_deref()),
            (SiteKind::SdyMesh, FLAG_UNFINISHED, Some(&b"#sdy.mesh<[\"a\"=2}"[..]))
        );
        let s = sites(b"  %p = f32[8]{0} parameter(0), sharding={devices=[8,  ");
        assert_eq!(s.len(), 1);
        assert_eq!(
            (s[0].kind, s[0].flags & FLAG_UNFINISHED, s[0].col, s[0].end_col),
            (SiteKind::Hlo, FLAG_UNFINISHED, 41, 53)
        );
        for (t, text) in [
            (&b"  %p = f32[8]{0} parameter(0), sharding=[replicated}, metadata={}"[..], &b"[replicated"[..]),
            (b"  %p = f32[8]{0} parameter(0), sharding=, metadata={}", b", metadata={}"),
        ] {
            let s = sites(t);
            assert_eq!((s.len(), s[0].kind, s[0].flags, s[0].raw(t)), (1, SiteKind::Hlo, 0, text));
        }
        assert!(sites(b"  // CHECK: sharding=[[S]]").is_empty());
        assert!(sites(b"  %p = f32[8]{0} custom-call(), backend_config=\"sharding=x\"").is_empty());
        let s = sites(b"  %p = f32[8]{0} parameter(0), sharding=  \n}\n");
        assert_eq!((s.len(), s[0].kind, s[0].flags & FLAG_UNFINISHED), (1, SiteKind::Hlo, FLAG_UNFINISHED));
        let t = b"  func.func @f(%a: tensor<8xf32> {mhlo.sharding = \"{replicated}";
        let s = sites(t);
        assert_eq!((s[0].kind, s[0].flags & FLAG_UNFINISHED), (SiteKind::Hlo, FLAG_UNFINISHED));
        assert_eq!(s[0].raw(t), b"\"{replicated}");
    }

    #[test]
    fn a_cut_value_in_a_comment_or_in_another_format_s_string_is_passed_over() {
        assert!(sites(b"  // CHECK: sharding={devices=[2,").is_empty());
        assert!(sites(b"{\"s\": \"#sdy.sharding<@mesh, [{}, {\\\"m\\\"}]>\"}").is_empty());
    }

    #[test]
    fn a_string_s_kind_is_read_off_its_first_bytes_even_cut_short() {
        assert!(string_kind("xla.sdy.sharding", b"#sdy.shar").is_some()); // (either kind: neither parses)
        assert_eq!(string_kind("xla.sdy.sharding", b"#sdy.sharding<@m"), Some(SiteKind::SdySharding));
        assert_eq!(string_kind("xla.sdy.sharding", b"#sdy.sharding_per_value<[<@m"), Some(SiteKind::SdyPerValue));
        assert_eq!(string_kind("xla.sdy.meshes", b"{mesh = #sdy.me"), Some(SiteKind::SdyMesh));
        assert_eq!(string_kind("xla.sdy.sharding_rule", b"#sdy.op_sharding_rule<"), None);
        assert_eq!(string_kind("mhlo.sharding", b""), Some(SiteKind::Hlo));
    }

    #[test]
    fn hlo_line() {
        let s = sites(b"  ROOT %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1]0,1}");
        assert_eq!(s.len(), 1);
        assert_eq!(
            s[0].raw(b"  ROOT %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1]0,1}"),
            b"{devices=[2,1]0,1}"
        );
        assert_eq!(s[0].value.as_deref(), Some("%x"));
        assert_eq!(s[0].shapes.as_deref(), Some(&vec![vec![Some(8), Some(16)]]));
        assert_eq!(s[0].op.as_deref(), Some("parameter"));
        assert_eq!(s[0].param, Some(0));
        assert_eq!(s[0].flags, FLAG_ROOT);
    }

    #[test]
    fn mlir_arg() {
        let t =
            b"  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}]>}) -> tensor<8xf32> {";
        let s = sites(t);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].value.as_deref(), Some("%arg0"));
        assert_eq!(s[0].site, "sdy.sharding");
        assert_eq!(s[0].shapes.as_deref(), Some(&vec![vec![Some(8)]]));
        assert_eq!(s[0].op.as_deref(), Some("func.func"));
    }

    #[test]
    fn function_results_by_position() {
        // a token result (ordered effects) and a tuple are one result each, as is a type in an attribute
        let t = b"  func.func @main(%arg0: !stablehlo.token) -> (!stablehlo.token {a = dense<0> : tensor<1xi64>}, tuple<tensor<2xf32>, tensor<3xf32>>, tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{\"x\"}]>}) {";
        let s = sites(t);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].value.as_deref(), Some("result[2]"));
        assert_eq!(s[0].shapes.as_deref(), Some(&vec![vec![Some(4)]]));
        let bare = lex_signature(b"func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {").map(|s| s.result_types.len());
        assert_eq!(bare, Some(1));
        assert_eq!(lex_signature(b"func.func @f(%a: tensor<2xf32>) {").map(|s| s.result_types.len()), Some(0));
    }

    #[test]
    fn result_types_without_an_arrow() {
        // select prints its predicate's type, then its result's; a multi-result op prints its results'
        let select = b"  %16 = stablehlo.select %13, %15, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<64x128xi1>, tensor<64x32xf32>";
        assert_eq!(sites(select)[0].shapes.as_deref(), Some(&vec![vec![Some(64), Some(32)]]));
        let barrier = b"  %0:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>, <@mesh, [{}]>]>} %a, %b : tensor<4xf32>, tensor<8xf32>";
        assert_eq!(sites(barrier)[0].shapes.as_deref(), Some(&vec![vec![Some(4)], vec![Some(8)]]));
    }

    #[test]
    fn loc() {
        assert_eq!(loc_tail(b"x : tensor<8xf32> loc(#loc3)"), Some(17));
        assert_eq!(loc_tail(b"x loc(a) y"), None);
        assert_eq!(mlir_result(b"  %0:2, %1 = foo").map(|r| (r.end, r.count)), Some((12, 3)));
        // a count beyond usize still names the result (`%0:N` is the op's N results, whatever N)
        assert_eq!(
            mlir_result(b"%0:99999999999999999999999 = foo").map(|r| (r.first, r.count)),
            Some(((0, 2), usize::MAX))
        );
    }

    #[test]
    fn regions() {
        let mut e = Extractor::default();
        let a = e.scan(b"  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{\"x\"}]>] out_shardings=[<@m, [{}]>] manual_axes={\"x\"} (%a: tensor<4xf32>) {", 0, 1, 0);
        assert_eq!(a.len(), 1);
        assert!(e.pending());
        let b = e.scan(b"  } : (tensor<8xf32>) -> tensor<8xf32>", 100, 3, 0);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].shapes.as_deref(), Some(&vec![vec![Some(8)]]));
    }

    #[test]
    fn region_closed_before_its_ops_attributes() {
        let mut e = Extractor::default();
        let open = b"  %0 = sdy.manual_computation(%x) in_shardings=[<@m, [{\"x\"}]>] out_shardings=[<@m, [{}]>] manual_axes={\"x\"} (%a: tensor<4xf32>) {";
        e.scan(open, 0, 1, 0);
        let close = b"  } {sdy.result_sharding_origins = [{x = \"self\"}]} : (tensor<8xf32>) -> tensor<2xf32>";
        let sites = e.scan(close, 100, 3, 0);
        assert!(!e.pending());
        let outs: Vec<_> = sites.iter().filter(|s| s.site == "out_shardings").collect();
        assert_eq!(outs.len(), 1);
        assert_eq!(outs[0].shapes.as_deref(), Some(&vec![vec![Some(2)]]));
    }
}
