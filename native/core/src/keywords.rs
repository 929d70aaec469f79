//! Keywords: where a sharding-related value starts on a line. `match_at` tries the keyword forms at one
//! place, in order, the first that matches winning; `Searcher::search` tries it only at the few starts a
//! literal needle allows (a keyword holds one of `NEEDLES`, after one of its spellings).

use crate::strings::{is_word, is_ws};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Hlo,
    /// `sharding=` followed by no value's opening (`sharding=[...`, a value cut at the line's end).
    HloBad,
    /// `sdy.sharding = ` followed by neither a sharding nor an alias (`#sdy.sh/rding<...>`).
    SdyBad,
    /// `num_partitions=` / `mhlo.num_partitions = ` followed by no number.
    NpBad,
    /// `mhlo.sharding = ` / `mhlo.spmd_output_sharding = ` followed by no string.
    MStrBad,
    /// `sdy.mesh @m = ` followed by no `<`.
    MeshBad,
    /// `stablehlo.mesh = ` followed by no `{`.
    ShMeshBad,
    /// `sdy.sharding_constraint %x ` / `sdy.reshard %x ` followed by no `<`.
    SdyOpBad,
    HloFe,
    HloNp,
    MStr,
    Mnp,
    SdyAttr,
    MeshDecl,
    SdyOp,
    OpArg,
    McList,
    MAxes,
    Unspec,
    ShMesh,
    Collective,
    Expected,
    CollAxes,
    HloCollective,
    /// Shardy's propagation records: `sdy.[result_|block_arg_]sharding_origins = {...}|[...]`,
    /// `sdy.sharding_origin_name = "..."`, `sdy.[result_|block_arg_]propagation_edges = ...`.
    Origins,
    OriginName,
    Edges,
    /// `return %a, %b` (func or sdy): the values a function or region returns.
    Return,
    /// MLIR's shard dialect: `shard.grid @g(` (the match ends past the `(`) and `shard.sharding @g
    /// split_axes` (it ends past the grid's name); the sub-group is the grid's name.
    ShardGrid,
    ShardSharding,
}

/// A keyword match: its group, span, and the span of its one sub-group (the key, name or number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Match {
    pub group: Group,
    pub start: usize,
    pub end: usize,
    pub sub: (usize, usize),
}

fn lb(t: &[u8], s: usize) -> bool {
    s == 0 || !(is_word(t[s - 1]) || t[s - 1] == b'.')
}

/// `s` at `i`: its end. The first two bytes are compared inline (most tries fail there), the rest
/// as a slice.
#[inline]
pub(crate) fn lit(t: &[u8], i: usize, s: &[u8]) -> Option<usize> {
    let w = t.get(i..i.checked_add(s.len())?)?;
    if w.first() != s.first() || w.get(1) != s.get(1) || w != s {
        return None;
    }
    Some(i + s.len())
}

/// The index past the run of bytes from `i` that `ok` accepts.
pub(crate) fn run(t: &[u8], mut i: usize, ok: impl Fn(u8) -> bool) -> usize {
    while i < t.len() && ok(t[i]) {
        i += 1;
    }
    i
}

/// The index past the blanks from `i`.
pub(crate) fn ws(t: &[u8], i: usize) -> usize {
    run(t, i, is_ws)
}

fn byte(t: &[u8], i: usize, b: u8) -> Option<usize> {
    if t.get(i) == Some(&b) {
        Some(i + 1)
    } else {
        None
    }
}

fn key_char(b: u8) -> bool {
    is_word(b) || b == b'.'
}

pub use crate::strings::{name_char, ssa_char};

/// The end of the run of digits at `i` (None: no digit there).
pub(crate) fn digits(t: &[u8], i: usize) -> Option<usize> {
    let e = run(t, i, |b| b.is_ascii_digit());
    if e > i {
        Some(e)
    } else {
        None
    }
}

fn m(group: Group, start: usize, end: usize, sub: (usize, usize)) -> Option<Match> {
    Some(Match { group, start, end, sub })
}

/// `xla\.sdy\.[\w.]+` at `i`: its end.
fn sdy_key(t: &[u8], i: usize) -> Option<usize> {
    let j = lit(t, i, b"xla.sdy.")?;
    let k = run(t, j, key_char);
    if k > j {
        Some(k)
    } else {
        None
    }
}

/// `\s*=\s*` then `b` at `i`: the end.
fn eq_then(t: &[u8], i: usize, b: u8) -> Option<usize> {
    let j = byte(t, ws(t, i), b'=')?;
    byte(t, ws(t, j), b)
}

/// A keyword from `s` to `i`, then `\s*=`, blanks and a byte on the line none of `opens`: a value whose
/// opener is damaged, which no parser reads; the match ends where the value starts.
fn bad_after_eq(t: &[u8], (s, i): (usize, usize), opens: &[u8], group: Group, sub: (usize, usize)) -> Option<Match> {
    let v = blanks(t, byte(t, ws(t, i), b'=')?);
    damaged(t, s, v, opens).then_some(Match { group, start: s, end: v, sub })
}

