//! Cutter: a long dump read once and cut into jobs of about `piece_bytes` each, as
//! `shardconv/scan/pieces.py` describes them: a piece of whole dumps (cut just before a pass log's dump
//! lines) or whole modules and functions (before their top-level lines), then the dumps after it that
//! repeat the one before them, left unscanned. Reading, cutting, comparing a dump with the one before
//! and gathering a piece's bytes happen here, with the interpreter's lock released: Python gets jobs.

use crate::extract::SiteKind;
use crate::reader::lines::{Engine, Options};
use crate::sniff::{sniff, SNIFF_BYTES};
use crate::strings::count_nl;
use memchr::memmem::Finder;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;

/// What every propagation record's keyword spells (a piece left unscanned tells whether it holds one).
pub const RECORD_WORDS: [&[u8]; 2] = [b"sharding_origin", b"propagation_edges"];

/// How a log is cut (see `pieces.Cuts`), and the sizes that bound its pieces and its memory.
#[derive(Clone)]
pub struct CutOptions {
    /// Cut before these lines, each given with the line break before it.
    pub lines: Vec<Vec<u8>>,
    /// A pass log's dump line (line break first): a whole dump starting with it may repeat the one before.
    pub dump_line: Vec<u8>,
    /// A module's top-level function line (line break first): never cut from its module's head.
    pub function_line: Vec<u8>,
    pub repeats: bool,
    pub holding: Vec<Vec<u8>>,
    pub holding_line: Option<u64>,
    pub piece_bytes: usize,
    pub held_bytes: usize,
    pub feed_bytes: usize,
    pub read_size: usize,
    pub engine: Options,
    /// Whether each piece is scanned at its place in the log: its lines and bytes the log's.
    pub placed: bool,
    /// Whether a piece begins only at a line the scan reads as a module's start (a bare `HloModule m`
    /// line holds no keyword: the scan of the whole log reads on in the module before).
    pub whole_modules: bool,
    /// Whether a piece fed to its scan as it comes (past `feed_bytes`) hands on the rows made so far at
    /// each feed (`Engine::drain`), so that a reader of every site of one long module holds a part of it.
    pub drain: bool,
    /// The file the log is, when it can be read again: a segment of a piece defining more than
    /// `names_held` bytes of names lets them go, and trace reads the names it asks about again
    /// (`Defined::resolve`), so a long module's definitions never stay in memory.
    pub names_file: Option<Arc<PathBuf>>,
    pub names_held: usize,
}

/// What a log reads from: `fill` appends up to `n` bytes to `buf`, how many came (0: the end). A file
/// (or bytes) reads straight into the buffer's spare room; `Read` alone would zero it first.
pub trait Fill {
    fn fill(&mut self, buf: &mut Vec<u8>, n: usize) -> io::Result<usize>;
}

/// `Fill::fill` through a reader's own `read_to_end` (a file's and a byte slice's skip the zeroing).
pub fn fill_from<R: Read>(r: &mut R, buf: &mut Vec<u8>, n: usize) -> io::Result<usize> {
    r.take(n as u64).read_to_end(buf)
}

impl Fill for &[u8] {
    fn fill(&mut self, buf: &mut Vec<u8>, n: usize) -> io::Result<usize> {
        fill_from(self, buf, n)
    }
}

/// Bytes of the log in order (offsets into the whole log): a dump whole, from its cut line to the
/// next, else a piece of one too big to hold. `at_line`: it starts at a cut line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    pub start: u64,
    pub end: u64,
    pub whole: bool,
    pub at_line: bool,
}

/// The log's bytes read but not yet handed on (`buf[at..]`), and the dump before's, kept for the
/// comparison (`buf[..at]` from `pin` on).
struct Log<R> {
    src: R,
    buf: Vec<u8>,
    base: u64, // the log offset of `buf[0]`
    at: usize,
    pin: u64,
    eof: bool,
    ended: bool,
    read_more_first: bool, // (a part too big to hold was handed on: read before looking again)
    total: u64,
    whole: bool,
    at_line: bool,
    searched: usize, // from `at`, where the next cut line may start
    finders: Vec<Finder<'static>>,
    longest: usize,
    read_size: usize,
    held_bytes: usize,
}

