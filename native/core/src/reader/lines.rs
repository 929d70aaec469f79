//! Lines: the engine. Takes a dump's bytes piece by piece, read as a stream is (the 64 KiB sniffed head,
//! then `chunk`-sized reads), finds the lines holding a keyword with one
//! aho-corasick pass over each region of complete lines, and hands only those to the extractor. A line
//! longer than `max_line` is extracted in overlapping windows, so memory stays bounded. An attribute
//! whose value starts on the next line (`key =` then the value) is one logical line.

use crate::ends::Ends;
use crate::extract::arguments::Arguments;
use crate::extract::repeats::{constraint_line, Repeats, Seen};
use crate::extract::{
    complete_on, is_region_list, lex_signature, Extractor, Holds, Known, Line, Site, SiteKind, FLAG_UNFINISHED,
};
use crate::find::{Hit, Needles};
use crate::keywords::NeedleHits;
use crate::names::Segments;
use crate::reader::heads::LineHead;
use crate::reader::windows::Runaway;
use crate::scopes::{scope_by_start, scope_in, ScopeLine};
use crate::sniff::{sniff, SNIFF_BYTES};
use crate::strings::{count_nl, is_word, rstrip, LineStart};
use crate::suppress::{Anchor, Suppressions};
use crate::table::{pairing, Row, Scope, Table};
use std::sync::LazyLock;

/// A read's size: small enough that the passes over it after the read (suppressions, keywords, newlines)
/// find it still in the core's own cache, which an 8 MiB read does not (the sdy corpus scans 25% faster).
pub const CHUNK: usize = 256 << 10;
pub const MAX_LINE: usize = 4 << 20;
pub const OVERLAP: usize = 1 << 20;
/// Reads a reading thread makes ahead of the scan (`read_all_ahead`).
pub const READS_AHEAD: usize = 4;

#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub chunk: usize,
    pub max_line: usize,
    pub overlap: usize,
    pub names: bool,
    /// Every site keeps its row (else only each group's first one: see `Table::every_site`).
    pub every_site: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { chunk: CHUNK, max_line: MAX_LINE, overlap: OVERLAP, names: false, every_site: true }
    }
}

impl Options {
    pub fn check(&self) -> Result<(), String> {
        if self.chunk == 0 {
            return Err("chunk must be positive".into());
        }
        if self.max_line == 0 || self.overlap >= self.max_line {
            return Err("overlap must be smaller than max_line".into());
        }
        Ok(())
    }
}

/// Every keyword a value's line holds, and the module-header ones.
const KEYWORDS: [&[u8]; 12] = [
    b"sharding",
    b"sdy.",
    b"manual_axes",
    b"num_partitions",
    b"unspecified_dims",
    b"expected-error",
    b"replica_group_mesh_axes",
    b"replica_groups=mesh[",
    b"module",
    b"// -----",
    b"return",
    b"shard.",
];
const REGION_CLOSE: &[u8] = b"} : ";
/// Lines that open a scope (a function, an HLO computation) or a module, found in the same pass.
const SCOPE_NEEDLES: [&[u8]; 2] = [b"func.func", b"HloModule"];
/// The other scope lines, those ending in `{`, are found by a search of their own: a two-byte needle
/// among the others would cut the multi-needle search's fingerprint to two bytes, and its false hits.
const BRACE_ENDS: [&[u8]; 2] = [b"{\n", b"{\r\n"];

/// Needles the keyword search reads that neither make a line a candidate nor open a scope: with them,
/// the finder's needles hold all of the keyword search's, so one search of the buffer serves both.
const SEARCH_ONLY: [&[u8]; 1] = [b"stablehlo.mesh"];

struct Finder {
    needles: Needles,
    keywords: usize, // needles below this index are value keywords, the rest scope needles
    scopes: usize,   // needles from this index on are the keyword search's alone (`SEARCH_ONLY`)
    /// Each needle's index among the keyword search's (`keywords::NEEDLES`), if it is one of them.
    keyword_needle: Vec<Option<usize>>,
}

impl Finder {
    fn new(close: bool) -> Result<Self, String> {
        let mut pats: Vec<&[u8]> = KEYWORDS.to_vec();
        if close {
            pats.push(REGION_CLOSE);
        }
        let keywords = pats.len();
        pats.extend(SCOPE_NEEDLES);
        let scopes = pats.len();
        pats.extend(SEARCH_ONLY);
        let keyword_needle: Vec<Option<usize>> =
            pats.iter().map(|p| crate::keywords::NEEDLES.iter().position(|(n, _)| n == p)).collect();
        if crate::keywords::NEEDLES.iter().any(|(n, _)| !pats.contains(n)) {
            return Err("a keyword needle is missing from the line finder's".into());
        }
        Ok(Finder { needles: Needles::new(&pats)?, keywords, scopes, keyword_needle })
    }
}

/// The candidate finders, without and with the region-close needle, built once per process: an
/// automaton costs more to build than a small piece (a pass log's dump, an XLA step file) to scan.
fn finders() -> Result<&'static [Finder; 2], String> {
    static FINDERS: LazyLock<Result<[Finder; 2], String>> =
        LazyLock::new(|| Ok([Finder::new(false)?, Finder::new(true)?]));
    FINDERS.as_ref().map_err(Clone::clone)
}

/// A candidate line: its span, and whether it holds a value keyword (else only a scope needle).
struct Candidate {
    start: usize,
    end: usize,
    keyword: bool,
}

/// A search's last answer, kept while later searches start at or before its hit: a region's candidates
/// then read the bytes up to each needle's next place once, however many lines of other needles come
/// first.
#[derive(Clone, Copy)]
struct Ahead<T: Copy> {
    last: Option<(usize, Option<(usize, T)>)>, // (searched from, (hit start, hit))
}

impl<T: Copy> Default for Ahead<T> {
    fn default() -> Self {
        Ahead { last: None }
    }
}

impl<T: Copy> Ahead<T> {
    fn get(&mut self, from: usize, search: impl FnOnce() -> Option<(usize, T)>) -> Option<(usize, T)> {
        match self.last {
            Some((at, hit)) if at <= from && hit.is_none_or(|(h, _)| h >= from) => hit,
            _ => {
                let hit = search();
                self.last = Some((from, hit));
                hit
            }
        }
    }
}

