"""The native scanning core (Rust, PyO3, abi3): reads a dump once and returns its sites as one table.

Only ``shardconv.scan`` imports this module. Nothing here panics into Python: a malformed dump is never
an exception (values that do not close are passed over, as text), and I/O problems are ``OSError``.

Site kinds are small integers, the index of the kind in ``SITE_KINDS`` (the values of
``shardconv.scan.sites.SiteKind``, in declaration order). Every column of ``Scan.columns`` is a
little-endian array with one entry per row, in the order the sites are reported; ``NONE`` stands for
"no value" in the u32 columns. Every site has a row, unless the scan was asked for ``every_site=False``:
then only the first site of each group, module headers and expected-error markers do (the propagation
records none), and ``Scan.spans`` still gives every grouped site's place.
"""

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, final, overload

__all__ = [
    "FORGET", "NONE", "SITE_KINDS", "SNIFF_BYTES", "VERSION", "Cutter", "Follower", "LineTexts", "Names", "PieceJob",
    "Scan", "Scanner", "Texts", "Values", "same_bytes", "scan_bytes", "scan_path", "sniff",
]

VERSION: Final[str]
NONE: Final[int]  # 0xFFFF_FFFF
# "hlo", "sdy.sharding", ..., "expected-error", "module", "sdy.collective_axes", "shard.grid",
# "shard.sharding", then the propagation records (never in
# ``groups``): "sdy.sharding_origins", "sdy.sharding_origin_name", "sdy.propagation_edges", "operands"
SITE_KINDS: Final[tuple[str, ...]]
SNIFF_BYTES: Final[int]  # 65536: how much of a file's head decides its kind
FORGET: Final[int]  # 64: fresh dumps a value may be missing from and still be compared

_Encoding = tuple[str, str, str, bool]  # (outer, quote_style, inner, inner_quoted) of a StringEncoding
_Shape = tuple[int | None, ...]