impl<R: Fill> Log<R> {
    fn new(src: R, cuts: &[Vec<u8>], read_size: usize, held_bytes: usize) -> Self {
        let finders = cuts.iter().map(|c| Finder::new(c).into_owned()).collect();
        let longest = cuts.iter().map(Vec::len).max().unwrap_or(0);
        Log {
            src,
            buf: Vec::new(),
            base: 0,
            at: 0,
            pin: 0,
            eof: false,
            ended: false,
            read_more_first: false,
            total: 0,
            whole: true,
            at_line: false,
            searched: 0,
            finders,
            longest,
            read_size: read_size.max(1),
            held_bytes,
        }
    }

    /// The first `SNIFF_BYTES` (fewer at the end): they decide whether the log is scanned at all.
    fn read_head(&mut self) -> io::Result<()> {
        self.fill(SNIFF_BYTES)?;
        Ok(())
    }

    /// Appends up to `n` bytes (fewer only at the end); how many came.
    fn fill(&mut self, n: usize) -> io::Result<usize> {
        self.buf.reserve(n);
        let got = self.src.fill(&mut self.buf, n)?;
        self.total += got as u64;
        Ok(got)
    }

    fn bytes(&self, p: &Part) -> &[u8] {
        &self.buf[(p.start - self.base) as usize..(p.end - self.base) as usize]
    }

    /// The pending bytes from log offset `from` on, at most `n` of them.
    fn from(&self, from: u64, n: usize) -> &[u8] {
        let a = (from - self.base) as usize;
        &self.buf[a..self.buf.len().min(a + n)]
    }

    /// Where the first cut line at or after `start` (in `buf`) begins (its line break).
    fn find(&self, start: usize) -> Option<usize> {
        let hay = self.buf.get(start..)?;
        self.finders.iter().filter_map(|f| f.find(hay)).min().map(|i| start + i)
    }

    /// The next `n` pending bytes as a part.
    fn part(&mut self, n: usize, whole: bool) -> Part {
        let start = self.base + self.at as u64;
        self.at += n;
        Part { start, end: start + n as u64, whole, at_line: self.at_line }
    }

    /// The next part of the log (none of them empty), cut before a cut line once the bytes a piece
    /// starting there is sniffed by are read too; one too big to hold is handed on as it settles.
    fn next_part(&mut self) -> io::Result<Option<Part>> {
        if self.ended {
            return Ok(None);
        }
        if std::mem::take(&mut self.read_more_first) {
            self.searched = (self.buf.len() - self.at).saturating_sub(self.longest);
            self.read_more()?;
        }
        loop {
            let pending = self.buf.len() - self.at;
            let i = self.find(self.at + self.searched).map(|f| f - self.at);
            if let Some(i) = i.filter(|&i| i + 1 + SNIFF_BYTES <= pending || self.eof) {
                let part = self.part(i + 1, self.whole && i < self.held_bytes);
                (self.whole, self.at_line, self.searched) = (true, true, 1);
                return Ok(Some(part));
            }
            if i.is_none() && self.eof {
                self.ended = true;
                return Ok((pending > 0).then(|| self.part(pending, self.whole && pending <= self.held_bytes)));
            }
            if i.is_none() && pending > self.held_bytes {
                let settled = (pending.saturating_sub(SNIFF_BYTES + self.longest)).max(1);
                let part = self.part(settled, false);
                (self.whole, self.at_line, self.read_more_first) = (false, false, true);
                return Ok(Some(part));
            }
            self.searched = i.unwrap_or(pending).saturating_sub(self.longest);
            self.read_more()?;
        }
    }

    /// Drops what is neither pending nor pinned, then reads at least as much as is pending (a long dump
    /// is then copied a bounded number of times as it builds up).
    fn read_more(&mut self) -> io::Result<()> {
        let keep = (self.pin.max(self.base) - self.base).min(self.at as u64) as usize;
        self.buf.drain(..keep);
        self.base += keep as u64;
        self.at -= keep;
        let want = self.read_size.max(self.buf.len() - self.at);
        self.eof = self.fill(want)? == 0;
        Ok(())
    }
}