/// The searches of one pass over a region: the finder's needles, and each line end in `{` when the scan
/// tracks scopes (`scopes`).
#[derive(Default)]
struct Searches {
    needles: Ahead<Hit>,
    braces: [Ahead<()>; 2],
    scopes: bool,
}

impl Searches {
    /// The leftmost of the finder's needles in `buf[from..limit]`.
    fn needle(&mut self, f: &Finder, buf: &[u8], from: usize, limit: usize) -> Option<Hit> {
        self.needles.get(from, || f.needles.find(buf, from, limit).map(|h| (h.start, h))).map(|(_, h)| h)
    }

    /// Where the first line at or after `from` ending in `{` has its `{` (before `limit`).
    fn brace(&mut self, buf: &[u8], from: usize, limit: usize) -> Option<usize> {
        let finders = [crate::finder!(BRACE_ENDS[0]), crate::finder!(BRACE_ENDS[1])];
        let mut best: Option<usize> = None;
        for (ahead, finder) in self.braces.iter_mut().zip(finders) {
            let hit = ahead.get(from, || finder.find(&buf[from..limit]).map(|q| (from + q, ())));
            best = match (best, hit) {
                (Some(b), Some((h, _))) => Some(b.min(h)),
                (b, h) => b.or(h.map(|(h, _)| h)),
            };
        }
        best
    }
}

/// The finder's hits in one line (`buf[at..at + len]`), as the keyword search reads them: its needles
/// are met by the search of the buffer, whose last hit the next candidate's search then takes up.
struct LineHits<'s> {
    ahead: &'s mut Searches,
    finder: &'s Finder,
    buf: &'s [u8],
    at: usize,
    limit: usize,
}

impl NeedleHits for LineHits<'_> {
    fn next(&mut self, text: &[u8], from: usize) -> Option<(usize, usize)> {
        let mut from = self.at + from;
        loop {
            let h = self.ahead.needle(self.finder, self.buf, from, self.limit)?;
            if h.start >= self.at + text.len() {
                return None;
            }
            if let Some(n) = self.finder.keyword_needle[h.needle] {
                return Some((n, h.start - self.at));
            }
            from = h.start + 1;
        }
    }
}

/// The leftmost needle from `from` on that makes a line a candidate (`SEARCH_ONLY` ones do not).
fn candidate_needle(f: &Finder, ahead: &mut Searches, buf: &[u8], mut from: usize, limit: usize) -> Option<Hit> {
    loop {
        let m = ahead.needle(f, buf, from, limit)?;
        if m.needle < f.scopes {
            return Some(m);
        }
        from = m.start + 1;
    }
}

fn next_candidate(f: &Finder, ahead: &mut Searches, buf: &[u8], from: usize, limit: usize) -> Option<Candidate> {
    let m = candidate_needle(f, ahead, buf, from, limit);
    let brace = if ahead.scopes { ahead.brace(buf, from, limit) } else { None };
    let p = match (m, brace) {
        (Some(m), Some(b)) => m.start.min(b),
        (Some(m), None) => m.start,
        (None, Some(b)) => b,
        (None, None) => return None,
    };
    let start = memchr::memrchr(b'\n', &buf[from..p]).map_or(from, |q| from + q + 1);
    let end = memchr::memchr(b'\n', &buf[p..limit]).map_or(limit, |q| p + q);
    let Some(m) = m.filter(|m| m.start < end) else {
        return Some(Candidate { start, end, keyword: false });
    };
    let mut keyword = m.needle < f.keywords;
    if !keyword && m.start + 1 < end {
        let mut at = m.start + 1;
        while let Some(m2) = ahead.needle(f, buf, at, limit).filter(|m2| m2.start < end) {
            if m2.needle < f.keywords {
                keyword = true;
                break;
            }
            at = m2.start + 1;
        }
    }
    Some(Candidate { start, end, keyword })
}

/// Where a buffer holds `func.func` and `loc(`, found in one pass each when every site's line is read
/// (few lines hold either, and each line's own search cost more than its bytes); a scan that reads few
/// lines (`check`: a constraint line met before is not read again) searches those it reads instead.
struct Rare {
    found: Option<(Vec<usize>, Vec<usize>)>,
}

impl Rare {
    fn of(buf: &[u8], search: bool) -> Self {
        let all = |lit: &memchr::memmem::Finder| lit.find_iter(buf).collect();
        Rare { found: search.then(|| (all(crate::finder!(b"func.func")), all(crate::finder!(b"loc(")))) }
    }

    /// What `buf[a..b]` may hold: each literal that starts in it (and may run past its end: a line that
    /// holds only part of one is searched, and finds none).
    fn holds(&self, a: usize, b: usize) -> Holds {
        let Some((funcs, locs)) = &self.found else { return Holds::UNKNOWN };
        let starts_in = |at: &[usize]| at.get(at.partition_point(|&p| p < a)).is_some_and(|&p| p < b);
        Holds { func: starts_in(funcs), loc: starts_in(locs) }
    }
}

/// `[\w.\"]\s*=\s*$` in `buf[lo..hi]`: a `key =` whose value is on the next line.
fn open_attribute(buf: &[u8], lo: usize, hi: usize) -> bool {
    let w = &buf[lo..hi];
    let e = rstrip(w).len();
    if e == 0 || w[e - 1] != b'=' {
        return false;
    }
    let k = rstrip(&w[..e - 1]).len();
    k > 0 && (is_word(w[k - 1]) || w[k - 1] == b'.' || w[k - 1] == b'"')
}

/// End of the logical line at `start` whose physical line ends at `end` (its newline, or `limit`): past
/// the next line too while this one ends in `key =`.
fn line_end(buf: &[u8], start: usize, mut end: usize, limit: usize) -> usize {
    if end >= limit {
        return limit;
    }
    while end > 0
        && matches!(buf[end - 1], b'=' | b' ' | b'\t' | b'\r')
        && open_attribute(buf, start.max(end.saturating_sub(256)), end)
    {
        match memchr::memchr(b'\n', &buf[end + 1..limit]) {
            Some(q) => end = end + 1 + q,
            None => {
                end = limit;
                break;
            }
        }
    }
    end
}

