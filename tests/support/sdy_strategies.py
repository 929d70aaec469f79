"""Hypothesis strategies for Shardy models, plus a 'noisy' renderer that spells the same value the many
ways MLIR's lexer accepts (spacing, comments, hex integers, alternative escapes)."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from shardconv.core.model import (
    AxisRef,
    DimSharding,
    ManualAxes,
    Mesh,
    MeshAxis,
    SubAxis,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.formats.sdy.write import print_symbol

_NAME_CHARS = list("abxyz_09.$") + ['"', "\\", " ", "\n", "\t", "é", "\x7f", "\x00", "\udcff", "'"]
names = st.text(st.sampled_from(_NAME_CHARS), max_size=4)
plain_names = st.sampled_from(["a", "b", "x", "y", "batch", "model"])
symbol_names = st.one_of(
    st.sampled_from(["mesh", "m", "_m.e$1", "mesh_2"]),
    st.text(st.sampled_from(list("am0- _\"\\é")), min_size=1, max_size=4),
)
sizes = st.sampled_from([1, 2, 3, 4, 6, 8, 16])


@st.composite
def meshes(draw: st.DrawFn, axis_names: st.SearchStrategy[str] = names, max_axes: int = 4) -> Mesh:
    """A valid mesh: unique names, sizes >= 1, optional device_ids (a permutation, sometimes iota)."""
    axes = draw(st.lists(st.tuples(axis_names, sizes), max_size=max_axes, unique_by=lambda t: t[0]))
    n = 1
    for _, s in axes:
        n *= s
    ids = None
    if not axes:
        ids = draw(st.one_of(st.none(), st.tuples(st.integers(0, 9))))
    elif n <= 32 and draw(st.booleans()):
        ids = tuple(draw(st.permutations(range(n))))
    return Mesh.of([MeshAxis(a, s) for a, s in axes], ids)


def axis_refs(pool: list[str]) -> st.SearchStrategy[AxisRef]:
    sub = st.one_of(st.none(), st.builds(SubAxis, st.sampled_from([1, 2, 4, -1, 0, 3]), st.sampled_from([2, 4, 1, 0, 3])))
    return st.builds(AxisRef, st.sampled_from(pool), sub)


def dims(pool: list[str]) -> st.SearchStrategy[DimSharding]:
    prio = st.one_of(st.none(), st.integers(0, 3), st.integers(0, (1 << 63) - 1))
    return st.builds(DimSharding, st.lists(axis_refs(pool), max_size=3).map(tuple), st.booleans(), prio)


@st.composite
def shardings(draw: st.DrawFn, mesh_ref: st.SearchStrategy[str | Mesh] | None = None) -> TensorSharding:
    """Any sharding Shardy's parser accepts (not necessarily one its verifier accepts)."""
    pool = draw(st.lists(names, min_size=1, max_size=4))
    ref = draw(mesh_ref if mesh_ref is not None else st.one_of(symbol_names, meshes()))
    return TensorSharding(
        mesh=ref,
        dims=tuple(draw(st.lists(dims(pool), max_size=4))),
        replicated=tuple(draw(st.lists(axis_refs(pool), max_size=3))),
        unreduced=tuple(draw(st.lists(axis_refs(pool), max_size=3))),
    )


per_values = st.builds(TensorShardingPerValue, st.lists(shardings(), max_size=3).map(tuple))
manual_axes = st.builds(ManualAxes, st.lists(names, max_size=3).map(tuple))


# --- noisy rendering --------------------------------------------------------------------------------