/// Whether the first line of `text` is a module's start as the scan reads it (a header site of its own).
fn opens_module(text: &[u8]) -> bool {
    let line = &text[..memchr::memchr(b'\n', text).map_or(text.len(), |e| e + 1)];
    let Ok(mut e) = Engine::new(Options { every_site: false, ..Options::default() }) else { return false };
    e.feed(line);
    e.finish();
    e.table.values.items.iter().any(|v| v.kind == SiteKind::ModuleStart)
}

/// Whether a piece holds what its reader looks for, told from its bytes given in parts.
pub enum Looker {
    /// Whether the bytes spell any of the needles, within a part or across parts.
    Words { needles: Vec<Vec<u8>>, found: bool, tail: Vec<u8>, keep: usize },
    /// Whether the bytes, after `before` line breaks, hold line `line` (or the line after them).
    Line { before: u64, line: u64, seen: u64, found: bool },
}

impl Looker {
    pub fn words(needles: Vec<Vec<u8>>) -> Self {
        let keep = needles.iter().map(Vec::len).max().unwrap_or(1).saturating_sub(1);
        Looker::Words { needles, found: false, tail: Vec::new(), keep }
    }

    pub fn line(before: u64, line: u64) -> Self {
        Looker::Line { before, line, seen: 0, found: false }
    }

    pub fn found(&self) -> bool {
        match self {
            Looker::Words { found, .. } | Looker::Line { found, .. } => *found,
        }
    }

    /// Whether the bytes so far, `data` the last of them, hold what is looked for.
    pub fn add(&mut self, data: &[u8]) -> bool {
        match self {
            Looker::Words { needles, found, tail, keep } => {
                if !*found {
                    let mut edge = std::mem::take(tail);
                    let joined = edge.len();
                    edge.extend_from_slice(&data[..data.len().min(*keep)]);
                    let spelled = |hay: &[u8]| needles.iter().any(|n| memchr::memmem::find(hay, n).is_some());
                    *found = spelled(&edge) || spelled(data);
                    edge.truncate(joined);
                    edge.extend_from_slice(&data[data.len().saturating_sub(*keep)..]);
                    *tail = edge.split_off(edge.len().saturating_sub(*keep));
                }
                *found
            }
            Looker::Line { before, line, seen, found } => {
                *seen += count_nl(data);
                *found = *before < *line && *line <= *before + *seen + 1;
                *found
            }
        }
    }
}

/// A piece's bytes, held for the job that scans them; past `feed_bytes` (a dump with no cut line in
/// hundreds of MB) they are fed to its scan as they come, so memory stays bounded. With a looker, the
/// piece is scanned only if it finds what it looks for (or some bytes were fed already).
pub struct Held {
    engine: Engine,
    /// What the sniff of the log's head says it is, for a piece scanned at its place: its scan's kind.
    head: Option<(&'static str, &'static str)>,
    data: Vec<u8>,
    pub size: u64,
    looker: Option<Looker>,
    fed_any: bool,
    feed_bytes: usize,
    drain: bool,
    /// The rows drained so far, each a finished scan, not yet handed on.
    parts: Vec<Engine>,
}

/// What a job's piece became: its scan (finished; after the parts of it drained and not yet handed on),
/// or left unscanned (its size, its line breaks, and whether it spells a propagation record's keyword).
pub enum Made {
    Scanned(Vec<Engine>),
    Unscanned { size: u64, lines: u64, records: bool },
}