/// Whether the byte at `v` is on the line and opens none of `opens`, and the keyword at `s` is no SSA name.
/// A `#` among `opens` opens a dialect attribute (`#sdy.`) or an alias (`alias`), no other word.
fn damaged(t: &[u8], s: usize, v: usize, opens: &[u8]) -> bool {
    let Some(&b) = t.get(v) else { return false };
    let opened = match b {
        b'#' if opens.contains(&b) => t[v..].starts_with(b"#sdy.") || alias(&t[v..]),
        _ => opens.contains(&b),
    };
    !ssa_name(t, s) && !opened && !matches!(b, b'\n' | b'\r')
}

fn blanks(t: &[u8], i: usize) -> usize {
    run(t, i, |b| b == b' ' || b == b'\t')
}

/// Whether the word at `s` follows a `%`: an SSA value's name (`return %mhlo.sharding`), no keyword whose
/// value a damaged opener could have left unread.
fn ssa_name(t: &[u8], s: usize) -> bool {
    s > 0 && t[s - 1] == b'%'
}

fn quoted_name_end(t: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match t.get(j) {
            None => return None,
            Some(b'"') => return Some(j + 1),
            Some(b'\\') => match t.get(j + 1) {
                None | Some(b'\n') => return None,
                Some(_) => j += 2,
            },
            Some(_) => j += 1,
        }
    }
}

/// The keyword that starts at `s`, if any. The forms are told apart by their first byte; of those that
/// share it, the first that matches wins. Most begin a word (no word byte or `.` before them); `#sdy.`,
/// `unspecified_dims`, `replica_group_mesh_axes` and `expected-error` may follow one
/// (`xla.sdy.sharding.unspecified_dims=[0]`, `// expected-error@+1`).
fn match_group(t: &[u8], s: usize) -> Option<Match> {
    let word = lb(t, s);
    match *t.get(s)? {
        b's' if word => s_forms(t, s),
        b'x' if word => xla_sdy_key(t, s),
        b'n' if word => num_partitions(t, s),
        b'm' if word => mhlo_string(t, s).or_else(|| mhlo_num_partitions(t, s)).or_else(|| manual_axes(t, s)),
        b'o' | b'i' if word => op_sharding(t, s).or_else(|| op_shardings(t, s)),
        b'#' => sdy_attribute(t, s),
        b'u' => unspecified_dims(t, s),
        b'r' if word => {
            replica_group_mesh_axes(t, s).or_else(|| replica_groups_mesh(t, s)).or_else(|| return_values(t, s))
        }
        b'r' => replica_group_mesh_axes(t, s),
        b'e' => expected_error(t, s),
        _ => None,
    }
}

/// The forms that start with `s`, in order: HLO's `sharding={`, a damaged `sdy.sharding = `, the shard
/// dialect, then (past `sdy.` only with a word one of them has) Shardy's mesh, records, constraint ops
/// and collectives, an op's `sharding=<`, and `stablehlo.mesh = {`.
fn s_forms(t: &[u8], s: usize) -> Option<Match> {
    if let Some(found) = hlo_sharding(t, s).or_else(|| sdy_sharding_bad(t, s)).or_else(|| shard_op(t, s)) {
        return Some(found);
    }
    if !sdy_word_may_match(t, s) {
        return None;
    }
    sdy_mesh(t, s)
        .or_else(|| record(t, s))
        .or_else(|| sdy_constraint(t, s))
        .or_else(|| collective_axes(t, s))
        .or_else(|| op_sharding(t, s))
        .or_else(|| stablehlo_mesh(t, s))
}

/// HLO's `sharding={...}` (blanks allowed before the `{`); `sharding=` followed by another byte is a value
/// no parser reads (`HloBad`), unless it is an op's `sharding=<...>` or an SSA name's (`%sharding= x`).
fn hlo_sharding(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"sharding=")?;
    let k = blanks(t, j);
    match t.get(k) {
        Some(b'{') => m(Group::Hlo, s, k + 1, (s, s)),
        Some(b'<') => None,
        None | Some(b'\n' | b'\r') => m(Group::HloBad, s, j, (s, s)),
        _ if k == j => m(Group::HloBad, s, j, (s, s)),
        _ if !ssa_name(t, s) => m(Group::HloBad, s, k, (s, s)),
        _ => None,
    }
}

/// An HLO frontend attribute of Shardy's, `xla.sdy.KEY="..."` or `xla.sdy.KEY={...`, or the same key in
/// an MLIR dictionary, `xla.sdy.KEY = "..."`.
fn xla_sdy_key(t: &[u8], s: usize) -> Option<Match> {
    let k = sdy_key(t, s)?;
    if t.get(k) == Some(&b'=') && matches!(t.get(k + 1), Some(b'"' | b'{')) {
        return m(Group::HloFe, s, k + 2, (s, k));
    }
    eq_then(t, k, b'"').and_then(|e| m(Group::MStr, s, e, (s, k)))
}