/// Whether `trace` reads the sites of `kind`: the values it follows, the meshes and device counts they
/// are placed on, and module headers.
fn followed(kind: SiteKind) -> bool {
    crate::keys::shards(kind) || matches!(kind, SiteKind::SdyMesh | SiteKind::NumPartitions | SiteKind::ModuleStart)
}

/// The scan of one input, fed piece by piece.
pub struct Engine {
    opts: Options,
    staged: Vec<u8>,
    head_taken: bool,
    pub kind: &'static str,
    pub reason: &'static str,
    skip: bool,
    eof: bool,
    done: bool,
    buf: Vec<u8>,
    buf_off: u64,
    lineno: u64,
    /// The line breaks before the input in the file it is a piece of (`place`).
    origin_lines: u64,
    /// Whether the input is a later piece of a file (`place`): its end is read as a long file's is.
    tail: bool,
    /// The line breaks drained in windows of a long logical line (one joined to the next): `lineno`
    /// counts on without them (a logical line is numbered by its first physical line), and `buf[0]` is
    /// on line `lineno + drift`.
    drift: u64,
    col_base: u64,
    /// What the bytes of its line before `buf[0]` leave open, when `buf` starts inside a long line
    /// (`col_base` > 0): its windows and its rest read each value as the whole line does.
    line_start: LineStart,
    /// The long line `buf` continues (`col_base` > 0) showed its first byte no compiler reads, or a `//`
    /// before any: its later windows and its rest show none (`not_utf8` shows a line's first one).
    unreadable_said: bool,
    /// The start of the long line `buf` continues (`col_base` > 0), kept from its first window: its
    /// scope and what it opens (`ends`) are read from it when its end comes.
    long_head: Option<LineHead>,
    /// The first row of the long line `buf` continues (`col_base` > 0, a scan of every site), and the
    /// row of its byte no compiler reads, if any (made before the line is scoped, as a whole line's is):
    /// its end says the scope its own sites are in (`rescope`).
    long_rows: Option<(usize, Option<usize>)>,
    /// The `in_shardings` / `out_shardings` read in the windows of the long line `buf` continues: its end
    /// says whether they wait for their region's close, as a whole line's do (`Extractor::hold_region`).
    held_lists: Vec<Site>,
    pub size: u64,
    ext: Extractor,
    finders: &'static [Finder; 2], // without and with the region-close needle
    pub table: Table,
    pub suppressions: Suppressions,
    scope: Scope,
    sites: Vec<Site>,     // one line's sites, reused
    repeats: Repeats,     // every_site=false: the constraint lines met, by their value on
    arguments: Arguments, // every_site=false: one function line's arguments alike
    /// `trace`'s segments (`Options::names`): per segment, the definitions and the digest.
    pub segments: Option<Segments>,
    /// Each row's key, as trace follows values (`Table::keys`), made once the scan is finished.
    pub keys: Option<crate::keys::Keys>,
    /// The line and column of the first value longer than any window (`Options::max_line`): the scan
    /// cannot read it, and says so.
    pub too_long: Option<(u64, u64)>,
    /// The line and column of the first scope's name on a long line longer than `heads::NAME_LIMIT`.
    pub name_too_long: Option<(u64, u64)>,
    /// A value longer than any window, read on until it closes or its line ends, and its line and column.
    runaway: Option<(Runaway, (u64, u64))>,
    /// What the top-level lines read leave open: what the input ends inside of, if it ends there.
    pub ends: Ends,
    /// `trace`'s scan (`Options::names`): whether a row was made since the last module header (of the
    /// kinds trace does not read, only that first one is: see `emit`).
    row_since_header: bool,
}

impl Engine {
    pub fn new(opts: Options) -> Result<Self, String> {
        opts.check()?;
        Ok(Engine {
            opts,
            staged: Vec::new(),
            head_taken: false,
            kind: "skip",
            reason: "empty file",
            skip: false,
            eof: false,
            done: false,
            buf: Vec::new(),
            buf_off: 0,
            lineno: 1,
            origin_lines: 0,
            tail: false,
            drift: 0,
            col_base: 0,
            line_start: LineStart::default(),
            unreadable_said: false,
            long_head: None,
            long_rows: None,
            held_lists: Vec::new(),
            size: 0,
            ext: Extractor::new(!opts.every_site),
            finders: finders()?,
            table: Table::new(opts.every_site),
            suppressions: Suppressions::new(),
            scope: Scope::default(),
            sites: Vec::new(),
            repeats: Repeats::default(),
            arguments: Arguments::default(),
            segments: opts.names.then(|| Segments::new(0)),
            keys: None,
            too_long: None,
            name_too_long: None,
            runaway: None,
            ends: Ends::default(),
            row_since_header: false,
        })
    }

    /// Why the scan cannot stand for its input, if it cannot: a value longer than any window, or a
    /// scope's name on a long line longer than the scan keeps.
    pub fn unreadable(&self) -> Option<String> {
        if let Some((line, col)) = self.too_long {
            let window = self.opts.max_line;
            return Some(format!("line {line}, column {col}: a value runs on past the scan window ({window} bytes) of a long line; it cannot be read"));
        }
        let (line, col) = self.name_too_long?;
        let limit = crate::reader::heads::NAME_LIMIT;
        Some(format!("line {line}, column {col}: a function's or computation's name runs on past {limit} bytes on a long line; it cannot be read"))
    }

    /// The rows made so far as a finished scan of their own (the input's kind, each row at its place), this
    /// scan going on with an empty table: a reader of every site of a long module holds a part at a
    /// time. For a scan of every site that names nothing (no row then refers to another).
    pub fn drain(&mut self) -> Result<Engine, String> {
        let mut part = Engine::new(self.opts)?;
        if self.long_rows.is_none() {
            // (a long line's own rows stay until its end says their scope)
            std::mem::swap(&mut part.table, &mut self.table);
            self.scope.id = None; // (the scope's id was the drained table's)
        }
        part.table.finish();
        (part.kind, part.reason, part.done) = (self.kind, self.reason, true);
        Ok(part)
    }

    /// Frees the read buffers (after `finish`).
    pub fn release(&mut self) {
        self.buf = Vec::new();
        self.staged = Vec::new();
        self.sites = Vec::new();
    }

