"""The one allow-list of inputs XLA's HLO parser (or Shardy's parser/verifier) accepts and shardconv
rejects on purpose (docs/formats.md §1.3). Each entry: a reason, and a predicate on shardconv's error message.
The parity tests accept a disagreement only when an entry matches; docs/parity.md "Differences from XLA"
is generated from this list (``python tests/support/leniencies.py``)."""

from __future__ import annotations

from collections.abc import Callable
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Leniency:
    name: str
    example: str
    reason: str
    matches: Callable[[str, str], bool]  # (input text, shardconv's error message)
    mesh: str = ""  # for verifier differences: the mesh the example is verified on


def _has(*words: str) -> Callable[[str, str], bool]:
    return lambda text, msg: any(w in msg for w in words)


def _negative(text: str, msg: str) -> bool:
    return re.search(r"[\[,(=]\s*-\d", text) is not None and msg.startswith(("unexpected", "negative number"))


XLA: tuple[Leniency, ...] = (
    Leniency("device list length differs from the tile dims", "{devices=[3]0,1}",
             "XLA pads a short list with device 0 and corrupts its heap on a long one (then aborts).",
             _has("entries but the tile dims")),
    Leniency("iota size differs from the tile dims", "{devices=[4]<=[2,3]T(1,0)}",
             "XLA accepts and prints it; other sizes die on an internal CHECK (docs/formats.md §1.3).", _has("devices but the tile dims")),
    Leniency("duplicate device ids", "{devices=[2]0,0}",
             "XLA accepts it unchanged; two tiles on one device is never a real layout.", _has("more than once")),
    Leniency("transpose that is not a permutation", "{devices=[2,2]<=[2,2]T(0,0)}",
             "XLA accepts and prints it; the device order it denotes is undefined.", _has("not a permutation")),
    Leniency("zero-sized or negative dims", "{devices=[2,0]<=[0]}",
             "XLA accepts it; a tile array with no devices places nothing.", _has("at least 1", "negative")),
    Leniency("an item given twice", "{maximal device=1 device=2}",
             "XLA keeps the last one silently; shardconv names the duplicate.", _has("given twice")),
    Leniency("last_tile_dim_replicate together with last_tile_dims=", "{devices=[2,2]<=[4] last_tile_dim_replicate last_tile_dims={manual}}",
             "Contradictory subgroup descriptions; XLA aborts.", _has("cannot both")),
    Leniency("device= outside a maximal sharding, or a device list on a flag", "{devices=[2]<=[2] device=1}",
             "XLA aborts the process on it.", _has("only valid in a maximal", "not a devices= list",
                                                                             "should not have any devices")),
    Leniency("integers beyond int64 / int32 metadata fields", "{devices=[2]0,9223372036854775808}",
             "XLA wraps them (9223372036854775808 prints as -9223372036854775808).", _has("int64", "int32")),
    Leniency("more subgroup types than tile dims", "{devices=[2]<=[2] last_tile_dims={manual, manual}}",
             "XLA fails with std::bad_alloc instead of a message.", _has("last_tile_dims but only")),
    Leniency("unknown subgroup type or metadata attribute", "{devices=[2,2]<=[4] last_tile_dims={maximal}}",
             "XLA accepts an OpSharding type name or any key; shardconv lists the valid ones.",
             _has("is not one of", "unknown metadata attribute", "takes an integer", "takes a string")),
    Leniency("string escapes that are not valid UTF-8", "{replicated metadata={op_name=\"\\377\"}}",
             "XLA stores the raw bytes; shardconv keeps strings valid UTF-8 so every printed form re-parses.",
             _has("UTF-8", "unknown escape")),
    Leniency("V3 meshes and axes XLA aborts on", "{mesh['a'=2,'b'=4], [{}, {}], replicated={'b','a'}}",
             "Unsorted axis sets, mergeable sub-axes, overlaps, iota device_ids, unknown axes: XLA CHECK-fails.",
             _has("mesh order", "merge", "overlap", "iota", "unknown axis", "whole axis", "does not divide",
                  "greater than 1", "duplicate", "permutation", "shorthand", "needs a mesh with axes")),
    Leniency("more devices than the device limit", "{devices=[4096,4097]<=[16781312]}",
             "shardconv refuses before allocating; raise the limit with --max-devices / SHARDCONV_MAX_DEVICES.",
             _has("device limit", "characters long")),
    Leniency("negative device ids or dims", "{devices=[2]0,-1}",
             "XLA's lexer takes a sign anywhere and keeps -1 as a device id or iota dim; no device has a negative id.",
             _negative),
    Leniency("V3 items with a missing or doubled comma", "{mesh['a'=2] replicated}",
             "XLA's V3 parser skips commas loosely ({mesh['a'=2]  [{'a'}]}, {mesh['a'=2],, [...]}); shardconv "
             "wants exactly one comma between items, as XLA prints them.",
             lambda text, msg: text.lstrip("{ ").startswith("mesh") and ("expected ','" in msg or "unexpected ','" in msg)),
)

