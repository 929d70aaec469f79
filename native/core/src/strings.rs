//! String literals in dumps: MLIR's escapes (`\22`, `\XX`) and C's (absl::CEscape), the layered
//! decoding of values escaped twice (legacy dumps), and the literal / bracket ends the extractor cuts
//! values at. Bytes in, bytes out: a dump need not be UTF-8.

/// How a value sits in the source (`shardconv.text.layered.StringEncoding`).
#[derive(Clone, Copy, Debug)]
pub struct Encoding {
    pub outer: &'static str,
    pub quote_style: &'static str,
    pub inner: &'static str,
    pub inner_quoted: bool,
}

/// Every value is interned with its encoding: its words are the same few literals, compared by address
/// first and by content only when the addresses differ.
fn same_word(a: &'static str, b: &'static str) -> bool {
    std::ptr::eq(a, b) || a == b
}

impl PartialEq for Encoding {
    fn eq(&self, o: &Self) -> bool {
        self.inner_quoted == o.inner_quoted
            && same_word(self.outer, o.outer)
            && same_word(self.quote_style, o.quote_style)
            && same_word(self.inner, o.inner)
    }
}

impl Eq for Encoding {}

impl std::hash::Hash for Encoding {
    /// The words' lengths tell the few literals apart, and equal words have equal lengths.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_usize(self.outer.len() << 16 | self.quote_style.len() << 8 | self.inner.len());
        h.write_u8(u8::from(self.inner_quoted));
    }
}

pub const PLAIN: Encoding = Encoding { outer: "none", quote_style: "hex", inner: "none", inner_quoted: false };
pub const WHOLE: Encoding = Encoding { outer: "whole", quote_style: "hex", inner: "none", inner_quoted: false };

/// A malformed escape: the value is passed over.
#[derive(Debug, PartialEq, Eq)]
pub struct EscapeError;

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn hex_val(c: u8) -> u32 {
    (c as char).to_digit(16).unwrap_or(0)
}

/// `raw` with each backslash escape replaced by the byte `escape(raw, j)` reads at the backslash `j`
/// (which also gives where the text resumes); a trailing lone backslash is an error.
fn unescape_each(
    raw: &[u8],
    escape: impl Fn(&[u8], usize) -> Result<(u8, usize), EscapeError>,
) -> Result<Vec<u8>, EscapeError> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'\\', &raw[i..]) {
        let j = i + off;
        if j + 1 >= raw.len() {
            return Err(EscapeError);
        }
        out.extend_from_slice(&raw[i..j]);
        let (b, next) = escape(raw, j)?;
        out.push(b);
        i = next;
    }
    out.extend_from_slice(&raw[i..]);
    Ok(out)
}

/// MLIR string body -> bytes (`\22`, `\"`, `\\`, `\n`, `\t`, `\XX`).
pub fn unescape_mlir(raw: &[u8]) -> Result<Vec<u8>, EscapeError> {
    unescape_each(raw, |raw, j| {
        let c = raw[j + 1];
        if j + 2 < raw.len() && is_hex(c) && is_hex(raw[j + 2]) {
            return Ok(((hex_val(c) * 16 + hex_val(raw[j + 2])) as u8, j + 3));
        }
        let b = match c {
            b'\\' => b'\\',
            b'"' => b'"',
            b'n' => b'\n',
            b't' => b'\t',
            _ => return Err(EscapeError),
        };
        Ok((b, j + 2))
    })
}

/// C-escaped body -> bytes: simple escapes, up to 3 octal digits, `\xH...` (every hex digit).
pub fn unescape_c(raw: &[u8]) -> Result<Vec<u8>, EscapeError> {
    unescape_each(raw, |raw, j| {
        let n = raw.len();
        let c = raw[j + 1];
        let simple = match c {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'\\' => Some(b'\\'),
            b'\'' => Some(b'\''),
            b'"' => Some(b'"'),
            b'?' => Some(b'?'),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'v' => Some(0x0b),
            _ => None,
        };
        if let Some(s) = simple {
            return Ok((s, j + 2));
        }
        let (radix, first, most) = match c {
            b'0'..=b'7' => (8, j + 1, 3),
            b'x' => (16, j + 2, usize::MAX),
            _ => return Err(EscapeError),
        };
        let mut k = first;
        let mut v: u32 = 0;
        while k < n && k - first < most && (raw[k] as char).is_digit(radix) {
            v = (v * radix + hex_val(raw[k])) & 0xff;
            k += 1;
        }
        if k == first {
            return Err(EscapeError);
        }
        Ok((v as u8, k))
    })
}

