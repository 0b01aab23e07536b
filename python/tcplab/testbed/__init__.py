"""Run one scenario on the real Linux TCP stack and in the simulator, side by side
(docs/testbed.md).

    >>> from tcplab import testbed
    >>> real = testbed.run("bulk.toml", "out/")        # namespaces, delay box, real TCP, capture
    >>> cmp = testbed.compare("out/")                  # the simulator, then both through tcplab.trace
    >>> print(cmp.text)

`run` refuses (tcplab.ScenarioError, with the key path) what Linux cannot honour, before anything
is created; it needs root, `ip`, tcpdump, nft and ethtool (`missing()` says what lacks).
"""

from __future__ import annotations


import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from .lab import TestbedError, cleanup_stale, missing, namespaces  # noqa: F401
from .plan import KNOB_MAP, build  # noqa: F401

__all__ = ["run", "simulate", "compare", "Comparison", "TestbedError", "missing", "cleanup_stale", "build", "KNOB_MAP"]


def _load(scenario):
    from .. import api

    if isinstance(scenario, dict):
        return scenario
    text, fmt = api.load_scenario(scenario)
    if fmt == "json":
        return json.loads(text)
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    return tomllib.loads(text)


def run(scenario, workdir, sets: Sequence[str] = (), stock: bool = False, timeout: float = 60.0, shaper: str = "box",
        congctl: Optional[str] = None, _fail_after_setup: bool = False) -> dict:
    """Run `scenario` on the real stack. Writes into `workdir`: `real-<host>.pcap` (a capture at
    each data sender), the client records and `testbed.json` (the scenario as run, the settings,
    the records). `stock`: leave Linux's own mechanisms on (the host's default congestion control, TLP, RACK, F-RTO, linear SYN
    timeouts...) instead of matching the simulator. `shaper`: "box" (the delay box's transmitters
    set the rates and queues) or "tbf" (tc's token bucket on the box's output ports; single link
    only). `congctl`: the congestion control of every route (default each flow's `cc`;
    with `stock` the host's default, `net.ipv4.tcp_congestion_control`). Returns what `testbed.json` holds."""
    from . import lab

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    d = _load(scenario)
    plan, validated = build(d, sets=sets, stock=stock, shaper=shaper, congctl=congctl)
    out = lab.run_real(plan, workdir, timeout=timeout, _fail_after_setup=_fail_after_setup)
    rec = {
        "scenario": d, "sets": list(sets), "stock": stock, "shaper": shaper, "congctl": congctl, "validated": validated,
        "hosts": {h: plan.ip(h) for h in plan.hosts}, "sysctls": plan.sysctls,
        "routes": [{"from": a, "to": b, **o} for (a, b), o in plan.routes.items()],
        "connections": [c.__dict__ for c in plan.conns], "kernel_hz": lab.kernel_hz(), "notes": list(plan.notes),
        "divergences": plan.divergences, "sim_cc": sorted({t.get("cc", "reno") for t in _resolved_tcp(d, sets)}),
        "tcp_metrics_flushed": True, **out,
    }
    from .untuned import render

    for n in ([render(plan.divergences)] if plan.divergences else []) + plan.notes:
        print(n, file=sys.stderr)
    (workdir / "testbed.json").write_text(json.dumps(rec, indent=1, default=str))
    return rec


def _resolved_tcp(scenario: dict, sets) -> list:
    """Each flow's and application's resolved sending configuration."""
    from .. import api

    r = api.resolve(scenario, sets=list(sets))
    return [f["tcp"]["sender"] for f in r["flows"]] + [a["tcp"]["client"] for a in r["apps"]]


def simulate(scenario, workdir, hosts: Sequence[str], sets: Sequence[str] = (), seed: Optional[int] = None, series=None):
    """The same scenario in the simulator, captured at the same hosts (`sim-<host>.pcap`);
    `series` as `tcplab.run`'s."""
    from .. import api

    d = dict(_load(scenario))
    # A scenario's captures are written inside the current directory (docs/traces.md): the run
    # takes place in `workdir`, with the captures' names relative to it.
    d["capture"] = [{"path": f"sim-{h}.pcap", "node": h} for h in hosts]
    here = os.getcwd()
    os.chdir(workdir)
    try:
        return api.run(d, seed=seed, sets=list(sets), series=series)
    finally:
        os.chdir(here)


@dataclass
class Comparison:
    table: "object"          # pandas DataFrame: connection, metric, real, sim, diff
    text: str
    figure: Optional[Path]


def compare(workdir, figure: Optional[str] = "tsg.png", seed: Optional[int] = None) -> Comparison:
    """Simulate the scenario of a real run in `workdir` and compare them connection by
    connection; draw the busiest connection's time-sequence graphs (real, simulated) to
    `workdir/figure`."""

    from . import sidebyside as cmp

    workdir = Path(workdir)
    rec = json.loads((workdir / "testbed.json").read_text())
    caps = rec["captures"]
    res = simulate(rec["scenario"], workdir, list(caps), sets=rec.get("sets", ()), seed=seed)
    real = {h: cmp.connections(p) for h, p in caps.items()}
    sim = {h: cmp.connections(workdir / f"sim-{h}.pcap") for h in caps}
    table = cmp.pair(rec["connections"], real, sim)
    fig = None
    if figure and rec["connections"]:
        def tt(c):
            return (real.get(c["sender"], {}).get(c["sport"]) or {}).get("transfer_time_s") or 0

        c = max(rec["connections"], key=tt)
        r, s = real.get(c["sender"], {}).get(c["sport"]), sim.get(c["sender"], {}).get(c["sport"])
        if r and s:
            fig = cmp.figure(caps[c["sender"]], workdir / f"sim-{c['sender']}.pcap", workdir / figure, conn_real=r["conn"],
                             conn_sim=s["conn"], title=c["label"])
    text = "\n".join(cmp.differences(rec) + [cmp.render(table), cmp.render_counters(rec.get("kernel") or {}, res)])
    (workdir / "compare.txt").write_text(text + "\n")
    return Comparison(table=table, text=text, figure=fig)
