//! One site as the extractor reports it: its kind, key, span, decoded text, the value and tensor types
//! it annotates, and where its op comes from; the names and keys sites share.

use super::*;

/// A site's raw bytes: a span of the text it was scanned in, or (for a site reported at a later line)
/// the bytes themselves.
#[derive(Clone, Debug, PartialEq)]
pub enum Raw {
    At(usize, usize),
    Owned(Vec<u8>),
}

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

/// The symbol `@b` names (a mesh).
pub(super) fn symbol(b: &[u8]) -> Name {
    compact_str::format_compact!("@{}", String::from_utf8_lossy(b))
}

pub(super) fn lossy(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

pub(super) fn strip_quotes(b: &[u8]) -> &[u8] {
    let a = b.iter().position(|&c| c != b'"').unwrap_or(b.len());
    let e = b.iter().rposition(|&c| c != b'"').map_or(a, |e| e + 1);
    &b[a..e.max(a)]
}
