//! Ends: whether a dump ends inside an open module, function or HLO computation (a cut file). Printers
//! indent everything inside those, so the last line that starts at column 0 says it: an opener
//! (`module ... {`, `HloModule`, `func.func ... {`, `[ENTRY] %c ... {`) leaves it open; a `}` line
//! closes it (the HLO module too, once its entry computation was printed: XLA prints the entry last,
//! but a TPU pass may print computations after it); any other text is outside them.

use crate::extract::module_start;
use crate::scopes::{scope_of, ScopeLine};
use crate::strings::{count_nl, is_ws, rstrip};

/// What a dump's end leaves open: ("module" | "function" | "computation", its name, the 1-based line
/// that opens it, the line the input ends on).
pub type Open = (&'static str, String, u64, u64);

/// What the top-level lines read so far leave open, read a region (complete lines) at a time.
#[derive(Default)]
pub struct Ends {
    pub open: Option<Open>,
    /// The open scope is an HLO computation other than the entry: its `}` leaves the module open.
    inner: bool,
    /// The last `HloModule` header: (its name, its line).
    header: Option<(String, u64)>,
    /// That module's entry computation was opened (a `}` of another computation after it closes it).
    entry_seen: bool,
}

impl Ends {
    /// A module start (`module_start`) on line `lineno`: an `HloModule` header is kept for its `}` lines.
    pub fn module_start(&mut self, line: &[u8], lineno: u64) {
        self.header = match opened_by(line_at(line, 0), false) {
            Some(("module", name, _)) if line.starts_with(b"HloModule") => Some((name, lineno)),
            _ => None,
        };
        self.entry_seen = false;
    }

    /// The lines of `region` from `from` (where a line starts) on, the region ending on line `end_line`
    /// (`last`: the last line it holds): only its last top-level line is read (from its end back), and
    /// the one before it when that is a `}`.
    pub fn read(&mut self, region: &[u8], from: usize, end_line: u64, last: u64) {
        let Some(p) = last_meaningful_line(region, from) else {
            if let Some(open) = self.open.as_mut() {
                open.3 = last;
            }
            return;
        };
        let top = line_at(region, p);
        let cut = p + top.len() == region.len();
        if top.starts_with(b"}") {
            let before = if p > from { last_top_line(&region[..p - 1], from) } else { None };
            let closed_inner =
                before.map_or(self.inner, |q| matches!(opened_by(line_at(region, q), false), Some((_, _, true))));
            let module_open = closed_inner && !self.saw_entry(&region[from..p]);
            self.open = self.header.clone().filter(|_| module_open).map(|(name, at)| ("module", name, at, last));
            self.inner = false;
            return;
        }
        self.inner = false;
        self.open = opened_by(top, cut).map(|(kind, name, inner)| {
            if inner {
                self.saw_entry(&region[from..p]);
            } else if kind == "computation" {
                self.entry_seen = true;
            }
            self.inner = inner;
            (kind, name, end_line - count_nl(&region[p..]), last)
        });
    }

    /// Whether the module's entry computation was opened by now, `lines` (whole lines) read too: searched
    /// only when a non-entry computation is read at a region's end.
    fn saw_entry(&mut self, lines: &[u8]) -> bool {
        self.entry_seen =
            self.entry_seen || lines.starts_with(b"ENTRY ") || memchr::memmem::find(lines, b"\nENTRY ").is_some();
        self.entry_seen
    }
}

/// `last_top_line` of `buf`, passing over an HLO module's stack-frame tables (`FileNames`, `1 "f.py"`,
/// ...: between its header and its computations, inside the module), and over a last line cut before
/// it says what it is (neither a `}` nor the start of an opener).
fn last_meaningful_line(buf: &[u8], from: usize) -> Option<usize> {
    let mut end = buf.len();
    loop {
        let p = last_top_line(&buf[..end], from)?;
        let line = line_at(buf, p);
        let unsaid = p + line.len() == buf.len() && !line.starts_with(b"}") && opened_by(line, true).is_none();
        if !unsaid && !frame_table_line(line) {
            return Some(p);
        }
        if p == from {
            return None;
        }
        end = p - 1;
    }
}

/// A line of an HLO module's stack-frame tables: a table's name, or a numbered row.
fn frame_table_line(line: &[u8]) -> bool {
    const TABLES: [&[u8]; 4] = [b"FileNames", b"FunctionNames", b"FileLocations", b"StackFrames"];
    line.first().is_some_and(u8::is_ascii_digit) || TABLES.contains(&rstrip(line))
}

/// The line of `buf` that starts at `p`, without its line break.
fn line_at(buf: &[u8], p: usize) -> &[u8] {
    &buf[p..memchr::memchr(b'\n', &buf[p..]).map_or(buf.len(), |q| p + q)]
}

/// Where the last line of `buf` that starts at column 0 and holds more than spaces begins, at or after
/// `from` (where a line starts). Most of a dump's lines are indented: 64-byte blocks are passed over,
/// from the end back, by a test the compiler makes wide, until one may hold such a line.
pub fn last_top_line(buf: &[u8], from: usize) -> Option<usize> {
    const BLOCK: usize = 64;
    let may_start = |(&a, &b): (&u8, &u8)| (a == b'\n') & !matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let mut end = buf.len(); // the breaks before `end - 1` are yet to be read
    while end > from + BLOCK {
        let w = &buf[end - BLOCK - 1..end];
        if w[..BLOCK].iter().zip(&w[1..]).fold(false, |any, pair| any | may_start(pair)) {
            break;
        }
        end -= BLOCK;
    }
    let at_break = (from..end.saturating_sub(1)).rev().find(|&q| buf[q] == b'\n' && !is_ws(buf[q + 1]));
    match at_break {
        Some(q) => Some(q + 1),
        None => buf.get(from).is_some_and(|&b| !is_ws(b)).then_some(from),
    }
}

/// The scope a top-level `line` opens and leaves open until a later `}` line, if it opens one: a module
/// or function whose line ends in `{` (not a declaration), an HLO computation, an `HloModule` header, or
/// a pass log's dump header (`// -----// IR Dump ...`: its module follows); and whether it is an HLO
/// computation other than the entry. A line `cut` (the input's last, with no line break) opens what
/// its start begins to open.
pub fn opened_by(line: &[u8], cut: bool) -> Option<(&'static str, String, bool)> {
    let line = rstrip(line);
    let braced = cut || line.ends_with(b"{");
    let hlo = line.starts_with(b"HloModule");
    if line.starts_with(b"// -----//") {
        return Some(("module", String::new(), false));
    }
    if hlo || (line.starts_with(b"module") && module_start(line)) {
        return (hlo || braced).then(|| ("module", module_name(line, hlo), false));
    }
    match scope_of(line) {
        ScopeLine::Open(name, "func", _) if braced => Some(("function", format!("@{}", lossy(name)), false)),
        ScopeLine::Open(name, "computation", entry) => Some(("computation", lossy(name), !entry)),
        _ if cut && line.starts_with(b"func.func") => Some(("function", String::new(), false)),
        _ if cut && (line.starts_with(b"ENTRY") || line.starts_with(b"%")) => {
            Some(("computation", String::new(), false))
        }
        _ => None,
    }
}

/// A module's name as its header writes it: `@name` of an MLIR module, the word after `HloModule`.
fn module_name(line: &[u8], hlo: bool) -> String {
    let rest = if hlo { &line[9..] } else { &line[6..] };
    let s = rest.iter().position(|&b| !is_ws(b)).unwrap_or(rest.len());
    let rest = &rest[s..];
    if !hlo && !rest.starts_with(b"@") {
        return String::new();
    }
    let n = rest.iter().position(|&b| is_ws(b) || b == b',' || b == b'{').unwrap_or(rest.len());
    lossy(&rest[..n])
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_top_line(buf: &[u8], from: usize) -> Option<usize> {
        (from..buf.len()).rev().find(|&p| (p == from || buf[p - 1] == b'\n') && !is_ws(buf[p]))
    }

    #[test]
    fn top_lines_read_by_blocks_as_line_by_line() {
        let pieces: [&[u8]; 7] = [b"    %x = f32[8] parameter(0)\n", b"a\n", b"\n", b"\r\n", b" \n", b"}\n", b"\t{"];
        let mut seed = 12345u64;
        for _ in 0..2000 {
            let mut buf = Vec::new();
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            for k in 0..(seed >> 58) {
                let r = seed.rotate_left(7 * k as u32) >> 61;
                buf.extend_from_slice(pieces[(r % 7) as usize]);
                if r.is_multiple_of(3) {
                    buf.extend_from_slice(pieces[0]);
                }
            }
            assert_eq!(last_top_line(&buf, 0), naive_top_line(&buf, 0), "{}", String::from_utf8_lossy(&buf));
        }
    }

    #[test]
    fn top_lines() {
        assert_eq!(last_top_line(b"module {\n  func\n  }\n", 0), Some(0));
        assert_eq!(last_top_line(b"module {\n  x\n}\n\n", 0), Some(13));
        assert_eq!(last_top_line(b"  a\n  b", 0), None);
        assert_eq!(last_top_line(b"ab\n  b", 3), None);
        assert_eq!(last_top_line(b"ab\n  b", 0), Some(0));
    }

    fn end_of(text: &[u8]) -> Option<Open> {
        let mut ends = Ends::default();
        if text.starts_with(b"HloModule") {
            ends.module_start(line_at(text, 0), 1);
        }
        let lines = count_nl(text);
        ends.read(text, 0, lines + 1, lines + u64::from(!text.ends_with(b"\n")));
        ends.open
    }

    #[test]
    fn hlo_modules_close_with_their_entry() {
        let comp = b"HloModule m\n\n%add (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n\n";
        let whole = [&comp[..], b"ENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n"].concat();
        assert_eq!(end_of(&whole), None);
        assert_eq!(end_of(comp), Some(("module", "m".into(), 1, 6)));
        assert_eq!(end_of(&whole[..whole.len() - 3]), Some(("computation", "e".into(), 7, 8)));
        assert_eq!(end_of(b"module @m {\n  func.func @f() {\n  }\n"), Some(("module", "@m".into(), 1, 3)));
        assert_eq!(end_of(b"module @m {\n}\n#loc = loc(unknown)\n"), None);
        let frames = b"HloModule m\n\nFileNames\n1 \"a.py\"\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=1}\n";
        assert_eq!(end_of(frames), Some(("module", "m".into(), 1, 7)));
        assert_eq!(end_of(&frames[..14]), Some(("module", "m".into(), 1, 3)));
    }

    #[test]
    fn computations_printed_after_the_entry_close_the_module() {
        // a TPU pass (layout_fixup, Pre_main_fusion) prints the reduce computations after the entry
        let entry = b"HloModule m\n\nENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n\n";
        let after = [&entry[..], b"%add (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n\n"].concat();
        assert_eq!(end_of(&after), None);
        assert_eq!(end_of(&after[..after.len() - 3]), Some(("computation", "add".into(), 7, 8)));
    }

    #[test]
    fn openers() {
        assert_eq!(opened_by(b"module @jit_f attributes {a = 1} {", false), Some(("module", "@jit_f".into(), false)));
        assert_eq!(opened_by(b"module {\r", false), Some(("module", String::new(), false)));
        assert_eq!(
            opened_by(b"HloModule jit_f, entry_computation_layout={()}", false),
            Some(("module", "jit_f".into(), false))
        );
        assert_eq!(opened_by(b"func.func @main(%a: i32) -> i32 {", false), Some(("function", "@main".into(), false)));
        assert_eq!(opened_by(b"func.func private @g(%a: i32) -> i32", false), None);
        assert_eq!(
            opened_by(b"ENTRY %main.5 (a: f32[]) -> f32[] {", false),
            Some(("computation", "main.5".into(), false))
        );
        assert_eq!(
            opened_by(b"%add.1 (a: f32[], b: f32[]) -> f32[] {", false),
            Some(("computation", "add.1".into(), true))
        );
        assert_eq!(opened_by(b"}", false), None);
        assert_eq!(opened_by(b"// ----- a test's split", false), None);
        assert_eq!(opened_by(b"// -----// IR Dump After X //----- //", false), Some(("module", String::new(), false)));
        assert_eq!(opened_by(b"module @jit_f attributes {a = ", true), Some(("module", "@jit_f".into(), false)));
        assert_eq!(opened_by(b"ENTRY %e (p: f3", true), Some(("computation", String::new(), false)));
        assert_eq!(opened_by(b"#loc3 = loc(", true), None);
        assert_eq!(opened_by(b"#loc1 = loc(\"x\")", false), None);
    }
}
