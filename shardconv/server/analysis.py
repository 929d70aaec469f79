"""One document version, analysed: ``check``'s findings under the project config the command line would
use for its path, its line index and its outline. Pure but for reading the config; the server runs it
on a worker thread."""

from __future__ import annotations

import os
from dataclasses import KW_ONLY, replace

from shardconv.check.config import ConfigFinder, config_limits, options_of, resolve
from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import CheckFinding
from shardconv.check.engine import check_text
from shardconv.core.errors import ShardingError
from shardconv.core.limits import within
from shardconv.core.records import record
from shardconv.server.outline import Outline, outline
from shardconv.server.positions import LineIndex


@record
class Analysis:
    _: KW_ONLY
    version: int | None
    lines: LineIndex
    findings: tuple[CheckFinding, ...]
    outline: Outline | None  # None until ``outlined``: the diagnostics do not wait for it
    options: CheckOptions
    config_error: str | None = None  # the config in force does not load: checked with the defaults


def options_for(path: str | None) -> tuple[CheckOptions, str | None]:
    """The CheckOptions ``shardconv check PATH`` runs with (``[tool.shardconv]`` found upwards from the
    file's folder, its overrides applied), and the config's error when it does not load."""
    where = path if path is not None else os.getcwd()
    try:
        cfg = ConfigFinder().for_path(where)
        limits = config_limits(cfg)
        return options_of(resolve(cfg.for_file(where), {}), CheckOptions(limits=limits)), None
    except ShardingError as e:
        return CheckOptions(), str(e)


def analyse(text: str | bytes, path: str | None, version: int | None, encoding: str = "utf-16") -> Analysis:
    """``text`` (the document's, or it as UTF-8) checked as the file ``path`` would be; its positions
    counted in ``encoding``."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    opts, error = options_for(path)
    findings = check_text(data, path=_name(path), options=opts)
    return Analysis(
        version=version, lines=LineIndex(data, encoding), findings=tuple(findings), outline=None, options=opts,
        config_error=error,
    )


def outlined(a: Analysis, path: str | None) -> Analysis:
    """``a`` with its document's outline."""
    with within(a.options.limits):
        return replace(a, outline=outline(a.lines.data, _name(path)))


def _name(path: str | None) -> str:
    return path if path is not None else "<document>"


__all__ = ["Analysis", "analyse", "options_for", "outlined"]
