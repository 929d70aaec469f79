//! Heads: what the scan keeps of a line longer than its window while its windows pass, for the readers
//! that read a line by its start and its end (`ends`: an opener and its `{`; `scopes`: a function's or
//! computation's line): its first `HEAD` bytes and its last byte that is not a blank. Memory stays
//! bounded, whatever the line's length.

use crate::strings::is_ws;

/// The bytes of a long line's start that are kept: an opener's keyword and name lie there.
pub const HEAD: usize = 4096;

/// A long line read in part: its start, the line it is on, and its last byte that is not a blank
/// after that start.
pub struct LineHead {
    head: Vec<u8>,
    /// The 1-based line it is on.
    pub line: u64,
    last: Option<u8>,
}

impl LineHead {
    /// A line on line `line` whose first bytes are `part` (no line break among them).
    pub fn new(part: &[u8], line: u64) -> Self {
        let mut h = LineHead { head: Vec::with_capacity(HEAD.min(part.len())), line, last: None };
        h.read(part);
        h
    }

    /// More of the line's bytes (no line break among them).
    pub fn read(&mut self, part: &[u8]) {
        let take = (HEAD - self.head.len()).min(part.len());
        self.head.extend_from_slice(&part[..take]);
        if let Some(&b) = part[take..].iter().rev().find(|&&b| !is_ws(b)) {
            self.last = Some(b);
        }
    }

    /// The line as a reader of its start and end sees it, its last bytes `rest` (up to its line break)
    /// read too: its head, then a blank and its last byte that is not a blank (its head is all of it
    /// when the line is no longer).
    pub fn into_line(mut self, rest: &[u8]) -> Vec<u8> {
        self.read(rest);
        if let Some(b) = self.last {
            self.head.extend_from_slice(&[b' ', b]);
        }
        self.head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_keeps_its_start_and_its_last_byte() {
        let mut h = LineHead::new(b"module @n attributes {a = \"", 5);
        h.read(&[b'x'; 3 * HEAD]);
        let line = h.into_line(b"\"} {  \r");
        assert_eq!(line.len(), HEAD + 2);
        assert!(line.starts_with(b"module @n attributes {a = \"x") && line.ends_with(b"x {"));
        assert_eq!(LineHead::new(b"short", 1).into_line(b" line {"), b"short line {");
        assert_eq!(LineHead::new(&[b'a'; HEAD], 1).into_line(b"  "), [b'a'; HEAD]);
    }
}
