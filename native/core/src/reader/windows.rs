//! Windows: where the scan of a line longer than its window (`Options::max_line`) cuts the window, so
//! that each value is read whole, in one window, with the bytes before it as the whole line has them.
//! A window is cut `overlap` bytes before its end, unless a value spans that place: then past the
//! value's end, when the window holds it whole, or just before its keyword, when it does not (the next
//! window starts there and reads it whole). A value that starts a window and still runs past its end
//! is longer than any window: followed to its end (`Runaway`), it is either a value the scan cannot
//! read, when it closes on its line (the scan says so: `Engine::too_long`, never drops it unsaid), or
//! text, when its line ends first (as a scan of the whole line passes it over).

use crate::keywords::{Needles, Searcher};
use crate::strings::{is_word, match_close, rstrip, string_end};

/// Where a window is cut, and whether a value too long for any window starts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// The window's bytes before this are done with: the sites starting there are reported, and the
    /// next window starts here.
    pub at: usize,
    /// The window's first value runs past its end (no window holds it): its opening bracket or quote.
    pub too_long: Option<usize>,
}

/// Where the value of a keyword that ends at `end` ends (`buf[end - 1]` is its opening bracket or
/// quote), or None when it runs past the end of `buf`; `end` when no bracket opens one.
fn value_end(buf: &[u8], end: usize) -> Option<usize> {
    let open = end.checked_sub(1)?;
    match buf[open] {
        b'"' => string_end(buf, open),
        b'{' | b'[' | b'<' | b'(' => match_close(buf, open).or_else(|| unclosable(buf, open).then_some(end)),
        _ => Some(end),
    }
}

/// Whether the bracket at `open` can never open a value (a `<=`), so that it does not run on.
fn unclosable(buf: &[u8], open: usize) -> bool {
    buf[open] == b'<' && buf.get(open + 1) == Some(&b'=')
}

/// Where the attribute a value at `at` is assigned to begins (`key = ` before it, as `extract`'s
/// `attr_site` reads it, in the 64 bytes before), else `at`: a window that starts there reads the value
/// as the whole line does.
fn attribute_start(buf: &[u8], at: usize) -> usize {
    let lo = at.saturating_sub(64);
    let w = &buf[lo..at];
    let e = rstrip(w).len();
    if e == 0 || w[e - 1] != b'=' {
        return at;
    }
    let k = rstrip(&w[..e - 1]).len();
    let a = w[..k].iter().rposition(|&b| !(is_word(b) || b == b'.')).map_or(0, |p| p + 1);
    if a < k {
        lo + a
    } else {
        at
    }
}

/// The cut of the window `buf` (`len - overlap` at the latest, `cut`), given the spans of the sites
/// the extractor found in it (window offsets, in order of their start).
pub fn window_cut(buf: &[u8], cut: usize, sites: &[(usize, usize)]) -> Cut {
    let mut searcher = Searcher::new(Needles::shared());
    let (mut pos, mut at, mut next_site) = (0, cut, 0);
    while let Some(m) = searcher.search(buf, pos) {
        if m.start >= cut.max(at) {
            // (nor between a keyword after the cut and the attribute it is assigned to)
            let from = attribute_start(buf, m.start);
            if from < at && from > 0 {
                at = from;
            }
            break;
        }
        while next_site < sites.len() && sites[next_site].1 <= m.start {
            next_site += 1;
        }
        let made = sites[next_site..].iter().take_while(|s| s.0 <= m.end).map(|s| s.1).max();
        let end = match value_end(buf, m.end) {
            Some(e) => e.max(made.unwrap_or(e)),
            None => {
                let from = attribute_start(buf, m.start);
                return if from == 0 {
                    Cut { at: cut, too_long: Some(m.end - 1) }
                } else {
                    Cut { at: from.min(cut), too_long: None }
                };
            }
        };
        at = at.max(end);
        pos = end.max(m.start + 1);
    }
    Cut { at, too_long: None }
}

