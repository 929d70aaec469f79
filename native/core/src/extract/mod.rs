//! Extraction: the sharding-related values on one logical line of a dump (HLO text or MLIR; both
//! syntaxes are tried, so mixed logs work), each with its span and the tensor type and value name it
//! annotates, and the op that defines that value. Just enough lexing to cut values out.

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

/// A site's raw bytes: a span of the text it was scanned in, or (for a site reported at a later line)
/// the bytes themselves.
#[derive(Clone, Debug, PartialEq)]
pub enum Raw {
    At(usize, usize),
    Owned(Vec<u8>),
}

pub mod arguments;
mod keyword_sites;
mod records;
pub mod repeats;
pub mod shapes;
mod shard;
mod site_kind;

pub use site_kind::SiteKind;

pub const FLAG_ROOT: u32 = 1;
pub const FLAG_SIGNATURE: u32 = 2;
/// A value the scan started but that does not end on its line (a cut string or bracket, the file's end):
/// its site runs to the line's end, and the gate reports it rather than losing it.
pub const FLAG_UNFINISHED: u32 = 4;
/// A value in a string whose escapes do not decode: its site is the string as written.
pub const FLAG_UNDECODABLE: u32 = 8;

/// One value site, as the extractor reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub kind: SiteKind,
    pub site: Cow<'static, str>,
    pub line: u64,
    pub col: u64,
    pub end_line: u64,
    pub end_col: u64,
    pub start: u64,
    pub end: u64,
    pub raw: Raw,
    pub text: Option<Vec<u8>>, // None: the same as raw
    pub data: Option<Vec<u8>>,
    pub encoding: Encoding,
    pub value: Option<Name>,
    pub shapes: Option<Shapes>,
    pub target: Option<i64>,
    /// Where the site's physical line is: an offset into the scanned text, or (for a site reported at a
    /// later line) the line itself.
    pub lt: LineText,
    pub op: Option<Arc<str>>,
    pub param: Option<u32>,
    pub flags: u32,
    /// The op, param and flags still to be read off the site's line (a lazy extractor leaves them to
    /// `complete_on`, which only the sites that keep a row pay for).
    pub context: Option<OpFrom>,
}

impl Site {
    /// The raw bytes, given the text the site was scanned in.
    pub fn raw<'a>(&'a self, text: &'a [u8]) -> &'a [u8] {
        match &self.raw {
            Raw::At(a, b) => &text[*a..*b],
            Raw::Owned(v) => v,
        }
    }

    /// The decoded value (the raw bytes unless it sat in a string).
    pub fn text<'a>(&'a self, text: &'a [u8]) -> &'a [u8] {
        match &self.text {
            Some(t) => t,
            None => self.raw(text),
        }
    }