/// HLO's `num_partitions=N` (the sub-group is the number); with no digits, `NpBad`.
fn num_partitions(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"num_partitions=")?;
    match digits(t, j) {
        Some(e) => m(Group::HloNp, s, e, (j, e)),
        None => m(Group::NpBad, s, j, (s, j - 1)),
    }
}

/// `mhlo.sharding = "..."` / `mhlo.spmd_output_sharding = "..."`: the match ends past the `"`; a value
/// that opens with another byte on the line is `MStrBad`.
fn mhlo_string(t: &[u8], s: usize) -> Option<Match> {
    for key in [&b"mhlo.sharding"[..], b"mhlo.spmd_output_sharding"] {
        if let Some(k) = lit(t, s, key) {
            if let Some(e) = eq_then(t, k, b'"') {
                return m(Group::MStr, s, e, (s, k));
            }
            if let Some(bad) = bad_after_eq(t, (s, k), b"\"", Group::MStrBad, (s, k)) {
                return Some(bad);
            }
        }
    }
    None
}

/// `mhlo.num_partitions = N` (one blank each side of the `=`, as MLIR prints it); with no digits, `NpBad`.
fn mhlo_num_partitions(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"mhlo.num_partitions")?;
    let spaced =
        t.get(j).is_some_and(|&b| is_ws(b)) && t.get(j + 1) == Some(&b'=') && t.get(j + 2).is_some_and(|&b| is_ws(b));
    if !spaced {
        return None;
    }
    match digits(t, j + 3) {
        Some(e) => m(Group::Mnp, s, e, (j + 3, e)),
        None => m(Group::NpBad, s, j + 3, (s, j)),
    }
}

/// `manual_axes={` of `sdy.manual_computation`.
fn manual_axes(t: &[u8], s: usize) -> Option<Match> {
    lit(t, s, b"manual_axes={").and_then(|e| m(Group::MAxes, s, e, (s, s)))
}

/// `#sdy.sharding<`, `#sdy.sharding_per_value<` or `#sdy.mesh<`: the sub-group is the attribute's name.
fn sdy_attribute(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"#sdy.")?;
    for kind in [&b"sharding_per_value"[..], b"sharding", b"mesh"] {
        if let Some(e) = lit(t, j, kind).and_then(|k| byte(t, k, b'<')) {
            return m(Group::SdyAttr, s, e, (j, j + kind.len()));
        }
    }
    None
}

/// `sdy.mesh @NAME = <...>` (the name bare or quoted; the sub-group): the match ends past the `<`; a value
/// that opens with another byte (but an alias's `#`) is `MeshBad`.
fn sdy_mesh(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"sdy.mesh")?;
    let k = ws(t, j);
    if k == j || t.get(k) != Some(&b'@') {
        return None;
    }
    let a = k + 1;
    let ne = match t.get(a) {
        Some(&b) if name_char(b) => run(t, a, name_char),
        Some(b'"') => quoted_name_end(t, a)?,
        _ => return None,
    };
    match eq_then(t, ne, b'<') {
        Some(e) => m(Group::MeshDecl, s, e, (a, ne)),
        None => bad_after_eq(t, (s, ne), b"<#", Group::MeshBad, (a, ne)),
    }
}

/// `sdy.sharding_constraint %x <...>` / `sdy.reshard %x <...>`: the match ends past the `<`; another
/// byte after the operand (but an alias's `#`) is `SdyOpBad`.
fn sdy_constraint(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"sdy.")?;
    for op in SDY_CONSTRAINT_OPS {
        let Some(k) = lit(t, j, op) else { continue };
        let w = ws(t, k);
        if w == k || t.get(w) != Some(&b'%') {
            continue;
        }
        let n = run(t, w + 1, ssa_char);
        if n == w + 1 {
            continue;
        }
        let w2 = ws(t, n);
        if w2 > n && t.get(w2) == Some(&b'<') {
            return m(Group::SdyOp, s, w2 + 1, (j, k));
        }
        let b2 = blanks(t, n);
        if b2 > n && damaged(t, s, b2, b"#<") {
            return m(Group::SdyOpBad, s, b2, (j, k));
        }
    }
    None
}

/// An op's `out_sharding=<...>` / `sharding=<...>` (Shardy's collectives, `sdy.manual_computation`'s
/// operands): the match ends past the `<`.
fn op_sharding(t: &[u8], s: usize) -> Option<Match> {
    for key in [&b"out_sharding"[..], b"sharding"] {
        if let Some(e) = lit(t, s, key).and_then(|k| lit(t, k, b"=<")) {
            return m(Group::OpArg, s, e, (s, e - 2));
        }
    }
    None
}

