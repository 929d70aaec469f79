//! Sniff: the kind of a dump from its first `SNIFF_BYTES`, whatever its name. XLA's buffer-assignment,
//! memory-usage and live-range reports quote instructions but are not IR.

use crate::strings::{is_word, is_ws};
use memchr::memmem;

pub const SNIFF_BYTES: usize = 1 << 16;

/// Whether only blanks (no newline) stand before `at` on its line.
fn at_line_start(head: &[u8], at: usize) -> bool {
    let start = memchr::memrchr(b'\n', &head[..at]).map_or(0, |p| p + 1);
    head[start..at].iter().all(|&b| is_ws(b))
}

fn word_end(head: &[u8], end: usize) -> bool {
    end >= head.len() || !is_word(head[end])
}

fn any_at_line_start(head: &[u8], needle: &[u8], ok: impl Fn(usize) -> bool) -> bool {
    memmem::find_iter(head, needle).any(|p| ok(p) && at_line_start(head, p))
}

fn ws_after(head: &[u8], p: usize) -> bool {
    head.get(p).is_some_and(|&b| is_ws(b))
}

fn hlo(head: &[u8]) -> bool {
    if memmem::find_iter(head, b"sharding={").any(|p| p == 0 || !(is_word(head[p - 1]) || head[p - 1] == b'.')) {
        return true;
    }
    for (needle, n) in [(&b"HloModule"[..], 9usize), (b"ENTRY", 5), (b"ROOT", 4)] {
        if any_at_line_start(head, needle, |p| ws_after(head, p + n)) {
            return true;
        }
    }
    memchr::memchr_iter(b'=', head).any(|p| instruction_at(head, p))
}

/// `=\s*[a-z][a-z0-9]*\[[\d,<=?]*\]\S*\s+[\w\-]+\(` at `p`.
fn instruction_at(h: &[u8], p: usize) -> bool {
    let n = h.len();
    let mut i = p + 1;
    while i < n && is_ws(h[i]) {
        i += 1;
    }
    if i >= n || !h[i].is_ascii_lowercase() {
        return false;
    }
    while i < n && (h[i].is_ascii_lowercase() || h[i].is_ascii_digit()) {
        i += 1;
    }
    if i >= n || h[i] != b'[' {
        return false;
    }
    i += 1;
    while i < n && (h[i].is_ascii_digit() || matches!(h[i], b',' | b'<' | b'=' | b'?')) {
        i += 1;
    }
    if i >= n || h[i] != b']' {
        return false;
    }
    i += 1;
    while i < n && !is_ws(h[i]) {
        i += 1;
    }
    let s = i;
    while i < n && is_ws(h[i]) {
        i += 1;
    }
    if i == s {
        return false;
    }
    let w = i;
    while i < n && (is_word(h[i]) || h[i] == b'-') {
        i += 1;
    }
    i > w && i < n && h[i] == b'('
}

fn mlir(head: &[u8]) -> bool {
    if memmem::find(head, b"tensor<").is_some() {
        return true;
    }
    for d in [&b"stablehlo."[..], b"mhlo.", b"sdy.", b"func.", b"shard."] {
        let hit = memmem::find_iter(head, d).any(|p| {
            (p == 0 || !(is_word(head[p - 1]) || head[p - 1] == b'.'))
                && head.get(p + d.len()).is_some_and(|&c| c.is_ascii_lowercase() || c == b'_')
        });
        if hit {
            return true;
        }
    }
    let tt = memmem::find_iter(head, b"tt").any(|p| {
        if p > 0 && (is_word(head[p - 1]) || head[p - 1] == b'.') {
            return false;
        }
        let mut i = p + 2;
        while i < head.len() && is_word(head[i]) {
            i += 1;
        }
        head.get(i) == Some(&b'.') && head.get(i + 1).is_some_and(|&c| c.is_ascii_lowercase() || c == b'_')
    });
    if tt {
        return true;
    }
    for (needle, n) in [(&b"module"[..], 6usize), (b"func.func", 9), (b"sdy.mesh", 8)] {
        if any_at_line_start(head, needle, |p| word_end(head, p + n)) {
            return true;
        }
    }
    any_at_line_start(head, b"//", |p| {
        let mut i = p + 2;
        while i < head.len() && is_ws(head[i]) {
            i += 1;
        }
        head[i..].starts_with(b"-----")
    })
}