    /// Copies what the site borrows from `text` (before the text goes).
    pub fn own(&mut self, text: &[u8]) {
        if let Raw::At(a, b) = self.raw {
            self.raw = Raw::Owned(text[a..b].to_vec());
        }
        if let LineText::At(a) = self.lt {
            let (x, y) = physical_span(text, a);
            self.lt = LineText::Owned(text[x..y].to_vec());
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum LineText {
    At(usize),
    Owned(Vec<u8>),
}

/// The physical line of `text` holding `text[i]` (all of it when it has no newline): its span, without
/// its line break (a CRLF line's `\r` too: an editor shows the line without it).
pub fn physical_span(text: &[u8], i: usize) -> (usize, usize) {
    let i = i.min(text.len());
    let start = memchr::memrchr(b'\n', &text[..i]).map_or(0, |p| p + 1);
    if start == 0 && memchr::memchr(b'\n', text).is_none() {
        return (0, text.len());
    }
    let end = memchr::memchr(b'\n', &text[i..]).map_or(text.len(), |p| i + p);
    let crlf = end < text.len() && end > start && text[end - 1] == b'\r';
    (start, end - usize::from(crlf))
}

/// Where a site's op comes from: none, the line's HLO instruction or MLIR op, a signature, a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpFrom {
    None,
    Hlo,
    Mlir,
    Func,
    Named(&'static str),
}

struct Ctx {
    value: Option<Name>,
    shapes: Option<Shapes>,
    op: OpFrom,
}

impl Ctx {
    /// No value, type or op (a mesh's).
    const NONE: Ctx = Ctx { value: None, shapes: None, op: OpFrom::None };
}

/// The site keys a dump repeats on line after line, named without an allocation.
const COMMON_KEYS: [&str; 19] = [
    "sdy.sharding",
    "sdy.sharding_per_value",
    "sdy.sharding_constraint",
    "sdy.reshard",
    "sharding=",
    "out_sharding=",
    "mhlo.sharding",
    "mhlo.spmd_output_sharding",
    "xla.sdy.sharding",
    "xla.sdy.meshes",
    "sdy.sharding_rule",
    "sdy.manual_axes",
    "sdy.sharding_origins",
    "sdy.result_sharding_origins",
    "sdy.block_arg_sharding_origins",
    "sdy.sharding_origin_name",
    "sdy.propagation_edges",
    "sdy.result_propagation_edges",
    "sdy.block_arg_propagation_edges",
];

/// A site key from the text `b`, shared when it is a common one.
pub(crate) fn site_key(b: &[u8]) -> Cow<'static, str> {
    match COMMON_KEYS.iter().find(|k| k.as_bytes() == b) {
        Some(k) => Cow::Borrowed(k),
        None => lossy(b).into(),
    }
}

/// A value's name (`%x`, `%arg0`, `result[0]`, `@mesh`): most are short, kept inline (no allocation per
/// site, and a dump names a value at nearly every site).
pub type Name = compact_str::CompactString;

/// The name `b` spells (an ASCII name, as every real one is, taken as it is).
pub(crate) fn name_of(b: &[u8]) -> Name {
    match std::str::from_utf8(b) {
        Ok(s) => Name::new(s),
        Err(_) => Name::from_utf8_lossy(b),
    }
}

/// Past an HLO mesh's `, device_ids=(...)` (iota or list) after its `]` at `close`, when it has one.
fn mesh_device_ids_end(t: &[u8], close: usize) -> usize {
    const IDS: &[u8] = b", device_ids=(";
    match t.get(close..close + IDS.len()) {
        Some(w) if w == IDS => match_close(t, close + IDS.len() - 1).unwrap_or(close),
        _ => close,
    }
}

/// The symbol `@b` names (a mesh).
fn symbol(b: &[u8]) -> Name {
    compact_str::format_compact!("@{}", String::from_utf8_lossy(b))
}

fn lossy(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

fn strip_quotes(b: &[u8]) -> &[u8] {
    let a = b.iter().position(|&c| c != b'"').unwrap_or(b.len());
    let e = b.iter().rposition(|&c| c != b'"').map_or(a, |e| e + 1);
    &b[a..e.max(a)]
}

pub struct Signature {
    open_paren: usize,
    pub(crate) close: Option<usize>,
    /// Where each argument's type starts (just past its `%name:` and the spaces after it).
    pub(crate) arg_ends: Vec<usize>,
    /// Each argument's name (`%arg0`), made into a `Name` only for a site that asks.
    pub(crate) arg_names: Vec<Span>,
    result_types: Vec<usize>,
    /// The argument the last lookup found: a line's sites come in order, so the next is there or after.
    last_arg: std::cell::Cell<usize>,
}

/// What the extractor has already made of the tensor types and op names it met (a dump repeats a few
/// of each on line after line), so a repeat costs a lookup instead of a parse and an allocation.
#[derive(Default)]
pub struct Memo {
    hlo_shapes: crate::intern::FxMap<Box<[u8]>, Shapes>,
    mlir_shapes: crate::intern::FxMap<Box<[u8]>, Option<Shapes>>,
    mlir_types: crate::intern::FxMap<Box<[u8]>, Option<Shapes>>,
    ops: crate::intern::FxMap<Box<[u8]>, Arc<str>>,
    custom_calls: crate::intern::FxMap<Box<[u8]>, Arc<str>>,
    /// The last argument type read and its shape: a signature's arguments most often share one.
    last_first: Option<(Vec<u8>, Option<Shapes>)>,
}

/// Entries a memo map holds before it starts again (it stays small whatever the dump).
const MEMO_CAP: usize = 4096;

fn memo_get<V: Clone>(map: &mut crate::intern::FxMap<Box<[u8]>, V>, key: &[u8], make: impl FnOnce() -> V) -> V {
    if let Some(v) = map.get(key) {
        return v.clone();
    }
    if map.len() >= MEMO_CAP {
        map.clear();
    }
    let v = make();
    map.insert(key.into(), v.clone());
    v
}

impl Memo {
    /// The shapes of the HLO type `t` (a leaf or a tuple).
    fn hlo_shapes(&mut self, t: &[u8]) -> Shapes {
        memo_get(&mut self.hlo_shapes, t, || Arc::new(hlo_shapes(t)))
    }

    /// The first `tensor<...>` type's shape in `t`, keyed on that type's text alone (from `tensor<` to
    /// its first `>`: the dims it is read from end before that).
    fn first_mlir_shape(&mut self, t: &[u8]) -> Option<Shapes> {
        // (an argument's type most often starts the text: no search then)
        let p = if t.starts_with(b"tensor<") { 0 } else { crate::finder!(b"tensor<").find(t)? };
        let e = memchr::memchr(b'>', &t[p..]).map_or(t.len(), |q| p + q + 1);
        let key = &t[p..e];
        if let Some((last, shapes)) = &self.last_first {
            if last.as_slice() == key {
                return shapes.clone();
            }
        }
        let shapes = memo_get(&mut self.mlir_shapes, key, || first_shape(mlir_shapes(key)));
        let (last, kept) = self.last_first.get_or_insert_with(Default::default);
        last.clear();
        last.extend_from_slice(key);
        *kept = shapes.clone();
        shapes
    }

    /// The shapes of the MLIR types in `t` (none: no tensor type).
    fn mlir_shapes(&mut self, t: &[u8]) -> Option<Shapes> {
        memo_get(&mut self.mlir_types, t, || some_shapes(mlir_shapes(t)))
    }

    /// An op's name, shared.
    fn op(&mut self, name: &[u8], make: impl FnOnce() -> String) -> Arc<str> {
        memo_get(&mut self.ops, name, || Arc::from(make()))
    }

    /// `custom-call TARGET`, shared, keyed on the target.
    fn custom_call(&mut self, target: &[u8]) -> Arc<str> {
        memo_get(&mut self.custom_calls, target, || Arc::from(format!("custom-call {}", lossy(target))))
    }
}

/// A site's op, param and flags, as read off its line.
fn op_context(ln: &mut Line, op: OpFrom) -> (Option<Arc<str>>, Option<u32>, u32) {
    let mut flags = 0;
    if ln.signature().is_some() {
        flags |= FLAG_SIGNATURE;
    }
    let (op, param) = match op {
        OpFrom::None => (None, None),
        OpFrom::Func => (Some(ln.memo.op(b"func.func", || "func.func".into())), None),
        OpFrom::Named(n) => (Some(ln.memo.op(n.as_bytes(), || n.into())), None),
        OpFrom::Mlir => (ln.mlir_op(), None),
        OpFrom::Hlo => {
            let (op, param, root) = ln.hlo_op();
            if root {
                flags |= FLAG_ROOT;
            }
            (op, param)
        }
    };
    (op, param, flags)
}

/// The op, param and flags of `s`, if a lazy scan left them, read off `ln`, the line it was scanned in.
pub fn complete_on(ln: &mut Line, s: &mut Site) {
    if let Some(op) = s.context.take() {
        let (o, param, flags) = op_context(ln, op);
        s.op = o;
        s.param = param;
        s.flags |= flags;
    }
}

/// A byte range of the line being scanned.
pub(crate) type Span = (usize, usize);

/// What a caller that searched a whole buffer knows of a line: whether it may hold `func.func` (a
/// signature) and `loc(` (a location tail). `UNKNOWN` says both may: the line is searched for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holds {
    pub func: bool,
    pub loc: bool,
}

impl Holds {
    pub const UNKNOWN: Holds = Holds { func: true, loc: true };
}

/// What a caller already made of a line: what it may hold, and its signature if it lexed the line for
/// one (`Some(None)`: it holds none).
#[derive(Default)]
pub struct Known {
    pub holds: Holds,
    pub sig: Option<Option<Signature>>,
    /// What the line's bytes before the text leave open (None: the text starts its line).
    pub start: Option<LineStart>,
}

impl Default for Holds {
    fn default() -> Self {
        Holds::UNKNOWN
    }
}

/// A function argument whose type and attributes (`start..end`) are its sdy sharding alone (see
/// `arguments`): one like an earlier argument of its line (`first`) is passed over once that one gave one
/// sdy sharding, and the caller counts it (`taken`); a first keeps the sites its keyword gave.
#[derive(Clone, Copy, Debug)]
pub struct Skip {
    pub start: usize,
    pub attr: usize,
    pub end: usize,
    pub first: Option<usize>,
    pub sites: Option<(usize, usize)>,
    pub taken: bool,
}

/// The argument whose keyword is at `at`, if any (`skip` sorted, searched from `*next` on).
fn argument_at(skip: &[Skip], next: &mut usize, at: usize) -> Option<usize> {
    while skip.get(*next).is_some_and(|s| s.attr < at) {
        *next += 1;
    }
    skip.get(*next).filter(|s| s.attr == at).map(|_| *next)
}

/// Whether argument `k` is passed over: the first like it gave one site at its keyword (the sdy sharding
/// `argument_attr` read), which this one would give again. Taken, then: the scan goes on at its end.
fn passed_over(skip: &mut [Skip], k: usize) -> Option<usize> {
    let (a, b) = skip[skip[k].first?].sites?;
    if b != a + 1 {
        return None;
    }
    skip[k].taken = true;
    Some(skip[k].end)
}

/// One line being scanned, with lazily computed context.
pub struct Line<'a> {
    memo: Box<Memo>,
    text: &'a [u8],
    holds: Holds,
    start: Option<LineStart>,
    offset: u64,
    lineno: u64,
    col_base: u64,
    hlo: Option<(Option<Span>, Option<Shapes>)>,
    sig: Option<Option<Signature>>,
    hlo_op: Option<(Option<Arc<str>>, Option<u32>, bool)>,
    mlir_op: Option<Option<Arc<str>>>,
    has_nl: bool,
    body: Option<OpParts>,
}

/// An MLIR op line's parts: its first result and how many it names, where its last ` : ` is, and its
/// length without the loc tail.
#[derive(Clone, Copy)]
struct OpParts {
    results: Option<(Span, usize)>,
    after_results: usize, // just past the results' `=` (0: the line names none)
    colon: Option<usize>,
    end: usize,
}

impl<'a> Line<'a> {
    fn new(memo: Box<Memo>, text: &'a [u8], at: (u64, u64, u64), known: Known) -> Self {
        let (offset, lineno, col_base) = at;
        let Known { holds, sig, start } = known;
        Line {
            memo,
            text,
            holds,
            start,
            offset,
            lineno,
            col_base,
            hlo: None,
            sig,
            hlo_op: None,
            mlir_op: None,
            has_nl: memchr::memchr(b'\n', text).is_some(),
            body: None,
        }
    }