/// `sdy.manual_computation`'s `in_shardings=[...]` / `out_shardings=[...]`: the match ends past the `[`.
fn op_shardings(t: &[u8], s: usize) -> Option<Match> {
    for key in [&b"in_shardings"[..], b"out_shardings"] {
        if let Some(e) = lit(t, s, key).and_then(|k| lit(t, k, b"=[")) {
            return m(Group::McList, s, e, (s, e - 2));
        }
    }
    None
}

/// `unspecified_dims=[0, 2]`: the sub-group is the list with its brackets.
fn unspecified_dims(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"unspecified_dims=[")?;
    let k = run(t, j, |b| b.is_ascii_digit() || b == b',' || is_ws(b));
    (t.get(k) == Some(&b']')).then_some(Match { group: Group::Unspec, start: s, end: k + 1, sub: (j - 1, k + 1) })
}

/// `stablehlo.mesh = {`; a value that opens with another byte (but an alias's `#`) is `ShMeshBad`.
fn stablehlo_mesh(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"stablehlo.mesh")?;
    match eq_then(t, j, b'{') {
        Some(e) => m(Group::ShMesh, s, e, (s, s)),
        None => bad_after_eq(t, (s, j), b"{#", Group::ShMeshBad, (s, s)),
    }
}

/// StableHLO's `replica_group_mesh_axes<mesh = @NAME` (the name is the sub-group) or `... mesh =
/// #stablehlo.mesh<` (an inline mesh: no name).
fn replica_group_mesh_axes(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"replica_group_mesh_axes<")?;
    let k = lit(t, ws(t, j), b"mesh")?;
    let v = ws(t, byte(t, ws(t, k), b'=')?);
    if let Some(a) = byte(t, v, b'@') {
        let e = run(t, a, name_char);
        if e > a {
            return m(Group::Collective, s, e, (a, e));
        }
    }
    lit(t, v, b"#stablehlo.mesh<").and_then(|e| m(Group::Collective, s, e, (e, e)))
}

/// HLO's `replica_groups=mesh[...]`: the sub-group is `mesh[`.
fn replica_groups_mesh(t: &[u8], s: usize) -> Option<Match> {
    lit(t, s, b"replica_groups=mesh[").and_then(|j| m(Group::HloCollective, s, j, (s + 15, j)))
}

/// `return %a, ...`: the values a function or region returns.
fn return_values(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"return")?;
    let w = ws(t, j);
    (w > j && t.get(w) == Some(&b'%')).then_some(Match { group: Group::Return, start: s, end: j, sub: (s, j) })
}

/// A lit test's `expected-error`, with the line it points at (`@+N`, `@-N`, `@above`, `@below`) as the
/// sub-group when it names one.
fn expected_error(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"expected-error")?;
    if t.get(j) == Some(&b'@') {
        if matches!(t.get(j + 1), Some(b'+' | b'-')) {
            if let Some(e) = digits(t, j + 2) {
                return m(Group::Expected, s, e, (j, e));
            }
        }
        for w in [&b"@above"[..], b"@below"] {
            if let Some(e) = lit(t, j, w) {
                return m(Group::Expected, s, e, (j, e));
            }
        }
    }
    m(Group::Expected, s, j, (j, j))
}

/// `sdy.sharding = VALUE` whose VALUE opens neither a sharding (`#sdy.sharding<`,
/// `#sdy.sharding_per_value<`) nor names an alias (`#name` alone): a value no parser reads, the match
/// ending where it starts.
fn sdy_sharding_bad(t: &[u8], s: usize) -> Option<Match> {
    let k = lit(t, s, b"sdy.sharding")?;
    let v = ws(t, byte(t, ws(t, k), b'=')?);
    let value = &t[v..];
    if value.starts_with(b"#sdy.sharding<") || value.starts_with(b"#sdy.sharding_per_value<") || alias(value) {
        return None;
    }
    m(Group::SdyBad, s, v, (s, k))
}

/// `#name` alone (an attribute alias): blanks after it, then the line's end, or a `,`, `}` or `:` that
/// ends the value (a blank, the end, or another closer after it). A byte damaged in `#sdy.sharding<`
/// leaves a word that none follows so (`#sd}.sharding<`, `#s y.sharding<`): no alias.
fn alias(v: &[u8]) -> bool {
    let e = run(v, 1, |b| is_word(b) || b == b'$' || b == b'.');
    if v.first() != Some(&b'#') || v.starts_with(b"#sdy.") || e == 1 {
        return false;
    }
    let b = blanks(v, e);
    match v.get(b) {
        None | Some(b'\n' | b'\r') => true,
        Some(b',' | b'}' | b':') => v.get(b + 1).is_none_or(|&c| is_ws(c) || b",})]>".contains(&c)),
        _ => false,
    }
}

