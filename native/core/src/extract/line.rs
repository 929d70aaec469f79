//! One line being scanned: what the caller already knows of it, and the context its sites read (results,
//! signature, HLO instruction, op), each computed once, when a site first asks.

use super::*;

/// A site's op, param and flags, as read off its line.
pub(super) fn op_context(ln: &mut Line, op: OpFrom) -> (Option<Arc<str>>, Option<u32>, u32) {
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
pub(super) fn argument_at(skip: &[Skip], next: &mut usize, at: usize) -> Option<usize> {
    while skip.get(*next).is_some_and(|s| s.attr < at) {
        *next += 1;
    }
    skip.get(*next).filter(|s| s.attr == at).map(|_| *next)
}

/// Whether argument `k` is passed over: the first like it gave one site at its keyword (the sdy sharding
/// `argument_attr` read), which this one would give again. Taken, then: the scan goes on at its end.
pub(super) fn passed_over(skip: &mut [Skip], k: usize) -> Option<usize> {
    let (a, b) = skip[skip[k].first?].sites?;
    if b != a + 1 {
        return None;
    }
    skip[k].taken = true;
    Some(skip[k].end)
}

/// One line being scanned, with lazily computed context.
pub struct Line<'a> {
    pub(super) memo: Box<Memo>,
    pub(super) text: &'a [u8],
    pub(super) holds: Holds,
    pub(super) start: Option<LineStart>,
    pub(super) offset: u64,
    pub(super) lineno: u64,
    pub(super) col_base: u64,
    pub(super) hlo: Option<(Option<Span>, Option<Shapes>)>,
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
    pub(super) end: usize,
}

impl<'a> Line<'a> {
    pub(super) fn new(memo: Box<Memo>, text: &'a [u8], at: (u64, u64, u64), known: Known) -> Self {
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

    pub(super) fn position(&self, i: usize) -> (u64, u64) {
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
    pub(super) fn body(&mut self) -> (Option<Name>, Option<usize>, &'a [u8]) {
        let parts = self.parts();
        let first = parts.results.map(|(first, _)| first);
        (self.name(first), parts.colon, &self.text[..parts.end])
    }

    /// How many results the line's op names (0 for a line naming none).
    pub(super) fn result_count(&mut self) -> usize {
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

    pub(super) fn signature(&mut self) -> Option<&Signature> {
        if self.sig.is_none() {
            self.sig = Some(if self.holds.func { lex_signature(self.text) } else { None });
        }
        self.sig.as_ref().and_then(|s| s.as_ref())
    }

    pub(super) fn hlo_context(&mut self) -> (Option<Name>, Option<Shapes>) {
        if self.hlo.is_none() {
            self.hlo = Some(hlo_context(self.text, &mut self.memo));
        }
        let (name, shapes) = self.hlo.clone().unwrap_or((None, None));
        (self.name(name), shapes)
    }

    /// The name cut from the line at `span` (cut afresh for each site: most lines hold one).
    pub(super) fn name(&self, span: Option<Span>) -> Option<Name> {
        span.map(|(a, b)| name_of(&self.text[a..b]))
    }

    pub(super) fn hlo_op(&mut self) -> (Option<Arc<str>>, Option<u32>, bool) {
        if self.hlo_op.is_none() {
            self.hlo_op = Some(hlo_op(self.text, &mut self.memo));
        }
        self.hlo_op.clone().unwrap_or((None, None, false))
    }

    pub(super) fn mlir_op(&mut self) -> Option<Arc<str>> {
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