    fn position(&self, i: usize) -> (u64, u64) {
        if !self.has_nl {
            return (self.lineno, self.col_base + i as u64 + 1);
        }
        match memchr::memrchr(b'\n', &self.text[..i]) {
            None => (self.lineno, self.col_base + i as u64 + 1),
            Some(nl) => {
                let count = crate::strings::count_nl(&self.text[..i]);
                (self.lineno + count, (i - nl) as u64)
            }
        }
    }

    /// The first result's name, where the last ` : ` of the line (its loc tail cut) is, and the line
    /// without that tail.
    fn body(&mut self) -> (Option<Name>, Option<usize>, &'a [u8]) {
        let parts = self.parts();
        let first = parts.results.map(|(first, _)| first);
        (self.name(first), parts.colon, &self.text[..parts.end])
    }

    /// How many results the line's op names (0 for a line naming none).
    fn result_count(&mut self) -> usize {
        self.parts().results.map_or(0, |(_, count)| count)
    }

    fn parts(&mut self) -> OpParts {
        let t = self.text;
        *self.body.get_or_insert_with(|| {
            let body = if self.holds.loc { strip_loc(rstrip(t)) } else { rstrip(t) };
            let results = mlir_result(t);
            OpParts {
                results: results.as_ref().map(|r| (r.first, r.count)),
                after_results: results.map_or(0, |r| r.end),
                colon: crate::find::rfind_lit(body, b" : ", 1),
                end: body.len(),
            }
        })
    }

