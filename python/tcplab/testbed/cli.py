"""`tcplab testbed ...`: the command-line side of the testbed (docs/testbed.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


def _fail(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(2)


@click.group("testbed")
def testbed_group() -> None:
    """Run a scenario on the real Linux TCP stack (network namespaces, a delay box, real
    sockets; the kernel untuned but for the congestion control) and beside it in the simulator,
    saying loudly where the simulated profile differs from the kernel. Needs root."""


@testbed_group.command("run")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "out", type=click.Path(file_okay=False), default="testbed-out", show_default=True, help="Directory for the captures, records and comparison.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a scenario key.")
@click.option("--stock", is_flag=True, help="The host's default congestion control instead of each flow's `cc`, and no tuning of the kernel even for a scenario of profile rfc6675-iw10 (the kernel otherwise runs untuned: RACK, TLP, timestamps, F-RTO...).")
@click.option("--shaper", type=click.Choice(["box", "tbf"]), default="box", show_default=True, help="Who sets rates and queues: the delay box's transmitters, or tc tbf on its output ports (single link only).")
@click.option("--congctl", default=None, metavar="NAME", help="Congestion control of the real stack (default each flow's `cc`, as simulated; with --stock the host's default). The simulated side is unchanged, and the difference is printed.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True, help="Seconds the transfers may take after their start.")
@click.option("--no-compare", is_flag=True, help="Only the real run (compare later with `tcplab testbed compare DIR`).")
@click.option("--figure", default="tsg.png", show_default=True, help="Time-sequence graphs, real beside simulated (in the output directory).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed of the simulated run.")
def run_cmd(scenario, out, sets, stock, shaper, congctl, timeout, no_compare, figure, seed) -> None:
    """Run SCENARIO on the real stack, then (unless --no-compare) in the simulator, and print
    both side by side, connection by connection."""
    from .. import _core
    from . import TestbedError, compare, run

    try:
        run(scenario, out, sets=sets, stock=stock, timeout=timeout, shaper=shaper, congctl=congctl)
    except _core.ScenarioError as e:
        _fail(f"{scenario}: {e}")
    except (TestbedError, OSError) as e:
        _fail(str(e))
    except KeyboardInterrupt:
        click.echo("interrupted: everything the run made has been removed", err=True)
        sys.exit(130)
    click.echo(f"real run: {out}/")
    if not no_compare:
        c = compare(out, figure=figure, seed=seed)
        click.echo(c.text)
        if c.figure:
            click.echo(f"figure: {c.figure}")


@testbed_group.command("compare")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.option("--figure", default="tsg.png", show_default=True, help="Time-sequence graphs, real beside simulated (in DIRECTORY).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed of the simulated run.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON rows.")
def compare_cmd(directory, figure, seed, as_json) -> None:
    """Simulate the scenario of the real run in DIRECTORY and print per connection: transfer
    time, initial window, retransmissions and their kind, SYN retransmission times, goodput and
    RTT, real beside simulated with the difference; draw both time-sequence graphs."""
    from . import compare

    if not (Path(directory) / "testbed.json").exists():
        _fail(f"{directory}: no testbed.json (make it with `tcplab testbed run SCENARIO -o {directory}`)")
    c = compare(directory, figure=figure, seed=seed)
    if as_json:
        click.echo(json.dumps(c.table.to_dict("records"), default=str))
    else:
        click.echo(c.text)
        if c.figure:
            click.echo(f"figure: {c.figure}")


@testbed_group.command("cleanup")
def cleanup_cmd() -> None:
    """Remove the namespaces and processes left by testbed runs and `tcplab tbit --lab` labs
    that were killed."""
    from ..tbit import real as _tbit_real
    from . import cleanup_stale

    gone = cleanup_stale() + _tbit_real.cleanup_stale()
    click.echo(f"removed {len(gone)} namespace(s)" + (": " + ", ".join(gone) if gone else ""))


@testbed_group.command("floor")
@click.argument("experiment", type=click.Choice(["drops", "cwnd", "ecn", "bbr"]))
@click.argument("runs", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True))
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None, help="Also write every case's figures as JSON here.")
def floor_cmd(experiment, runs, json_path) -> None:
    """The kernel against itself: EXPERIMENT's own measure between every pair of its kept runs
    (two or more output directories of `tcplab testbed experiments --only EXPERIMENT -o DIR`) and
    between the simulator, run again on each case, and each run. No root needed."""
    from . import floor
    from .lab import TestbedError

    try:
        res = floor.measure(experiment, [Path(r) for r in runs])
    except (TestbedError, ValueError) as e:
        _fail(str(e))
    except OSError as e:
        _fail(f"{e.filename or ''}: {e.strerror or e}")
    if json_path:
        Path(json_path).write_text(json.dumps(res, indent=1, default=str))
    click.echo(floor.report(res))


@testbed_group.command("experiments")
@click.option("-o", "--out", "out", type=click.Path(file_okay=False), default="testbed-experiments", show_default=True)
@click.option("--only", multiple=True, help="Run only these experiments (boxacc, seddigh, table2, allman, loss, drops, cwnd, ecn, bbr).")
@click.option("--quick", is_flag=True, help="Fewer repetitions and sizes (a check that it runs).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Run everything K times (OUT/run1 ... OUT/runK) and measure the kernel against itself (OUT/floor.md; drops, cwnd, ecn, bbr).")
def experiments_cmd(out, only, quick, repeat) -> None:
    """Run the experiments of docs/testbed.md on the real stack and in the simulator; write
    OUT/experiments.md (tables) and OUT/experiments.json (with --repeat K: OUT/run1 ... OUT/runK
    each so, and OUT/floor.md and OUT/floor.json, the kernel against itself)."""
    from . import experiments

    try:
        text = experiments.run_all(Path(out), only=list(only), quick=quick, repeat=repeat)
    except ValueError as e:
        _fail(str(e))
    except experiments.TestbedError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        click.echo("interrupted: everything the runs made has been removed", err=True)
        sys.exit(130)
    click.echo(text)
