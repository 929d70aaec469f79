//! MLIR's shard dialect: a `shard.grid @g(shape = 2x4)` declaration (site kind `shard.grid`, the whole
//! op up to its `)`) and a `shard.sharding @g split_axes = [[0], []] ...` op (kind `shard.sharding`,
//! from its keyword to the end of its last list), each named by its grid.

use super::{symbol, Ctx, Extractor, Line, OpFrom, Site, SiteKind};
use crate::keywords::{run, ws, Group, Match};
use crate::strings::{is_word, match_close};

/// The lists a `shard.sharding` op may hold after its grid, in the order mlir-opt prints them.
const SHARDING_LISTS: [&[u8]; 3] = [b"split_axes", b"halo_sizes", b"sharded_dims_offsets"];

/// After a sharding's grid name at `i`: each `LIST = [...]` in turn. Ok(the end of the last list), or
/// Err(the `[` of a list that is not closed on the line).
fn sharding_lists_end(t: &[u8], mut i: usize) -> Result<usize, usize> {
    loop {
        let w = ws(t, i);
        let word = run(t, w, is_word);
        if !SHARDING_LISTS.contains(&&t[w..word]) {
            return Ok(i);
        }
        let eq = ws(t, word);
        let open = ws(t, eq + 1);
        if t.get(eq) != Some(&b'=') || t.get(open) != Some(&b'[') {
            return Ok(i);
        }
        i = match_close(t, open).ok_or(open)?;
    }
}

impl Extractor {
    /// A shard dialect op's site: its grid declaration or sharding, from the op's keyword on.
    pub(super) fn shard_op(&mut self, ln: &mut Line, m: &Match, out: &mut Vec<Site>) -> usize {
        let t = ln.text;
        let name = symbol(super::strip_quotes(&t[m.sub.0..m.sub.1]));
        let (kind, site, end) = if m.group == Group::ShardGrid {
            (SiteKind::ShardGrid, "shard.grid", match_close(t, m.end - 1).ok_or(m.end - 1))
        } else {
            (SiteKind::ShardSharding, "shard.sharding", sharding_lists_end(t, m.end))
        };
        let op = OpFrom::Named(site);
        match end {
            Ok(end) => {
                out.push(self.occ(ln, kind, site.into(), (m.start, end), Ctx { value: Some(name), shapes: None, op }));
                end
            }
            Err(_) => {
                let c = Ctx { value: Some(name), shapes: None, op };
                self.unfinished(ln, m.end, kind, site.into(), m.start, c, out)
            }
        }
    }
}
