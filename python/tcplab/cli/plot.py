"""`tcplab plot`: what TCP did, drawn from a capture or a simulation's series."""

from __future__ import annotations

from pathlib import Path

import click

from .. import _core
from ..api import run as _run
from .common import _fail


@click.group("plot")
def plot_group() -> None:
    """Draw what TCP did, from a capture or a simulation's series (PNG, SVG or PDF by the
    output's suffix)."""


def _is_scenario(path: str) -> bool:
    return Path(path).suffix.lower() in (".toml", ".json")


def _simulate(scenario: str, seed, sets, kinds):
    """Run a scenario file with the series `kinds` recorded; a bad scenario is a clean error."""
    try:
        return _run(scenario, seed=seed, sets=list(sets), series=list(kinds)).series
    except (_core.ScenarioError, OSError) as e:
        _fail(f"{scenario}: {e}")
    except _core.CoreError as e:
        _fail(str(e))


def _save_plot(ax, out) -> None:
    from .. import plot as _plot

    try:
        _plot.save(ax, out)
    except (OSError, ValueError) as e:
        _fail(f"{out}: {e}")
    click.echo(str(out))


_SEED = click.option("--seed", type=click.IntRange(min=0), default=None, help="Run seed for a scenario (default: its own).")
_SET = click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a scenario key (repeatable).")


_FROM = click.option("--from", "t_from", type=float, default=None, metavar="SECONDS", help="Zoom: start of the time axis shown.")
_TO = click.option("--to", "t_to", type=float, default=None, metavar="SECONDS", help="Zoom: end of the time axis shown.")
_FLOW = click.option("--flow", "flows", multiple=True, metavar="NAME",
                     help="A connection by its flow's name (or number) (repeatable; default: all overlaid).")
_SEGMENTS = click.option("--segments", "in_segments", is_flag=True, help="y in segments (of the largest data segment) instead of bytes.")


def _zoom_ok(t_from, t_to) -> None:
    if t_from is not None and t_to is not None and t_to <= t_from:
        _fail(f"--from ({t_from}) must be before --to ({t_to})")


@plot_group.command("cwnd")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("-o", "--out", type=click.Path(dir_okay=False), default=None, help="Output file (default SCENARIO's name with -cwnd.png).")
@click.option("--conn", type=click.IntRange(min=0), default=None, help="Connection number of the series (default: all overlaid).")
@click.option("--dir", "direction", type=click.Choice(["a2b", "b2a"]), default=None, help="Send half (default: the ones that sent data).")
@_FLOW
@_SEGMENTS
@_FROM
@_TO
@_SEED
@_SET
def plot_cwnd_cmd(scenario: str, out, conn, direction, flows, in_segments, t_from, t_to, seed, sets) -> None:
    """cwnd and ssthresh over time of the connections of a simulation of SCENARIO, with
    retransmission timeouts (dashed lines), drops (crosses) and, for one connection, its
    recoveries shaded."""
    import matplotlib

    matplotlib.use("Agg")
    from .. import plot as _plot

    _zoom_ok(t_from, t_to)
    s = _simulate(scenario, seed, sets, ["tcp", "drops"] + (["segments"] if in_segments else []))
    try:
        ax = _plot.cwnd(s, conn=conn, direction=direction, flows=list(flows) or None, segments=in_segments, t_from=t_from, t_to=t_to)
    except ValueError as e:
        _fail(f"{scenario}: {e}")
    _save_plot(ax, Path(out) if out else Path(scenario).with_name(Path(scenario).stem + "-cwnd.png"))


@plot_group.command("queue")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("-o", "--out", type=click.Path(dir_okay=False), default=None, help="Output file (default SCENARIO's name with -queue.png).")
@click.option("--link", "links", multiple=True,
              help="Link direction as in the results (repeatable; 'all': those that queued; default: the bottleneck, most drops else busiest).")
@click.option("--bytes", "in_bytes", is_flag=True, help="Queue in bytes (KB, MB) instead of packets.")
@_FROM
@_TO
@_SEED
@_SET
def plot_queue_cmd(scenario: str, out, links, in_bytes: bool, t_from, t_to, seed, sets) -> None:
    """Queue length over time of a link direction of a simulation of SCENARIO (default: the
    bottleneck), with its drops marked."""
    import matplotlib

    matplotlib.use("Agg")
    from .. import plot as _plot

    _zoom_ok(t_from, t_to)
    s = _simulate(scenario, seed, sets, ["queue", "drops"])
    chosen = "all" if "all" in links else (list(links) or None)
    try:
        ax = _plot.queue(s, links=chosen, bytes=in_bytes, t_from=t_from, t_to=t_to)
    except ValueError as e:
        _fail(f"{scenario}: {e}")
    _save_plot(ax, Path(out) if out else Path(scenario).with_name(Path(scenario).stem + "-queue.png"))


@plot_group.command("tsg")
@click.argument("capture", type=click.Path(dir_okay=False))
@click.option("-o", "--out", type=click.Path(dir_okay=False), default=None, help="Output file (default CAPTURE's name with -tsg.png).")
@click.option("--conn", type=click.IntRange(min=0), default=None, help="Connection number as `tcplab trace` numbers them (default: all with data overlaid, up to 8; else the busiest).")
@click.option("--dir", "direction", type=click.Choice(["a2b", "b2a"]), default=None, help="Direction of the data (default: the one that carried more).")
@_FLOW
@_SEGMENTS
@_FROM
@_TO
@click.option("--strict", is_flag=True, help="Refuse a capture cut short instead of drawing what precedes the cut.")
@_SEED
@_SET
def plot_tsg_cmd(capture: str, out, conn, direction, flows, in_segments, t_from, t_to, strict: bool, seed, sets) -> None:
    """Time-sequence graph of CAPTURE's connections, as tcptrace draws it: segments,
    retransmissions (red, R), the ACK line, SACK blocks and duplicate ACKs (one connection; more
    are overlaid, a colour each). Given a scenario (.toml or .json) instead, the graph of a
    simulation of it, from its segments series, as a capture at the data sender would show it,
    with drops (crosses) and retransmission timeouts (dashed lines) marked."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    from .. import plot as _plot
    from .. import trace as _trace

    _zoom_ok(t_from, t_to)
    kw = dict(conn=conn, direction=direction, flows=list(flows) or None, segments=in_segments, t_from=t_from, t_to=t_to)
    if _is_scenario(capture):
        s = _simulate(capture, seed, sets, ["segments", "drops", "tcp"])
        try:
            ax = _plot.tsg(s, **kw)
        except ValueError as e:
            _fail(f"{capture}: {e}")
        _save_plot(ax, Path(out) if out else Path(capture).with_name(Path(capture).stem + "-tsg.png"))
        return
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", _trace.TraceWarning)
            pk = _trace.packets(capture, strict=strict)
        for w in caught:
            click.echo(f"warning: {w.message}", err=True)
        ax = _plot.tsg(pk, **kw)
    except OSError as e:
        _fail(f"{capture}: {getattr(e, 'strerror', None) or e}" if getattr(e, "filename", None) else str(e))
    except _core.TraceError as e:
        _fail(f"{capture}: {e}")
    except ValueError as e:
        _fail(f"{capture}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    out = Path(out) if out else Path(capture).with_name(Path(capture).stem + "-tsg.png")
    try:
        _plot.save(ax, out)
    except (OSError, ValueError) as e:
        _fail(f"{out}: {e}")
    click.echo(str(out))