/// Whether `t[s..]`, when it starts with `sdy.`, goes on with a word a keyword can: the mesh, `return`,
/// the constraint ops, the records and the collectives (a signature's `sdy.sharding = #sdy.sharding<...>`
/// attribute does not: its value is the keyword). Each of those patterns wants a blank, `=` or `@` after
/// the word, never another word byte.
fn sdy_word_may_match(t: &[u8], s: usize) -> bool {
    let Some(j) = lit(t, s, b"sdy.") else { return true };
    let word = &t[j..run(t, j, is_word)];
    matches!(word, b"mesh" | b"return")
        || SDY_CONSTRAINT_OPS.contains(&word)
        || RECORD_KEYS.iter().any(|(k, _, _)| *k == word)
        || COLLECTIVE_OPS.contains(&word)
}

/// Shardy's collectives that name axes before their operand (`sdy.all_gather [{}, {"y"}] %0 ...`,
/// `sdy.all_reduce {"y"} %0 ...`, optionally with a reduction word: `sdy.all_reduce max {"y"}`): the
/// match ends after the `[` / `{` that opens the axes; the sub-group is the op's name.
pub const COLLECTIVE_OPS: [&[u8]; 7] = [
    b"all_gather",
    b"all_slice",
    b"all_reduce",
    b"reduce_scatter",
    b"all_to_all",
    b"sharded_to_unreduced",
    b"replicated_to_unreduced",
];

fn collective_axes(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"sdy.")?;
    for op in COLLECTIVE_OPS {
        let Some(k) = lit(t, j, op) else { continue };
        let mut w = ws(t, k);
        if w == k {
            continue;
        }
        let word = run(t, w, |b| b.is_ascii_lowercase());
        if word > w {
            w = ws(t, word);
        }
        if matches!(t.get(w), Some(b'[' | b'{')) {
            return m(Group::CollAxes, s, w + 1, (j, k));
        }
    }
    None
}

/// The propagation records' keys (after `sdy.`): each one's group and the bytes its value may open with.
const RECORD_KEYS: [(&[u8], Group, &[u8]); 7] = [
    (b"sharding_origins", Group::Origins, b"{["),
    (b"result_sharding_origins", Group::Origins, b"{["),
    (b"block_arg_sharding_origins", Group::Origins, b"{["),
    (b"sharding_origin_name", Group::OriginName, b"\""),
    (b"propagation_edges", Group::Edges, b"#{["),
    (b"result_propagation_edges", Group::Edges, b"#{["),
    (b"block_arg_propagation_edges", Group::Edges, b"#{["),
];

/// The ops that constrain a value in place (`sdy.sharding_constraint %0 <...>`, `sdy.reshard %0 <...>`).
const SDY_CONSTRAINT_OPS: [&[u8]; 2] = [b"sharding_constraint", b"reshard"];

/// A propagation record's key at `s` (after `sdy.`), then `=` and its value's first byte: the match
/// ends past that byte (`{`, `[`, `"` or the `<` of `#sdy.propagation_edges<`).
fn record(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"sdy.")?;
    let k = run(t, j, is_word);
    let key = &t[j..k];
    if key == b"return" {
        let w = ws(t, k);
        return if w > k && t.get(w) == Some(&b'%') { m(Group::Return, s, k, (s, k)) } else { None };
    }
    let &(_, group, opens) = RECORD_KEYS.iter().find(|(k, _, _)| *k == key)?;
    let e = byte(t, ws(t, k), b'=')?;
    let v = ws(t, e);
    let first = *t.get(v)?;
    if !opens.contains(&first) {
        return None;
    }
    if first == b'#' {
        let p = lit(t, v, b"#sdy.propagation_edges<")?;
        return m(group, s, p, (s, k));
    }
    m(group, s, v + 1, (s, k))
}

/// `shard.grid @g(` or `shard.sharding @g split_axes` at `s` (MLIR's shard dialect): the grid's name is
/// the sub-group; a grid's match ends past its `(`, a sharding's past the name.
fn shard_op(t: &[u8], s: usize) -> Option<Match> {
    let j = lit(t, s, b"shard.")?;
    let (group, k) = match lit(t, j, b"grid") {
        Some(k) => (Group::ShardGrid, k),
        None => (Group::ShardSharding, lit(t, j, b"sharding")?),
    };
    let a = ws(t, k);
    if a == k || t.get(a) != Some(&b'@') {
        return None;
    }
    let name_end = match t.get(a + 1) {
        Some(&b) if name_char(b) => run(t, a + 1, name_char),
        Some(b'"') => quoted_name_end(t, a + 1)?,
        _ => return None,
    };
    let w = ws(t, name_end);
    if group == Group::ShardGrid {
        return byte(t, w, b'(').and_then(|e| m(group, s, e, (a + 1, name_end)));
    }
    let e = lit(t, w, b"split_axes")?;
    if w == name_end || eq_then(t, e, b'[').is_none() {
        return None; // (a test's `// CHECK: ... split_axes = {{\[\[}}0]]` pattern holds no list)
    }
    m(group, s, name_end, (a + 1, name_end))
}

