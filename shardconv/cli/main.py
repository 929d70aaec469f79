"""The ``shardconv`` click group. Subcommands are imported only when invoked, so ``--version`` is quick."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

from shardconv.cli.runner import run
from shardconv.cli.version import FLAGS as VERSION_FLAGS
from shardconv.cli.version import LINE as VERSION_LINE
from shardconv.core.errors import did_you_mean, suggestion_lines
from shardconv.core.version import VERSION as __version__

# command name -> "module:function" under shardconv.cli
COMMANDS: dict[str, str] = {
    "convert": "shardconv.cli.convert:convert",
    "show": "shardconv.cli.show:show",
    "roundtrip": "shardconv.cli.roundtrip:roundtrip",
    "compare": "shardconv.cli.compare:compare",
    "check": "shardconv.cli.check:check",
    "rule": "shardconv.cli.rule:rule",
    "config": "shardconv.cli.config:config",
    "diff": "shardconv.cli.diff:diff",
    "snapshot": "shardconv.cli.snapshot:snapshot",
    "trace": "shardconv.cli.trace:trace",
    "explain": "shardconv.cli.explain:explain",
    "outputs": "shardconv.cli.outputs:outputs",
    "model-explorer": "shardconv.cli.model_explorer:model_explorer",
    "examples": "shardconv.cli.examples:examples",
    "demo": "shardconv.cli.examples:demo",
    "server": "shardconv.server.command:server",  # a peer of cli: the top layer reaches it by name only
}

SHORT_HELP: dict[str, str] = {
    "convert": "Convert a sharding between HLO, Shardy, partition specs and protos.",
    "show": "Show which device holds which tile, and every equivalent spelling.",
    "roundtrip": "Round-trip a sharding through the other format and check it against the mesh.",
    "compare": "Do two shardings place the same data on the same devices?",
    "check": "Scan IR dumps for sharding problems (a pre-commit / CI gate).",
    "rule": "Explain a check rule: what it catches, why, a failing example and its fix.",
    "config": "Show the check settings in force for a path and where each came from.",
    "diff": "Compare two dumps value by value: placement, then mesh, then spelling.",
    "snapshot": "Write each sharded value's placement to a baseline file that diff checks in CI.",
    "trace": "Which pass changed where a sharding lives? Follow values through a pass log.",
    "explain": "Why is a value sharded the way it is? Origins and paths from Shardy's records.",
    "outputs": "Output shardings of a post-Shardy module, in the form a PJRT plugin reports them.",
    "model-explorer": "Model Explorer node data for an MLIR dump: shardings, devices per shard, findings.",
    "examples": "Run the bundled example round trips on a backend.",
    "demo": "Run the bundled examples and the seed-scenario check.",
    "server": "Run the language server (LSP over stdio) for editors: diagnostics, fixes, hovers.",
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._exists(name)]

    @staticmethod
    def _exists(name: str) -> bool:
        module = COMMANDS[name].split(":")[0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None or not self._exists(name):
            return None
        module, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's resolution; an unknown command also gets ``did you mean 'convert'?``."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as e:
            tips = suggestion_lines(did_you_mean(args[0], self.list_commands(ctx), spelled="'{}'")) if args else ""
            if not tips or self.get_command(ctx, args[0]) is not None:
                raise
            raise click.UsageError(f"{e.message}\n{tips}", ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SHORT_HELP.get(name, "")) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, *VERSION_FLAGS, message=VERSION_LINE)
@click.option(
    "--max-devices", type=click.IntRange(1), metavar="N", is_eager=True,
    help="Refuse shardings and meshes with more than N devices (default 2^24; env SHARDCONV_MAX_DEVICES).",
)
@click.pass_context
def cli(ctx: click.Context, max_devices: int | None) -> None:
    """Parse, convert and check XLA HLO and Shardy tensor shardings.

    \b
    Examples:
      shardconv convert '{devices=[1,4,2]<=[8] last_tile_dim_replicate}' --mesh batch=2,model=4
      shardconv convert '#sdy.sharding<@mesh, [{}, {"model"}]>' --mesh batch=2,model=4
      shardconv check dumps/ --mesh batch=2,model=4
    """
    if max_devices is not None:  # in force for the command, its arguments included; else the environment's
        from shardconv.core.limits import Limits, within

        ctx.with_resource(within(Limits(max_devices)))


def main(argv: list[str] | None = None) -> Any:
    """Console entry point: clean exits on Ctrl-C and closed pipes, never a traceback for bad input."""
    return run(cli, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
