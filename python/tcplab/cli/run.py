"""`tcplab run`: run one scenario and print its instruments as text tables (or JSON).

The command is defined with its options and help in cli/app.py (click); the work is here, free of
click, so that the console script can take a fast path for the most common call: `entry()` in
cli/__init__.py hands a plain `tcplab run FILE [--seed N] [--set K=V ...] [--json] [--pcap P]
[--max-wall D] [--max-events N]` to `fast_run`, which parses it exactly as click would or declines
(anything else: help, a malformed or repeated option, a value click would refuse) so that click
parses it and writes its own usage errors. Not importing click saves about a third of the
start-up of a whole `tcplab run` process (bench/README.md, "Whole process against ns-2").
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .. import _core
from .. import limits as _limits
from .common import _fail, _load_error, _table

LEGEND = (
    "  rexmit: segments sent again; FR: fast retransmits; SACK rx: holes resent from the SACK scoreboard;\n"
    "  RTO: retransmission timeouts; CA: loss episodes with one clock-preserving halving (Mathis et al.'s\n"
    "  congestion-avoidance events); nonCA: other episodes (a timeout, a second halving); other: retransmissions\n"
    "  inside an episode without a reduction of their own (partial-ACK and go-back-N resends). See docs/traces.md,\n"
    "  \"Three loss counts\", for how these relate to a capture's loss events and tshark's retransmissions."
)


def stop_note(meta: dict, scenario: dict) -> str:
    """What ended a run that left something unfinished: its `duration` (the usual end of a
    run with unlimited or repeated transfers, applications or UDP sources), not a wall-time or
    event limit (those stop the run with an error)."""
    if meta.get("completed", True):
        return ""
    if scenario.get("duration"):
        return f"(duration {scenario['duration']} reached; unfinished transfers stopped there)"
    return "(stopped before every transfer finished)"


#: Rows of the objects table `tcplab run` prints before it summarises (--json has them all).
OBJECT_ROWS = 8


def render(result) -> str:
    # The records of the tables it shows (not `to_dict()`, which also expands each flow's TCP settings).
    from ..api import app_summary

    d = {"meta": result.meta, "scenario": result.scenario,
         **{k: result._rows(k) for k in ("connections", "links", "transfers", "objects", "pages", "udp")}}
    m = d["meta"]
    s = d["scenario"]
    parts = [
        f"scenario {s.get('name') or '(unnamed)'}  seed {m['seed']}  simulated {m['sim_time_s']:.3f} s  "
        f"events {m['events']}  wall {result.wall_time_s * 1e3:.1f} ms" + ("  " + stop_note(m, s) if stop_note(m, s) else ""),
        *[f"note: {n}" for n in getattr(result, "notes", [])],
    ]
    if d["connections"] or not (d["objects"] or d["udp"]):
        parts += [
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
                    ("sack_retransmits", "SACK rx", 1),
                    ("timeouts", "RTO", 1),
                    ("ca_events", "CA", 1),
                    ("non_ca_events", "nonCA", 1),
                    ("other_losses", "other", 1),
                    ("rtt_avg_s", "RTT ms", 1e3),
                    ("cwnd_avg_bytes", "cwnd avg B", 1),
                ],
            ),
            LEGEND,
        ]
    if d["objects"]:
        objects = d["objects"]
        parts += [
            "",
            _table(
                "applications (per application: its objects and pages)",
                app_summary(objects, d["pages"]),
                [
                    ("app_name", "app", 1),
                    ("client_node", "client", 1),
                    ("objects", "objects", 1),
                    ("complete", "done", 1),
                    ("bytes_delivered", "delivered B", 1),
                    ("median_transfer_s", "median T s", 1),
                    ("median_last_byte_s", "median last byte s", 1),
                    ("retransmits", "rexmit", 1),
                    ("timeouts", "RTO", 1),
                    ("pages", "pages", 1),
                    ("pages_complete", "pages done", 1),
                    ("median_page_delay_s", "median page delay s", 1),
                ],
            ),
            "  done: responses delivered in full; T: transfer time, acked_s - request_s (Seddigh et al.);\n"
            "  last byte: delivered_s - start_s; page delay: RFC 2415's, over the completed pages.",
            "",
            _table(
                f"objects (first {min(OBJECT_ROWS, len(objects))} of {len(objects)})" if len(objects) > OBJECT_ROWS else "objects",
                objects[:OBJECT_ROWS],
                [
                    ("app_name", "app", 1),
                    ("object", "#", 1),
                    ("page", "page", 1),
                    ("response_bytes", "response B", 1),
                    ("start_s", "start s", 1),
                    ("first_byte_s", "first byte s", 1),
                    ("delivered_s", "delivered s", 1),
                    ("transfer_time_s", "T s", 1),
                    ("retransmits", "rexmit", 1),
                    ("timeouts", "RTO", 1),
                    ("aborted", "aborted", 1),
                ],
            ),
        ]
        if len(objects) > OBJECT_ROWS:
            parts.append(f"  ... {len(objects) - OBJECT_ROWS} more objects and {len(d['pages'])} pages: --json, or Result.objects and Result.pages")
    parts += [
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
    if d.get("udp"):
        parts += [
            "",
            _table(
                "UDP sources",
                d["udp"],
                [
                    ("name", "source", 1),
                    ("kind", "kind", 1),
                    ("rate_bps", "ON kb/s", 1e-3),
                    ("mean_bps", "mean kb/s", 1e-3),
                    ("sent_pkts", "sent", 1),
                    ("delivered_pkts", "delivered", 1),
                    ("dropped_pkts", "dropped", 1),
                ],
            ),
        ]
    return "\n".join(parts)


def run_command(scenario: str, seed, sets, as_json: bool, pcap, max_wall, max_events) -> None:
    """The body of `tcplab run` once its arguments are parsed (by click or by `fast_run`)."""
    from ..api import run as _run

    try:
        max_wall = _limits.seconds(max_wall, "--max-wall")
    except ValueError as e:
        _fail(str(e))
    try:
        r = _run(Path(scenario), seed=seed, sets=list(sets), pcap=pcap, max_wall=max_wall, max_events=max_events)
    except (OSError, UnicodeDecodeError) as e:
        _load_error(scenario, e)
    except _core.RunLimitError as e:
        _fail(f"{scenario}: {e}")
    except _core.ScenarioError as e:
        if getattr(e, "path", None) == "sweep":
            _fail(f"{scenario}: has a [sweep] table; run it with `tcplab sweep {scenario}`")
        _fail(f"{scenario}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    text = json.dumps(r.to_dict(), indent=2) if as_json else render(r)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


#: The options of `tcplab run` that take a value, as click declares them in cli/app.py; the flag is `--json`.
_VALUE_OPTIONS = ("--seed", "--set", "--pcap", "--max-wall", "--max-events")
_U64_MAX = 2**64 - 1


def _count(v: str, lo: int):
    """An option value click's IntRange(min=lo, max=2**64 - 1) would accept, written plainly (ASCII
    digits only); None to leave anything else (signs, spaces, underscores, out of range) to click."""
    if not (v.isascii() and v.isdigit()):
        return None
    n = int(v)
    return n if lo <= n <= _U64_MAX else None


def parse_fast(args: list):
    """The keyword arguments of `run_command` for ARGS (what follows `run`), or None when ARGS is
    not a plain call that click would parse the same way (then click parses it)."""
    scenario, opts, sets = None, {}, []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--json":
            if "as_json" in opts:
                return None
            opts["as_json"] = True
            i += 1
            continue
        if a in _VALUE_OPTIONS:
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                return None
            v = args[i + 1]
            if a == "--set":
                sets.append(v)
            else:
                key = a[2:].replace("-", "_")
                if key in opts:
                    return None
                if key in ("seed", "max_events"):
                    v = _count(v, 0 if key == "seed" else 1)
                    if v is None:
                        return None
                elif key == "pcap" and os.path.isdir(v):
                    return None
                opts[key] = v
            i += 2
            continue
        if a.startswith("-") or scenario is not None:
            return None  # --help, --opt=value, an unknown option, a second argument: click's
        scenario = a
        i += 1
    if scenario is None or os.path.isdir(scenario):
        return None  # click.Path(dir_okay=False) names a directory in its usage error
    return {"scenario": scenario, "seed": opts.get("seed"), "sets": sets, "as_json": opts.get("as_json", False),
            "pcap": opts.get("pcap"), "max_wall": opts.get("max_wall"), "max_events": opts.get("max_events")}


def fast_run(args: list) -> bool:
    """Run `tcplab run ARGS` without click when `parse_fast` accepts ARGS; False when it declines."""
    kw = parse_fast(args)
    if kw is None:
        return False
    run_command(**kw)
    return True
