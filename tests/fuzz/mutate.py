"""Mutation operators: byte flips, token swaps, truncation, duplication, number blow-ups and deep
nesting, over text (str) or dump files (bytes). Deterministic for a given ``random.Random``."""

from __future__ import annotations

import random
import re

TOKENS = ["{", "}", "[", "]", "<", ">", "(", ")", ",", "=", ":", "?", "<=", "T(", "'", '"', "\\", "@", "#",
          "/*", "*/", "//", "\n", " ", "0", "-1", "p1", "devices=", "device=", "maximal", "manual", "replicated",
          "last_tile_dim_replicate", "last_tile_dims={", "metadata={", "mesh[", "device_ids=", "shard_as",
          "#sdy.sharding<", "#sdy.mesh<", "sdy.mesh @m = ", "\x00", "\xff", "é", "\udcff", "None"]
BIG = ["0", "1", "2", "4096", "65536", "16777216", "16777217", "2147483648", "9223372036854775807",
       "9223372036854775808", "18446744073709551616", "-1", "0x7fffffffffffffff", "9" * 40, "9" * 5000]
_NUM = re.compile(r"\d+")
_TOK = re.compile(r"[A-Za-z_]+=?|\d+|\S")


def _flip(rng: random.Random, s: str) -> str:
    if not s:
        return chr(rng.randrange(1, 256))
    i = rng.randrange(len(s))
    c = chr(ord(s[i]) ^ (1 << rng.randrange(8))) if rng.random() < 0.5 else chr(rng.randrange(32, 127))
    return s[:i] + c + s[i + 1 :]


def _insert(rng: random.Random, s: str) -> str:
    i = rng.randrange(len(s) + 1)
    return s[:i] + rng.choice(TOKENS) + s[i:]


def _swap(rng: random.Random, s: str) -> str:
    toks = [m.span() for m in _TOK.finditer(s)]
    if len(toks) < 2:
        return _insert(rng, s)
    (a0, a1), (b0, b1) = sorted(rng.sample(toks, 2))
    return s[:a0] + s[b0:b1] + s[a1:b0] + s[a0:a1] + s[b1:]


def _replace_token(rng: random.Random, s: str) -> str:
    toks = [m.span() for m in _TOK.finditer(s)]
    if not toks:
        return _insert(rng, s)
    a, b = rng.choice(toks)
    return s[:a] + rng.choice(TOKENS) + s[b:]


def _truncate(rng: random.Random, s: str) -> str:
    i = rng.randrange(len(s) + 1)
    return s[:i] if rng.random() < 0.7 else s[i:]


def _duplicate(rng: random.Random, s: str) -> str:
    i = rng.randrange(len(s) + 1)
    j = rng.randrange(i, len(s) + 1)
    return s[:j] + s[i:j] * rng.choice([1, 2, 3, 50]) + s[j:]


def _delete(rng: random.Random, s: str) -> str:
    i = rng.randrange(len(s) + 1)
    return s[:i] + s[i + rng.randrange(1, 4) :]


def _blow_up(rng: random.Random, s: str) -> str:
    nums = list(_NUM.finditer(s))
    if not nums:
        return _insert(rng, s)
    m = rng.choice(nums)
    return s[: m.start()] + rng.choice(BIG) + s[m.end() :]


def _nest(rng: random.Random, s: str) -> str:
    i = rng.randrange(len(s) + 1)
    opener = rng.choice(["{", "[", "(", "<", "{{", "metadata={", "mesh<", "#sdy.sharding<"])
    depth = rng.choice([10, 100, 1000, 10_000])
    closer = {"{": "}", "[": "]", "(": ")", "<": ">", "{{": "}}", "metadata={": "}", "mesh<": ">", "#sdy.sharding<": ">"}[opener]
    return s[:i] + opener * depth + (closer * depth if rng.random() < 0.5 else "") + s[i:]


OPERATORS = {
    "flip": _flip, "insert": _insert, "swap": _swap, "replace": _replace_token, "truncate": _truncate,
    "duplicate": _duplicate, "delete": _delete, "blow_up": _blow_up, "nest": _nest,
}
_WEIGHTS = {"flip": 4, "insert": 4, "swap": 2, "replace": 3, "truncate": 2, "duplicate": 2, "delete": 3, "blow_up": 3, "nest": 1}


def mutate(rng: random.Random, s: str, rounds: int | None = None) -> tuple[str, str]:
    """``s`` after 1-3 random operators; returns (mutant, name of the last operator)."""
    names = list(_WEIGHTS)
    weights = list(_WEIGHTS.values())
    op = "flip"
    for _ in range(rounds or rng.choice([1, 1, 1, 2, 3])):
        op = rng.choices(names, weights)[0]
        s = OPERATORS[op](rng, s)
    return s, op


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A dump file mutated as text (surrogateescape keeps every byte), or with raw binary bytes spliced in."""
    if rng.random() < 0.1:
        i = rng.randrange(len(data) + 1)
        return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) + data[i:], "binary"
    text = data.decode("utf-8", "surrogateescape")
    out, op = mutate(rng, text)
    return out.encode("utf-8", "surrogateescape"), op