const UPPER_HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Bytes -> MLIR string body: `"` as `\22` (or `\"` with `backslash`), `\` as `\\`, others `\XX`.
pub fn escape_mlir(data: &[u8], backslash: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    for &b in data {
        match b {
            b'"' if backslash => out.extend_from_slice(b"\\\""),
            b'"' => out.extend_from_slice(b"\\22"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x20..=0x7e => out.push(b),
            _ => {
                out.push(b'\\');
                out.push(UPPER_HEX[(b >> 4) as usize]);
                out.push(UPPER_HEX[(b & 15) as usize]);
            }
        }
    }
    out
}

/// Bytes -> absl::CEscape body.
pub fn escape_c(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    for &b in data {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\'' => out.extend_from_slice(b"\\'"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x20..=0x7e => out.push(b),
            _ => {
                out.push(b'\\');
                out.push(b'0' + (b >> 6));
                out.push(b'0' + ((b >> 3) & 7));
                out.push(b'0' + (b & 7));
            }
        }
    }
    out
}

fn unescape(kind: &str, raw: &[u8]) -> Result<Vec<u8>, EscapeError> {
    match kind {
        "mlir" => unescape_mlir(raw),
        "c" => unescape_c(raw),
        _ => Ok(raw.to_vec()),
    }
}

fn escape_as(kind: &str, data: &[u8], quote_style: &str) -> Vec<u8> {
    match kind {
        "mlir" => escape_mlir(data, quote_style == "backslash"),
        "c" => escape_c(data),
        _ => data.to_vec(),
    }
}

pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

fn has_backslash_quote(raw: &[u8]) -> bool {
    raw.windows(2).any(|w| w == b"\\\"")
}

fn has_hex_quote(raw: &[u8]) -> bool {
    raw.windows(3).any(|w| w == b"\\22")
}

fn quoted(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"'
}

fn outer_name(outer: &str) -> &'static str {
    match outer {
        "mlir" => "mlir",
        "c" => "c",
        _ => "none",
    }
}

/// Decode a string body, undoing a second (legacy) level when the result is still escaped.
pub fn decode_layered(raw: &[u8], outer: &str) -> Result<(Vec<u8>, Encoding), EscapeError> {
    let outer = outer_name(outer);
    let style = if has_backslash_quote(raw) && !has_hex_quote(raw) { "backslash" } else { "hex" };
    let once = unescape(outer, raw)?;
    if outer == "none" || (!once.contains(&b'\\') && !quoted(&once)) {
        return Ok((once, Encoding { outer, quote_style: style, inner: "none", inner_quoted: false }));
    }
    let q = quoted(&once);
    let mut body: Vec<u8> = if q { once[1..once.len() - 1].to_vec() } else { once };
    let mut inner = "none";
    let legacy = body.windows(2).any(|w| w[0] == b'\\' && matches!(w[1], b'"' | b'\\')) || mlir_legacy(&body);
    if legacy {
        inner = if mlir_legacy(&body) { "mlir" } else { "c" };
        body = unescape(inner, &body)?;
    }
    Ok((body, Encoding { outer, quote_style: style, inner, inner_quoted: q }))
}

fn mlir_legacy(body: &[u8]) -> bool {
    body.windows(3).any(|w| w[0] == b'\\' && matches!(&w[1..], b"22" | b"5C" | b"5c"))
}

/// Inverse of `decode_layered`: the raw bytes to put back between the quotes.
pub fn encode_layered(data: &[u8], enc: &Encoding) -> Vec<u8> {
    let style = if enc.inner == "mlir" { "hex" } else { enc.quote_style };
    let mut body = escape_as(enc.inner, data, style);
    if enc.inner_quoted {
        let mut q = Vec::with_capacity(body.len() + 2);
        q.push(b'"');
        q.extend_from_slice(&body);
        q.push(b'"');
        body = q;
    }
    escape_as(enc.outer, &body, enc.quote_style)
}

/// `text[i]` is `"`: index just past the closing quote (`\` escapes the next byte), or None.
pub fn string_end(text: &[u8], i: usize) -> Option<usize> {
    let n = text.len();
    let mut j = i + 1;
    while j < n {
        match memchr::memchr2(b'"', b'\\', &text[j..]) {
            None => return None,
            Some(off) => {
                let k = j + off;
                if text[k] == b'"' {
                    return Some(k + 1);
                }
                if k + 1 >= n {
                    return None;
                }
                j = k + 2;
            }
        }
    }
    None
}