/// A value longer than any window, read on to its end as `match_close` (or `string_end`) reads it.
pub struct Runaway {
    open: u8,
    close: u8,
    depth: usize,
    string: bool,
    escaped: bool,
    dash: bool,
    /// The file offset it has been read up to.
    pub read_to: u64,
}

impl Runaway {
    /// The value opened by `open` (a bracket or a quote), read up to file offset `read_to`.
    pub fn new(open: u8, read_to: u64) -> Self {
        let close = match open {
            b'{' => b'}',
            b'[' => b']',
            b'<' => b'>',
            b'(' => b')',
            _ => b'"',
        };
        Runaway { open, close, depth: 1, string: open == b'"', escaped: false, dash: false, read_to }
    }

    /// Reads on through `bytes` (the next of its line): Some(true) when the value closes in them,
    /// Some(false) when its line ends first, None when it runs on.
    pub fn read(&mut self, bytes: &[u8]) -> Option<bool> {
        self.read_to += bytes.len() as u64;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                return Some(false);
            }
            if self.string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.string = false;
                    if self.open == b'"' {
                        return Some(true);
                    }
                }
                continue;
            }
            let after_dash = std::mem::replace(&mut self.dash, b == b'-');
            if b == b'"' {
                self.string = true;
            } else if b == self.open && !(b == b'<' && bytes.get(i + 1) == Some(&b'=')) {
                self.depth += 1;
            } else if b == self.close && !(b == b'>' && after_dash) {
                self.depth -= 1;
                if self.depth == 0 {
                    return Some(true);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runaway_value_closes_or_its_line_ends() {
        let mut r = Runaway::new(b'{', 0);
        assert_eq!(r.read(b"devices=[2]0,1,\"}\\\"}\" -> {x}"), None);
        assert_eq!(r.read(b" }"), Some(true));
        let mut junk = Runaway::new(b'<', 0);
        assert_eq!(junk.read(b"<= a -> b"), None);
        assert_eq!(junk.read(b" c\nd>"), Some(false));
        assert_eq!(Runaway::new(b'"', 0).read(b"a\\\"b\""), Some(true));
    }

    #[test]
    fn a_value_across_the_cut_is_read_whole() {
        let buf = b"xxxx sharding={devices=[2]0,1} yyyy";
        // (the value spans byte 20: the cut goes past it)
        assert_eq!(window_cut(buf, 20, &[(13, 30)]), Cut { at: 30, too_long: None });
        // (nothing spans byte 3)
        assert_eq!(window_cut(buf, 3, &[(13, 30)]), Cut { at: 3, too_long: None });
    }

    #[test]
    fn a_value_running_past_the_window_starts_the_next() {
        let buf = b"xxxx sharding={devices=[2]0,1,0,1,0";
        assert_eq!(window_cut(buf, 20, &[]), Cut { at: 5, too_long: None });
        assert_eq!(window_cut(&buf[5..], 15, &[]), Cut { at: 15, too_long: Some(9) });
    }

    #[test]
    fn a_value_running_past_the_window_is_read_from_its_attribute() {
        let buf = b"xx {sdy.sharding = #sdy.sharding<@mesh, [{";
        assert_eq!(window_cut(buf, 30, &[]), Cut { at: 4, too_long: None });
        assert_eq!(window_cut(&buf[4..], 26, &[]), Cut { at: 26, too_long: Some(28) });
    }

    #[test]
    fn a_keyword_whose_value_closes_is_passed() {
        let buf = b"a sdy.mesh @m = <[\"a\"=2]> b sharding=<= c";
        assert_eq!(window_cut(buf, 20, &[(16, 25)]), Cut { at: 25, too_long: None });
        // (a `<=` opens nothing: the cut passes the keyword, whose value never runs on)
        assert_eq!(window_cut(buf, 30, &[(16, 25)]), Cut { at: 38, too_long: None });
    }
}
