//! Heads: what the scan keeps of a line longer than its window while its windows pass, for the readers
//! that read a line by its start and its end (`ends`: an opener and its `{`; `scopes`: a function's or
//! computation's line): its first `HEAD` bytes, its last byte that is not a blank, and the name of the
//! scope it may open, whole, wherever it is (`Opener`). Memory stays bounded by the window and that name,
//! whatever the line's length.

use crate::strings::{is_word, is_ws, name_char};

/// The bytes of a long line's start that are kept: an opener's keyword and name lie there.
pub const HEAD: usize = 4096;

/// A long line read in part: its start, the line it is on, its last byte that is not a blank after that
/// start, and the name of the scope it may open.
pub struct LineHead {
    head: Vec<u8>,
    /// The 1-based line it is on.
    pub line: u64,
    last: Option<u8>,
    opener: Opener,
}

impl LineHead {
    /// A line on line `line` whose first bytes are `part` (no line break among them).
    pub fn new(part: &[u8], line: u64) -> Self {
        let head = Vec::with_capacity(HEAD.min(part.len()));
        let mut h = LineHead { head, line, last: None, opener: Opener::default() };
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
        self.opener.read(part);
    }

    /// Where the name of the scope the line opens starts, when it is longer than `NAME_LIMIT` (a
    /// computation's, when its line ends in `{`).
    pub fn overlong(&self) -> Option<usize> {
        match (&self.opener.func, &self.opener.computation) {
            (Func::Seek, Computation::Named { .. }) if self.last == Some(b'{') => self.opener.overlong.1,
            (Func::Seek, _) => None,
            _ => self.opener.overlong.0,
        }
    }

    /// The line as a reader of its start and end sees it, its last bytes `rest` (up to its line break)
    /// read too: its head, then a blank and its last byte that is not a blank (its head is all of it
    /// when the line is no longer). The scope it opens reads as the whole line's: a name the head does
    /// not hold whole is written whole in its place (`Opener::written`).
    pub fn into_line(mut self, rest: &[u8]) -> Vec<u8> {
        self.read(rest);
        let mut line = self.opener.written(self.head);
        if let Some(b) = self.last {
            line.extend_from_slice(&[b' ', b]);
        }
        line
    }
}

/// The scope a long line may open, read as its bytes pass, as `scopes::scope_in` reads the whole line: a
/// function's `@name` (bare, or a string) after the line's first `func.func`, wherever they are; else an
/// HLO computation's name at its start (`[ENTRY] [%]name`, then ` `, `(` or `{`). Names are kept whole, up
/// to `NAME_LIMIT` bytes.
#[derive(Default)]
struct Opener {
    /// The line's bytes read so far.
    read: usize,
    /// The last bytes of the part before, while no `func.func` is met (one across two parts).
    carry: Vec<u8>,
    func: Func,
    computation: Computation,
    /// Where a function's and a computation's name longer than `NAME_LIMIT` start.
    overlong: (Option<usize>, Option<usize>),
}

/// A scope's name longer than this is not kept: the scan says it cannot read the line
/// (`Engine::name_too_long`), never a shorter name.
pub const NAME_LIMIT: usize = 1 << 20;

/// Where the search for a function's name is (`p`: where the line's first `func.func` starts, `at`: the
/// first `@` after it).
#[derive(Default)]
enum Func {
    #[default]
    Seek,
    At {
        p: usize,
    },
    AfterAt {
        p: usize,
        at: usize,
    },
    Name {
        p: usize,
        at: usize,
        bytes: Vec<u8>,
        quoted: bool,
        escaped: bool,
    },
    Named {
        p: usize,
        at: usize,
        bytes: Vec<u8>,
        quoted: bool,
    },
}

/// Where the reading of a computation's name at the line's start is.
#[derive(Default)]
enum Computation {
    #[default]
    Start,
    /// `ENTRY`'s first `.0` bytes read; `.1`: a blank after them.
    Entry(usize, bool),
    /// In the name, which starts at byte `at`.
    Name { entry: bool, at: usize, bytes: Vec<u8> },
    /// The name and the byte after it.
    Named { at: usize, bytes: Vec<u8>, after: u8 },
    /// The line opens no computation.
    Not,
}

const FUNC: &[u8] = b"func.func";

