//! Inline suppressions: `shardconv: ignore[rule, ...]` in a comment, found in the bytes as they are
//! read (the reference's SuppressionScanner, read for read).

use memchr::memmem;

const TAIL: usize = 512;

/// (line, col, the text between the brackets, its line, col in line).
pub type Suppression = (u64, u64, Vec<u8>, Vec<u8>, u64);

#[derive(Default)]
pub struct Suppressions {
    pub found: Vec<Suppression>,
    pending: Vec<u8>,
    line: u64,
    col: u64,
    comment: bool,
}

fn count_nl(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
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
        Suppressions { line: 1, ..Default::default() }
    }

    /// One read of the stream (`data` empty: the end).
    pub fn read(&mut self, data: &[u8]) {
        if self.pending.is_empty() {
            self.scan(data, data.is_empty());
        } else {
            let mut b = std::mem::take(&mut self.pending);
            b.extend_from_slice(data);
            self.scan(&b, data.is_empty());
        }
    }

    /// One read that landed in `buf` from `start` on: when the bytes before it are still this scanner's
    /// pending tail, reads them in place instead of copying the read onto the tail.
    pub fn read_at(&mut self, buf: &[u8], start: usize) {
        let p = self.pending.len();
        if p > 0 && start >= p && buf[start - p..start] == self.pending[..] {
            self.pending.clear();
            self.scan(&buf[start - p..], start == buf.len());
        } else {
            self.read(&buf[start..]);
        }
    }

    fn scan(&mut self, buf: &[u8], last: bool) {
        let n = buf.len();
        let last_nl = memchr::memrchr(b'\n', buf);
        let cut = if last { n } else { last_nl.map_or(0, |p| p + 1).max(n.saturating_sub(TAIL)) };
        if crate::finder!(b"shardconv:").find(buf).is_some() {
            let mut line = self.line;
            let mut at = 0usize;
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
                line += count_nl(&buf[at..p]);
                at = p;
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
                self.line += count_nl(&buf[..cut]);
                self.col = (cut - nl - 1) as u64;
                self.comment = false;
            }
            None => self.col += cut as u64,
        }
        let head = &buf[nl.map_or(0, |p| p + 1)..cut];
        self.comment = self.comment || is_comment(head);
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
        s.read(b"a\n  // shardconv: ignore[x, y]\nb /* shardconv:ignore[z] */ shardconv: ignore[w]\n");
        s.read(b"");
        assert_eq!(s.found.len(), 3);
        assert_eq!(s.found[0].0, 2);
        assert_eq!(s.found[0].2, b"x, y");
        assert_eq!(s.found[1].1, 6);
    }
}