    fn signature(&mut self) -> Option<&Signature> {
        if self.sig.is_none() {
            self.sig = Some(if self.holds.func { lex_signature(self.text) } else { None });
        }
        self.sig.as_ref().and_then(|s| s.as_ref())
    }

    fn hlo_context(&mut self) -> (Option<Name>, Option<Shapes>) {
        if self.hlo.is_none() {
            self.hlo = Some(hlo_context(self.text, &mut self.memo));
        }
        let (name, shapes) = self.hlo.clone().unwrap_or((None, None));
        (self.name(name), shapes)
    }

    /// The name cut from the line at `span` (cut afresh for each site: most lines hold one).
    fn name(&self, span: Option<Span>) -> Option<Name> {
        span.map(|(a, b)| name_of(&self.text[a..b]))
    }

    fn hlo_op(&mut self) -> (Option<Arc<str>>, Option<u32>, bool) {
        if self.hlo_op.is_none() {
            self.hlo_op = Some(hlo_op(self.text, &mut self.memo));
        }
        self.hlo_op.clone().unwrap_or((None, None, false))
    }

    fn mlir_op(&mut self) -> Option<Arc<str>> {
        if self.mlir_op.is_none() {
            let from = self.parts().after_results;
            self.mlir_op = Some(match mlir_op(self.text, from) {
                Some((op, None)) => Some(self.memo.op(op, || lossy(op))),
                Some((op, Some(target))) => Some(Arc::from(format!("{} @{}", lossy(op), lossy(target)))),
                None => None,
            });
        }
        self.mlir_op.clone().flatten()
    }
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

fn hlo_context(t: &[u8], memo: &mut Memo) -> (Option<Span>, Option<Shapes>) {
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
fn hlo_op(t: &[u8], memo: &mut Memo) -> (Option<Arc<str>>, Option<u32>, bool) {
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
fn attr_string<'t>(t: &'t [u8], prefix: &[u8]) -> Option<&'t [u8]> {
    let f = if prefix == b"custom_call_target=\"" {
        crate::finder!(b"custom_call_target=\"")
    } else {
        crate::finder!(b"call_target_name = \"")
    };
    let p = f.find(t)? + prefix.len();
    let e = string_end(t, p - 1)?;
    Some(&t[p..e - 1])
}

/// The op of an MLIR line: `%r = op`, `%r = "op"(...)` or a line starting with the op (`from`: just past
/// the results' `=`, 0 when it names none); a custom call with its target.
fn mlir_op(t: &[u8], from: usize) -> Option<(&[u8], Option<&[u8]>)> {
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
fn loc_tail(t: &[u8]) -> Option<usize> {
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

fn strip_loc(t: &[u8]) -> &[u8] {
    match loc_tail(t) {
        Some(s) => &t[..s],
        None => t,
    }
}

fn some_shapes(v: Vec<Shape>) -> Option<Shapes> {
    if v.is_empty() {
        None
    } else {
        Some(Arc::new(v))
    }
}

/// The result types of a type list printed without `->`: the last `count`, as `stablehlo.select`
/// prints its predicate's type before its result's (`: tensor<4xi1>, tensor<4xf32>`); all of them when
/// the line names no results or as many as it lists.
fn last_types(all: Shapes, count: usize) -> Shapes {
    if count == 0 || count >= all.len() {
        return all;
    }
    Arc::new(all[all.len() - count..].to_vec())
}

fn first_shape(v: Vec<Shape>) -> Option<Shapes> {
    some_shapes(v.into_iter().take(1).collect())
}

fn looks_textual(data: &[u8]) -> bool {
    if data.is_empty() {
        return true;
    }
    let s = lstrip_len(data);
    data.get(s) == Some(&b'{') && data.iter().all(|&b| b >= 0x20 || matches!(b, 0x09 | 0x0a | 0x0d))
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

/// `^\s*module\b`.
fn mlir_module(t: &[u8]) -> bool {
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

struct Pending {
    indent: usize,
    lineno: u64,
    ins: Vec<Site>,
    outs: Vec<Site>,
}

/// Stateful per file: remembers open manual computations until their closing line.
pub struct Extractor {
    needles: &'static Needles,
    pending: Vec<Pending>,
    /// Leave each site's op, param and flags to `complete` (see `Site::context`).
    lazy: bool,
    /// Lent to each line being scanned (a box moves without building an empty memo in its place).
    memo: Option<Box<Memo>>,
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
        Extractor { needles: Needles::shared(), pending: Vec::new(), lazy: false, memo: None }
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

    /// A string value whose closing quote is missing (its opening quote is at `a - 1`): unfinished, of the
    /// kind its key and first bytes say; nothing when they name no value the scan reads.
    fn unfinished_string(&self, ln: &mut Line, key: Cow<'static, str>, a: usize, c: Ctx, out: &mut Vec<Site>) -> usize {
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

    #[allow(clippy::too_many_arguments)]
    fn string_value(
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

    /// `{mesh = #sdy.mesh<...>, other = #sdy.mesh<...>}`: one `SdyMesh` site per entry.
    #[allow(clippy::too_many_arguments)]
    fn mesh_dict(
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
            let Some(end) = match_close(data, m2 + 9) else {
                // an entry whose `<` does not close inside the dict: unfinished, the dict's rest its text
                let nm = symbol(strip_quotes(&data[name.0..name.1]));
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
            let nm = symbol(strip_quotes(&data[name.0..name.1]));
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
        let closes_later = rstrip(t).ends_with(b"{");
        if closes_later {
            complete_on(ln, &mut site);
            site.own(t);
        }
        if !closes_later {
            site.shapes = c.shapes;
            out.push(site);
            return end;
        }
        let indent = lstrip_len(t);
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

/// The kind of value a string under `key` holds, from its first bytes `text` as written (which may be cut
/// short, even inside the prefix): None when it holds none the scan reads (as `string_value` decides).
fn string_kind(key: &str, text: &[u8]) -> Option<SiteKind> {
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
fn out_sharding_mesh(t: &[u8], from: usize) -> Option<&[u8]> {
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
fn generic_mesh_name(t: &[u8]) -> Option<&[u8]> {
    if !t[lstrip_len(t)..].starts_with(b"\"sdy.mesh\"(") {
        return None;
    }
    let p = memmem::find(t, b"sym_name = \"")? + 12;
    let q = memchr::memchr(b'"', &t[p..])?;
    Some(&t[p..p + q])
}

/// `sdy\.mesh\s+@([\w$.\-]+|"(?:[^"\\]|\\.)*")` searched in `t`: the name.
fn mesh_decl_name(t: &[u8]) -> Option<&[u8]> {
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

/// The function argument or result an attribute at `pos` of a signature belongs to: its name, and
/// where the text holding its tensor type starts (it ends at `pos`).
fn func_context(sig: &Signature, t: &[u8], pos: usize) -> Option<(Name, usize)> {
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

/// The keyword match at `s`, for tests.
pub fn keyword_at(t: &[u8], s: usize) -> Option<Match> {
    match_at(t, s)
}

#[cfg(test)]
mod tests {
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