fn xla_report(head: &[u8]) -> bool {
    let i = head.iter().position(|&b| !is_ws(b)).unwrap_or(head.len());
    let t = &head[i..];
    t.starts_with(b"BufferAssignment:")
        || t.starts_with(b"Total bytes used:")
        || t.starts_with(b"Memory Space:")
        || (t.starts_with(b"HloLiveRange") && word_end(t, 12))
}

/// A Graphviz graph (XLA's `--xla_dump_hlo_as_dot`): it quotes instructions, HTML-escaped, but is not IR.
fn graphviz(head: &[u8]) -> bool {
    let i = head.iter().position(|&b| !is_ws(b)).unwrap_or(head.len());
    head[i..].starts_with(b"digraph") && word_end(head, i + 7)
}

/// Kind of a dump from its first bytes: ("hlo" | "mlir" | "mixed" | "skip", reason).
pub fn sniff(head: &[u8]) -> (&'static str, &'static str) {
    if let Some(nul) = memchr::memchr(0, head) {
        // IR before its first NUL is a dump with a byte no compiler reads (a finding at it), not a binary
        if !(hlo(&head[..nul]) || mlir(&head[..nul])) {
            return ("skip", "binary file (contains NUL bytes)");
        }
    }
    if xla_report(head) {
        return ("skip", "an XLA buffer-assignment / memory report, not IR");
    }
    if graphviz(head) {
        return ("skip", "a Graphviz graph (--xla_dump_hlo_as_dot), not IR");
    }
    let h = hlo(head);
    let m = mlir(head);
    match (h, m) {
        (true, true) => ("mixed", ""),
        (true, false) => ("hlo", ""),
        (false, true) => ("mlir", ""),
        _ if head.iter().all(|&b| is_ws(b)) => ("skip", "empty file"),
        _ => ("skip", "no HLO or MLIR found in the first 64 KiB"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(sniff(b"HloModule m\n").0, "hlo");
        assert_eq!(sniff(b"  %x = f32[8]{0} add(%a, %b)").0, "hlo");
        assert_eq!(sniff(b"module {\n func.func @main()").0, "mlir");
        assert_eq!(sniff(b"HloModule m\n// -----\n").0, "mixed");
        assert_eq!(sniff(b"a\0b"), ("skip", "binary file (contains NUL bytes)"));
        assert_eq!(sniff(b"HloModule m\n  %p = f32[8]{0} parameter(0)\0").0, "hlo");
        assert_eq!(sniff(b"  \n"), ("skip", "empty file"));
        assert_eq!(sniff(b"hello"), ("skip", "no HLO or MLIR found in the first 64 KiB"));
        assert_eq!(sniff(b"\xff\xffhello world").0, "skip");
        assert_eq!(sniff(b"module\xe2\x82").0, "mlir");
        // shardings are ASCII: a byte that is not UTF-8 (a Latin-1 comment) leaves a dump a dump
        assert_eq!(sniff(b"// caf\xe9\nmodule @m {\n  sdy.mesh @mesh = <[\"a\"=2]>\n}\n").0, "mlir");
        assert_eq!(sniff(b"shard.grid @g(shape = [])\n").0, "mlir");
        assert_eq!(sniff(b"BufferAssignment:\nHloModule").0, "skip");
        let dot = b"digraph G {\n  1 [label=<sharding={devices=[2,1,4]&lt;=[8]}>];\n}\n";
        assert_eq!(sniff(dot), ("skip", "a Graphviz graph (--xla_dump_hlo_as_dot), not IR"));
        assert_eq!(sniff(b"digraphs = 1\nHloModule m\n").0, "hlo");
    }
}