@final
class Scan:
    """One file's (or buffer's) sites. Sites are in report order: file order, except that the
    in/out shardings of a region whose types come on its closing line are reported at that line."""

    kind: str  # "hlo" | "mlir" | "mixed" | "skip"
    reason: str  # why it was skipped ("" otherwise)
    size: int  # bytes read (of a skipped file only its sniffed head: the rest is never read)
    lines: int  # line breaks in what was scanned (0 for a skipped file)
    # The module, function or HLO computation the input ends inside of, a cut file: (kind "module" |
    # "function" | "computation", its name, the line opening it, the input's last line); None if none.
    open_end: tuple[str, str, int, int] | None
    # Distinct values, in order of first report: (kind, site, raw, text, data, encoding). ``site`` is the
    # attribute or syntax the value came from ("sharding=", "mhlo.sharding", "sdy.sharding_constraint");
    # ``raw`` the bytes in the file; ``text`` the decoded value (UTF-8, may be invalid: decode with
    # surrogateescape); ``data`` a binary OpSharding when the string held no text.
    values: Values
    # Each distinct value's kind code (``values[i][0]``), one byte per value: read without the tuples.
    value_kinds: bytes
    names: Texts  # distinct value names: "%x", "arg0"... as written, "result[1]", "@mesh", "module"
    # With ``names=True``: what trace follows each sharded value by, indexed by the ``key`` column: the
    # names first (most keys are a value's name), then the other keys ("arg[0]", "result", "@f:%3", ...).
    keys: Texts
    result_key: int  # the index of "result" in ``keys`` (the entry's ROOT), or NONE
    # With ``names=True``: each distinct (value, shapes, op) a site has, indexed by the ``read`` column.
    reads: list[tuple[int, int, int]]
    shapes: list[tuple[_Shape, ...]]  # distinct annotated tensor-type tuples (one shape per result)
    # (name, "func" | "computation", is_entry) of each function / computation: a ``func.func @name`` line
    # (entry: ``@main``) or an HLO computation header (a line at column 0 ending in ``{``; entry: ``ENTRY``),
    # name without ``@`` / ``%``. A scope lasts until the next one or the next module header.
    scopes: list[tuple[str, str, bool]]
    ops: list[str]  # distinct defining ops: "parameter", "custom-call Sharding", "stablehlo.add", ...
    # u32: value, name, shapes, scope, op, module, line, col, end_line, end_col, target, param, flags
    # u64: start, end. With ``names=True`` (trace's scan) a row is made only for a site trace reads (a
    # sharded value, a mesh, ``num_partitions``, a module header) or the first site after a module header,
    # and there are also u32 ``key`` (NONE: the site shards no value trace follows) and ``read``.
    # ``target`` is an expected-error marker's target line; ``param`` an HLO parameter's number; ``flags``
    # bit 0 = on an HLO ROOT line, bit 1 = on a func.func signature line.
    # ``target`` is clamped into 0..NONE-1 (a marker pointing above line 1 says 0); it is meaningful only
    # for expected-error sites. ``line``/``col``/``end_line``/``end_col`` saturate at NONE-1 likewise.
    columns: dict[str, bytes]
    # The physical line (no line break) of the first site of each group (of every site with
    # ``every_site``), and of every module header and expected-error site, by site index.
    line_texts: LineTexts
    # With ``every_site=False``, a line over 2 KiB kept for a group's first site (not a module header's,
    # nor a ``num_partitions`` one's) is kept as the 512 bytes either side of the site: here, by site
    # index, the byte of the line its kept text starts at (a pass log repeats its long lines per dump).
    line_cuts: dict[int, int]
    # Distinct (module, value, shapes, name) over the sites that are neither module headers nor
    # expected-error markers, in order of first report: (module, value, shapes, name, first_site, count).
    # ``name`` counts only for the kinds a name is part of (sdy.mesh, stablehlo.mesh, collective.mesh);
    # for the others it is NONE here, whatever the sites' names.
    groups: list[tuple[int, int, int, int, int, int]]
    # (module, hlo_group, sdy_group, count): an HLO sharding ("sharding=", "mhlo.sharding") and an sdy
    # one ("xla.sdy.sharding", "sdy.sharding"; kinds sdy.sharding / sdy.sharding_per_value) that the same
    # value carries on one line.
    pairs: list[tuple[int, int, int, int]]
    # A module's key as bytes (u32 little-endian): per group, its value, shapes and name (12 bytes);
    # per pair, its two groups counted from its module's first group (8 bytes).
    group_keys: bytes
    pair_keys: bytes
    modules: int  # module numbers used (a header starts a new module once the current one holds a site)
    # ``shardconv: ignore[...]`` comments: (line, col, the text between the brackets, its line, col in line).
    suppressions: list[tuple[int, int, bytes, bytes, int]]
    # With ``names=True``: per segment (the text before the first module header, then from each module
    # header on), the values it defines, sharded or not: name -> its op (MLIR) or type (HLO); function
    # arguments and HLO parameters as b"arg[N]". The last definition of a name wins, and a parameter's
    # ``arg[N]`` wins over an argument's. ``[]`` for a skipped file (as ``digests``); else one ``Names``
    # per module header, plus one.
    defined: list[Names]
    # With ``names=True``: per segment, a 64-bit hash of its text after its header line (equal text,
    # equal hash), so a pass log's repeated dumps are recognised without comparing them.
    digests: list[int]
    # Every grouped site's (group, start, end, line), compact (LEB128 varints): read it with ``spans``.
    span_log: bytes
    def defined_in(self, segments: list[int]) -> Names:
        """What ``segments`` define together (a later one wins)."""
    def sites_of(self, values: list[int], column: str, within: tuple[int, int]) -> list[int]:
        """The sites in ``within`` whose u32 ``column`` holds any of ``values``, in order."""
    def spans(self, groups: list[int]) -> list[tuple[int, int, int, int]]:
        """(group, start, end, line) of every grouped site whose group is in ``groups``, in report order."""

@final
class Names:
    """One segment's definitions, held natively (a dump defines every instruction; trace asks about a
    few): what each value name is, read with ``get``, ``in``, ``len`` and ``items``. Of a long segment of
    a file whose definitions were let go, only the names trace's follower asked about are held."""

    def get(self, key: bytes, default: bytes | None = None) -> bytes | None: ...
    def __contains__(self, key: bytes, /) -> bool: ...
    def __len__(self) -> int: ...
    def items(self) -> list[tuple[bytes, bytes]]: ...

# A value's sighting: its reading (equal readings are one object), line and column.
_Sighting = tuple[Any, int, int]
# Where a value was seen: its key, its sightings there, and that dump's tag (the caller's).
_SeenAt = tuple[str, list[_Sighting], Any]
# A value of a fresh dump that may have changed: (ask, key, sightings, where last seen); neither asked
# nor seen before: gained.
_Maybe = tuple[bool, str, list[_Sighting], _SeenAt | None]
# A fresh dump followed: its number of values, whether all are arguments or results, its values that may
# have changed, in its order, and (ask, where seen) per value of the dump before it has not (not asked: lost).
_Step = tuple[int, bool, list[_Maybe], list[tuple[bool, _SeenAt]]]

@final
class Follower:
    """What following one sequence of dumps remembers: where each value was last seen (forgotten when
    missing from the last ``FORGET`` dumps read fresh), and the names of the dump read last."""

    def step(
        self,
        scan: Scan,
        sites: tuple[int, int],
        readings: list[Any],
        lines: int,
        parts: Callable[[int], Iterable[tuple[str, Any]]],
        names: Names,
        tag: Any,
        same_module: bool,
    ) -> _Step:
        """Follows the dump read fresh of sites ``a..b`` of ``scan``, which defines ``names``, known to
        the caller as ``tag`` (``same_module``: the dump before is of its module). A site's reading is
        ``readings[r]`` (``r``, its read); where that is None, and for the key ``result``, ``parts(site)``
        gives its (key, reading) pairs. Values read as they were where last seen, and new values that
        are not gains, are left out. A ValueError for a scan made without names."""

