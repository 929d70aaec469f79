//! `shardconv-scan`: the scanning core of shardconv, with no Python in it. Reads a dump once (a file in
//! chunks, bytes, or a stream fed piece by piece) into one table of sites; `shardconv._native`
//! (native/binding) hands that table to Python.
//!
//! - `reader`: bytes to lines (the engine: chunks, candidate lines, windows of long lines, UTF-8; a
//!   file read whole)
//! - `sniff`: a dump's kind from its head
//! - `keywords`, `find`, `strings`: where values start, literal finders, string literals and brackets
//! - `extract`: one logical line to its sites (values, shapes, kinds, propagation records)
//! - `scopes`, `ends`, `suppress`: function and computation scopes, open ends, inline suppressions
//! - `intern`, `table`: distinct things held once; sites as rows, with check's groups and pairs
//! - `names`, `keys`: trace's segments (definitions, digests) and per-site keys
//! - `cut`: a long log cut into pieces; `follow`: trace's following of a sequence of dumps

#![forbid(unsafe_code)]

pub mod cut;
pub mod ends;
pub mod extract;
pub mod find;
pub mod follow;
pub mod intern;
pub mod keys;
pub mod keywords;
pub mod names;
pub mod reader;
pub mod scopes;
pub mod sniff;
pub mod strings;
pub mod suppress;
pub mod table;
