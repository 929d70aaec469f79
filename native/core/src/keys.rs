//! Keys: what trace follows each sharded value by from one dump to the next. The entry's parameters
//! and ROOT, and a signature's arguments and results, go by position (`arg[0]`, `result`); every other
//! value by its name, prefixed by its function unless that is the entry one (each function numbers its
//! values from `%0`). A parameter or ROOT of another computation (a reducer, a fusion) is never the
//! module's. Made once per scan, for the sites that shard a value, so trace reads a key per site.

use crate::extract::{SiteKind, FLAG_ROOT, FLAG_SIGNATURE};
use crate::intern::{FxMap, Interner};
use crate::table::{ScopeKey, Table, NONE};
use std::fmt::Write;

/// Whether a site of `kind` shards the value it names (the kinds trace follows).
pub fn shards(kind: SiteKind) -> bool {
    matches!(
        kind,
        SiteKind::Hlo
            | SiteKind::SdySharding
            | SiteKind::SdyShardingBare
            | SiteKind::SdyPerValue
            | SiteKind::SdyPerValueList
    )
}

/// `N` of a name `%argN`.
fn arg_number(name: &str) -> Option<&str> {
    let n = name.strip_prefix("%arg")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(n)
}

/// The key of the value `name` in `scope` (a parameter's number `param`, or NONE; the site's `flags`);
/// None for a value trace does not follow (a result outside a signature: its place has no name). Most
/// keys are the name itself, returned as it is; any other is written into `out`, a buffer the caller
/// keeps (a pass log's scans key a million sites: a string made per key cost a fifth of the keying).
pub fn value_key<'a>(
    name: &'a str,
    scope: Option<&ScopeKey>,
    param: u32,
    flags: u32,
    out: &'a mut String,
) -> Option<&'a str> {
    if name.is_empty() || name == "module" {
        return None;
    }
    let (function, entry) = match scope {
        Some((n, "func", e)) => (Some(n.as_str()), *e),
        Some((_, _, e)) => (None, *e),
        None => (None, false),
    };
    if scope.is_some_and(|s| s.1 != "func") && entry {
        if param != NONE {
            out.clear();
            let _ = write!(out, "arg[{param}]"); // (writing into a String cannot fail)
            return Some(out.as_str());
        }
        if flags & FLAG_ROOT != 0 {
            return Some("result");
        }
    }
    let signature = flags & FLAG_SIGNATURE != 0;
    let arg = arg_number(name).filter(|_| signature);
    let bare = arg.is_none() && !name.starts_with('%') && !(signature && name.starts_with("result["));
    if bare && name.starts_with("result[") {
        return None;
    }
    let prefix = function.filter(|_| !entry);
    if prefix.is_none() && arg.is_none() && !bare {
        return Some(name);
    }
    out.clear();
    if let Some(f) = prefix {
        out.extend(["@", f, ":"]);
    }
    match arg {
        Some(n) => out.extend(["arg[", n, "]"]),
        None if bare => out.extend(["%", name]),
        None => out.push_str(name),
    }
    Some(out.as_str())
}

/// Each row's key: an id below `names.len()` is the row's name itself (most keys), one from there on
/// the `extra` key at that offset; NONE for a row that shards no value or one trace does not follow.
/// And each row's read: its distinct (value, shapes, op), what a reading of it depends on in a dump.
pub struct Keys {
    pub column: Vec<u32>,
    pub extra: Vec<String>,
    /// The id of the key `result` (the entry's ROOT, whose elements are keyed apart), or NONE.
    pub result: u32,
    pub reads: Vec<u32>,
    pub read_items: Vec<[u32; 3]>,
}

impl Table {
    /// The rows' keys (see `Keys`).
    pub fn keys(&self) -> Keys {
        let names = self.names.items();
        let scopes = self.scopes.items();
        let mut extra: Interner<String> = Interner::default();
        let mut built = String::new();
        let [v, n, sh, sc, op, .., pm, fl] = &self.u32s;
        let column: Vec<u32> = (0..self.count())
            .map(|i| {
                let kind = self.values.items.get(v[i] as usize).map(|x| x.kind);
                let Some(name) = names.get(n[i] as usize).filter(|_| kind.is_some_and(shards)) else { return NONE };
                let scope = scopes.get(sc[i] as usize).copied();
                match value_key(name, scope, pm[i], fl[i], &mut built) {
                    Some(k) if k == *name => n[i],
                    Some(k) => clamp_add(names.len(), extra.id_of(k)),
                    None => NONE,
                }
            })
            .collect();
        let mut index: FxMap<[u32; 3], u32> = FxMap::default();
        let mut read_items = Vec::new();
        let reads = (0..self.count())
            .map(|i| {
                *index.entry([v[i], sh[i], op[i]]).or_insert_with(|| {
                    read_items.push([v[i], sh[i], op[i]]);
                    (read_items.len() - 1) as u32
                })
            })
            .collect();
        let result = extra.get("result").map_or(NONE, |id| clamp_add(names.len(), id));
        Keys { column, extra: extra.items().into_iter().cloned().collect(), result, reads, read_items }
    }
}

fn clamp_add(base: usize, id: u32) -> u32 {
    u32::try_from(base).ok().and_then(|b| b.checked_add(id)).filter(|&k| k != NONE).unwrap_or(NONE)
}

#[cfg(test)]
mod tests {
    use super::value_key;
    use crate::table::NONE;

    fn key(name: &str, scope: Option<(&str, &'static str, bool)>, param: u32, flags: u32) -> Option<String> {
        let scope = scope.map(|(n, k, e)| (n.to_owned(), k, e));
        value_key(name, scope.as_ref(), param, flags, &mut String::new()).map(str::to_owned)
    }

    #[test]
    fn keys_by_position_and_by_name() {
        let entry = Some(("main.1", "computation", true));
        assert_eq!(key("p0", entry, 3, 0).as_deref(), Some("arg[3]"));
        assert_eq!(key("tuple.5", entry, NONE, 1).as_deref(), Some("result"));
        assert_eq!(key("dot.2", entry, NONE, 0).as_deref(), Some("%dot.2"));
        assert_eq!(key("p0", Some(("add", "computation", false)), 0, 0).as_deref(), Some("%p0"));
        assert_eq!(key("%arg2", Some(("main", "func", true)), NONE, 2).as_deref(), Some("arg[2]"));
        assert_eq!(key("%arg2", Some(("f", "func", false)), NONE, 2).as_deref(), Some("@f:arg[2]"));
        assert_eq!(key("result[1]", Some(("f", "func", false)), NONE, 2).as_deref(), Some("@f:result[1]"));
        assert_eq!(key("result[1]", None, NONE, 0), None);
        assert_eq!(key("%3", Some(("f", "func", false)), NONE, 0).as_deref(), Some("@f:%3"));
        assert_eq!(key("%arg2x", None, NONE, 2).as_deref(), Some("%arg2x"));
        assert_eq!(key("module", None, NONE, 0), None);
    }
}