@final
class Texts:
    """A scan's strings, held natively and each made a Python string once, as it is read (a pass log's
    piece names ten thousand values; trace reads their keys natively): a read-only sequence of str."""

    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> str: ...
    def __iter__(self) -> Iterator[str]: ...
    def __contains__(self, text: str, /) -> bool: ...

_Value = tuple[int, str, bytes, bytes, bytes | None, _Encoding]

@final
class Values:
    """The distinct values, held natively and made into tuples as they are read (an explain scan holds
    a hundred thousand propagation records and reads a few): a read-only sequence of ``Value``."""

    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> _Value: ...
    def __iter__(self) -> Iterator[_Value]: ...

@final
class LineTexts:
    """The physical lines a scan kept, by site index, held natively (an every-site scan keeps one per
    site; a reader asks for a few): a read-only mapping of site index to the line's bytes."""

    @overload
    def get(self, site: int, default: None = None) -> bytes | None: ...
    @overload
    def get(self, site: int, default: bytes) -> bytes: ...
    def __contains__(self, site: int, /) -> bool: ...
    def __len__(self) -> int: ...
    def items(self) -> list[tuple[int, bytes]]: ...

# A job's piece: its scan, or (size, line breaks, whether it spells a propagation record's keyword) when
# left unscanned, or None; and (text, line breaks) per dump left unscanned as a repeat of the one before.
_Made = tuple[list[Scan | tuple[int, int, bool]], list[tuple[bytes, int]]]

@final
class PieceJob:
    """One job of a cut log: a piece to scan, then the dumps after it left unscanned."""

    @property
    def has_piece(self) -> bool: ...
    @property
    def repeats(self) -> int: ...
    def run(self) -> _Made:
        """The job made (its piece scanned with the interpreter's lock released); once only."""

@final
class Cutter:
    """A long dump (a path, or a stream's ``read``) cut into jobs as ``scan/pieces.py`` describes,
    read and cut with the interpreter's lock released."""

    def __new__(
        cls,
        source: str | Callable[[int], bytes],
        *,
        lines: list[bytes],
        dump_line: bytes,
        function_line: bytes,
        repeats: bool,
        holding: list[bytes],
        holding_line: int | None,
        piece_bytes: int,
        held_bytes: int,
        feed_bytes: int,
        read_size: int,
        names: bool,
        every_site: bool = True,
        placed: bool = False,  # each piece's lines and bytes counted from the file's start
        whole_modules: bool = False,  # a piece begins only at a line the scan reads as a module's start
        drain: bool = False,  # a piece fed as it comes hands on its rows at each feed (every site, no names)
        names_held: int = ...,  # a file's segment defining more bytes of names lets them go (read again when asked)
    ) -> Cutter: ...
    def next_job(self) -> PieceJob | None:
        """The next job, in order; None at the end. OSError when the log cannot be read."""
    @property
    def total(self) -> int: ...
    @property
    def skipped(self) -> bool: ...
    def check_size(self) -> None:
        """After the last job: OSError when a regular file changed size while it was read (the check
        ``scan_path`` makes); nothing for a stream."""

def same_bytes(a: str, b: str) -> bool:
    """Whether the regular files at ``a`` and ``b`` hold the same bytes (False when either cannot be read)."""

def sniff(head: bytes) -> tuple[str, str]:
    """(kind, reason) of a dump from its first ``SNIFF_BYTES``."""

def scan_path(
    path: str,
    *,
    chunk: int = ...,
    max_line: int = ...,
    overlap: int = ...,
    names: bool = False,
    every_site: bool = True,
) -> Scan:
    """Scan a file, read in chunks (memory stays bounded whatever its size); OSError if it cannot be
    read or changes size while it is read. ValueError for options that cannot work (``chunk`` 0,
    ``overlap`` not below ``max_line``); RuntimeError if the core itself fails (never expected)."""

def scan_bytes(
    data: bytes,
    *,
    chunk: int = ...,
    max_line: int = ...,
    overlap: int = ...,
    names: bool = False,
    every_site: bool = True,
) -> Scan:
    """Scan a dump held in memory, exactly as ``scan_path`` scans a file with those bytes."""

@final
class Scanner:
    """A scan fed piece by piece (stdin, any stream): ``feed`` each piece, then ``finish``."""

    def __new__(
        cls,
        *,
        chunk: int = ...,
        max_line: int = ...,
        overlap: int = ...,
        names: bool = False,
        every_site: bool = True,
    ) -> Scanner: ...
    def feed(self, data: bytes) -> None: ...
    def finish(self) -> Scan: ...