    /// The line breaks read so far (every scanned byte's; none of a skipped file's, never read).
    pub fn lines(&self) -> u64 {
        self.lineno - 1 - self.origin_lines
    }

    /// The input is the piece of a file from byte `offset`, after `lines` line breaks (at a line's
    /// start): every line and byte offset the scan gives is the file's. Call before the first `feed`.
    pub fn place(&mut self, offset: u64, lines: u64) {
        self.buf_off = offset;
        if let Some(n) = &mut self.segments {
            *n = Segments::new(offset);
        }
        (self.lineno, self.origin_lines, self.tail) = (1 + lines, lines, offset > 0);
    }

    /// The input's expected size, to reserve the table's columns once.
    pub fn size_hint(&mut self, size: u64) {
        self.table.reserve_for(size);
    }

    /// Whether the rest of the input can be dropped unread (a skipped file).
    pub fn skipping(&self) -> bool {
        self.skip
    }

    pub fn feed(&mut self, data: &[u8]) {
        if self.done || self.skip {
            return;
        }
        if !self.head_taken {
            let need = SNIFF_BYTES - self.staged.len();
            let take = need.min(data.len());
            self.staged.extend_from_slice(&data[..take]);
            if self.staged.len() < SNIFF_BYTES {
                return;
            }
            self.take_head();
            if self.skip {
                return;
            }
            return self.feed(&data[take..]);
        }
        let chunk = self.opts.chunk;
        let mut data = data;
        while !data.is_empty() {
            let take = (chunk - self.staged.len()).min(data.len());
            if self.staged.is_empty() && take == chunk {
                self.read(&data[..take]);
            } else {
                self.staged.extend_from_slice(&data[..take]);
                if self.staged.len() == chunk {
                    let piece = std::mem::take(&mut self.staged);
                    self.read(&piece);
                    self.staged = piece;
                    self.staged.clear();
                }
            }
            data = &data[take..];
        }
    }

    fn take_head(&mut self) {
        self.head_taken = true;
        let head = std::mem::take(&mut self.staged);
        self.size += head.len() as u64;
        let (kind, reason) = sniff(&head);
        self.kind = kind;
        self.reason = reason;
        self.skip = kind == "skip";
        if self.skip {
            if let Some(n) = &mut self.segments {
                n.defined.clear();
            }
        }
        self.buf = head;
        self.suppressions_read(0);
    }

    /// The suppression scanner's read of `buf[start..]` (none: the end), with the line `buf` starts on.
    fn suppressions_read(&mut self, start: usize) {
        let anchor = Anchor { buf: &self.buf, offset: self.buf_off, line: self.lineno + self.drift };
        self.suppressions.read_at(start, &anchor);
    }

    /// One read: `data` appended, then the complete lines handled.
    fn read(&mut self, data: &[u8]) {
        self.size += data.len() as u64;
        let start = self.buf.len();
        self.buf.extend_from_slice(data);
        self.suppressions_read(start);
        self.step(data.is_empty());
    }

    /// Reads `r` to its end (or until the file is skipped, or more than `limit` bytes came: the caller
    /// compares `size` with what it expected), each read straight into the buffer (no zeroing: a file
    /// reads into the spare capacity).
    pub fn read_all<R: std::io::Read>(&mut self, r: &mut R, limit: u64) -> std::io::Result<()> {
        use std::io::Read;
        self.read_head(r)?;
        let chunk = self.opts.chunk;
        while !self.skip {
            let start = self.buf.len();
            self.buf.reserve(chunk);
            r.by_ref().take(chunk as u64).read_to_end(&mut self.buf)?;
            if self.took(start, limit) {
                break;
            }
        }
        Ok(())
    }

    /// `read_all`, the reads made by a thread of their own, `READS_AHEAD` ahead: the kernel's copy of a
    /// long file runs on another processor while this one scans (`check -j 1` is one process).
    pub fn read_all_ahead<R: std::io::Read + Send>(&mut self, r: &mut R, limit: u64) -> std::io::Result<()> {
        use std::io::Read;
        use std::sync::mpsc::sync_channel;
        self.read_head(r)?;
        if self.skip {
            return Ok(());
        }
        let chunk = self.opts.chunk;
        let (full, read) = sync_channel::<std::io::Result<Vec<u8>>>(READS_AHEAD);
        let (give_back, spare) = sync_channel::<Vec<u8>>(READS_AHEAD + 1);
        std::thread::scope(|s| {
            s.spawn(move || {
                // (ends at the file's end or error, or when the scan has gone: a send or receive then fails)
                while let Ok(mut b) = spare.recv() {
                    b.clear();
                    let got = r.by_ref().take(chunk as u64).read_to_end(&mut b);
                    let last = !matches!(got, Ok(n) if n > 0);
                    if full.send(got.map(|_| b)).is_err() || last {
                        return;
                    }
                }
            });
            for _ in 0..=READS_AHEAD {
                let _ = give_back.send(Vec::with_capacity(chunk));
            }
            let scanned = self.scan_reads(&read, &give_back, limit);
            // (both ends gone before the scope waits for the thread: its next send or receive fails)
            drop((read, give_back));
            scanned
        })
    }

    /// The reads the reading thread sends, scanned in turn, each buffer given back for the next read,
    /// until the end, an error, or more than `limit` bytes.
    fn scan_reads(
        &mut self,
        read: &std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
        give_back: &std::sync::mpsc::SyncSender<Vec<u8>>,
        limit: u64,
    ) -> std::io::Result<()> {
        while !self.skip {
            let b = read.recv().map_err(|_| std::io::Error::other("the reading thread stopped"))??;
            let start = self.buf.len();
            self.buf.extend_from_slice(&b);
            let _ = give_back.send(b);
            if self.took(start, limit) {
                break;
            }
        }
        Ok(())
    }

    /// The head's read: the sniff's bytes, the kind they tell.
    fn read_head<R: std::io::Read>(&mut self, r: &mut R) -> std::io::Result<()> {
        use std::io::Read;
        if self.head_taken || !self.staged.is_empty() {
            return Err(std::io::Error::other("read_all() after feed()"));
        }
        let mut head = Vec::with_capacity(SNIFF_BYTES);
        let n = r.by_ref().take(SNIFF_BYTES as u64).read_to_end(&mut head)?;
        self.staged = head;
        self.take_head();
        if n < SNIFF_BYTES {
            self.suppressions_read(self.buf.len()); // the head's read met the input's end
        }
        Ok(())
    }

