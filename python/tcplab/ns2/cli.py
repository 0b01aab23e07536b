"""`tcplab ns2 ...`: the command-line side of tcplab beside ns-2 (docs/ns2.md)."""

from __future__ import annotations

import sys

import click

_WALL_HELP = "Wall time ns-2 may take (seconds); it is stopped after it."


def _fail(msg: str, code: int = 2) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(code)


def _guard(fn):
    """Run `fn`, turning the refusals and ns-2's absence into a message and exit status 2."""
    from .. import _core
    from .runner import Ns2Error, Ns2NotFound

    try:
        return fn()
    except Ns2NotFound as e:
        _fail(str(e))
    except _core.ScenarioError as e:
        _fail(str(e))
    except Ns2Error as e:
        _fail(str(e), 1)
    except (OSError, ValueError) as e:
        _fail(str(e))


@click.group("ns2")
def ns2_group() -> None:
    """The same scenario in ns-2.35 (`ns`): export it as a Tcl script, run it, compare it with
    tcplab packet by packet."""


@ns2_group.command("export")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False), default=None, help="Write the script here (default: standard output).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a scenario key.")
def export_cmd(scenario, out, sets) -> None:
    """Write SCENARIO as an ns-2 Tcl script (its argument: the trace file to write). What ns-2
    cannot express is refused with its key path."""
    from .script import export

    s = _guard(lambda: export(scenario, sets=sets))
    if out:
        with open(out, "w") as fh:
            fh.write(s.tcl)
        click.echo(f"wrote {out}: {len(s.conns)} connection(s), {len(s.links)} link(s)")
    else:
        click.echo(s.tcl, nl=False)
    for n in s.notes:
        click.echo(f"note: {n}", err=True)


@ns2_group.command("run")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a scenario key.")
@click.option("--max-wall", type=click.FloatRange(min=0.1), default=120.0, show_default=True, help=_WALL_HELP)
@click.option("--keep", type=click.Path(file_okay=False), default=None, help="Keep the script and ns-2's trace in this directory.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None, help="Write the packets (the segments series' columns) as CSV.")
def run_cmd(scenario, sets, max_wall, keep, csv_path) -> None:
    """Run SCENARIO in ns-2 and print, per connection, what its trace shows."""
    from .pair import conn_summary, link_drops
    from .runner import run

    r = _guard(lambda: run(scenario, sets=sets, max_wall=max_wall, keep=keep))
    summ = conn_summary(r.segments, r.drops)
    click.echo(f"ns-2: {len(r.segments)} packet events, {len(r.drops)} drops, {r.wall_time_s:.2f} s wall")
    for c, s in summ.items():
        click.echo(f"connection {c}: {s['data_segs']} data segments, {s['retransmits']} retransmissions, {s['timeouts']} timeouts, "
                   f"transfer {s['transfer_s']:.6f} s, goodput {s['goodput_bps']:.0f} b/s")
    for lk, n in sorted(link_drops(r.drops).items()):
        click.echo(f"link {lk}: {n} drops")
    if csv_path:
        r.segments.to_csv(csv_path, index=False)
        click.echo(f"packets: {csv_path}")
    if keep:
        click.echo(f"script and trace: {keep}/")


@ns2_group.command("compare")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a scenario key.")
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), default=None, help="Seed of tcplab's run.")
@click.option("--max-wall", type=click.FloatRange(min=0.1), default=120.0, show_default=True, help=_WALL_HELP)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None, help="Both time-sequence graphs on one figure, written here.")
@click.option("--keep", type=click.Path(file_okay=False), default=None, help="Keep the script and ns-2's trace in this directory.")
def compare_cmd(scenario, sets, seed, max_wall, plot_path, keep) -> None:
    """Run SCENARIO in tcplab and in ns-2; print both side by side (per connection and per
    link), the first packet where they diverge, and whether they agree at the core. Exit status
    0 whether they agree or not; 2 when ns-2 is missing or the scenario cannot be expressed."""
    from .pair import compare

    c = _guard(lambda: compare(scenario, sets=sets, seed=seed, max_wall=max_wall, figure=plot_path, keep=keep))
    click.echo(c.text)
    if c.figure:
        click.echo(f"figure: {c.figure}")