/// The keyword match that starts at `s`, if any (the first form that matches there).
pub fn match_at(t: &[u8], s: usize) -> Option<Match> {
    match_group(t, s)
}

/// Each needle, with the spellings that may precede it: a match whose first needle it is begins with one
/// of them (the keyword's own bytes up to the needle), so a start whose bytes differ is never tried.
pub const NEEDLES: [(&[u8], &[&[u8]]); 11] = [
    // mhlo.spmd_output_sharding, mhlo.sharding, out_sharding(s), in_shardings, sharding={ / sharding=<
    (b"sharding", &[b"mhlo.spmd_output_", b"mhlo.", b"out_", b"in_", b""]),
    // xla.sdy.*, #sdy.*, sdy.mesh / sdy.sharding_constraint / records / collectives / sdy.return
    (b"sdy.", &[b"xla.", b"#", b""]),
    // mhlo.num_partitions, num_partitions=
    (b"num_partitions", &[b"mhlo.", b""]),
    (b"manual_axes", &[b""]),
    (b"unspecified_dims", &[b""]),
    (b"expected-error", &[b""]),
    (b"stablehlo.mesh", &[b""]),
    (b"replica_group_mesh_axes", &[b""]),
    (b"replica_groups=mesh[", &[b""]),
    (b"return", &[b""]),
    (b"shard.", &[b""]),
];

/// The needles in one searcher, built once per process. No needle is a prefix of another, so at most
/// one begins at any offset: the leftmost match is the first needle in the text.
pub struct Needles {
    finder: crate::find::Needles,
}

impl Default for Needles {
    fn default() -> Self {
        let pats: Vec<&[u8]> = NEEDLES.iter().map(|(n, _)| *n).collect();
        // the patterns are fixed and few: building them cannot fail
        let finder = crate::find::Needles::new(&pats).unwrap_or_else(|e| unreachable!("keyword needles: {e}"));
        Needles { finder }
    }
}

impl Needles {
    /// The process's one searcher, built on first use (it costs more to build than a small piece to scan).
    pub fn shared() -> &'static Needles {
        static SHARED: std::sync::LazyLock<Needles> = std::sync::LazyLock::new(Needles::default);
        &SHARED
    }
}

/// Whether `before` ends at `hit` (`hit >= before.len()`), compared a byte at a time: the spellings are a
/// few bytes long, and a library `memcmp` call per needle hit cost a sixth of an sdy scan.
#[inline]
fn precedes(text: &[u8], hit: usize, before: &[u8]) -> bool {
    text[hit - before.len()..hit].iter().zip(before).all(|(a, b)| a == b)
}

/// Where a line's needles are: found by the line's own search, or read off hits a search of the whole
/// buffer already made (the line finder's, whose needles include these).
pub trait NeedleHits {
    /// The leftmost needle starting in `text` at or after `from`: its index in `NEEDLES`, and its start.
    fn next(&mut self, text: &[u8], from: usize) -> Option<(usize, usize)>;
}

impl NeedleHits for &Needles {
    fn next(&mut self, text: &[u8], from: usize) -> Option<(usize, usize)> {
        self.finder.find(text, from, text.len()).map(|h| (h.needle, h.start))
    }
}

/// One line's keyword search.
pub struct Searcher<H: NeedleHits> {
    hits: H,
}

impl<H: NeedleHits> Searcher<H> {
    pub fn new(hits: H) -> Self {
        Searcher { hits }
    }

    /// `KEYWORD.search(text, pos)`, tried only where a needle allows.
    pub fn search(&mut self, text: &[u8], mut pos: usize) -> Option<Match> {
        let mut known = None; // the next needle, when the last miss tells where it is
        while pos <= text.len() {
            let (needle, hit) = match known.take() {
                Some(next) => next,
                None => self.hits.next(text, pos)?,
            };
            for &before in NEEDLES[needle].1 {
                if hit - pos >= before.len() && precedes(text, hit, before) {
                    if let Some(found) = match_at(text, hit - before.len()) {
                        return Some(found);
                    }
                }
            }
            (pos, known) = after_miss(text, needle, hit);
        }
        None
    }
}

const SDY: usize = 1; // NEEDLES[1]: `sdy.`

/// An op's sharding rule, up to its value's factors: no byte of it starts a keyword (its `sdy.` words
/// are none a keyword has, and each `sharding` in it follows a `.` or `_`, then `_rule`).
const RULE: &[u8] = b"sdy.sharding_rule = #sdy.op_sharding_rule<";

