"""`tcplab tbit`: a TCP sender's behaviour inferred by probing it (docs/tbit.md)."""

from __future__ import annotations

import json
import sys

import click

from .. import _core
from ..api import profiles as _profiles
from ..api import variants as _variants
from .common import _fail


#: How to read `tcplab tbit` (docs/tbit.md).
TBIT_LEGEND = (
    "  verdict: what the probes inferred, when at least 80 % of the runs agree (Ladha et al.: 4 of 5); otherwise\n"
    "  'eliminated' with the runs' answers; 'without conclusion': a run the test could not read, with the reason.\n"
    "  configured, match (simulated stacks): what the stack is set to, and whether the inference found it. docs/tbit.md"
)


@click.command("tbit")
@click.option("--sim", default=None, metavar="STACK", help="A simulated stack: a preset, a profile, PROFILE/PRESET, or 'all'.")
@click.option("--host", default=None, metavar="ADDR[:PORT]", help="A real web server, probed with raw frames (root; see docs/tbit.md).")
@click.option("--url", default="/", show_default=True, help="Path of a page of at least 40 KB on the server.")
@click.option("--tests", default=None, metavar="a,b", help="Only these tests (sack_advertised, icw, rto_data, sack_used, lt, abc, abc_l, er, cc, rto_syn, tlp, rack, cc_beta, ecn, pacing, hystart).")
@click.option("--runs", type=click.IntRange(min=1, max=50), default=5, show_default=True, help="Runs per test (a result stands when 80% agree).")
@click.option("--src", default=None, metavar="ADDR", help="--host: the prober's address, unused on the outgoing link (it answers ARP for it).")
@click.option("--iface", default=None, help="--host: the interface to send from (default: the route's).")
@click.option("--netns", default=None, help="--host: probe from this network namespace.")
@click.option("--lab", is_flag=True, help="Probe the real Linux kernel in namespaces made for it, in the configurations of docs/tbit.md (root).")
@click.option("--quick", is_flag=True, help="--lab: initcwnd 2 and 4, SACK off, linear SYN timeouts off only.")
@click.option("--initcwnd", type=click.IntRange(min=1, max=100), default=None, metavar="N",
              help="--lab: only the configuration 'initcwnd N' (the server route's initial window; --tests narrows it).")
@click.option("--json", "as_json", is_flag=True, help="The rows as JSON.")
def tbit_cmd(sim, host, url, tests, runs, src, iface, netns, lab, quick, initcwnd, as_json) -> None:
    """Infer a TCP sender's behaviour by probing it (TBIT: Padhye & Floyd 2001, Ladha et al. 2004)."""
    from .. import tbit as _tbit
    from ..tbit import report as _report

    sel = [t.strip() for t in tests.split(",") if t.strip()] if tests else None
    if (sim is not None) + (host is not None) + lab != 1:
        _fail("give exactly one of --sim STACK, --host ADDR[:PORT] or --lab")
    if lab:
        from ..tbit import linux as _linux

        if initcwnd is not None and quick:
            _fail("--initcwnd and --quick are alternatives: --initcwnd N runs the one configuration 'initcwnd N'")
        if tests and initcwnd is None:
            _fail("--lab runs fixed configurations: --tests applies with --initcwnd N")
        extra = (["--initcwnd", str(initcwnd)] if initcwnd is not None else []) + (["--tests", tests] if tests else [])
        sys.exit(_linux.main(["--runs", str(runs)] + (["--json"] if as_json else []) + (["--quick"] if quick else []) + extra))
    if initcwnd is not None:
        _fail("--initcwnd applies to --lab (a simulated stack's initial window comes from its preset or profile)")
    try:
        if sim == "all":
            names = list(_variants()) + list(_profiles())
            res = {n: _tbit.run(sim=n, tests=sel, runs=runs, url=url) for n in names}
            click.echo(json.dumps(res, indent=2) if as_json else _report.matrix(res) + "\n" + TBIT_LEGEND)
            return
        kw = {k: v for k, v in {"src": src, "iface": iface, "netns": netns}.items() if v and host}
        rows = _tbit.run(sim=sim, host=host, url=url, tests=sel, runs=runs, **kw)
    except (ValueError, _core.ScenarioError) as e:
        _fail(str(e))
    except (PermissionError, OSError) as e:
        _fail(f"{host}: {e}")
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    click.echo(_report.one(rows, f"simulated {sim}" if sim else f"{host}{url}"))
    click.echo(TBIT_LEGEND)