/// The first quote, dash, `o` or `c` at or after `j`: a byte loop over the next few bytes (a value's
/// next bracket is near), the library's searches past them.
fn next_bracket_byte(text: &[u8], j: usize, o: u8, c: u8) -> Option<usize> {
    let near = &text[j..text.len().min(j + 64)];
    // (one table test a byte; `[` and `{` share a class, so the caller passes over the other pair's)
    let mask = QUOTE_DASH | CLASS[o as usize] & !(WS | WORD | NAME | SSA);
    if let Some(k) = near.iter().position(|&b| CLASS[b as usize] & mask != 0) {
        return Some(j + k);
    }
    let from = j + near.len();
    let rest = &text[from..];
    let a = memchr::memchr3(b'"', b'-', o, rest);
    let b = memchr::memchr(c, &rest[..a.unwrap_or(rest.len())]);
    b.or(a).map(|k| from + k)
}

/// Index just past the bracket closing `text[open]` (only that bracket kind counted; string literals
/// and `->` skipped; for `<`, `<=` is no bracket), or None when it does not close.
pub fn match_close(text: &[u8], open: usize) -> Option<usize> {
    let n = text.len();
    if text.get(open + 1) == Some(&b'=') && text[open] == b'<' {
        return None;
    }
    let o = text[open];
    let c = match o {
        b'(' => b')',
        b'[' => b']',
        b'{' => b'}',
        b'<' => b'>',
        _ => return None,
    };
    let mut depth = 1usize;
    let mut j = open + 1;
    while j < n {
        let k = next_bracket_byte(text, j, o, c)?;
        let b = text[k];
        if b == b'"' {
            j = string_end(text, k)?;
        } else if b == b'-' {
            j = if text.get(k + 1) == Some(&b'>') { k + 2 } else { k + 1 };
        } else if b == o {
            if o == b'<' && text.get(k + 1) == Some(&b'=') {
                j = k + 2;
            } else {
                depth += 1;
                j = k + 1;
            }
        } else if b == c {
            depth -= 1;
            j = k + 1;
            if depth == 0 {
                return Some(j);
            }
        } else {
            j = k + 1; // the other pair of `[` and `{`
        }
    }
    None
}

/// Python's `str.isspace` for one code point.
fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\x0b'
            | '\x0c'
            | '\r'
            | '\x1c'
            | '\x1d'
            | '\x1e'
            | '\x1f'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

/// `data.decode("utf-8", "surrogateescape").strip()` re-encoded: Unicode whitespace stripped at both
/// ends (undecodable bytes are never whitespace).
pub fn unicode_strip(data: &[u8]) -> &[u8] {
    // the common case: ASCII at both ends (Python's ASCII whitespace includes \x1c-\x1f)
    let py_ws = |b: u8| matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f | b' ');
    let a = data.iter().position(|&b| !py_ws(b)).unwrap_or(data.len());
    let e = data.iter().rposition(|&b| !py_ws(b)).map_or(a, |e| e + 1);
    if data.get(a).is_none_or(|&b| b < 0x80) && (e == 0 || data[e - 1] < 0x80) {
        return &data[a..e.max(a)];
    }
    unicode_strip_slow(data)
}

fn unicode_strip_slow(data: &[u8]) -> &[u8] {
    // Code points with their byte spans, decoded as Python does (invalid bytes one by one).
    let mut spans: Vec<(usize, usize, bool)> = Vec::new();
    let mut at = 0;
    for chunk in data.utf8_chunks() {
        for c in chunk.valid().chars() {
            let l = c.len_utf8();
            spans.push((at, at + l, is_unicode_space(c)));
            at += l;
        }
        for _ in chunk.invalid() {
            spans.push((at, at + 1, false));
            at += 1;
        }
    }
    let first = spans.iter().position(|s| !s.2);
    match first {
        None => &data[0..0],
        Some(f) => {
            let last = spans.iter().rposition(|s| !s.2).unwrap_or(f);
            &data[spans[f].0..spans[last].1]
        }
    }
}

