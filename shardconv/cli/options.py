"""Options shared by ``convert``, ``show`` and ``roundtrip``, declared once; values parsed lazily."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from shardconv.core.limits import Limits
from shardconv.core.records import record
from shardconv.text.files import os_reason

if TYPE_CHECKING:
    from shardconv.core.model import Mesh

F = TypeVar("F", bound=Callable[..., Any])

MESH_FILE_HELP = "@FILE for the first sdy.mesh in an MLIR/HLO dump (a regular file, read no further than that mesh)"
MESH_HELP = (
    "The real global mesh: batch=2,model=4, '<[\"batch\"=2, \"model\"=4]>', '#sdy.mesh<...>', "
    f"'sdy.mesh @m = <...>' (device_ids allowed), or {MESH_FILE_HELP}."
)
CHECK_MESH_HELP = (
    "The real global mesh every sharding must be on, e.g. batch=2,model=4, '<[\"batch\"=2, \"model\"=4]>' or "
    f"{MESH_FILE_HELP}. A module with only HLO shardings is held to the mesh XLA's importer invents "
    "for it: another shape is an error (import-distorts-mesh: {devices=[1,4,2]<=[8] last_tile_dim_replicate} "
    "invents 4x2, not batch=2,model=4); the same shape under XLA's names (_axis_0=2,_axis_1=4) passes."
)
ALLOWED_MESHES_HELP = (
    "Mesh shapes the backend accepts, e.g. 1x8,2x4: every sharding mesh must have one of them, and so must "
    "the mesh XLA's importer invents for a module with only HLO shardings "
    "({devices=[1,4,2]<=[8] last_tile_dim_replicate} invents 4x2, which 2x4 does not allow). "
    "A preset names a backend's list: tt-mlir (its SupportedMeshes)."
)


def mesh_option(required: bool = False) -> Callable[[F], F]:
    return click.option("--mesh", "-m", "mesh_text", metavar="MESH", required=required, help=MESH_HELP)


def all_grids_option() -> Callable[[F], F]:
    """``trace`` and ``diff``: text draws the device grids of each dump's first few changes; this, of all."""
    return click.option("--all-grids", is_flag=True,
                        help="Text: draw the device grids of every move (default: the first 3 of each pass).")


FORMAT_HELP = "text for people, json for scripts (schema: docs/cli-json-schema.md)"


def shared_options(formats: tuple[str, ...] = ("text", "json"), format_help: str = FORMAT_HELP) -> Callable[[F], F]:
    """--from, --rank, --shape, and --format with the choices ``formats``."""

    def decorate(fn: F) -> F:
        from shardconv.formats.detect import INPUT_KINDS  # here: check imports this module for its help texts

        fn = click.option(
            "--format", "-f", "fmt", type=click.Choice(list(formats)), default="text", show_default=True,
            help=f"{format_help}.",
        )(fn)
        fn = click.option(
            "--shape", "-s", "shape_text", metavar="SHAPE", help="Tensor shape, e.g. 32x32 (implies --rank)."
        )(fn)
        fn = click.option(
            "--rank", "-r", type=RankType(), metavar="RANK",
            help="Tensor rank, when the input does not fix it: 2, or one per tuple element: 2,2,0.",
        )(fn)
        fn = click.option(
            "--from", "from_kind", type=click.Choice(INPUT_KINDS), default="auto", show_default=True,
            help="Input format; auto-detected from the first characters.",
        )(fn)
        return fn

    return decorate


common_options = shared_options()


def text_or_json(help: str = "text for people, json for scripts") -> Callable[[F], F]:
    """--format text|json, for commands with no other output format."""
    return click.option(
        "--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help=f"{help}."
    )


if TYPE_CHECKING:
    from shardconv.convert.to_sdy import RankArg

    Rank = RankArg  # one rank, or one per tuple element (the converters' own argument type)
    _ParamType = click.ParamType[Any, Any]  # generic from click 8.2 on; plain before
else:
    _ParamType = click.ParamType


class RankType(_ParamType):
    """``--rank 2`` or ``--rank 2,2,0`` (one per tuple element), each 0..64."""

    name = "rank"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | tuple[int, ...]:
        if isinstance(value, (int, tuple)):
            return value
        parts = [p.strip() for p in str(value).split(",")]
        if not all(p.isdigit() and int(p) <= 64 for p in parts):
            why = f"{value!r} is not a rank (0..64) or a comma-separated list of ranks, e.g. 2 or 2,2,0"
            self.fail(why, param, ctx)
        ranks = tuple(int(p) for p in parts)
        return ranks[0] if len(ranks) == 1 and "," not in str(value) else ranks


def xla_version_option() -> Callable[[F], F]:
    """--xla-version: the XLA release whose spelling to print, and whose reader must read it (docs/releases.md)."""
    from shardconv.formats.xla_versions import DEFAULT_XLA_VERSION, XLA_VERSIONS

    return click.option(
        "--xla-version", "xla_version", type=click.Choice(XLA_VERSIONS), default=DEFAULT_XLA_VERSION,
        show_default=True,
        help="Print as this XLA release writes it, where releases differ, and refuse a form it cannot read "
        "(docs/releases.md).",
    )


@record
class Context:
    """The parsed shared options."""

    mesh: Mesh | None
    rank: Rank
    shape: tuple[int, ...] | None


def context(mesh_text: str | None, rank: Rank, shape_text: str | None) -> Context:
    """Parse ``--mesh``/``--rank``/``--shape`` (bad values raise ShardingError: exit 2 with a caret)."""
    from shardconv.formats.detect import parse_mesh_option, parse_shape

    mesh = parse_mesh_option(mesh_text) if mesh_text else None
    shape = parse_shape(shape_text) if shape_text is not None else None
    if shape is not None:
        if rank is not None and rank != len(shape):
            raise click.UsageError(f"--rank {rank} disagrees with --shape {shape_text} (rank {len(shape)})")
        rank = len(shape)
    return Context(mesh, rank, shape)


def text_argument(text: str) -> str:
    """The sharding a command was given: ``-`` is one read from standard input (to the longest value the
    limits accept, plus one character so an overlong one is still refused by the parser, with its caret)."""
    if text != "-":
        return text

    return sys.stdin.read(Limits.from_env().max_text + 1).strip()


def usage_error(path: str, why: str) -> click.UsageError:
    """A named path a command will not read, as a usage error (exit 2): the CLI's ``refuse_special`` error."""
    return click.UsageError(f"{path}: {why}")


def file_error(e: OSError, path: str | None = None) -> click.ClickException:
    """A file that cannot be read or written, as an input error (exit 2): its path (``path``, else the
    error's) and why."""
    name = path or e.filename
    why = os_reason(e, name)
    return click.ClickException(f"{name}: {why}" if name else why)