impl Held {
    /// A piece starting at byte `at` of the log, after `lines` line breaks, whose head the sniff says
    /// is `head`.
    fn new(
        opts: &CutOptions,
        looker: Option<Looker>,
        (at, lines): (u64, u64),
        head: (&'static str, &'static str),
    ) -> Result<Self, String> {
        let mut engine = Engine::new(opts.engine)?;
        if opts.placed {
            engine.place(at, lines);
        }
        if let (Some(path), Some(segments)) = (&opts.names_file, engine.segments.as_mut()) {
            // (a placed piece's offsets are the file's already)
            segments.read_again_from(path.clone(), if opts.placed { 0 } else { at }, opts.names_held);
        }
        let head = opts.placed.then_some(head);
        // (room for a piece and its last dump, as most pieces end: no copy as it builds up)
        let data = Vec::with_capacity(opts.piece_bytes.min(opts.feed_bytes).saturating_add(1 << 18));
        let (fed_any, feed_bytes, drain, parts) = (false, opts.feed_bytes, opts.drain, Vec::new());
        Ok(Held { engine, head, data, size: 0, looker, fed_any, feed_bytes, drain, parts })
    }

    fn add(&mut self, data: &[u8]) -> Result<(), String> {
        if let Some(l) = self.looker.as_mut() {
            l.add(data);
        }
        self.data.extend_from_slice(data);
        self.size += data.len() as u64;
        if self.data.len() > self.feed_bytes {
            self.engine.feed(&self.data);
            self.data.clear();
            self.fed_any = true;
            if self.drain {
                let part = self.engine.drain()?;
                self.parts.push(part);
            }
        }
        Ok(())
    }

    /// The parts drained so far, each with the kind of the log's head when placed (as `run` gives it).
    fn take_parts(&mut self) -> Vec<Engine> {
        let mut parts = std::mem::take(&mut self.parts);
        if let Some((kind, reason)) = self.head {
            for p in &mut parts {
                (p.kind, p.reason) = (kind, reason);
            }
        }
        parts
    }

    /// The piece's scan: what is held fed at once.
    pub fn run(mut self) -> Made {
        if self.looker.as_ref().is_some_and(|l| !l.found()) && !self.fed_any {
            let records = RECORD_WORDS.iter().any(|w| memchr::memmem::find(&self.data, w).is_some());
            return Made::Unscanned { size: self.size, lines: count_nl(&self.data), records };
        }
        if !self.fed_any {
            self.engine.size_hint(self.size); // (the table's columns sized once, not grown by copying)
        }
        self.engine.feed(&self.data);
        self.data = Vec::new();
        self.engine.finish();
        if let Some((kind, reason)) = self.head {
            (self.engine.kind, self.engine.reason) = (kind, reason); // (the whole log's, as its scan says)
        }
        let mut made = self.take_parts();
        made.push(self.engine);
        Made::Scanned(made)
    }
}

/// Pieces in order, to be made in one call: the parts drained of a piece still being read (alone in their
/// job), or a piece to scan, then dumps left unscanned (each its text and its line breaks).
#[derive(Default)]
pub struct Job {
    pub parts: Vec<Engine>,
    pub piece: Option<Held>,
    pub repeats: Vec<(Vec<u8>, u64)>,
    repeated: u64,
}

impl Job {
    fn size(&self) -> u64 {
        self.piece.as_ref().map_or(0, |p| p.size) + self.repeated
    }
}

/// A log cut into jobs, one `next_job` at a time.
pub struct Cutter<R> {
    log: Log<R>,
    opts: CutOptions,
    job: Job,
    held: bool,                 // whether `job.piece` takes the parts to come
    before: Option<(u64, u64)>, // the dump before, when whole: where its text after its dump line starts and ends
    lines: u64,                 // line breaks before the part (counted only to find `holding_line` or place a piece)
    pieces: u32,                // the pieces begun so far
    functions: bool,            // whether the module read holds a function yet (its first is never cut from its head)
    started: bool,
    head: (&'static str, &'static str), // what the sniff of the log's head says it is
    pub skipped: bool,
}

impl<R: Fill> Cutter<R> {
    pub fn new(src: R, opts: CutOptions) -> Self {
        let log = Log::new(src, &opts.lines, opts.read_size, opts.held_bytes);
        let (job, held, before, lines, pieces, functions) = (Job::default(), false, None, 0, 0, false);
        let head = ("skip", "empty file");
        Cutter { log, opts, job, held, before, lines, pieces, functions, started: false, head, skipped: false }
    }

    /// The bytes read so far.
    pub fn total(&self) -> u64 {
        self.log.total
    }