/// ASCII whitespace as Python's bytes regexes and `bytes.strip` see it.
/// Each byte's classes (`WS`, `WORD`, `NAME`, `SSA`, and the brackets' for `match_close`), looked up
/// once: the name and blank runs test every byte they pass.
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            t[b] |= WS;
        }
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[b] |= WORD | NAME | SSA;
        }
        if matches!(c, b'$' | b'.' | b'-') {
            t[b] |= NAME | SSA;
        }
        if c == b'#' {
            t[b] |= SSA;
        }
        t[b] |= match c {
            b'"' | b'-' => QUOTE_DASH,
            b'<' | b'>' => ANGLE,
            b'(' | b')' => PAREN,
            b'[' | b']' | b'{' | b'}' => SQUARE_CURLY,
            _ => 0,
        };
        b += 1;
    }
    t
};
const WS: u8 = 1;
const WORD: u8 = 2;
const NAME: u8 = 4; // a word byte, `$`, `.` or `-`
const SSA: u8 = 8; // a name byte or `#`
const QUOTE_DASH: u8 = 16; // the bytes a bracket's match steps over: a string's quote, `->`'s dash
const ANGLE: u8 = 32;
const PAREN: u8 = 64;
const SQUARE_CURLY: u8 = 128;

pub fn is_ws(b: u8) -> bool {
    CLASS[b as usize] & WS != 0
}

pub fn is_word(b: u8) -> bool {
    CLASS[b as usize] & WORD != 0
}

/// A byte of a symbol or value name: a word byte, `$`, `.` or `-`.
pub fn name_char(b: u8) -> bool {
    CLASS[b as usize] & NAME != 0
}

/// A byte of an SSA name: a name byte or `#`.
pub fn ssa_char(b: u8) -> bool {
    CLASS[b as usize] & SSA != 0
}

/// The line breaks in `b`. A few bytes (the gap between two candidate lines, often just the one break)
/// are counted without the vector routine's set-up.
pub fn count_nl(b: &[u8]) -> u64 {
    if b.len() <= 16 {
        return b.iter().filter(|&&c| c == b'\n').count() as u64;
    }
    memchr::memchr_iter(b'\n', b).count() as u64
}

pub fn rstrip(t: &[u8]) -> &[u8] {
    let mut e = t.len();
    while e > 0 && is_ws(t[e - 1]) {
        e -= 1;
    }
    &t[..e]
}

pub fn lstrip_len(t: &[u8]) -> usize {
    t.iter().position(|&b| !is_ws(b)).unwrap_or(t.len())
}

/// What the bytes of a line before a text leave open, as a read from the line's start sees them: a `//`
/// comment line, a string (`"`, with `\` escapes in it) and an escape. A window of a long line starts in
/// its line's state, and so reads each value as the whole line does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineStart {
    pub comment: bool,
    pub quoted: bool,
    pub escaped: bool,
}

impl LineStart {
    /// The state at the start of `line` (a line from its first byte).
    pub fn of_line(line: &[u8]) -> Self {
        LineStart { comment: line[lstrip_len(line)..].starts_with(b"//"), ..LineStart::default() }
    }

    /// The state after `bytes` follow: linear, a byte search for the quotes and backslashes alone.
    pub fn after(self, bytes: &[u8]) -> Self {
        if bytes.is_empty() {
            return self;
        }
        let mut quoted = self.quoted;
        let mut next = usize::from(self.escaped); // the first byte no escape takes
        for i in memchr::memchr2_iter(b'"', b'\\', bytes) {
            if i < next {
                continue;
            }
            if bytes[i] == b'"' {
                quoted = !quoted;
            } else if quoted {
                next = i + 2;
            }
        }
        LineStart { comment: self.comment, quoted, escaped: next > bytes.len() }
    }