    /// A read appended at `start` of the buffer, scanned; whether reading stops: the end was met, or more
    /// than `limit` bytes came (a file that grew: its reader tells, from `size`).
    fn took(&mut self, start: usize, limit: u64) -> bool {
        let n = self.buf.len() - start;
        self.size += n as u64;
        if self.size > limit {
            return true;
        }
        self.suppressions_read(start);
        self.step(n == 0);
        if n == 0 {
            self.eof = true;
        }
        n == 0
    }

    pub fn finish(&mut self) {
        if self.done {
            return;
        }
        if !self.head_taken {
            let short = self.staged.len() < SNIFF_BYTES;
            self.take_head();
            if short {
                self.suppressions_read(self.buf.len());
            }
        }
        if !self.skip {
            if !self.eof {
                if !self.staged.is_empty() {
                    let piece = std::mem::take(&mut self.staged);
                    self.read(&piece);
                }
                if self.tail {
                    // (a long file's last lines are read before its end is: its end is a region of its own)
                    self.step(false);
                }
                self.read(b"");
                self.eof = true;
            }
            let buf = std::mem::take(&mut self.buf);
            for mut s in self.ext.finish() {
                self.emit(&mut s, b"", u64::MAX, &buf, None);
            }
            self.names_to(self.buf_off + buf.len() as u64, true, &buf);
            self.buf = buf;
        }
        self.table.finish();
        if self.segments.is_some() {
            self.keys = Some(self.table.keys());
        }
        self.done = true;
    }

    fn step(&mut self, eof: bool) {
        self.read_runaway();
        let len = self.buf.len();
        let mut last_nl = memchr::memrchr(b'\n', &self.buf);
        if !eof {
            if let Some(nl) = last_nl {
                if open_attribute(&self.buf, nl.saturating_sub(256), nl) {
                    last_nl = memchr::memrchr(b'\n', &self.buf[..nl]);
                }
            }
        }
        let limit = if eof {
            Some(len)
        } else if let Some(nl) = last_nl {
            Some(nl + 1)
        } else if len >= self.opts.max_line {
            None
        } else {
            return;
        };
        match limit {
            Some(limit) => {
                let buf = std::mem::take(&mut self.buf);
                self.not_utf8(&buf[..limit]);
                let long = self.long_line(&buf[..limit]);
                if let Some((line, _)) = long.as_ref().filter(|_| self.opts.every_site) {
                    self.rescope(line);
                }
                self.long_rows = None;
                self.hand_lists(long.as_ref(), &buf);
                self.lineno = self.region(&buf, limit);
                self.track_end(&buf[..limit], long);
                self.names_to(self.buf_off + limit as u64, false, &buf);
                self.buf = buf;
                self.col_base =
                    if limit > 0 && self.buf[limit - 1] == b'\n' { 0 } else { self.col_base + limit as u64 };
                self.buf_off += limit as u64;
                self.buf.drain(..limit);
            }
            None => {
                let buf = std::mem::take(&mut self.buf);
                let mut found = Vec::new();
                let start = self.mid_line(self.col_base);
                let line = self.lineno + self.drift;
                if self.col_base == 0 && self.opts.every_site {
                    // (a module's line says it at its start; a function's or computation's, its whole line)
                    let first = &buf[..memchr::memchr(b'\n', &buf).unwrap_or(len)];
                    if let Some(ScopeLine::Reset) = scope_by_start(rstrip(first), false) {
                        self.scope.reset();
                    }
                    self.long_rows = Some((self.table.count(), None));
                }
                let at = (self.buf_off, self.lineno, self.col_base);
                let mut ln = self.ext.scan_window(&buf, at, start, &mut found);
                let off = self.buf_off as i64;
                let cut = self.window_cut(&buf, len - self.opts.overlap, &found) as i64;
                let mut nxt = cut;
                for mut s in found.drain(..) {
                    // (a value the window's end cuts is passed over, as one longer than the overlap always was)
                    if (s.start as i64) - off < cut && s.flags & FLAG_UNFINISHED == 0 {
                        nxt = nxt.max(s.end as i64 - off);
                        if is_region_list(&s) {
                            complete_on(&mut ln, &mut s);
                            s.own(&buf);
                            self.held_lists.push(s);
                        } else {
                            self.emit(&mut s, &buf, self.buf_off, &buf, Some(&mut ln));
                        }
                    }
                }
                self.ext.release(ln);
                let nxt = crate::reader::utf8::char_start(&buf, nxt.max(0) as usize);
                self.window_not_utf8(&buf, nxt);
                self.carry_head(&buf[..nxt], line);
                self.drift += count_nl(&buf[..nxt]);
                self.line_start = start.unwrap_or_else(|| LineStart::of_line(&buf)).after(&buf[..nxt]);
                self.names_to(self.buf_off + nxt as u64, false, &buf);
                self.buf = buf;
                self.col_base += nxt as u64;
                self.buf_off += nxt as u64;
                self.buf.drain(..nxt);
            }
        }
    }

    /// What a line's bytes before a text at column base `col` leave open (None: the text starts its line).
    fn mid_line(&self, col: u64) -> Option<LineStart> {
        (col > 0).then_some(self.line_start)
    }

    /// A site for each line of `region` (complete lines at `buf_off`) holding a byte that is not UTF-8
    /// outside a `//` comment (`utf8`): no compiler reads that line, and a value in it may hide.
    fn not_utf8(&mut self, region: &[u8]) {
        // (the rest of a long line whose windows showed one, or a `//`, shows none)
        let said = if self.col_base > 0 && self.unreadable_said { memchr::memchr(b'\n', region) } else { None };
        for at in crate::reader::utf8::invalid_outside_comments(region) {
            if said.is_some_and(|nl| at < nl) {
                continue;
            }
            let mut s = crate::reader::utf8::not_utf8_site(region, at, (self.buf_off, self.lineno, self.col_base));
            let line = &region[..crate::reader::utf8::line_end(region, at)];
            self.emit(&mut s, line, self.buf_off, region, None);
        }
    }