    /// The source read (to look at what it says after an error).
    pub fn source(&mut self) -> &mut R {
        &mut self.log.src
    }

    fn take_job(&mut self) -> Option<Job> {
        (self.job.size() > 0).then(|| std::mem::take(&mut self.job))
    }

    /// The next job, in order; None at the end. A log whose head the sniff skips is one job of its head.
    pub fn next_job(&mut self) -> io::Result<Result<Option<Job>, String>> {
        if !self.started {
            self.started = true;
            self.log.read_head()?;
            self.head = sniff(&self.log.buf);
            if self.head.0 == "skip" {
                let mut whole = match Held::new(&self.opts, None, (0, 0), self.head) {
                    Ok(h) => h,
                    Err(e) => return Ok(Err(e)),
                };
                if let Err(e) = whole.add(&self.log.buf) {
                    return Ok(Err(e));
                }
                (self.skipped, self.log.ended) = (true, true);
                return Ok(Ok(Some(Job { piece: Some(whole), ..Job::default() })));
            }
        }
        while let Some(part) = self.log.next_part()? {
            match self.take_part(part) {
                Ok(Some(job)) => return Ok(Ok(Some(job))),
                Ok(None) => {}
                Err(e) => return Ok(Err(e)),
            }
        }
        Ok(Ok(self.take_job()))
    }

    /// Where a whole dump's text after its dump line starts; None for a part of a dump.
    fn body_at(&self, part: &Part) -> Option<u64> {
        let data = self.log.bytes(part);
        if !(part.whole && data.starts_with(&self.opts.dump_line[1..])) {
            return None;
        }
        Some(part.start + memchr::memchr(b'\n', data).map_or(data.len(), |e| e + 1) as u64)
    }

    /// Whether `part`'s text after its dump line (from `body`) is the dump before's, byte for byte.
    fn repeats_before(&self, part: &Part, body: u64) -> bool {
        let Some((b0, b1)) = self.before else { return false };
        let (n, m) = ((part.end - body) as usize, (b1 - b0) as usize);
        n == m && self.log.from(body, n) == self.log.from(b0, m)
    }

    /// Whether a piece may begin with `part`: it starts at a cut line, the sniff scans its head, and (with
    /// `whole_modules`) the scan reads its first line as a module's start.
    fn may_cut(&self, part: &Part) -> bool {
        part.at_line
            && sniff(self.log.from(part.start, SNIFF_BYTES)).0 != "skip"
            && (!self.opts.whole_modules || opens_module(self.log.bytes(part)))
    }

    /// `part` added to the job being made; the job before it when it is complete.
    fn take_part(&mut self, part: Part) -> Result<Option<Job>, String> {
        let body = if self.opts.repeats { self.body_at(&part) } else { None };
        let repeat = body.is_some_and(|b| self.repeats_before(&part, b));
        let function = part.at_line && self.log.bytes(&part).starts_with(&self.opts.function_line[1..]);
        let big = self.held
            && self.job.piece.as_ref().is_some_and(|p| p.size >= self.piece_bytes())
            && (self.functions || !function);
        self.functions = function || (self.functions && !part.at_line);
        if (repeat || big) && self.may_cut(&part) {
            self.held = false;
            if repeat {
                // (the dump before is now this one, the same text: the buffer keeps one, not every repeat)
                (self.before, self.log.pin) = (body.map(|b| (b, part.end)), part.start);
                let text = self.log.bytes(&part).to_vec();
                let lines = count_nl(&text);
                self.lines += lines;
                self.job.repeated += text.len() as u64;
                self.job.repeats.push((text, lines));
                let full = self.job.size() >= self.opts.piece_bytes as u64;
                return Ok(if full { self.take_job() } else { None });
            }
        }
        self.before = body.map(|b| (b, part.end));
        self.log.pin = body.map_or(part.end, |_| part.start);
        let mut done = None;
        if !self.held {
            done = self.take_job();
            let looker = if self.pieces == 0 { None } else { self.looker() };
            let held = Held::new(&self.opts, looker, (part.start, self.lines), self.head)?;
            self.job = Job { piece: Some(held), ..Job::default() };
            (self.held, self.pieces) = (true, self.pieces.saturating_add(1));
        }
        let data = self.log.bytes(&part);
        if self.opts.holding_line.is_some() || self.opts.placed {
            self.lines += count_nl(data);
        }
        if let Some(p) = self.job.piece.as_mut() {
            p.add(data)?;
            if done.is_none() && !p.parts.is_empty() {
                done = Some(Job { parts: p.take_parts(), ..Job::default() });
            }
        }
        Ok(done)
    }