SHARDY: tuple[Leniency, ...] = (
    Leniency("sub-axis sizes that overflow int64", '#sdy.sharding<@mesh, [{"x":(2)9223372036854775807, "y"}, {}]>',
             "Shardy multiplies pre-size by size in int64, wraps around and accepts it; the sub-axis cannot "
             "fit any axis.",
             lambda text, msg: "sub-axis" in msg and any(int(n) >= 2**62 for n in re.findall(r"\d{19,}", msg)),
             mesh='<["x"=2, "y"=2]>'),
    Leniency("a stray '@' after the attribute", '#sdy.sharding<@mesh, []>@',
             "MLIR's lexer reports a lone '@' after a complete attribute nowhere (not even inside a module) and "
             "drops it; anywhere else Shardy rejects it as shardconv does.",
             lambda text, msg: text.rstrip().endswith("@") and ("'@'" in msg)),
    Leniency("more devices than the device limit", '#sdy.mesh<["a"=16777217]>',
             "Shardy builds any mesh; shardconv refuses before allocating (raise with --max-devices).",
             _has("device limit")),
)


@dataclass(frozen=True)
class Newer:
    """The other direction, also on purpose: a spelling of another release (docs/releases.md) that
    jaxlib 0.10.2 rejects and shardconv reads. ``spelling`` is its name in shardconv.formats.releases."""

    spelling: str
    example: str
    parser: str  # "hlo" | "sdy"


NEWER: tuple[Newer, ...] = (
    Newer("bare V3 axis names", "{mesh[a=2,b=4], [{a}, {}]}", "hlo"),
    Newer("{single_device[device_id=N]}", "{single_device[device_id=5]}", "hlo"),
    Newer("V3 dim priority", "{mesh['a'=2], [{'a'}p1]}", "hlo"),
    Newer("sdy unreduced=max/min", '#sdy.sharding<@mesh, [{}], unreduced=max{"x"}>', "sdy"),
    Newer("sdy empty axis list", '#sdy.sharding<@mesh, [{"x"}], replicated={}>', "sdy"),
)


def newer(text: str) -> Newer | None:
    """The entry excusing shardconv's acceptance of ``text``, which jaxlib 0.10.2 rejects: ``text`` uses a
    spelling that 0.10.2 does not write. None means a bug."""
    from shardconv.formats.releases import spellings

    names = {s.name for s in spellings(text) if "0.10.2" not in s.releases}
    return next((e for e in NEWER if e.spelling in names), None)


def allowed(table: tuple[Leniency, ...], text: str, message: str) -> Leniency | None:
    """The entry excusing shardconv's rejection of ``text`` with ``message``; None means a bug."""
    return next((e for e in table if e.matches(text, message)), None)


def markdown() -> str:
    """The docs/parity.md "Differences from XLA" section."""
    rows = ["| Input (XLA/Shardy accept it, or abort on it) | Example | What XLA does; why shardconv rejects it |", "|---|---|---|"]
    for e in XLA + SHARDY:
        rows.append(f"| {e.name} | `{e.example}` | {e.reason} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown())