    /// The first byte no compiler reads in the part of a long line's window read (`buf[..nxt]`, `nxt` a
    /// character's start), as `not_utf8` reads its line: one for the line, none after a `//` (one the cut
    /// splits too). Its site runs to the part's end: the line's end is not yet read.
    fn window_not_utf8(&mut self, buf: &[u8], nxt: usize) {
        if self.col_base == 0 {
            self.unreadable_said = false;
        }
        if self.unreadable_said {
            return;
        }
        let part = &buf[..nxt];
        if let Some(&at) = crate::reader::utf8::invalid_outside_comments(part).first() {
            let mut s =
                crate::reader::utf8::not_utf8_site(part, at, (self.buf_off, self.lineno + self.drift, self.col_base));
            let line = &part[..crate::reader::utf8::line_end(part, at)];
            let row = self.table.count();
            self.emit(&mut s, line, self.buf_off, buf, None);
            if let Some((_, skip)) = self.long_rows.as_mut().filter(|_| self.table.count() > row) {
                *skip = Some(row);
            }
            self.unreadable_said = true;
        }
        self.unreadable_said |= memchr::memmem::find(&buf[..(nxt + 1).min(buf.len())], b"//").is_some();
    }

    /// The lists read in a long line's windows, its end come (`long`: the line as `long_line` gives it):
    /// held for their region's close when it opens one, else into the table.
    fn hand_lists(&mut self, long: Option<&(Vec<u8>, u64)>, buf: &[u8]) {
        let held = std::mem::take(&mut self.held_lists);
        match long {
            Some((line, at)) if rstrip(line).ends_with(b"{") => self.ext.hold_region(*at, held),
            _ => {
                for mut s in held {
                    self.emit(&mut s, b"", u64::MAX, buf, None);
                }
            }
        }
    }

    /// The scope the long line `line` (as `long_line` gives it) opens, or resets, now ended: its own
    /// sites, read in its windows, are in the scope it opens (as a whole line's are).
    fn rescope(&mut self, line: &[u8]) {
        let scope = scope_in(line, true);
        let opens = matches!(scope, ScopeLine::Open(..));
        self.open_scope(scope);
        if let Some((from, skip)) = self.long_rows.filter(|_| opens) {
            self.table.rescope(from, skip, &mut self.scope);
        }
    }

    /// The long line `region` (complete lines) ends, as a reader of its start and end sees it (`heads`),
    /// and the line it is on; None when `region` starts a line. A scope's name on it too long to keep
    /// makes it a line the scan cannot read (`name_too_long`).
    fn long_line(&mut self, region: &[u8]) -> Option<(Vec<u8>, u64)> {
        let mut head = self.long_head.take().filter(|_| self.col_base > 0)?;
        let line = head.line;
        head.read(&region[..memchr::memchr(b'\n', region).unwrap_or(region.len())]);
        if let Some(at) = head.overlong() {
            self.name_too_long.get_or_insert((line, at as u64 + 1));
        }
        Some((head.into_line(b""), line))
    }

    /// A long line's window part read (`part`, its first byte on line `line`): the line's head carried to
    /// its end; lines that end in it (one joined to the next: `key =`) read by `ends`, each from its head.
    fn carry_head(&mut self, part: &[u8], line: u64) {
        let Some(q) = memchr::memrchr(b'\n', part) else {
            match &mut self.long_head {
                Some(head) => head.read(part),
                None => self.long_head = Some(LineHead::new(part, line)),
            }
            return;
        };
        let first = memchr::memchr(b'\n', part).unwrap_or(q);
        let head = self.long_head.take().unwrap_or_else(|| LineHead::new(b"", line));
        let at = head.line;
        let mut lines = head.into_line(&part[..first]);
        lines.extend_from_slice(&part[first..=q]);
        let n = count_nl(&lines);
        self.ends.read(&lines, 0, at + n, at + n - 1);
        self.long_head = Some(LineHead::new(&part[q + 1..], line + count_nl(part)));
    }

    /// What the lines of `region` (the buffer up to where line `lineno` starts) leave open (`Ends`); a
    /// long line it ends (`long`, and the line it is on) read from its head first.
    fn track_end(&mut self, region: &[u8], long: Option<(Vec<u8>, u64)>) {
        let nl = memchr::memchr(b'\n', region);
        if let Some((mut line, at)) = long {
            if nl.is_some() {
                line.push(b'\n');
            }
            self.ends.read(&line, 0, at + u64::from(nl.is_some()), at);
        }
        let from = if self.col_base == 0 { 0 } else { nl.map_or(region.len(), |q| q + 1) };
        let end_line = self.lineno + self.drift;
        let last = end_line - u64::from(region.last() == Some(&b'\n'));
        self.ends.read(region, from, end_line, last);
    }

    /// A value too long for any window read on through the buffer: one that closes on its line is kept
    /// in `too_long` (the scan cannot read it); one whose line ends first is text, as a scan of the
    /// whole line reads it.
    fn read_runaway(&mut self) {
        let Some((r, at)) = self.runaway.as_mut() else { return };
        let from = r.read_to.saturating_sub(self.buf_off) as usize;
        let done = self.buf.get(from..).and_then(|rest| r.read(rest));
        if let Some(closed) = done {
            if closed && self.too_long.is_none() {
                self.too_long = Some(*at);
            }
            self.runaway = None;
        }
    }

    /// Where the window `buf` of an over-long line is cut (`windows::window_cut`, at `cut` at the latest
    /// unless a value spans it), given the sites found in it; the first value too long for any window
    /// is kept in `too_long`.
    fn window_cut(&mut self, buf: &[u8], cut: usize, found: &[Site]) -> usize {
        let off = self.buf_off;
        let mut spans: Vec<(usize, usize)> = found
            .iter()
            .filter(|s| s.start >= off)
            .map(|s| ((s.start - off) as usize, (s.end - off) as usize))
            .collect();
        spans.sort_unstable();
        let c = crate::reader::windows::window_cut(buf, cut, &spans);
        if let Some(open) = c.too_long.filter(|_| self.runaway.is_none()) {
            let mut r = Runaway::new(buf[open], off + open as u64 + 1);
            r.read(&buf[open + 1..]); // (runs on: the window holds no close, nor a line break)
            self.runaway = Some((r, (self.lineno + self.drift, self.col_base + 1)));
        }
        c.at
    }

