"""Project config: ``[tool.shardconv]`` in ``pyproject.toml`` or the top level of ``shardconv.toml``,
found from a checked file's folder upwards (as ruff finds its config). Every value is validated on load
and remembers where it came from, so ``shardconv config`` can say, and a bad one names file, key and line."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from shardconv.check.context import REPLICATED_BYTES, CheckOptions
from shardconv.check.registry import RULES
from shardconv.core.errors import ShardingError, ShardingValidationError, did_you_mean
from shardconv.core.limits import ENV, Limits
from shardconv.core.model import Mesh
from shardconv.core.positions import line_col
from shardconv.core.records import record
from shardconv.text.files import os_reason, read_prefix

CONFIG_FILES = ("shardconv.toml", "pyproject.toml")  # in one folder, the first one that configures shardconv wins
CONFIG_LIMIT = 4 << 20  # bytes: a config file longer than this is refused, not read
OVERRIDABLE = ("mesh", "allowed-meshes", "ignore", "warn-only", "replicated-threshold")
KEYS = (*OVERRIDABLE, "include", "exclude", "max-devices", "overrides")


class ConfigError(ShardingValidationError):
    """A config file that does not parse or holds a bad value; ``str()`` starts with ``FILE:LINE:COL``."""

    def __init__(self, message: str, *, path: str, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.path = path

    def __str__(self) -> str:
        return f"{self.path}:{'' if self.line is not None else ' '}{super().__str__()}"


@record
class Setting:
    """One value in force and where it came from (``default``, ``FILE:LINE``, ``--mesh``, ``SHARDCONV_MAX_DEVICES``)."""

    value: Any
    source: str
    text: str  # as the user spelled it


@record
class Override:
    """``[[tool.shardconv.overrides]]``: settings for the files matching ``paths`` (globs relative to
    the config's folder)."""

    paths: tuple[str, ...]
    settings: Mapping[str, Setting]


@record
class ProjectConfig:
    path: str | None  # None: no config file (the defaults)
    settings: Mapping[str, Setting] = field(default_factory=dict)
    overrides: tuple[Override, ...] = ()

    @property
    def root(self) -> str:
        return os.path.dirname(self.path) if self.path else os.getcwd()

    def for_file(self, path: str) -> dict[str, Setting]:
        """The file's settings: the config's own, then each override whose ``paths`` match it, in order."""
        out = dict(self.settings)
        if not self.overrides:
            return out
        rel = relative_to(path, self.root)
        for o in self.overrides:
            if any(matches(rel, g) for g in o.paths):
                out.update(o.settings)
        return out


def matches(path: str, glob: str) -> bool:
    """A path matches a glob whole, by its base name, or by any tail of its folders (``*/glob``)."""
    norm = path.replace(os.sep, "/")
    return (
        fnmatch.fnmatch(norm, glob)
        or fnmatch.fnmatch(os.path.basename(norm), glob)
        or fnmatch.fnmatch(norm, "*/" + glob)
    )


def relative_to(path: str, root: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    return rel.replace(os.sep, "/")


DEFAULTS: Mapping[str, Setting] = {
    "mesh": Setting(None, "default", "(none)"),
    "allowed-meshes": Setting(None, "default", "(any)"),
    "ignore": Setting(frozenset(), "default", "[]"),
    "warn-only": Setting(frozenset(), "default", "[]"),
    "include": Setting((), "default", "[] (every file whose content is IR)"),
    "exclude": Setting((), "default", "[]"),
    "max-devices": Setting(None, "default", "2^24"),
    "replicated-threshold": Setting(REPLICATED_BYTES, "default", "64MiB"),
}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|K|M|G|T)?\s*", re.IGNORECASE)
_UNIT_SHIFT = {"": 0, "b": 0, "k": 10, "kib": 10, "m": 20, "mib": 20, "g": 30, "gib": 30, "t": 40, "tib": 40}


def parse_size(value: Any) -> int:
    """A byte count: an integer, or a string like ``"64MiB"`` (B, KiB, MiB, GiB, TiB; K, M, G, T are the
    same binary units); ValueError says what is wrong."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    m = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        raise ValueError(f'{value!r}: must be a size like "64MiB" or a number of bytes')
    return int(float(m.group(1)) * (1 << _UNIT_SHIFT[(m.group(2) or "").lower()]))


def read_config(path: str) -> str:
    """The text of the config file ``path``: a regular file of at most CONFIG_LIMIT bytes of UTF-8, else
    a ConfigError naming it (and the line and column of a byte that is not UTF-8)."""
    try:
        data, more = read_prefix(path, CONFIG_LIMIT)
    except OSError as e:
        raise ConfigError(f"cannot read config file: {os_reason(e, path)}", path=path) from None
    if more:
        raise ConfigError(f"config file larger than {CONFIG_LIMIT >> 20} MiB; not read", path=path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", "replace")
        line, col = line_col(text, len(data[: e.start].decode("utf-8", "replace")))
        raise ConfigError(
            f"not UTF-8 text (byte 0x{data[e.start]:02x})", path=path, text=text, line=line, column=col
        ) from None


def load(path: str, text: str | None = None) -> ProjectConfig | None:
    """The config ``path`` holds; None for a pyproject.toml without ``[tool.shardconv]``."""
    if text is None:
        text = read_config(path)
    if sys.version_info >= (3, 11):  # imported here: only a run that finds a config file pays for it
        import tomllib
    else:  # pragma: no cover - the conditional dependency tomli>=2 (pyproject.toml)
        import tomli as tomllib
    try:
        doc = tomllib.loads(text)
    except RecursionError:  # tomllib parses nested arrays and inline tables by recursion
        raise ConfigError("arrays or tables nested too deeply to read", path=path) from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        line, col = (
            (int(m.group(1)), int(m.group(2))) if m else line_col(text, len(text.rstrip()))
        )  # "at end of document"
        message = re.sub(r"\s*\(at (line|end).*\)", "", str(e))
        raise ConfigError(message, path=path, text=text, line=line, column=col) from None
    prefix: tuple[str, ...] = ("tool", "shardconv") if os.path.basename(path) == "pyproject.toml" else ()
    table: Any = doc
    for part in prefix:
        table = table.get(part) if isinstance(table, dict) else None
    if table is None:
        return None
    where = _KeyLines(path, text, ".".join(prefix))
    if not isinstance(table, dict):
        raise where.error(None, "", "[tool.shardconv] must be a table")
    settings = _settings(table, KEYS, where, None)
    overrides = []
    raw = table.get("overrides", [])
    if not isinstance(raw, list) or not all(isinstance(o, dict) for o in raw):
        raise where.error(None, "overrides", "must be an array of tables ([[overrides]])")
    for i, o in enumerate(raw):
        paths = o.get("paths")
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise where.error(i, "paths" if "paths" in o else "", 'each override needs paths = ["glob", ...]')
        overrides.append(Override(tuple(paths), _settings(o, ("paths", *OVERRIDABLE), where, i)))
    return ProjectConfig(path, settings, tuple(overrides))


def _settings(
    table: dict[str, Any], allowed: Sequence[str], where: _KeyLines, override: int | None
) -> dict[str, Setting]:
    out: dict[str, Setting] = {}
    for key, value in table.items():
        if key not in allowed:
            hint = "".join(f" ({s.description})" for s in did_you_mean(key, allowed))
            only = (
                " (an override may set only paths, " + ", ".join(OVERRIDABLE) + ")"
                if override is not None and key in KEYS
                else ""
            )
            raise where.error(override, key, f"unknown key {key!r}{hint}{only}")
        if key in ("overrides", "paths"):
            continue
        try:
            v, shown = _validate(key, value, where.root)
        except ValueError as e:
            raise where.error(override, key, str(e)) from None
        out[key] = Setting(v, where.source(override, key), shown)
    return out


def _validate(key: str, value: Any, root: str) -> tuple[Any, str]:
    """The typed value of ``key`` and how to show it; ValueError says what is wrong."""
    if key == "mesh":
        return parse_mesh_setting(value, root), str(value)
    if key == "allowed-meshes":
        items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else None
        if items is None or not all(isinstance(x, str) for x in items):
            raise ValueError('must be a list of mesh shapes like ["1x8", "2x4"]')
        from shardconv.check.mesh_presets import shapes_text

        shapes = parse_shapes(items)
        return shapes, shapes_text(shapes)
    if key in ("ignore", "warn-only"):
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ValueError('must be a list of rule names like ["synthetic-mesh"]')
        return parse_rules(value), "[" + ", ".join(value) + "]"
    if key in ("include", "exclude"):
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ValueError('must be a list of globs like ["dumps/**"]')
        return tuple(value), "[" + ", ".join(value) + "]"
    if key == "replicated-threshold":
        return parse_size(value), str(value)
    if key == "max-devices":
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError("must be a positive integer")
        return value, str(value)
    raise AssertionError(key)  # pragma: no cover - KEYS lists every key


def parse_mesh_setting(value: Any, root: str = ".") -> Mesh:
    """``mesh = "batch=2,model=4"`` (or any --mesh spelling; ``@FILE`` relative to the config's folder,
    and inside it: a config found in a checkout must not make shardconv read the rest of the machine)."""
    from shardconv.formats.detect import parse_mesh_option

    if not isinstance(value, str):
        raise ValueError('must be a string like "batch=2,model=4"')
    written = value
    if value.strip().startswith("@"):
        value = "@" + os.path.join(root, value.strip()[1:])
        real, folder = os.path.realpath(value[1:]), os.path.realpath(root)
        if os.path.commonpath([real, folder]) != folder:
            raise ValueError(f"{written!r} names a file outside the config's folder {folder}; not read")
    try:
        return parse_mesh_option(value)
    except ShardingError as e:
        raise ValueError(f"{written!r}: {e.message.removeprefix(f'--mesh {value}: ')}") from None


def parse_shapes(items: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """Mesh shapes ``2x4``, or a preset's name (``tt-mlir``: check/mesh_presets.py), as
    ``--allowed-meshes`` takes them; ValueError names a bad one."""
    from shardconv.check.mesh_presets import PRESETS

    shapes: list[tuple[int, ...]] = []
    for item in items:
        part = item.strip().lower()
        if not part:
            continue
        if part in PRESETS:
            shapes.extend(PRESETS[part])
            continue
        try:
            dims = tuple(int(x) for x in part.split("x"))
        except ValueError:
            dims = ()
        if not dims or any(d < 1 for d in dims):
            presets = ", ".join(PRESETS)
            raise ValueError(f"{part!r} is not a shape like 2x4 nor a preset ({presets})")
        shapes.append(dims)
    return tuple(dict.fromkeys(shapes))


def parse_rules(names: Sequence[str]) -> frozenset[str]:
    """Rule names (each item may hold several, comma-separated); ValueError names an unknown one."""
    out = {r.strip() for v in names for r in v.split(",") if r.strip()}
    for name in sorted(out - set(RULES)):
        hint = "".join(f" ({s.description})" for s in did_you_mean(name, RULES, spelled="{}"))
        raise ValueError(f"unknown rule {name!r}{hint}; rules: {', '.join(RULES)}")
    return frozenset(out)


class _KeyLines:
    """Where each key of the shardconv table sits in the file (tomllib keeps no positions)."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
    _KEY = re.compile(r"""^\s*["']?([A-Za-z0-9_.-]+?)["']?\s*=\s*""")

    def __init__(self, path: str, text: str, prefix: str) -> None:
        self.path, self.text = path, text
        self.root = os.path.dirname(os.path.abspath(path))
        base = prefix
        ovr = f"{prefix}.overrides" if prefix else "overrides"
        self.lines: dict[tuple[int | None, str], tuple[int, int]] = {}
        table: str | None = "" if not prefix else None
        index = -1
        for n, line in enumerate(text.splitlines(), 1):
            h = self._HEADER.match(line)
            if h:
                name = h.group(2).replace('"', "").replace(" ", "")
                if h.group(1) == "[[" and name == ovr:
                    index += 1
                    table = f"#{index}"
                    self.lines.setdefault((index, ""), (n, 1))
                else:
                    table = "" if name == base else None
                    if name == base:
                        self.lines.setdefault((None, ""), (n, 1))
                continue
            k = self._KEY.match(line)
            if k and table is not None:
                where = None if table == "" else int(table[1:])
                self.lines.setdefault((where, k.group(1)), (n, k.end() + 1))  # the value's column

    def position(self, override: int | None, key: str) -> tuple[int, int]:
        return self.lines.get((override, key)) or self.lines.get((override, "")) or self.lines.get((None, "")) or (1, 1)

    def source(self, override: int | None, key: str) -> str:
        line = self.position(override, key)[0]
        return f"{self.path}:{line}" + (f" (override #{override + 1})" if override is not None else "")

    def error(self, override: int | None, key: str, message: str) -> ConfigError:
        line, col = self.position(override, key)
        table = "[tool.shardconv" if self.path.endswith("pyproject.toml") else "["
        name = f"{table}.overrides] #{override + 1}" if override is not None else f"{table}]" if table != "[" else ""
        label = " ".join(p for p in (name, key) if p)
        return ConfigError(
            f"{label}: {message}" if label else message, path=self.path, text=self.text, line=line, column=col
        )


class ConfigFinder:
    """Finds (and caches) the config of each folder: the nearest folder upwards holding a shardconv.toml
    or a pyproject.toml with ``[tool.shardconv]``; ``explicit`` (--config) replaces discovery."""

    def __init__(self, explicit: str | None = None, *, isolated: bool = False) -> None:
        self.explicit = load_explicit(explicit) if explicit else None
        self.isolated = isolated
        self._none = ProjectConfig(None)  # (one for every path: its files share one set of options)
        self._cache: dict[str, ProjectConfig] = {}
        self._named: dict[str, ProjectConfig] = {}

    def for_path(self, path: str) -> ProjectConfig:
        """The config in force for ``path`` (a file, a folder, or ``-`` for the current folder)."""
        if self.explicit is not None:
            return self.explicit
        if self.isolated:
            return self._none
        folder = os.getcwd() if path == "-" else path if os.path.isdir(path) else os.path.dirname(path) or "."
        found = self._named.get(folder)
        if found is None:  # (a folder's files ask in turn: its name as given is looked up once)
            found = self._named[folder] = self._folder(os.path.abspath(folder))
        return found

    def _folder(self, folder: str) -> ProjectConfig:
        """The config of ``folder`` or its nearest parent holding one, looked up a folder at a time up the
        tree (any depth), each folder's answer cached."""
        passed: list[str] = []
        found = self._cache.get(folder)
        while found is None:
            found = self._here(folder)
            if found is None:
                passed.append(folder)
                parent = os.path.dirname(folder)
                found = self._cache.get(parent) if parent != folder else ProjectConfig(None)
                folder = parent
            else:
                self._cache[folder] = found
        for f in passed:
            self._cache[f] = found
        return found

    @staticmethod
    def _here(folder: str) -> ProjectConfig | None:
        for name in CONFIG_FILES:
            p = os.path.join(folder, name)
            if os.path.lexists(p):  # a FIFO or device of that name is an error (read_config), not skipped
                cfg = load(_display(p))
                if cfg is not None:
                    return cfg
        return None


def load_explicit(path: str) -> ProjectConfig:
    """--config FILE: that file, which must configure shardconv."""
    cfg = load(path)  # a file that cannot be read is a ConfigError naming it
    if cfg is None:
        raise ShardingValidationError(f"--config {path}: no [tool.shardconv] table in it")
    return cfg


def _display(path: str) -> str:
    """A config path as messages show it: relative to the current folder when below it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def resolve(file_settings: Mapping[str, Setting], cli: Mapping[str, Setting]) -> dict[str, Setting]:
    """Defaults, then the file's settings, then the command line's (flags win)."""
    return {**DEFAULTS, **file_settings, **cli}


def config_limits(cfg: ProjectConfig, flag: int | None = None) -> Limits | None:
    """The ceiling a check runs under: ``flag`` (--max-devices), else SHARDCONV_MAX_DEVICES (None: read
    where each value is parsed, worker processes included), else ``max-devices`` from ``cfg``, else the default."""
    if flag is not None:
        return Limits(flag)
    setting = cfg.settings.get("max-devices")
    if setting is None or os.environ.get(ENV, "").strip():
        return None
    return Limits(setting.value)


def options_of(settings: Mapping[str, Setting], base: CheckOptions | None = None) -> CheckOptions:
    """The CheckOptions those settings ask for (``base`` supplies everything config does not set)."""
    return replace(
        base or CheckOptions(),
        mesh=settings["mesh"].value,
        allowed_meshes=settings["allowed-meshes"].value,
        ignore=settings["ignore"].value,
        warn_only=settings["warn-only"].value,
        replicated_bytes=settings["replicated-threshold"].value,
    )


OptionsFor = Callable[[str], CheckOptions]

__all__ = [
    "CONFIG_FILES",
    "DEFAULTS",
    "KEYS",
    "ConfigError",
    "ConfigFinder",
    "OptionsFor",
    "Override",
    "ProjectConfig",
    "Setting",
    "config_limits",
    "load",
    "matches",
    "options_of",
    "parse_mesh_setting",
    "parse_rules",
    "parse_shapes",
    "parse_size",
    "read_config",
    "resolve",
]
