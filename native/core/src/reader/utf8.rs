//! Bytes no compiler reads outside a `//` comment: a sequence that is not UTF-8, or a NUL. MLIR and HLO
//! text is UTF-8 without NUL except in a comment, so no compiler reads such a line; a byte inserted into a
//! keyword would otherwise hide its value.

use crate::extract::{LineText, Raw, Site, SiteKind};
use crate::strings::{count_nl, rstrip, PLAIN};

/// A site's flag: the site is a byte no compiler reads (see `not_utf8_site`).
pub const FLAG_NOT_UTF8: u32 = 16;

/// Where each unreadable byte (not UTF-8, or NUL) starts in `text` (complete lines, so no sequence is
/// split at its end), outside a `//` comment, the first one of each line: its offset. Costs one
/// validation pass and one NUL search (each byte is validated once, however many NULs come before an
/// invalid byte); only an unreadable byte looks at its line.
pub fn invalid_outside_comments(text: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    let mut invalid = first_invalid(text, 0);
    loop {
        if invalid.is_some_and(|i| i < from) {
            invalid = first_invalid(text, from); // (up to the last one found, the text is known valid)
        }
        let nul = memchr::memchr(0, &text[from..invalid.unwrap_or(text.len())]).map(|i| from + i);
        let Some(at) = nul.or(invalid) else { break };
        let line_start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
        if memchr::memmem::find(&text[line_start..at], b"//").is_none() {
            out.push(at);
        }
        from = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i + 1);
    }
    out
}

/// `at`, or where the character `text[at]` continues starts (up to 3 bytes back, never to 0): a cut
/// there splits no character, so each side reads as UTF-8 as the whole does.
pub fn char_start(text: &[u8], at: usize) -> usize {
    let mut p = at;
    while p > 1 && at - p < 3 && text.get(p).is_some_and(|&b| b & 0xC0 == 0x80) && text[p - 1] >= 0x80 {
        p -= 1;
    }
    p
}

/// The first byte at or after `from` (a line's start) that is not UTF-8.
fn first_invalid(text: &[u8], from: usize) -> Option<usize> {
    std::str::from_utf8(&text[from..]).err().map(|e| from + e.valid_up_to())
}

/// The site of the byte that is not UTF-8 at `text[at]`: to its line's end, flagged `FLAG_NOT_UTF8`.
/// `text` is at file offset `off`, starts on line `lineno`, and its first line at column `col_base + 1`.
pub fn not_utf8_site(text: &[u8], at: usize, (off, lineno, col_base): (u64, u64, u64)) -> Site {
    let line_start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
    // a NUL is the site alone (a zero-filled tail is one long run); a byte that is not UTF-8, to the line's end
    let end = if text[at] == 0 { at + 1 } else { at + rstrip(&text[at..line_end(text, at)]).len().max(1) };
    let line = lineno + count_nl(&text[..line_start]);
    let col = if line_start == 0 { col_base + at as u64 + 1 } else { (at - line_start) as u64 + 1 };
    let end_col = col + (end - at) as u64;
    Site {
        kind: SiteKind::Hlo,
        site: "text".into(),
        line,
        col,
        end_line: line,
        end_col,
        start: off + at as u64,
        end: off + end as u64,
        raw: Raw::At(at, end),
        text: None,
        data: None,
        encoding: PLAIN,
        value: None,
        shapes: None,
        target: None,
        lt: LineText::At(at),
        op: None,
        param: None,
        flags: FLAG_NOT_UTF8,
        context: None,
    }
}

/// The end of the line holding `text[at]`, without its line break (`\n` or `\r\n`), as the extractor
/// reads a line: the site's line text is `text[..line_end(text, at)]`'s last line.
pub fn line_end(text: &[u8], at: usize) -> usize {
    let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
    if end > at + 1 && text[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

#[cfg(test)]
mod tests {
    use super::invalid_outside_comments;

    #[test]
    fn valid_text_has_none() {
        assert!(invalid_outside_comments("a = \"caf\u{e9}\"\n".as_bytes()).is_empty());
    }

    #[test]
    fn a_comment_may_hold_any_byte() {
        assert!(invalid_outside_comments(b"x = 1 // caf\xe9\n// \xff\xfe\n").is_empty());
    }

    #[test]
    fn one_per_line_outside_comments() {
        let text = b"sh\xffarding={replicated} \xfe\nok\n%x = 1 // \xff\nmesh\xc3";
        assert_eq!(invalid_outside_comments(text), vec![2, 44]);
    }

    #[test]
    fn nuls_and_invalid_bytes_each_line_s_first() {
        assert_eq!(invalid_outside_comments(b"a\0\nb\0\nc\xff\0\n// \0\n\0"), vec![1, 4, 7, 15]);
    }

    #[test]
    fn a_lone_continuation_byte_and_a_cut_sequence() {
        assert_eq!(invalid_outside_comments(b"a\x80\nb\xe2\x82\n"), vec![1, 4]);
    }
}
