//! Inline suppressions: `shardconv: ignore[rule, ...]` in a comment, found in the bytes as they are
//! read. A read is scanned up to its last line break or `TAIL` bytes before its end, whichever is later,
//! and the rest with the next read, so a marker cut between two reads is found whole.

use crate::strings::count_nl;
use memchr::memmem;

const TAIL: usize = 512;

/// (line, col, the text between the brackets, its line, col in line).
pub type Suppression = (u64, u64, Vec<u8>, Vec<u8>, u64);

/// The scanner counts no lines of its own: the engine counts the same bytes, and a marker's line is
/// counted from a place whose line the engine knows (`Anchor`), only when a marker is found.
#[derive(Default)]
pub struct Suppressions {
    pub found: Vec<Suppression>,
    pending: Vec<u8>,
    /// The input offset of the next scan's first byte (`pending`'s).
    offset: u64,
    col: u64,
    comment: bool,
}

/// A place whose line is known: the input offset of `buf[0]` and its line. `buf` ends where the bytes
/// read so far end, as the scanned bytes do.
pub struct Anchor<'a> {
    pub buf: &'a [u8],
    pub offset: u64,
    pub line: u64,
}

impl Anchor<'_> {
    /// The line of `scanned[at]`, `scanned` starting at input offset `from` and ending where `buf` does.
    fn line_of(&self, scanned: &[u8], from: u64, at: usize) -> u64 {
        let p = from + at as u64;
        if p >= self.offset {
            let rel = ((p - self.offset) as usize).min(self.buf.len());
            self.line + count_nl(&self.buf[..rel])
        } else {
            // the engine drained past `p` (a long line read in windows): count back to its buffer
            let back = ((self.offset - from) as usize).min(scanned.len());
            self.line.saturating_sub(count_nl(&scanned[at.min(back)..back]))
        }
    }
}

fn is_comment(head: &[u8]) -> bool {
    memmem::find(head, b"//").is_some() || memmem::find(head, b"/*").is_some()
}

/// `shardconv:[ \t]*ignore\[([^\]\n]{0,400})\]` at `p`: (rules span, end).
fn marker_at(buf: &[u8], p: usize) -> Option<((usize, usize), usize)> {
    let mut i = p + 10;
    while i < buf.len() && matches!(buf[i], b' ' | b'\t') {
        i += 1;
    }
    if !buf[i..].starts_with(b"ignore[") {
        return None;
    }
    let a = i + 7;
    let r = buf[a..].iter().take_while(|&&b| b != b']' && b != b'\n').count();
    if r <= 400 && buf.get(a + r) == Some(&b']') {
        Some(((a, a + r), a + r + 1))
    } else {
        None
    }
}

impl Suppressions {
    pub fn new() -> Self {
        Suppressions::default()
    }

    /// One read that landed in `anchor.buf` from `start` on (none: the end): when the bytes before it
    /// are still this scanner's pending tail, reads them in place, else after a copy of the tail.
    pub fn read_at(&mut self, start: usize, anchor: &Anchor) {
        let buf = anchor.buf;
        let last = start == buf.len();
        let p = self.pending.len();
        if p > 0 && start >= p && buf[start - p..start] == self.pending[..] {
            self.pending.clear();
            self.scan(&buf[start - p..], last, anchor);
        } else if p == 0 {
            self.scan(&buf[start..], last, anchor);
        } else {
            let mut b = std::mem::take(&mut self.pending);
            b.extend_from_slice(&buf[start..]);
            self.scan(&b, last, anchor);
        }
    }

    fn scan(&mut self, buf: &[u8], last: bool, anchor: &Anchor) {
        let n = buf.len();
        let last_nl = memchr::memrchr(b'\n', buf);
        let cut = if last { n } else { last_nl.map_or(0, |p| p + 1).max(n.saturating_sub(TAIL)) };
        if crate::finder!(b"shardconv:").find(buf).is_some() {
            let mut counted: Option<(usize, u64)> = None; // the last marker's place and line
            let mut pos = 0usize;
            while let Some(off) = crate::finder!(b"shardconv:").find(&buf[pos..]) {
                let p = pos + off;
                let Some(((ra, rb), end)) = marker_at(buf, p) else {
                    pos = p + 1;
                    continue;
                };
                pos = end;
                if p >= cut {
                    break;
                }
                let line = match counted {
                    Some((q, line)) => line + count_nl(&buf[q..p]),
                    None => anchor.line_of(buf, self.offset, p),
                };
                counted = Some((p, line));
                let at = p;
                let start = memchr::memrchr(b'\n', &buf[..at]).map_or(0, |q| q + 1);
                let head = &buf[start..at];
                if is_comment(head) || (start == 0 && self.comment) {
                    let e = memchr::memchr(b'\n', &buf[at..]).map_or(n, |q| at + q);
                    let col = (at - start + 1) as u64 + if start == 0 { self.col } else { 0 };
                    self.found.push((line, col, buf[ra..rb].to_vec(), buf[start..e].to_vec(), (at - start + 1) as u64));
                }
            }
        }
        let nl = memchr::memrchr(b'\n', &buf[..cut]);
        match nl {
            Some(nl) => {
                self.col = (cut - nl - 1) as u64;
                self.comment = false;
            }
            None => self.col += cut as u64,
        }
        let head = &buf[nl.map_or(0, |p| p + 1)..cut];
        self.comment = self.comment || is_comment(head);
        self.offset += cut as u64;
        self.pending.clear();
        self.pending.extend_from_slice(&buf[cut..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        let mut s = Suppressions::new();
        let text = b"a\n  // shardconv: ignore[x, y]\nb /* shardconv:ignore[z] */ shardconv: ignore[w]\n";
        s.read_at(0, &Anchor { buf: text, offset: 0, line: 1 });
        s.read_at(text.len(), &Anchor { buf: text, offset: 0, line: 1 });
        assert_eq!(s.found.len(), 3);
        assert_eq!(s.found[0].0, 2);
        assert_eq!(s.found[0].2, b"x, y");
        assert_eq!(s.found[1].1, 6);
    }
}