/// Where a search goes on after no keyword starts at a needle's `hit`: the next byte, past an op's
/// sharding rule (`RULE`: on nearly every op line Shardy propagated, four needles that start nothing),
/// or past the name of an `sdy.sharding` attribute (the value after it is the keyword; the `sharding`
/// needle in its name follows a `.` and starts none, nor does any byte of it start another spelling).
/// After `sdy.sharding = #sdy.` the next needle is that `sdy.`: no byte of ` = #` starts one.
fn after_miss(text: &[u8], needle: usize, hit: usize) -> (usize, Option<(usize, usize)>) {
    if needle == SDY && text[hit..].starts_with(RULE) {
        return (hit + RULE.len(), None);
    }
    let word = hit + b"sdy.sharding".len();
    if needle == SDY && text[hit..].starts_with(b"sdy.sharding") && !text.get(word).is_some_and(|&b| is_word(b)) {
        let next = text[word..].starts_with(b" = #sdy.").then_some((SDY, word + b" = #".len()));
        return (word, next);
    }
    (hit + 1, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(t: &[u8]) -> Option<(Group, usize, usize)> {
        let n = Needles::default();
        Searcher::new(&n).search(t, 0).map(|m| (m.group, m.start, m.end))
    }

    #[test]
    fn an_sdy_sharding_attribute_is_passed_over() {
        assert_eq!(NEEDLES[1].0, b"sdy."); // (after_miss names it by its place)
        let t = b"%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{}]>}";
        assert_eq!(after_miss(t, 1, 22), (34, Some((1, 38))));
        assert_eq!(find(t), Some((Group::SdyAttr, 37, 51)));
        assert_eq!(after_miss(b"{sdy.sharding_x = 1}", 1, 1), (2, None));
        assert_eq!(after_miss(b"{sdy.sharding =  #sdy.", 1, 1), (13, None));
        // an op's sharding rule is passed over whole; what follows it is searched as ever
        let rule = b"{sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i]) {i=8}>, mhlo.sharding = \"{";
        assert_eq!(after_miss(rule, 1, 1), (1 + RULE.len(), None));
        assert_eq!(find(rule), Some((Group::MStr, 64, 81)));
        // a keyword right after the name (or inside a longer word) is still found
        assert_eq!(find(b"{xla.sdy.sharding.unspecified_dims=[0]"), Some((Group::Unspec, 18, 38)));
        assert_eq!(find(b"{xla.sdy.shardingunspecified_dims=[0]"), Some((Group::Unspec, 17, 37)));
    }

    #[test]
    fn groups() {
        assert_eq!(find(b"x, sharding={replicated}"), Some((Group::Hlo, 3, 13)));
        assert_eq!(find(b"a.sharding={"), None);
        assert_eq!(find(b"x, sharding= {replicated}"), Some((Group::Hlo, 3, 14)));
        assert_eq!(find(b"x, sharding=[replicated}"), Some((Group::HloBad, 3, 12)));
        assert_eq!(find(b"x, sharding="), Some((Group::HloBad, 3, 12)));
        assert_eq!(find(b"x, sharding= \n}"), Some((Group::HloBad, 3, 12)));
        assert_eq!(find(b"x, sharding=<@m, [{}]>"), Some((Group::OpArg, 3, 13)));
        assert_eq!(find(b"{sdy.sharding = #sdy.sh/rding<@m, [{}]>}"), Some((Group::SdyBad, 1, 16)));
        assert_eq!(find(b"{sdy.sharding = #sdy.sharding<@m, [{}]>}").map(|m| m.0), Some(Group::SdyAttr));
        assert_eq!(find(b"{sdy.sharding = #alias}"), None);
        // a value whose opener is damaged after a keyword that always announces one
        assert_eq!(find(b"{sdy.sharding = #sdy.sha}ding<@m, []>}"), Some((Group::SdyBad, 1, 16)));
        // a byte damaged in `#sdy.` leaves a word that no alias ends so (harness p120036)
        assert_eq!(find(b"{sdy.sharding = #sd}.sharding_per_value<[<@m, []>]>}"), Some((Group::SdyBad, 1, 16)));
        assert_eq!(find(b"{sdy.sharding = #s y.sharding<@m, []>}"), Some((Group::SdyBad, 1, 16)));
        assert_eq!(find(b"{sdy.sharding = #sdy}sharding<@m, []>}"), Some((Group::SdyBad, 1, 16)));
        assert_eq!(find(b"{sdy.sharding = #alias}) -> tensor<8xf32>"), None);
        assert_eq!(find(b"{sdy.sharding = #a, b = 1}"), None);
        assert_eq!(find(b"%1 = sdy.reshard %0 #@m, [{}]> : tensor<8xf32>"), Some((Group::SdyOpBad, 5, 20)));
        assert_eq!(find(b"%1 = sdy.reshard %0 #a : tensor<8xf32>"), None);
        assert_eq!(find(b"x, sharding= z{replicated}"), Some((Group::HloBad, 3, 13)));
        assert_eq!(find(b"{mhlo.sharding = z{replicated}\"}"), Some((Group::MStrBad, 1, 17)));
        assert_eq!(find(b"{mhlo.sharding =\n\"{replicated}\"}"), Some((Group::MStr, 1, 18)));
        assert_eq!(find(b"{mhlo.sharding = \n"), None);
        assert_eq!(find(b"sdy.mesh @m = z[]>"), Some((Group::MeshBad, 0, 14)));
        assert_eq!(find(b"sdy.mesh @m = #alias"), None);
        assert_eq!(find(b"{stablehlo.mesh = zaxes = []}"), Some((Group::ShMeshBad, 1, 18)));
        assert_eq!(find(b"%1 = sdy.reshard %0 @m, [{}]>"), Some((Group::SdyOpBad, 5, 20)));
        assert_eq!(find(b"%0 out_sharding=|@m, [{}]>"), None); // (JAX's Python calls take `out_sharding=P(...)`)
        assert_eq!(find(b"return %mhlo.sharding = {x"), Some((Group::Return, 0, 6)));
        assert_eq!(find(b"%mhlo.sharding = {x"), None);
        assert_eq!(find(b"m, num_partitions=U\n"), Some((Group::NpBad, 3, 18)));
        assert_eq!(find(b"{mhlo.num_partitions = x : i32}"), Some((Group::NpBad, 1, 23)));
        assert_eq!(find(b"{sdy.sharding_rule = #sdy.op_sharding_rule<([i])->([i]) {i=8}>}"), None);
        assert_eq!(find(b"{mhlo.sharding = \"{"), Some((Group::MStr, 1, 18)));
        assert_eq!(find(b"xla.sdy.sharding=\"x"), Some((Group::HloFe, 0, 18)));
        assert_eq!(find(b"mhlo.num_partitions = 8 :"), Some((Group::Mnp, 0, 23)));
        assert_eq!(find(b"sdy.mesh @m = <[]>"), Some((Group::MeshDecl, 0, 15)));
        assert_eq!(find(b"%1 = sdy.reshard %0 <@m"), Some((Group::SdyOp, 5, 21)));
        assert_eq!(find(b"expected-error@+2 {{"), Some((Group::Expected, 0, 17)));
        assert_eq!(find(b"expected-error@x"), Some((Group::Expected, 0, 14)));
        assert_eq!(find(b"unspecified_dims=[1, 2]"), Some((Group::Unspec, 0, 23)));
        assert_eq!(find(b"#sdy.sharding_per_value<["), Some((Group::SdyAttr, 0, 24)));
        assert_eq!(find(b"%1 = sdy.all_gather [{}, {\"y\"}] %0"), Some((Group::CollAxes, 5, 21)));
        assert_eq!(find(b"%1 = sdy.all_reduce max {\"y\"} %0"), Some((Group::CollAxes, 5, 25)));
        assert_eq!(find(b"sdy.collective_permute %0 out_sharding=<@m"), Some((Group::OpArg, 26, 40)));
        assert_eq!(find(b"x, replica_groups=mesh['x'=2] {'x'}"), Some((Group::HloCollective, 3, 23)));
        assert_eq!(find(b"shard.grid @g(shape = 2x4)"), Some((Group::ShardGrid, 0, 14)));
        assert_eq!(find(b"%s = shard.sharding @g split_axes = [[0]]"), Some((Group::ShardSharding, 5, 22)));
        assert_eq!(find(b"shard.sharding @g halo_sizes = [1]"), None);
        assert_eq!(find(b"%a: !shard.sharding, %b"), None);
        assert_eq!(find(b"// CHECK: shard.sharding @g split_axes = {{\\[\\[}}0]]"), None);
    }

    #[test]
    fn records() {
        assert_eq!(find(b"{sdy.sharding_origins = {data = \"self\"}"), Some((Group::Origins, 1, 25)));
        assert_eq!(find(b"x, sdy.result_sharding_origins = [{"), Some((Group::Origins, 3, 34)));
        assert_eq!(find(b"sdy.sharding_origin_name = \"constraint_0\""), Some((Group::OriginName, 0, 28)));
        assert_eq!(find(b"{sdy.propagation_edges = #sdy.propagation_edges<[{step-0"), Some((Group::Edges, 1, 48)));
        assert_eq!(find(b"sdy.block_arg_propagation_edges = []"), Some((Group::Edges, 0, 35)));
        assert_eq!(find(b"    return %5 : tensor<f32>"), Some((Group::Return, 4, 10)));
        assert_eq!(find(b"  sdy.return %7 : tensor<8xf32>"), Some((Group::Return, 2, 12)));
        assert_eq!(find(b"returned %5"), None);
        // a sharding next to the records is still found first
        assert_eq!(
            find(b"{sdy.sharding = #sdy.sharding<@m, []>, sdy.sharding_origins = {}}"),
            Some((Group::SdyAttr, 16, 30))
        );
    }
}