impl Opener {
    fn read(&mut self, part: &[u8]) {
        let base = self.read;
        let mut i = 0;
        while i < part.len() && !matches!(self.computation, Computation::Named { .. } | Computation::Not) {
            if let Computation::Name { at, bytes, .. } = &mut self.computation {
                // (a name's run at once: a long line may start with one)
                let run = part[i..].iter().position(|&b| !computation_name_byte(b)).unwrap_or(part.len() - i);
                let take = run.min(NAME_LIMIT - bytes.len().min(NAME_LIMIT));
                if take < run {
                    self.overlong.1.get_or_insert(*at);
                }
                bytes.extend_from_slice(&part[i..i + take]);
                i += run;
                if i == part.len() {
                    break;
                }
            }
            self.computation_byte(part[i], base + i);
            i += 1;
        }
        let mut i = 0;
        while i < part.len() {
            i = self.func_bytes(part, i, base);
        }
        self.read += part.len();
    }

    /// The function's search over `part[i..]` (`part` at line byte `base`): where to read on.
    fn func_bytes(&mut self, part: &[u8], i: usize, base: usize) -> usize {
        match &mut self.func {
            Func::Seek => self.seek_func(part, base),
            Func::At { p } => {
                let Some(q) = memchr::memchr(b'@', &part[i..]) else { return part.len() };
                self.func = Func::AfterAt { p: *p, at: base + i + q };
                i + q + 1
            }
            Func::AfterAt { p, at } => {
                let quoted = part[i] == b'"';
                self.func = Func::Name { p: *p, at: *at, bytes: Vec::new(), quoted, escaped: false };
                i + usize::from(quoted)
            }
            Func::Name { p, at, bytes, quoted, escaped } => {
                let end = name_end(&part[i..], *quoted, escaped);
                let taken = end.map_or(part.len() - i, |e| e - usize::from(*quoted));
                if bytes.len() + taken > NAME_LIMIT {
                    self.overlong.0.get_or_insert(*at + 1);
                } else {
                    bytes.extend_from_slice(&part[i..i + taken]);
                }
                let Some(e) = end else { return part.len() };
                self.func = Func::Named { p: *p, at: *at, bytes: std::mem::take(bytes), quoted: *quoted };
                i + e
            }
            Func::Named { .. } => part.len(),
        }
    }

    /// The line's first `func.func`, across the part before's end or in `part` (at line byte `base`):
    /// where to read on.
    fn seek_func(&mut self, part: &[u8], base: usize) -> usize {
        let keep = FUNC.len() - 1;
        let mut edge = std::mem::take(&mut self.carry);
        let from = edge.len();
        edge.extend_from_slice(&part[..part.len().min(keep)]);
        // (a match in `edge` starts before `part`: no later one fits in it)
        let found = memchr::memmem::find(&edge, FUNC).or_else(|| memchr::memmem::find(part, FUNC).map(|q| q + from));
        if let Some(q) = found {
            self.func = Func::At { p: base + q - from };
            return q + FUNC.len() - from;
        }
        self.carry = if part.len() >= keep {
            part[part.len() - keep..].to_vec()
        } else {
            edge[edge.len().saturating_sub(keep)..].to_vec()
        };
        part.len()
    }

    /// Byte `b` (at line byte `i`) of the line's start, as `scopes::computation` reads it.
    fn computation_byte(&mut self, b: u8, i: usize) {
        self.computation = match std::mem::take(&mut self.computation) {
            Computation::Start if is_ws(b) => Computation::Not,
            Computation::Start if b == b'E' => Computation::Entry(1, false),
            Computation::Start => return self.name_start(false, b, i),
            Computation::Entry(n, false) if n < 5 && b == b"ENTRY"[n] => Computation::Entry(n + 1, false),
            Computation::Entry(5, _) if is_ws(b) => Computation::Entry(5, true),
            Computation::Entry(5, true) => return self.name_start(true, b, i),
            Computation::Entry(n, _) => {
                // (no `ENTRY` and a blank: the name starts at the line's start)
                self.computation = Computation::Name { entry: false, at: 0, bytes: b"ENTRY"[..n].to_vec() };
                return self.computation_byte(b, i);
            }
            Computation::Name { entry, at, mut bytes } if computation_name_byte(b) => {
                bytes.push(b);
                Computation::Name { entry, at, bytes }
            }
            Computation::Name { at, bytes, .. } if !bytes.is_empty() && matches!(b, b' ' | b'(' | b'{') => {
                Computation::Named { at, bytes, after: b }
            }
            Computation::Name { .. } | Computation::Not => Computation::Not,
            named @ Computation::Named { .. } => named,
        };
    }

    /// The name's first byte `b` (at line byte `i`), or the `%` before it.
    fn name_start(&mut self, entry: bool, b: u8, i: usize) {
        let percent = b == b'%';
        self.computation = Computation::Name { entry, at: i + usize::from(percent), bytes: Vec::new() };
        if !percent {
            self.computation_byte(b, i);
        }
    }

