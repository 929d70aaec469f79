"""``shardconv config``: the check settings in force for a path, and where each one came from."""

from __future__ import annotations

import click

from shardconv.check.config import ConfigFinder, resolve
from shardconv.cli.check import complete_rules, flag_settings
from shardconv.cli.options import text_or_json


@click.command(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="\b\nExamples:\n  shardconv config\n  shardconv config dumps/tpu/module_0001.jit_f.txt\n"
    "  shardconv config dumps/ --mesh batch=2,model=4 --format json",
)
@click.argument("path", required=False, default=".", metavar="[PATH]")
@click.option(
    "--config", "config_path", metavar="FILE", type=click.Path(dir_okay=False), help="Read settings from FILE only."
)
@click.option("--no-config", is_flag=True, help="Ignore every config file.")
@click.option("--mesh", "-m", "mesh_text", metavar="MESH", help="As for check: shown as coming from the command line.")
@click.option("--allowed-meshes", metavar="SHAPES", help="As for check.")
@click.option("--warn-only", multiple=True, metavar="RULE", shell_complete=complete_rules, help="As for check.")
@click.option("--ignore", multiple=True, metavar="RULE", shell_complete=complete_rules, help="As for check.")
@text_or_json()
def config(
    path: str,
    config_path: str | None,
    no_config: bool,
    mesh_text: str | None,
    allowed_meshes: str | None,
    warn_only: tuple[str, ...],
    ignore: tuple[str, ...],
    fmt: str,
) -> None:
    """Print the settings `shardconv check` uses for PATH (default: the current folder): from
    [tool.shardconv] in pyproject.toml or shardconv.toml, found from PATH's folder upwards, its
    [[overrides]] that match PATH, and the flags given here. A bad config is an error naming its
    file, key and line."""
    cfg = ConfigFinder(config_path, isolated=no_config).for_path(path)
    settings = resolve(cfg.for_file(path), flag_settings(mesh_text, allowed_meshes, warn_only, ignore, (), ()))
    if fmt == "json":
        from shardconv.ui.jsonout import document, dumps

        rows = {k: {"value": s.text, "source": s.source} for k, s in settings.items()}
        click.echo(dumps(document("config", path=path, config=cfg.path, settings=rows)))
        return
    click.echo(f"config: {cfg.path or '(none found; defaults)'}")
    width = max(map(len, settings))
    shown = max(len(s.text) for s in settings.values())
    for key, s in settings.items():
        click.echo(f"{key:<{width}} = {s.text:<{shown}}  # {s.source}")