    /// Whether a value at `text[at]` is in a comment line or inside a string literal: no value, only
    /// text. `start`: what the line's bytes before `text` leave open (None: `text` starts its line).
    pub fn hides(start: Option<Self>, text: &[u8], at: usize) -> bool {
        let s = start.unwrap_or_else(|| Self::of_line(text));
        s.comment || s.after(&text[..at]).quoted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte at a time, as a read of the line from its start sees it.
    fn read_each(mut s: LineStart, bytes: &[u8]) -> LineStart {
        for &b in bytes {
            if s.escaped {
                s.escaped = false;
            } else if s.quoted && b == b'\\' {
                s.escaped = true;
            } else if b == b'"' {
                s.quoted = !s.quoted;
            }
        }
        s
    }

    #[test]
    fn a_line_s_state_after_its_bytes_is_the_same_wherever_they_are_cut() {
        let line = br#"  %x = "a\"b\\" c" "\" d \"e" "f\"#;
        let start = LineStart::of_line(line);
        for cut in 0..=line.len() {
            let (a, b) = line.split_at(cut);
            assert_eq!(start.after(a), read_each(start, a), "{cut}");
            assert_eq!(start.after(a).after(b), start.after(line), "{cut}");
        }
        assert!(start.after(line).quoted && start.after(line).escaped);
        let (open, closed) = (b"{\"a\": \"x\\\" ", b"{\"a\": \"x\\\"\" ");
        assert!(LineStart::hides(None, open, open.len()) && !LineStart::hides(None, closed, closed.len()));
        assert!(LineStart::hides(None, b"  // x", 4) && !LineStart::hides(None, b"x // y", 5));
        assert!(LineStart::hides(Some(start.after(b"\"")), b"x", 1));
    }

    #[test]
    fn mlir_escapes_round_trip() {
        assert_eq!(unescape_mlir(b"a\\22b\\\\c\\n").unwrap(), b"a\"b\\c\n");
        assert_eq!(escape_mlir(b"a\"b\\\x01", false), b"a\\22b\\\\\\01");
        assert_eq!(escape_mlir(b"\"", true), b"\\\"");
        assert!(unescape_mlir(b"x\\").is_err());
        assert!(unescape_mlir(b"\\q").is_err());
    }

    #[test]
    fn c_escapes() {
        assert_eq!(unescape_c(b"\\101\\x41\\x141\\n").unwrap(), b"AAA\n");
        assert_eq!(escape_c(b"\x01\"'"), b"\\001\\\"\\'");
        assert!(unescape_c(b"\\x").is_err());
        assert_eq!(unescape_c(b"\\1012\\0\\377").unwrap(), b"A2\0\xff"); // at most 3 octal digits
        assert!(unescape_c(b"\\8").is_err());
    }

    #[test]
    fn layered() {
        let (d, e) = decode_layered(b"{replicated}", "mlir").unwrap();
        assert_eq!(d, b"{replicated}");
        assert_eq!(e.outer, "mlir");
        let raw = b"\\22#sdy.sharding<@mesh, [{\\\\22a\\\\22}]>\\22";
        let (d, e) = decode_layered(raw, "mlir").unwrap();
        assert_eq!(d, b"#sdy.sharding<@mesh, [{\"a\"}]>");
        assert!(e.inner_quoted);
        assert_eq!(e.inner, "mlir");
        assert_eq!(encode_layered(&d, &e), raw.to_vec());
    }

    #[test]
    fn brackets() {
        assert_eq!(match_close(b"<a<b>c>d", 0), Some(7));
        assert_eq!(match_close(b"<a->b>", 0), Some(6));
        assert_eq!(match_close(b"{\"}\"}", 0), Some(5));
        assert_eq!(match_close(b"<=", 0), None);
        assert_eq!(match_close(b"{a", 0), None);
        // the other bracket kinds are passed over, inside the first 64 bytes and past them
        assert_eq!(match_close(b"[{\"a\"}, {\"b]\"}]x", 0), Some(15));
        assert_eq!(match_close(b"{[}]]}", 0), Some(3));
        assert_eq!(match_close(b"(a[b](c)<d>)", 0), Some(12));
        let long = [&b"<"[..], &[b'{'; 70], &[b'}'; 70], b"[]<x>(->)>tail"].concat();
        assert_eq!(match_close(&long, 0), Some(long.len() - 4));
        assert_eq!(string_end(b"\"a\\\"b\"", 0), Some(6));
    }

    #[test]
    fn strip() {
        assert_eq!(unicode_strip(b" \xc2\xa0x \x1c"), b"x");
        assert_eq!(unicode_strip(b"\xff "), b"\xff");
    }
}
