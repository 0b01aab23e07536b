"""The click group of the `tcplab` command line. Each command group lives in a module of its own
(cli/__init__.py lists them) and is imported only when its command is named or listed, so that
`tcplab validate` loads neither pandas nor the sweep, results, plot, tbit, testbed, ns-2 or script
code; `tcplab --help` lists every command (and imports them all for their one-line help)."""

from __future__ import annotations

import click

from .. import _core


class _Main(click.Group):
    """The command group, each command loaded from its module when first named or listed: the
    scenario commands (cli/scenario.py), sweeps (cli/sweep.py), results (cli/results.py), the
    reproductions (cli/reproduce.py), captures (cli/trace.py), plots (cli/plot.py), TBIT
    (cli/tbit.py), the real-stack testbed (docs/testbed.md), ns-2 (docs/ns2.md) and the scripted
    tests (docs/script.md)."""

    _LAZY = {
        "run": ("tcplab.cli.scenario", "run_cmd"),
        "validate": ("tcplab.cli.scenario", "validate_cmd"),
        "example": ("tcplab.cli.scenario", "example_cmd"),
        "profiles": ("tcplab.cli.scenario", "profiles_cmd"),
        "variants": ("tcplab.cli.scenario", "variants_cmd"),
        "sweep": ("tcplab.cli.sweep", "sweep_cmd"),
        "results": ("tcplab.cli.results", "results_cmd"),
        "reproduce": ("tcplab.cli.reproduce", "reproduce_cmd"),
        "trace": ("tcplab.cli.trace", "trace_cmd"),
        "plot": ("tcplab.cli.plot", "plot_group"),
        "tbit": ("tcplab.cli.tbit", "tbit_cmd"),
        "testbed": ("tcplab.testbed.cli", "testbed_group"),
        "ns2": ("tcplab.ns2.cli", "ns2_group"),
        "script": ("tcplab.script.cli", "script_cmd"),
    }

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self._LAZY})

    def get_command(self, ctx, name):
        if name in self._LAZY and name not in self.commands:
            import importlib

            module, attr = self._LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.__version__, prog_name="tcplab")
def main() -> None:
    """tcplab: simulate TCP start-up, congestion control and loss recovery."""
