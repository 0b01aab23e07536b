"""The `tcplab` command line.

    tcplab run FILE [--seed N] [--set key=value ...] [--json] [--pcap PATH]
    tcplab validate FILE [--set key=value ...]
    tcplab profiles
    tcplab trace CAPTURE [--json] [--flows]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from . import _core
from . import trace as _trace
from .api import profiles as _profiles
from .api import run as _run
from .api import validate as _validate


def _fail(msg: str) -> None:
    """Print one line `error: ...` on stderr and exit 2 (messages from the TOML parser span lines)."""
    one_line = "; ".join(part.strip() for part in str(msg).splitlines() if part.strip())
    click.echo(f"error: {one_line}", err=True)
    sys.exit(2)


def _load_error(scenario: str, e: Exception) -> None:
    """A scenario file that cannot be read (missing, a directory, unreadable, not UTF-8)."""
    if isinstance(e, UnicodeDecodeError):
        _fail(f"{scenario}: not a UTF-8 text file ({e.reason} at byte {e.start})")
    if getattr(e, "filename", None) is None:
        _fail(str(e))  # tcplab's own message names the file
    _fail(f"{scenario}: {getattr(e, 'strerror', None) or e}")


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _table(title: str, rows: list[dict], cols: list[tuple[str, str, float]]) -> str:
    """A plain aligned text table; cols are (key, header, scale)."""
    head = [h for _, h, _ in cols]
    body = []
    for r in rows:
        line = []
        for k, _, scale in cols:
            v = r.get(k)
            if isinstance(v, (int, float)) and v is not None and scale != 1:
                v = v * scale
            line.append(_fmt(v))
        body.append(line)
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    out = [title]
    out.append("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths))))
    for b in body:
        out.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(b, widths))))
    return "\n".join(out)


def render(result) -> str:
    d = result.to_dict()
    m = d["meta"]
    s = d["scenario"]
    parts = [
        f"scenario {s.get('name') or '(unnamed)'}  seed {m['seed']}  simulated {m['sim_time_s']:.3f} s  "
        f"events {m['events']}  wall {result.wall_time_s * 1e3:.1f} ms" + ("" if m["completed"] else "  (time limit reached)"),
        "",
        _table(
            "connections",
            d["connections"],
            [
                ("name", "flow", 1),
                ("variant", "variant", 1),
                ("bytes_delivered", "delivered B", 1),
                ("goodput_bps", "goodput Mb/s", 1e-6),
                ("complete_s", "done s", 1),
                ("segs_sent", "segs", 1),
                ("retransmits", "rexmit", 1),
                ("fast_retransmits", "FR", 1),
                ("timeouts", "RTO", 1),
                ("ca_events", "CA", 1),
                ("non_ca_events", "nonCA", 1),
                ("other_losses", "other", 1),
                ("rtt_avg_s", "RTT ms", 1e3),
                ("cwnd_avg_bytes", "cwnd avg B", 1),
            ],
        ),
        "",
        _table(
            "links",
            d["links"],
            [
                ("link", "direction", 1),
                ("sent_pkts", "sent", 1),
                ("dropped_pkts", "dropped", 1),
                ("drop_rate", "drop %", 100),
                ("avg_queue_pkts", "avg q pkts", 1),
                ("avg_queue_delay_s", "q delay ms", 1e3),
                ("utilization", "util %", 100),
            ],
        ),
    ]
    if len(d["transfers"]) > 1 or any(t["bytes"] is not None for t in d["transfers"]):
        parts += [
            "",
            _table(
                "transfers",
                d["transfers"],
                [
                    ("name", "flow", 1),
                    ("transfer", "#", 1),
                    ("bytes", "bytes", 1),
                    ("start_s", "start s", 1),
                    ("first_byte_s", "first byte s", 1),
                    ("transfer_time_s", "time s", 1),
                    ("retransmits", "rexmit", 1),
                    ("timeouts", "RTO", 1),
                ],
            ),
        ]
    return "\n".join(parts)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.__version__, prog_name="tcplab")
def main() -> None:
    """tcplab: simulate TCP start-up, congestion control and loss recovery."""


@main.command("run")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), default=None, help="Run seed (default: the scenario's, else 1).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a scenario key, e.g. --set tcp.variant=reno.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option("--pcap", type=click.Path(dir_okay=False), default=None, help="Also write a capture taken at the first flow's sending node.")
def run_cmd(scenario: str, seed, sets, as_json: bool, pcap) -> None:
    """Run SCENARIO (a TOML file) once and print its instruments."""
    try:
        r = _run(Path(scenario), seed=seed, sets=list(sets), pcap=pcap)
    except (OSError, UnicodeDecodeError) as e:
        _load_error(scenario, e)
    except _core.ScenarioError as e:
        _fail(f"{scenario}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    if as_json:
        click.echo(json.dumps(r.to_dict(), indent=2))
    else:
        click.echo(render(r))


@main.command("validate")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE")
def validate_cmd(scenario: str, sets) -> None:
    """Check SCENARIO and print it with every default written out (JSON)."""
    try:
        s = _validate(Path(scenario), sets=list(sets))
    except (OSError, UnicodeDecodeError) as e:
        _load_error(scenario, e)
    except _core.ScenarioError as e:
        _fail(f"{scenario}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    click.echo(json.dumps(s, indent=2))


@main.command("profiles")
@click.option("--json", "as_json", is_flag=True)
def profiles_cmd(as_json: bool) -> None:
    """List the named TCP profiles and their settings."""
    p = _profiles()
    if as_json:
        click.echo(json.dumps(p, indent=2))
        return
    knobs = list(next(iter(p.values())).keys())
    names = list(p.keys())
    w = max(len(k) for k in knobs)
    click.echo("knob".ljust(w) + "  " + "  ".join(n.rjust(10) for n in names))
    for k in knobs:
        click.echo(k.ljust(w) + "  " + "  ".join(str(p[n][k]).rjust(10) for n in names))


@main.command("trace")
@click.argument("capture", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the whole analysis as JSON.")
@click.option("--flows", is_flag=True, help="Every connection in full, both directions (as tcptrace -l).")
def trace_cmd(capture: str, as_json: bool, flows: bool) -> None:
    """Analyse CAPTURE (pcap or pcapng) per TCP connection, as tcptrace does."""
    try:
        rep = _trace.report(capture)
    except OSError as e:
        _fail(f"{capture}: {getattr(e, 'strerror', None) or e}" if getattr(e, "filename", None) else str(e))
    except _core.TraceError as e:
        _fail(f"{capture}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    if as_json:
        click.echo(json.dumps(rep, indent=2))
    else:
        click.echo(_trace.render(rep, flows=flows))


if __name__ == "__main__":
    main()
