"""Keywords: the one regex that finds where a sharding-related value starts on a line (``KEYWORD``),
and the search that runs it only where a literal needle allows, at ``bytes.find`` speed between them."""

from __future__ import annotations

import re

# An attribute alias's `#name` alone (keywords.rs `alias`): blanks, then the line's end or a `,`, `}` or `:`
# that ends the value; a byte damaged in `#sdy.sharding<` (`#sd}.sharding<`) leaves none.
_ALIAS = rb"\#(?!sdy\.)[\w$.]+[ \t]*(?:[,}:](?:[\s,})\]>]|\Z)|[\r\n]|\Z)"
KEYWORD = re.compile(
    rb"""
     (?P<hlo>(?<![\w.])sharding=[ \t]*\{)
    |(?P<hlobad>(?<![\w.])sharding=(?:(?=[ \t]*(?:[\r\n]|\Z)|[^{< \t])|(?<!%sharding=)[ \t]+(?=[^{< \t])))
    |(?P<sdybad>(?<![\w.])sdy\.sharding\s*=(?!\s*(?:\#sdy\.sharding<|\#sdy\.sharding_per_value<|ALIAS))\s*)
    |(?P<hlofe>(?<![\w.])(?P<hlofekey>xla\.sdy\.[\w.]+)=(?P<hlofeopen>["{]))
    |(?P<hlonp>(?<![\w.])num_partitions=(?P<hlonpv>\d+))
    |(?P<npbad>(?<![\w.])num_partitions=(?!\d))
    |(?P<mstr>(?<![\w.])(?P<mstrkey>mhlo\.sharding|mhlo\.spmd_output_sharding|xla\.sdy\.[\w.]+)\s*=\s*")
    |(?P<mstrbad>(?<![\w.%])(?P<mstrbadkey>mhlo\.sharding|mhlo\.spmd_output_sharding)\s*=[ \t]*(?![ \t\r\n"]|\Z))
    |(?P<mnp>(?<![\w.])mhlo\.num_partitions\s=\s(?P<mnpv>\d+))
    |(?P<mnpbad>(?<![\w.])mhlo\.num_partitions\s=\s(?!\d))
    |(?P<sdyattr>\#sdy\.(?P<sdyattrkind>sharding_per_value|sharding|mesh)<)
    |(?P<meshdecl>(?<![\w.])sdy\.mesh\s+@(?P<meshname>[\w$.\-]+|"(?:[^"\\]|\\.)*")\s*=\s*<)
    |(?P<meshbad>(?<![\w.%])sdy\.mesh\s+@(?P<meshbadname>[\w$.\-]+|"(?:[^"\\]|\\.)*")\s*=[ \t]*
        (?![ \t\r\n<]|\#sdy\.|ALIAS|\Z))
    |(?P<sdyop>(?<![\w.])sdy\.(?P<sdyopname>sharding_constraint|reshard)\s+%[\w\#.$\-]+\s+<)
    |(?P<sdyopbad>(?<![\w.%])sdy\.(?P<sdyopbadname>sharding_constraint|reshard)\s+%[\w\#.$\-]+[ \t]+
        (?![ \t\r\n<]|\#sdy\.|ALIAS|\Z))
    |(?P<oparg>(?<![\w.])(?P<opargkey>out_sharding|sharding)=<)
    |(?P<mclist>(?<![\w.])(?P<mclistkey>in_shardings|out_shardings)=\[)
    |(?P<maxes>(?<![\w.])manual_axes=\{)
    |(?P<unspec>unspecified_dims=(?P<unspecv>\[[\d,\s]*\]))
    |(?P<shmesh>(?<![\w.])stablehlo\.mesh\s*=\s*\{)
    |(?P<shmeshbad>(?<![\w.%])stablehlo\.mesh\s*=[ \t]*(?![ \t\r\n{]|\#sdy\.|ALIAS|\Z))
    |(?P<collective>replica_group_mesh_axes<\s*mesh\s*=\s*(?:@(?P<collname>[\w$.\-]+)|\#stablehlo\.mesh<))
    |(?P<shardgrid>(?<![\w.])shard\.grid\s+@(?P<gridname>[\w$.\-]+|"(?:[^"\\]|\\[^\n])*")\s*\()
    |(?P<shardsharding>(?<![\w.])shard\.sharding\s+@(?P<shardgrid_name>[\w$.\-]+|"(?:[^"\\]|\\[^\n])*")(?=\s+split_axes\s*=\s*\[))
    |(?P<expected>expected-error(?P<expectedoff>@[+-]\d+|@above|@below)?)
    """.replace(b"ALIAS", _ALIAS),
    re.VERBOSE,
)

# Every KEYWORD match holds one of these, and the first one in it sits at one of a few distances from the
# match's start (no needle occurs before it in the match): where a needle is found, only those starts
# can begin a match whose first needle it is, so ``search_keyword`` tries ``KEYWORD.match`` there and nowhere else.
NEEDLE_STARTS: dict[bytes, tuple[int, ...]] = {
    b"sharding": (17, 5, 4, 3, 0),  # mhlo.spmd_output_, mhlo., out_, in_, sharding= / sharding=<
    b"sdy.": (4, 1, 0),  # xla.sdy., #sdy., sdy.mesh / sdy.sharding_constraint
    b"num_partitions": (5, 0),  # mhlo.num_partitions, num_partitions=
    b"manual_axes": (0,),
    b"unspecified_dims": (0,),
    b"expected-error": (0,),
    b"stablehlo.mesh": (0,),
    b"replica_group_mesh_axes": (0,),
    b"shard.": (0,),
}
NEEDLES = tuple(NEEDLE_STARTS)
_STARTS = tuple(NEEDLE_STARTS.values())
# Where a module begins (its meshes and num_partitions start afresh): HLO, MLIR, or a lit/pass-dump split.
MODULE_START = re.compile(rb"\s*(?:HloModule\s|module\b|//\s*-----)")


def search_keyword(text: bytes, pos: int, nexts: list[int]) -> re.Match[bytes] | None:
    """``KEYWORD.search(text, pos)``, but the regex is tried only at the few starts a needle allows, so a
    long line without keywords costs grep time and one with them a handful of anchored matches.
    ``nexts`` caches each needle's next offset (-1: not looked up yet; len: none left)."""
    n = len(text)
    while True:
        for i, k in enumerate(NEEDLES):
            if nexts[i] < pos:
                found = text.find(k, pos)
                nexts[i] = n if found < 0 else found
        hit = min(nexts)
        if hit >= n:
            return None
        # The needles at ``hit`` (two may begin there) and the starts they allow, leftmost first.
        starts = {hit - d for i, at in enumerate(nexts) if at == hit for d in _STARTS[i] if hit - d >= pos}
        for start in sorted(starts):
            m = KEYWORD.match(text, start)
            if m is not None:
                return m
        pos = hit + 1


__all__ = ["KEYWORD", "MODULE_START", "NEEDLES", "NEEDLE_STARTS", "search_keyword"]