    /// Where the piece being made ends (at the first cut past it): the first pieces an eighth, a quarter
    /// and a half of `piece_bytes`, so that the reader has its first dumps while the next are scanned.
    fn piece_bytes(&self) -> u64 {
        (self.opts.piece_bytes as u64 >> 4u32.saturating_sub(self.pieces)).max(1)
    }

    /// What a piece starting after `lines` line breaks is scanned for, if anything.
    fn looker(&self) -> Option<Looker> {
        if !self.opts.holding.is_empty() {
            return Some(Looker::words(self.opts.holding.clone()));
        }
        self.opts.holding_line.map(|line| Looker::line(self.lines, line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift): the same cases every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    const DUMP: &[u8] = b"\n// -----// IR Dump";
    const MODULE: &[u8] = b"\nmodule ";
    const FUNCTION: &[u8] = b"\n  func.func ";

    fn options(lines: Vec<Vec<u8>>, read_size: usize, held_bytes: usize) -> CutOptions {
        CutOptions {
            lines,
            dump_line: DUMP.to_vec(),
            function_line: FUNCTION.to_vec(),
            repeats: true,
            holding: Vec::new(),
            holding_line: None,
            piece_bytes: 1 << 21,
            held_bytes,
            feed_bytes: 1 << 23,
            read_size,
            engine: Options { names: true, ..Options::default() },
            placed: false,
            whole_modules: false,
            drain: false,
            names_file: None,
            names_held: usize::MAX,
        }
    }

    /// A log of random fragments (cut lines whole and broken, text, long runs).
    fn log(rng: &mut Rng) -> Vec<u8> {
        let fragments: [&[u8]; 9] =
            [DUMP, &DUMP[..7], b"\n", b"module {}\n", b"// -----", FUNCTION, &FUNCTION[..5], MODULE, b"x y z\n"];
        let mut out = Vec::new();
        for _ in 0..rng.next(80) {
            match rng.next(12) {
                10 => out.extend(std::iter::repeat_n(b'a', rng.next(5000))),
                11 => out.extend(std::iter::repeat_n(b'b', 70_000 + rng.next(90_000))),
                k => out.extend_from_slice(fragments[k.min(8)]),
            }
        }
        out
    }

    fn parts(data: &[u8], o: &CutOptions) -> Vec<(Vec<u8>, Part)> {
        let mut l = Log::new(data, &o.lines, o.read_size, o.held_bytes);
        l.read_head().unwrap();
        let mut out = Vec::new();
        while let Some(p) = l.next_part().unwrap() {
            out.push((l.bytes(&p).to_vec(), p));
        }
        out
    }

    #[test]
    fn parts_are_the_log_cut_before_each_cut_line() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let kinds: [Vec<Vec<u8>>; 3] =
            [vec![DUMP.to_vec()], vec![MODULE.to_vec(), FUNCTION.to_vec()], vec![FUNCTION.to_vec(), DUMP.to_vec()]];
        for case in 0..300 {
            let data = log(&mut rng);
            let cuts = &kinds[case % 3];
            let held = [1 << 23, 4000, 1][rng.next(3)];
            let o = options(cuts.clone(), 1 + rng.next(5000), held);
            let got = parts(&data, &o);
            assert_eq!(got.iter().flat_map(|(d, _)| d.clone()).collect::<Vec<u8>>(), data, "case {case}");
            let mut ends = std::collections::HashSet::new();
            for (d, p) in &got {
                assert!(!d.is_empty());
                let inner: Vec<usize> = (0..d.len()).filter(|&i| cuts.iter().any(|c| d[i..].starts_with(c))).collect();
                if p.whole {
                    assert!(inner.iter().all(|&i| i == d.len() - 1) && d.len() <= held, "case {case}");
                }
                if p.at_line {
                    let s = p.start as usize;
                    assert!(cuts.iter().any(|c| data[s - 1..].starts_with(c)), "case {case}");
                }
                ends.insert(p.end as usize);
            }
            for i in 0..data.len() {
                if cuts.iter().any(|c| data[i..].starts_with(c)) {
                    assert!(ends.contains(&(i + 1)), "case {case}: not cut before the cut line at {i}");
                }
            }
        }
    }

    #[test]
    fn words_are_spelled_across_parts() {
        let mut rng = Rng(7);
        for _ in 0..2000 {
            let text: Vec<u8> = (0..rng.next(40)).map(|_| b"ab%c\n"[rng.next(5)]).collect();
            let needles = vec![b"%cab".to_vec(), b"c\nb".to_vec()];
            let mut cuts: Vec<usize> = (0..rng.next(8)).map(|_| rng.next(text.len() + 1)).collect();
            cuts.extend([0, text.len()]);
            cuts.sort_unstable();
            let mut l = Looker::words(needles.clone());
            for w in cuts.windows(2) {
                let said = l.add(&text[w[0]..w[1]]);
                let so_far = &text[..w[1]];
                assert_eq!(said, needles.iter().any(|n| memchr::memmem::find(so_far, n).is_some()));
            }
        }
    }

    #[test]
    fn a_piece_holds_the_lines_after_those_before_it() {
        for (before, parts, line, found) in [(2, &[&b"a\n"[..], b"b"][..], 3, true), (2, &[&b"a\n"[..]], 5, false)] {
            let mut l = Looker::line(before, line);
            for p in parts {
                l.add(p);
            }
            assert_eq!(l.found(), found);
            assert_eq!(found, before < line && line <= before + 1 + 1);
        }
        let mut l = Looker::line(0, 1);
        assert!(l.add(b""));
    }

    fn dump(i: usize, body: &str) -> String {
        format!("// -----// IR Dump After P{i} (p{i}) ('builtin.module' operation: @m) //----- //\n{body}")
    }

    /// Each job of `data`, as (its piece's size if any, how many repeats).
    fn jobs(data: &[u8], o: CutOptions) -> Vec<(Option<u64>, usize)> {
        let mut c = Cutter::new(data, o);
        let mut out = Vec::new();
        while let Some(j) = c.next_job().unwrap().unwrap() {
            out.push((j.piece.as_ref().map(|p| p.size), j.repeats.len()));
        }
        out
    }

    #[test]
    fn a_dump_repeating_the_one_before_is_left_unscanned_and_a_piece_ends_past_its_size() {
        let body = "module @m {\n  func.func @main(%arg0: tensor<8xf32>) {\n    return\n  }\n}\n";
        let other = body.replace("8xf32", "4xf32");
        let dumps: Vec<String> = (0..12).map(|i| dump(i, if i % 4 == 3 { &other } else { body })).collect();
        let text = dumps.concat();
        let n = |i: usize| Some(dumps[i].len() as u64);
        let both = |i: usize| Some((dumps[i].len() + dumps[i + 1].len()) as u64);
        let mut o = options(vec![DUMP.to_vec()], 1 << 20, 1 << 23);
        // a piece, then the repeats after it; the next dump that differs starts the next piece
        assert_eq!(jobs(text.as_bytes(), o.clone()), vec![(n(0), 2), (both(3), 2), (both(7), 2), (n(11), 0)]);
        o.piece_bytes = 1; // a piece ends at every dump line past its size, a job once past it
        let cut = jobs(text.as_bytes(), o.clone());
        let alone = (None, 1);
        let want = [(n(0), 1), alone, (n(3), 0), (n(4), 1), alone, (n(7), 0), (n(8), 1), alone, (n(11), 0)];
        assert_eq!(cut, want);
        o.held_bytes = 0; // no dump held whole: none is left unscanned
        assert_eq!(jobs(text.as_bytes(), o), (0..12).map(|i| (n(i), 0)).collect::<Vec<_>>());
    }

    #[test]
    fn the_first_pieces_are_smaller_so_the_reader_starts_soon() {
        let dumps: Vec<String> = (0..40).map(|i| dump(i + 10, &format!("module @m{i:02} {{\n}}\n"))).collect();
        let d = dumps[0].len() as u64;
        let mut o = options(vec![DUMP.to_vec()], 1 << 20, 1 << 23);
        o.piece_bytes = 8 * d as usize;
        let sizes: Vec<u64> = jobs(dumps.concat().as_bytes(), o).iter().filter_map(|j| j.0).collect();
        assert_eq!(sizes, [1, 2, 4, 8, 8, 8, 8, 1].map(|n| n * d));
    }

    #[test]
    fn whole_modules_begin_only_at_a_header_the_scan_reads_and_each_piece_sits_at_its_place() {
        let module = "HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {\n  ROOT %p = f32[8]{0} \
                      parameter(0), sharding={replicated}\n}\n\n";
        let bare = module.replace(", num_partitions=2", "");
        let text = [module, &bare, module].concat();
        let mut o = options(vec![b"\nHloModule ".to_vec()], 1 << 20, 1 << 23);
        (o.piece_bytes, o.whole_modules, o.placed, o.repeats) = (1, true, true, false);
        o.engine.names = false;
        let mut c = Cutter::new(text.as_bytes(), o);
        let mut starts = Vec::new();
        while let Some(j) = c.next_job().unwrap().unwrap() {
            let Some(Made::Scanned(mut made)) = j.piece.map(Held::run) else { panic!("a piece is scanned") };
            let e = made.pop().expect("its scan");
            starts.push((e.table.starts[0], e.table.u32s[6][0], e.kind));
        }
        let (m, b) = (module.len() as u64, bare.len() as u64);
        let line = 1 + text[..(m + b) as usize].matches('\n').count() as u32;
        assert_eq!(starts, [(0, 1, "hlo"), (m + b, line, "hlo")]); // (never before the bare header)
    }

    #[test]
    fn a_long_piece_drained_as_it_is_fed_comes_in_parts_holding_the_rows_of_its_whole_scan() {
        let line = "  %a.{i} = f32[8]{0} add(%p, %p), sharding={devices=[2]<=[2]}\n";
        let body: String = (0..4000).map(|i| line.replace("{i}", &i.to_string())).collect();
        let text = format!("HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {{\n{body}}}\n");
        let mut o = options(vec![b"\nHloModule ".to_vec()], 1 << 12, 1 << 14);
        (o.feed_bytes, o.placed, o.drain, o.repeats) = (1 << 14, true, true, false);
        o.engine.names = false;
        let mut c = Cutter::new(text.as_bytes(), o);
        let mut starts = Vec::new();
        let mut parts = 0;
        while let Some(j) = c.next_job().unwrap().unwrap() {
            let made = match j.piece.map(Held::run) {
                Some(Made::Scanned(made)) => made,
                _ => Vec::new(),
            };
            for e in j.parts.into_iter().chain(made) {
                parts += 1;
                starts.extend(e.table.starts.iter().copied());
            }
        }
        let mut whole = Engine::new(Options { names: false, ..Options::default() }).unwrap();
        whole.feed(text.as_bytes());
        whole.finish();
        assert!(parts > 4, "{parts} parts");
        assert_eq!(starts, whole.table.starts);
    }

    #[test]
    fn a_skipped_head_is_one_job_and_nothing_more_is_read() {
        let mut data = vec![0u8; 10];
        data.extend(std::iter::repeat_n(b'x', 1 << 20));
        let mut c = Cutter::new(&data[..], options(vec![DUMP.to_vec()], 1 << 20, 1 << 23));
        let j = c.next_job().unwrap().unwrap().unwrap();
        assert_eq!(j.piece.as_ref().map(|p| p.size), Some(SNIFF_BYTES as u64));
        assert!(c.skipped && c.next_job().unwrap().unwrap().is_none() && c.total() == SNIFF_BYTES as u64);
    }
}
