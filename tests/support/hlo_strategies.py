"""Hypothesis strategies for valid XLA HLO sharding strings of every form (docs/formats.md §1.1)."""

from __future__ import annotations

from math import prod

from hypothesis import strategies as st

SIZES = [1, 1, 2, 2, 2, 3, 4, 4, 5, 6, 8]
SUBGROUPS = ["manual", "unreduced", "replicated"]


def _factorisations(n: int) -> list[list[int]]:
    """All ordered factorisations of n into factors > 1 (n <= 64 keeps this small)."""
    if n == 1:
        return [[]]
    out = []
    for f in range(2, n + 1):
        if n % f == 0:
            out += [[f] + rest for rest in _factorisations(n // f)]
    return out


@st.composite
def iota_devices(draw: st.DrawFn, n: int) -> str:
    facts = _factorisations(n)
    reshape = draw(st.sampled_from(facts)) if n > 1 else [1]
    if draw(st.booleans()) and len(reshape) > 1:
        reshape = reshape[:]
        i = draw(st.integers(0, len(reshape)))
        reshape.insert(i, 1)  # size-1 reshape dims are legal and canonicalised away
    if len(reshape) <= 1:
        return f"<=[{reshape[0] if reshape else n}]"
    perm = draw(st.permutations(range(len(reshape))))
    return f"<=[{','.join(map(str, reshape))}]T({','.join(map(str, perm))})"


@st.composite
def mesh_iota_ids(draw: st.DrawFn, n: int) -> str:
    """V3 ``device_ids=(...)`` body: mostly an iota that stays non-trivial after canonicalisation, since a
    plain ``[n]`` means no device_ids at all and would leave V3 → V2's iota path untested."""
    from shardconv.core.canonical import canonical_iota

    spelled = draw(iota_devices(n))[2:]
    if draw(st.integers(0, 3)) == 0 or len(_factorisations(n)) == 1:
        return spelled  # sometimes (or when n is prime) whatever iota_devices gave, trivial ones included
    facts = [f for f in _factorisations(n) if len(f) > 1]
    reshape = draw(st.sampled_from(facts))
    perm = draw(st.permutations(range(len(reshape))).filter(lambda p: len(canonical_iota(reshape, p)[0]) > 1))
    return f"[{','.join(map(str, reshape))}]T({','.join(map(str, perm))})"


@st.composite
def tile_devices(draw: st.DrawFn, n: int) -> str:
    kind = draw(st.sampled_from(["iota", "iota", "explicit", "explicit_iota"]))
    if kind == "iota" or n == 1:
        return draw(iota_devices(n))
    if kind == "explicit":
        devs = draw(st.permutations(range(n)))
    else:  # an explicit list that happens to be an iota order
        from shardconv.core.device_order import iota_order

        facts = _factorisations(n)
        reshape = draw(st.sampled_from(facts))
        devs = iota_order(reshape, draw(st.permutations(range(len(reshape)))))
    return ",".join(map(str, devs))


@st.composite
def metadata(draw: st.DrawFn) -> str:
    def one() -> str:
        fields = []
        for key in draw(st.lists(st.sampled_from(["op_name", "op_type", "source_file", "source_line",
                                                   "source_column", "deduplicated_name", "stack_frame_id"]),
                                 unique=True, max_size=3)):
            if key in ("source_line", "source_column", "stack_frame_id"):
                fields.append(f"{key}={draw(st.integers(0, 1000))}")
            else:
                text = draw(st.sampled_from(["a", "jit(f)/dot", "x.py", 'q\\"uote', "tab\\tnew\\nline", "\\303\\251", "é", "s p"]))
                fields.append(f'{key}="{text}"')
        return " ".join(fields)

    if draw(st.booleans()):
        return "metadata={" + one() + "}"
    return "metadata={" + ", ".join("{" + one() + "}" for _ in range(draw(st.integers(1, 3)))) + "}"


@st.composite
def tiled(draw: st.DrawFn) -> str:
    rank = draw(st.integers(1, 4))
    dims = draw(st.lists(st.sampled_from(SIZES), min_size=rank, max_size=rank).filter(lambda d: 1 < prod(d) <= 96))
    n = prod(dims)
    items = [f"devices=[{','.join(map(str, dims))}]{draw(tile_devices(n))}"]
    sub = draw(st.sampled_from(["none", "ltdr", "ltd"]))
    if sub == "ltdr":
        items.append("last_tile_dim_replicate")
    elif sub == "ltd":
        k = draw(st.integers(0, len(dims)))
        items.append("last_tile_dims={" + ", ".join(draw(st.lists(st.sampled_from(SUBGROUPS), min_size=k, max_size=k))) + "}")
    items += draw(extras())
    return "{" + " ".join(draw(st.permutations(items))) + "}"


@st.composite
def extras(draw: st.DrawFn) -> list[str]:
    out = []
    if draw(st.integers(0, 3)) == 0:
        out.append(f"{draw(st.sampled_from(['shard_as', 'shard_like']))} {draw(st.integers(0, 12))}")
    if draw(st.integers(0, 3)) == 0:
        out.append(draw(metadata()))
    return out


@st.composite
def simple(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["replicated", "manual", "unknown", "unreduced", "maximal"]))
    items = [f"maximal device={draw(st.integers(0, 100))}" if kind == "maximal" else kind]
    if kind != "maximal" and draw(st.integers(0, 4)) == 0:  # an iota tile is ignored under a flag
        items.append("devices=[2,2]<=[4]")
    return "{" + " ".join(draw(st.permutations(items + draw(extras())))) + "}"


NAMES = ["a", "b", "x", "batch", "model", "a b"]


ID_KINDS = ("none", "none", "explicit", "iota", "iota")


@st.composite
def v3(draw: st.DrawFn, id_kinds: tuple[str, ...] = ID_KINDS) -> str:
    """A V3 string; ``id_kinds`` weights how the mesh's device_ids are written (none/explicit/iota)."""
    if draw(st.integers(0, 12)) == 0:
        return f"{{maximal_mesh[device_id={draw(st.integers(0, 50))}]}}"
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3))
    sizes = [draw(st.sampled_from([1, 2, 3, 4, 8])) for _ in names]
    n = prod(sizes)
    rank = draw(st.integers(0, 3))
    dims: list[list[str]] = [[] for _ in range(rank)]
    sets: dict[str, list[str]] = {"replicated": [], "unreduced": [], "manual": []}
    for name, size in zip(names, sizes):
        pieces = [None]
        if size in (4, 8) and draw(st.booleans()):
            pieces = draw(st.sampled_from({4: [[(1, 2), (2, 2)]], 8: [[(1, 2), (2, 4)], [(1, 4), (4, 2)], [(1, 2), (2, 2), (4, 2)]]}[size]))
        for piece in pieces:
            ref = f"'{name}'" + (f":({piece[0]}){piece[1]}" if piece else "")
            where = draw(st.sampled_from(["dim", "dim", "none", "replicated", "unreduced", "manual"]))
            if where == "dim" and rank:
                d = dims[draw(st.integers(0, rank - 1))]
                d.insert(draw(st.integers(0, len(d))), ref)
            elif where in sets:
                sets[where].append(ref)
    parts = ["mesh[" + ",".join(f"'{a}'={s}" for a, s in zip(names, sizes)) + "]"]
    ids = draw(st.sampled_from(id_kinds))
    if ids == "explicit" and n > 1:
        perm = draw(st.permutations(range(n)).filter(lambda p: list(p) != list(range(n))))
        parts.append(f"device_ids=({','.join(map(str, perm))})")
    elif ids == "iota" and n > 1:
        parts.append(f"device_ids=({draw(mesh_iota_ids(n))})")
    keyword = rank == 0 and draw(st.booleans())
    if keyword:
        parts.append(draw(st.sampled_from(["replicated", "unreduced", "manual"])))
        sets = {k: [] for k in sets}
    else:
        opens = [draw(st.integers(0, 4)) == 0 for _ in dims]
        parts.append("[" + ", ".join("{" + ", ".join(d + (["?"] if o else [])) + "}" for d, o in zip(dims, opens)) + "]")
    attrs = [f"{k}={{{', '.join(v)}}}" for k, v in sets.items() if v or (not keyword and draw(st.integers(0, 5)) == 0)]
    if draw(st.integers(0, 4)) == 0:
        attrs.append(draw(metadata()))
    return "{" + ", ".join(parts + draw(st.permutations(attrs))) + "}"


def v3_is_valid(s: str) -> bool:
    """Filter for generated V3 strings: XLA aborts on mergeable neighbours and unsorted axis sets."""
    from shardconv.core.errors import ShardingError
    from shardconv.formats.hlo.read import parse_hlo

    try:
        parse_hlo(s)
    except ShardingError:
        return False
    return True


def v3_has_iota_ids(s: str) -> bool:
    """Filter for V3 strings that parse and whose mesh ids are a non-trivial iota (V3 → V2's iota path)."""
    from shardconv.core.errors import ShardingError
    from shardconv.formats.hlo.read import parse_hlo

    try:
        ms = parse_hlo(s).mesh_sharding
    except ShardingError:
        return False
    return ms is not None and ms.device_iota is not None


single = st.one_of(tiled(), tiled(), tiled(), simple(), v3().filter(v3_is_valid))


@st.composite
def tuple_sharding(draw: st.DrawFn) -> str:
    elems = draw(st.lists(single, max_size=8))
    return "{" + ", ".join(elems) + "}"


any_sharding = st.one_of(single, single, single, tuple_sharding())