    /// A site into the table, with the text it was scanned in (its physical line is cut from there,
    /// if the table keeps it); `buf` is the buffer at `buf_off` (for a module header's names segment).
    /// `ln` is the line the site was scanned in (None: the site is complete, see `Site::context`).
    /// Hands a site to the table; the group it joins, if it has one.
    fn emit(&mut self, s: &mut Site, text: &[u8], text_off: u64, buf: &[u8], mut ln: Option<&mut Line>) -> Option<u32> {
        let header = s.kind == SiteKind::ModuleStart;
        if header {
            let at = s.start.wrapping_sub(text_off) as usize;
            self.ends.module_start(text.get(at..).unwrap_or_default(), s.line);
            self.scope.reset();
            self.header(s.start, buf);
        }
        if self.opts.names {
            // trace reads the sharded values, meshes, device counts and headers, and of the rows between two
            // headers only whether there is one and the first's line: a long module's collectives make no rows
            if !header && !followed(s.kind) && self.row_since_header {
                return None;
            }
            self.row_since_header = !header;
        }
        let mut complete = |site: &mut Site| {
            if let Some(ln) = ln.as_deref_mut() {
                complete_on(ln, site);
            }
        };
        self.table.push(Row { site: s, text, text_off, scope: &mut self.scope, complete: &mut complete })
    }

    /// A line's sites (the line `text` at file offset `at`) into the table in order, with the arguments
    /// the extractor passed over (`arguments`) between them; the group of its last site with a value.
    fn emit_line(&mut self, sites: &mut [Site], (text, at): (&[u8], u64), buf: &[u8], ln: &mut Line) -> Option<u32> {
        let alike = !self.arguments.skip.is_empty();
        if alike {
            self.arguments.hlo_on_line = sites.iter().any(|s| pairing(s) == Some(true));
        }
        let mut group = None;
        for k in 0..sites.len() {
            if alike {
                self.arguments.count_before(sites[k].start - at, (text, at), sites, &mut self.table);
            }
            let joined = self.emit(&mut sites[k], text, at, buf, Some(ln));
            if sites[k].kind < SiteKind::SdyOrigins {
                group = joined;
            }
            if alike {
                self.arguments.joined.push(joined);
            }
        }
        if alike {
            self.arguments.count_before(u64::MAX, (text, at), sites, &mut self.table);
            self.arguments.clear();
        }
        group
    }

    /// A module header at file offset `at`: a new names segment begins there.
    fn header(&mut self, at: u64, buf: &[u8]) {
        if let Some(n) = &mut self.segments {
            n.header(at, buf, self.buf_off);
        }
    }

    /// Definitions and digest over the bytes up to file offset `to` (held in `buf`, at `buf_off`).
    fn names_to(&mut self, to: u64, close: bool, buf: &[u8]) {
        if let Some(n) = &mut self.segments {
            n.read_to(to, close, buf, self.buf_off);
        }
    }

    /// A constraint line of line `lineno` met before in its module (`repeats`), its value from file offset
    /// `base` on: counted as the first one's group again, at its value's place, without being read.
    /// Whether it was.
    fn counted_again(&mut self, op: u8, tail: &[u8], base: u64, lineno: u64) -> bool {
        let Some(seen) = self.repeats.get(self.table.module(), op, tail) else { return false };
        self.table.repeat(seen.group, base + seen.start, base + seen.end, lineno, None);
        true
    }

    /// A constraint line's one site (of `group`), its value from `base` on, kept for the next line like it
    /// (`repeats`); a line that gave more sites, or another kind, is not.
    fn remember(&mut self, op: u8, tail: &[u8], base: u64, sites: &[Site], group: Option<u32>) {
        let mut valued = sites.iter().filter(|s| s.kind < SiteKind::SdyOrigins);
        let (Some(s), None, Some(group)) = (valued.next(), valued.next(), group) else { return };
        if s.kind != SiteKind::SdyShardingBare || s.start < base {
            return;
        }
        let seen = Seen { group, start: s.start - base, end: s.end - base };
        self.repeats.put(self.table.module(), op, tail, seen);
    }

    /// The scope `line` opens (or resets), as it now is.
    fn scope_line(&mut self, line: &[u8], holds: Holds) {
        self.open_scope(scope_in(line, holds.func));
    }

    /// The scope a line opens (or resets).
    fn open_scope(&mut self, scope: ScopeLine<'_>) {
        match scope {
            ScopeLine::Open(name, kind, entry) => self.scope.open(name, kind, entry),
            ScopeLine::Reset => self.scope.reset(),
            ScopeLine::Nothing => {}
        }
    }