class Noisy:
    """Renders model values with random but legal MLIR spelling variations."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def ws(self) -> str:
        return self.r.choice(["", "", "", " ", "  ", "\n", " // note\n", "\t"])

    def int(self, v: int) -> str:
        if v < 0:
            return "-" + self.int(-v)
        return self.r.choice([str(v), str(v), hex(v), "0" + str(v)])

    def string(self, name: str) -> str:
        out = []
        for byte in name.encode("utf-8", "surrogateescape"):
            ch = chr(byte)
            if ch == '"':
                out.append(self.r.choice(['\\"', "\\22"]))
            elif ch == "\\":
                out.append(self.r.choice(["\\\\", "\\5C", "\\5c"]))
            elif ch == "\n":
                out.append(self.r.choice(["\\n", "\\0A", "\\0a"]))
            elif ch == "\t":
                out.append(self.r.choice(["\\t", "\\09", "\t"]))
            elif 0x20 <= byte < 0x7F:
                out.append(self.r.choice([ch, ch, ch, f"\\{byte:02x}"]))
            else:
                out.append(f"\\{byte:02X}")
        return '"' + "".join(out) + '"'

    def symbol(self, name: str) -> str:
        plain = print_symbol(name)
        if plain.startswith('@"') or self.r.random() < 0.7:
            return "@" + self.string(name) if plain.startswith('@"') else plain
        return "@" + self.string(name)

    def sep(self, items: list[str], sep: str = ",") -> str:
        return (self.ws() + sep + self.ws()).join(items)

    def mesh_inner(self, mesh: Mesh) -> str:
        w = self.ws
        axes = self.sep([f"{self.string(a.name)}{w()}={w()}{self.int(a.size)}" for a in mesh.axes])
        ids = mesh.explicit_device_ids
        if ids is None and mesh.axes and self.r.random() < 0.2:
            ids = tuple(range(mesh.num_devices)) if mesh.num_devices <= 64 else None
        tail = f"{w()},{w()}device_ids{w()}={w()}[{w()}{self.sep([self.int(i) for i in ids])}{w()}]" if ids else ""
        return f"[{w()}{axes}{w()}]{tail}"

    def mesh(self, mesh: Mesh) -> str:
        return f"<{self.ws()}{self.mesh_inner(mesh)}{self.ws()}>"

    def axis_ref(self, ref: AxisRef) -> str:
        s = self.string(ref.name)
        if ref.sub_axis is None:
            return s
        w = self.ws
        return f"{s}{w()}:{w()}({w()}{self.int(ref.sub_axis.pre_size)}{w()}){w()}{self.int(ref.sub_axis.size)}"

    def dim(self, d: DimSharding) -> str:
        items = [self.axis_ref(a) for a in d.axes] + ([] if d.is_closed else ["?"])
        prio = "" if d.priority is None else f"{self.ws()}p{d.priority}"
        return f"{{{self.ws()}{self.sep(items)}{self.ws()}}}{prio}"

    def sharding_body(self, s: TensorSharding) -> str:
        w = self.ws
        ref = self.symbol(s.mesh) if isinstance(s.mesh, str) else f"mesh{w()}{self.mesh(s.mesh)}"
        parts = [ref, f"[{w()}{self.sep([self.dim(d) for d in s.dims])}{w()}]"]
        lists = []
        if s.replicated:
            lists.append(f"replicated{w()}={w()}{{{self.sep([self.axis_ref(a) for a in s.replicated])}}}")
        if s.unreduced:
            lists.append(f"unreduced{w()}={w()}{{{self.sep([self.axis_ref(a) for a in s.unreduced])}}}")
        self.r.shuffle(lists)
        return f"<{w()}{self.sep(parts + lists)}{w()}>"

    def sharding(self, s: TensorSharding, attribute: bool = True) -> str:
        return ("#sdy.sharding" if attribute else "") + self.sharding_body(s)

    def per_value(self, v: TensorShardingPerValue) -> str:
        items = [self.sharding(s, self.r.random() < 0.3) for s in v.shardings]
        return f"#sdy.sharding_per_value<{self.ws()}[{self.ws()}{self.sep(items)}{self.ws()}]{self.ws()}>"



# --- fast seeded generators (bulk volume; hypothesis draws the seeds) ---------------------------------


class RandomModels:
    """Cheap random models for thousands of cases per test; the same seed gives the same values."""

    def __init__(self, seed: int, *, raw_bytes: bool = True) -> None:
        self.r = random.Random(seed)
        # Names that are not UTF-8 must stay out of Shardy diagnostics: nanobind aborts on them.
        self.chars = _NAME_CHARS if raw_bytes else [c for c in _NAME_CHARS if c != "\udcff"]

    def name(self) -> str:
        return "".join(self.r.choice(self.chars) for _ in range(self.r.randint(0, 4)))

    def mesh(self, max_axes: int = 4, valid: bool = True) -> Mesh:
        r = self.r
        axes: dict[str, int] = {}
        for _ in range(r.randint(0, max_axes)):
            axes[r.choice(["a", "b", "x", "y", "model"]) if r.random() < 0.6 else self.name()] = r.choice([1, 2, 3, 4, 6, 8, 16])
        n = 1
        for s in axes.values():
            n *= s
        ids: list[int] | None = None
        if not axes:
            ids = [r.randint(0, 9)] if r.random() < 0.5 else None
        elif n <= 32 and r.random() < 0.5:
            ids = list(range(n))
            r.shuffle(ids)
        if not valid:
            return self._break_mesh(list(axes.items()), ids)
        return Mesh.of(list(axes.items()), ids)

    def _break_mesh(self, axes: list[tuple[str, int]], ids: list[int] | None) -> Mesh:
        r = self.r
        kind = r.randrange(6)
        if kind == 0 and axes:
            i = r.randrange(len(axes))
            axes[i] = (axes[i][0], r.choice([0, -1, -4]))
        elif kind == 1 and axes:
            axes.append(r.choice(axes))
        elif kind == 2:
            ids = (ids or list(range(max(1, len(axes))))) + [r.randint(0, 3)]
        elif kind == 3 and ids:
            ids[r.randrange(len(ids))] = r.choice([-1, ids[0], len(ids) + 3])
        elif kind == 4:
            ids = [r.randint(0, 3) for _ in range(r.randint(2, 3))]
            axes = []
        ax = tuple(MeshAxis(a, s) for a, s in axes)
        return Mesh(axes=ax, explicit_device_ids=tuple(ids) if ids is not None else None)

    def axis_ref(self, pool: list[str], mesh: Mesh | None = None) -> AxisRef:
        r = self.r
        name = r.choice(pool)
        if r.random() < 0.6:
            return AxisRef(name)
        if mesh is not None and mesh.has_axis(name) and r.random() < 0.7:
            full = mesh.axis_size(name)
            divisors = [d for d in range(1, full + 1) if full % d == 0]
            pre = r.choice(divisors)
            size = r.choice([d for d in divisors if (full // pre) % d == 0] or [1])
            return AxisRef(name, SubAxis(pre, size))
        return AxisRef(name, SubAxis(r.choice([1, 2, 4, -1, 0, 3]), r.choice([2, 4, 1, 0, 3])))

    def dim(self, pool: list[str], mesh: Mesh | None = None) -> DimSharding:
        r = self.r
        axes = tuple(self.axis_ref(pool, mesh) for _ in range(r.choice([0, 0, 1, 1, 2, 3])))
        prio = None if r.random() < 0.6 else r.choice([0, 1, 2, 7, (1 << 63) - 1])
        return DimSharding(axes, r.random() < 0.7, prio)

    def sharding(self, mesh: str | Mesh, pool: list[str] | None = None, rank: int | None = None, ref_mesh: Mesh | None = None) -> TensorSharding:
        r = self.r
        target = mesh if isinstance(mesh, Mesh) else ref_mesh
        if pool is None:
            pool = [self.name() for _ in range(r.randint(1, 4))]
        rank = r.randint(0, 4) if rank is None else rank
        lists = [tuple(self.axis_ref(pool, target) for _ in range(r.choice([0, 0, 1, 2]))) for _ in range(2)]
        return TensorSharding(
            mesh=mesh, dims=tuple(self.dim(pool, target) for _ in range(rank)), replicated=lists[0], unreduced=lists[1]
        )

    def any_sharding(self) -> TensorSharding:
        r = self.r
        ref: str | Mesh = r.choice(["mesh", "m", "_m.e$1", "my mesh", "0", 'q"'])
        if r.random() < 0.3:
            ref = self.mesh()
        return self.sharding(ref)


_SMALL_NAMES = ("a", "b", "x", "model")


@st.composite
def small_meshes(draw: st.DrawFn) -> Mesh:
    """A mesh of one to three plainly named axes of size 1, 2, 4 or 8 (iota device ids)."""
    names = draw(st.lists(st.sampled_from(_SMALL_NAMES), unique=True, min_size=1, max_size=3))
    return Mesh.of([MeshAxis(n, draw(st.sampled_from([1, 2, 4, 8]))) for n in names])


@st.composite
def valid_on(draw: st.DrawFn, mesh: Mesh, *, open_dims: bool = False, min_rank: int = 1) -> TensorSharding:
    """A sharding on ``mesh`` that Shardy's verifier accepts: each axis (whole, or split in two halves) in a
    dim, in ``replicated``, in ``unreduced`` or unused; with ``open_dims``, at least one dim is open."""
    from hypothesis import assume

    from shardconv.core.errors import ShardingError
    from shardconv.formats.sdy.verify import verify_on

    rank = draw(st.integers(max(min_rank, 1 if open_dims else 0), 3))
    dims: list[list[AxisRef]] = [[] for _ in range(rank)]
    sets: dict[str, list[AxisRef]] = {"replicated": [], "unreduced": []}
    for a in mesh.axes:
        refs = [AxisRef(a.name)]
        if a.size >= 4 and draw(st.booleans()):
            refs = [AxisRef(a.name, SubAxis(1, 2)), AxisRef(a.name, SubAxis(2, a.size // 2))]
        for ref in refs:
            where = draw(st.sampled_from(["dim", "dim", "none", "replicated", "unreduced"]))
            if where == "dim" and rank:
                dims[draw(st.integers(0, rank - 1))].append(ref)
            elif where in sets:
                sets[where].append(ref)
    opens = draw(st.lists(st.booleans(), min_size=rank, max_size=rank).filter(lambda o: any(o) or not open_dims))
    s = TensorSharding(
        mesh=mesh.symbol,
        dims=tuple(DimSharding(tuple(d), is_closed=not o) for d, o in zip(dims, opens)),
        replicated=tuple(sets["replicated"]),
        unreduced=tuple(sets["unreduced"]),
    )
    try:
        verify_on(s, mesh)
    except ShardingError:
        assume(False)
    return s


@st.composite
def valid_on_mesh(draw: st.DrawFn, *, open_dims: bool = False) -> tuple[TensorSharding, Mesh]:
    """``valid_on`` a ``small_meshes`` mesh, with that mesh."""
    mesh = draw(small_meshes())
    return draw(valid_on(mesh, open_dims=open_dims)), mesh
