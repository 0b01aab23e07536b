"""The `tcplab` command line.

    tcplab run FILE [--seed N] [--set key=value ...] [--json] [--pcap PATH] [--max-wall 10s] [--max-events N]
    tcplab validate FILE [--set key=value ...]
    tcplab example [NAME] [-o FILE] [--force]
    tcplab profiles
    tcplab variants [--profile P] [--json]
    tcplab sweep FILE [--workers N] [--dask ADDRESS|local] [--store PATH] [--set key=value ...]
                      [--run-timeout 60s] [--run-memory 2GB] [--retry-failed]
    tcplab results STORE [--columns goodput_bps,...] [--table connections] [--sweep NAME] [--to parquet|csv] [--out DIR]
    tcplab reproduce STUDY [--quick] [--out DIR] [--workers N] [--only m1,m2]
    tcplab trace CAPTURE [--json] [--flows] [--strict]
    tcplab plot tsg CAPTURE|SCENARIO [-o FILE] [--conn N | --flow NAME...] [--dir a2b|b2a] [--segments] [--from S] [--to S]
    tcplab plot cwnd SCENARIO [-o FILE] [--flow NAME...] [--segments] [--from S] [--to S] [--seed N] [--set KEY=VALUE]
    tcplab plot queue SCENARIO [-o FILE] [--link NAME...|all] [--bytes] [--from S] [--to S] [--seed N] [--set KEY=VALUE]
    tcplab tbit (--sim PRESET_OR_PROFILE|all | --host ADDR[:PORT] --src ADDR --url /path | --lab [--initcwnd N]) [--tests a,b] [--runs 5] [--json]

Only the commands that need them import pandas and matplotlib: `run`, `validate` and `trace`
start in well under 0.1 s.

The package, one module per command group: `app` (the click group `main`, which imports each
command's module when the command is named or listed), `scenario` (run, validate, example,
profiles, variants), `sweep`, `results`, `reproduce`, `trace`, `plot`, `tbit`; `common` (the error
exit and text tables) and `run` (the work of `tcplab run` and its fast path). The testbed's, ns-2's
and the scripted tests' commands live with their packages (testbed/cli.py, ns2/cli.py,
script/cli.py). `main` is loaded on first use; `entry`, the console script, runs a plain `tcplab
run FILE ...` without importing click at all (cli/run.py says when it declines), everything else
through `main`.
"""

from __future__ import annotations

import sys

_SUBMODULES = ("app", "common", "run", "scenario", "sweep", "results", "reproduce", "trace", "plot", "tbit")


def entry(argv: list | None = None):
    """Run the command line on ARGV (default: the process's arguments): a plain `tcplab run` on
    the fast path, everything else through click. Returns the exit status when it does not exit."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] == "run":
        from .run import fast_run

        if fast_run(args[1:]):
            return 0
    from .app import main

    return main(args)


def console():
    """The `tcplab` console script (and `python -m tcplab.cli`): `entry` on the process's arguments.
    When the fast path of `tcplab run` has printed its result, the process ends there, its output
    flushed, without the interpreter's finalisation (tearing down every module that start-up
    imported: a tenth to a sixth of a short `tcplab run` process, bench/README.md). Nothing is
    left to finalise: the core has written and closed any capture before the run returned, and
    tcplab registers no exit handlers. A reader that closed the pipe early (`tcplab run F | head`)
    ends it quietly with status 1, as click does."""
    import os

    args = sys.argv[1:]
    if args and args[0] == "run":
        from .run import fast_run

        try:
            done = fast_run(args[1:])
            if done:
                sys.stdout.flush()
                sys.stderr.flush()
        except BrokenPipeError:
            os._exit(1)
        if done:
            os._exit(0)
    from .app import main

    return main(args)


def __getattr__(name: str):
    # `tcplab.cli.main` and the other names of the click application, imported when first asked
    # for. The package's own submodules and dunder names are left to the import system.
    if name.startswith("__") or name in _SUBMODULES:
        raise AttributeError(f"module 'tcplab.cli' has no attribute {name!r}")
    import importlib

    try:
        return getattr(importlib.import_module(".app", __name__), name)
    except AttributeError:
        raise AttributeError(f"module 'tcplab.cli' has no attribute {name!r}") from None