    /// The sites of the complete lines in `buf[..limit]`.
    /// Returns the line number at `limit` (the newlines are counted once, between the candidates).
    fn region(&mut self, buf: &[u8], limit: usize) -> u64 {
        let mut begin = 0usize;
        let mut counted = 0usize;
        let mut done = 0usize;
        let mut lineno = self.lineno;
        let rare = Rare::of(&buf[..limit], self.opts.every_site);
        loop {
            let with_close = self.ext.pending();
            let mut restart = None;
            let mut from = begin.max(done);
            let mut ahead = Searches { scopes: self.opts.every_site, ..Searches::default() };
            while from < limit {
                let f = &self.finders[usize::from(with_close)];
                let Some(c) = next_candidate(f, &mut ahead, buf, from, limit) else { break };
                from = c.end + 1;
                // (the rest of a long line says no scope: its head did, `long_line`)
                let scoped = self.opts.every_site && (c.start > 0 || self.col_base == 0);
                if !c.keyword {
                    if scoped {
                        self.scope_line(&buf[c.start..c.end], rare.holds(c.start, c.end));
                    }
                    continue;
                }
                let end = line_end(buf, c.start, c.end, limit);
                done = end + 1;
                from = from.max(done);
                let text = buf[c.start..end].strip_suffix(b"\r").unwrap_or(&buf[c.start..end]);
                lineno += count_nl(&buf[counted..c.start]);
                let at = self.buf_off + c.start as u64;
                let col = if c.start == 0 { self.col_base } else { 0 };
                // (a line read alone, as a scan that keeps each group's first site reads it: see `repeats`)
                let alone = col == 0 && end == c.end && !self.opts.every_site && !self.ext.pending();
                let constraint = if alone { constraint_line(text) } else { None };
                if constraint.is_some_and(|(op, v)| self.counted_again(op, &text[v..], at + v as u64, lineno)) {
                    counted = end;
                    continue;
                }
                // (what the logical line may hold: for its first physical line too, whose search finds
                // nothing of what starts after it)
                let holds = rare.holds(c.start, end);
                // (a scan that keeps each group's first site tracks no scope: `check` reads none)
                if scoped {
                    self.scope_line(&buf[c.start..c.end], holds);
                }
                let sig = alone.then(|| lex_signature(text));
                if let Some(Some(sig)) = &sig {
                    self.arguments.find(text, sig);
                }
                let mut sites = std::mem::take(&mut self.sites);
                let hits = LineHits { ahead: &mut ahead, finder: f, buf, at: c.start, limit };
                let known = Known { holds, sig, start: self.mid_line(col) };
                let skip = &mut self.arguments.skip;
                let mut ln = self.ext.scan_line_with(text, (at, lineno, col), &mut sites, hits, known, skip);
                let group = self.emit_line(&mut sites, (text, at), buf, &mut ln);
                if let Some((op, v)) = constraint {
                    self.remember(op, &text[v..], at + v as u64, &sites, group);
                }
                sites.clear();
                self.ext.release(ln);
                self.sites = sites;
                // counted on from the line's end: its own bytes hold line breaks only where it was joined
                if end > c.end {
                    lineno += count_nl(&buf[c.end..end]);
                }
                counted = end;
                if self.ext.pending() && !with_close && end < limit {
                    restart = Some(end + 1);
                    break;
                }
            }
            match restart {
                None => break,
                Some(r) => {
                    lineno += count_nl(&buf[counted..r]);
                    begin = r;
                    counted = r;
                }
            }
        }
        lineno + count_nl(&buf[counted..limit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(data: &[u8], opts: Options) -> Engine {
        let mut e = Engine::new(opts).unwrap();
        e.feed(data);
        e.finish();
        e
    }

    #[test]
    fn open_attribute_lines_join() {
        assert!(open_attribute(b"a xla.sdy.meshes =", 0, 18));
        assert!(!open_attribute(b"a = b", 0, 5));
        let buf = b"x {xla.sdy.meshes =\n  \"{}\"}\nnext\n";
        assert_eq!(line_end(buf, 0, 19, buf.len()), 27);
        assert_eq!(line_end(buf, 28, 32, buf.len()), 32);
    }

    #[test]
    fn crlf_and_lines() {
        let e = run(b"HloModule m\r\n  %x = f32[8]{0} parameter(0), sharding={replicated}\r\n", Options::default());
        assert_eq!(e.kind, "hlo");
        assert_eq!(e.table.count(), 1);
        assert_eq!(e.table.u32s[6], vec![2]); // line
        assert_eq!(e.table.u32s[7], vec![41]); // col
    }

    #[test]
    fn windows_find_values_in_a_long_line() {
        let mut data = b"HloModule m\n".to_vec();
        for _ in 0..200 {
            data.extend_from_slice(b"xxxxxxxxxx sharding={replicated} ");
        }
        let small = Options { chunk: 64, max_line: 256, overlap: 100, ..Options::default() };
        let e = run(&data, small);
        assert_eq!(e.table.count(), 200);
        assert_eq!(e.table.groups.len(), 1);
        assert_eq!(e.table.groups[0][5], 200);
    }

    #[test]
    fn pieces_do_not_matter() {
        let data = b"module {\n  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}) {\n";
        let whole = run(data, Options::default());
        let mut e = Engine::new(Options::default()).unwrap();
        for b in data.chunks(3) {
            e.feed(b);
        }
        e.finish();
        assert_eq!(e.table.u32s, whole.table.u32s);
        assert_eq!(e.table.scopes.items(), vec![&("main".to_string(), "func", true)]);
    }

    #[test]
    fn reads_made_ahead_by_a_thread_scan_as_reads_made_in_turn() {
        let mut data = b"module @m {\n  sdy.mesh @mesh = <[\"x\"=2]>\n".to_vec();
        for i in 0..3000 {
            data.extend_from_slice(
                format!("  %{i} = sdy.sharding_constraint %a <@mesh, [{{\"x\"}}]> : tensor<8xf32>\n").as_bytes(),
            );
        }
        let opts = Options { chunk: 4096, names: true, ..Options::default() };
        let scan = |ahead: bool, limit: u64| {
            let mut e = Engine::new(opts).unwrap();
            let mut r = &data[..];
            let read = if ahead { e.read_all_ahead(&mut r, limit) } else { e.read_all(&mut r, limit) };
            read.map(|()| {
                e.finish();
                (
                    e.table.u32s.clone(),
                    e.table.starts.clone(),
                    e.lines(),
                    e.size,
                    e.segments.as_ref().map_or_else(Vec::new, |n| n.digests.clone()),
                )
            })
        };
        let plain = scan(false, u64::MAX).unwrap();
        assert!(plain.0[0].len() > 3000);
        assert_eq!(scan(true, u64::MAX).unwrap(), plain);
        // a file longer than it was when opened stops the reads there (its reader tells from the size
        // read), and the reading thread is let go
        for ahead in [true, false] {
            let (.., size, _) = scan(ahead, data.len() as u64 - 5000).unwrap();
            assert!(size > data.len() as u64 - 5000 && size < data.len() as u64);
        }
        let mut skipped = Engine::new(opts).unwrap();
        let binary = vec![0u8; 1 << 20];
        skipped.read_all_ahead(&mut &binary[..], u64::MAX).unwrap();
        assert!(skipped.skipping() && skipped.size == SNIFF_BYTES as u64);
    }

    #[test]
    fn bad_options() {
        assert!(Engine::new(Options { chunk: 0, ..Options::default() }).is_err());
        assert!(Engine::new(Options { max_line: 10, overlap: 10, ..Options::default() }).is_err());
    }
}