    /// The line's `head` with the name it opens written whole in its place where the head does not
    /// hold it whole: a function's (`func.func` and `@name` after the head's part before them) or a
    /// computation's (the name and the byte after it after the head's part before the name).
    fn written(self, mut head: Vec<u8>) -> Vec<u8> {
        let within = |end: usize, head: &[u8]| end <= head.len(); // (`end`: past the name's last byte)
        let (p, name) = match self.func {
            Func::Seek => {
                if let Computation::Named { at, bytes, after } = self.computation {
                    if !within(at + bytes.len(), &head) {
                        head.truncate(at.min(head.len()));
                        head.extend_from_slice(&bytes);
                        head.push(after);
                    }
                }
                return head;
            }
            Func::At { p } => (p, None),
            Func::AfterAt { p, at } => (p, Some((at, Vec::new(), false))),
            Func::Name { p, at, bytes, quoted, .. } | Func::Named { p, at, bytes, quoted } => {
                (p, Some((at, bytes, quoted)))
            }
        };
        let keyword = within(p + FUNC.len(), &head);
        if !keyword {
            head.truncate(p.min(head.len()));
            head.extend_from_slice(b" func.func");
        }
        let Some((at, bytes, quoted)) = name else { return head };
        let end = at + 1 + bytes.len() + 2 * usize::from(quoted);
        if keyword && within(end, &head) {
            return head;
        }
        if at < head.len() {
            head.truncate(at);
        } else {
            head.push(b' ');
        }
        head.push(b'@');
        if quoted {
            head.push(b'"');
        }
        head.extend_from_slice(&bytes);
        head.extend_from_slice(if quoted { b"\" " } else { b" " });
        head
    }
}

/// A byte of an HLO computation's name.
fn computation_name_byte(b: u8) -> bool {
    is_word(b) || b == b'.' || b == b'-'
}

/// Where a function's name ends in `part`: a bare name at its first byte that is no name byte, a
/// string's past its closing quote; None when it runs on (`escaped`: just after a `\` in the string).
fn name_end(part: &[u8], quoted: bool, escaped: &mut bool) -> Option<usize> {
    if !quoted {
        return part.iter().position(|&b| !name_char(b));
    }
    for (i, &b) in part.iter().enumerate() {
        if std::mem::take(escaped) {
            continue;
        }
        match b {
            b'\\' => *escaped = true,
            b'"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line `parts` make, as `into_line` gives it, read in parts of `step` bytes.
    fn read_in(line: &[u8], step: usize) -> Vec<u8> {
        let mut parts = line.chunks(step);
        let mut h = LineHead::new(parts.next().unwrap_or_default(), 1);
        for p in parts {
            h.read(p);
        }
        h.into_line(b"")
    }

    #[test]
    fn the_scope_a_long_line_opens_reads_as_the_whole_line_s_wherever_its_name_is() {
        use crate::scopes::{scope_in, ScopeLine};
        let n = "n".repeat(2 * HEAD);
        let lines = [
            format!("  func.func @f{n}(%a: i32) {{"),
            format!("  func.func {n} @f(%a: i32) {{"),
            format!("  %c = \"{n}\" func.func @\"f{n}\\\" x\" (%a: i32) {{"),
            format!("  func.func {n} (%a: i32) {{"),
            format!("  func.func {n}@"),
            format!("ENTRY   %main{n} (p: f32[8]) -> f32[8] {{"),
            format!("%add{n}(p: f32[8]) -> f32[8] {{"),
            format!("ENTRYx{n} (p: f32[8]) -> f32[8] {{"),
            format!("ENTRY %main{n} (p: f32[8]) -> f32[8]"),
            format!("module @m{n} {{"),
            format!("  ENTRY %main{n} (p: f32[8]) -> f32[8] {{"),
        ];
        let said = |s: ScopeLine| match s {
            ScopeLine::Open(name, kind, entry) => Some((name.to_vec(), kind, entry)),
            ScopeLine::Reset => Some((b"reset".to_vec(), "", false)),
            ScopeLine::Nothing => None,
        };
        for line in &lines {
            let whole = said(scope_in(line.as_bytes(), true));
            for step in [1, 7, 8, 9, 10, 4096, 5000, line.len()] {
                let read = read_in(line.as_bytes(), step);
                assert_eq!(said(scope_in(&read, true)), whole, "{} in parts of {step}", &line[..40]);
            }
        }
    }

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
