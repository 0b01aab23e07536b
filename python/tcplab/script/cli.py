"""`tcplab script FILE.pkt|DIR`: scripted TCP tests in packetdrill's language (docs/script.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command("script")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--stack", "stack", default="linux", show_default=True, metavar="PROFILE|PRESET", help="The simulated stack: a profile (tcplab profiles) or a preset (tcplab variants).")
@click.option("--kernel", is_flag=True, help="Run against the real Linux kernel in network namespaces made for each script (root).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per script, then the summary.")
@click.option("--tolerance-ms", type=click.FloatRange(min=0), default=None, help="Timing tolerance (default: the script's --tolerance_usecs, else 4 ms), also at least 12.5 % of the time since the previous event.")
@click.option("--retries", type=click.IntRange(0, 5), default=0, show_default=True, help="Run a script that failed on timing alone (a packet early, late or missing in its window) up to N more times; the notes say so.")
@click.option("--no-ts-ecr", is_flag=True, help="Do not compare the TS ecr of outbound packets (packetdrill compares only TS val, and only with --tcp_ts_tick_usecs).")
@click.option("-v", "--verbose", is_flag=True, help="Print each result's notes (what was approximated or not compared).")
def script_cmd(paths, stack, kernel, as_json, tolerance_ms, retries, no_ts_ecr, verbose) -> None:
    """Run packetdrill scripts: inject the `<` packets, make the socket calls, and check every
    `>` packet, return value and `%{ tcpi_* }%` assertion. A directory runs every *.pkt below it
    and prints a summary per directory. Exit status 1 when a script fails or cannot be read."""
    from . import runner

    if kernel:
        from .kernel import KernelStack, missing

        why = missing()
        if why:
            click.echo(f"error: --kernel: {why}", err=True)
            sys.exit(2)
        factory = KernelStack
    else:
        from .sim import SimStack

        tcp = _stack_spec(stack)
        factory = lambda: SimStack(tcp)  # noqa: E731
        try:
            factory().start(_empty())
        except Exception as e:  # noqa: BLE001 - a bad --stack is the user's error, said plainly
            click.echo(f"error: --stack {stack}: {e}", err=True)
            sys.exit(2)
    tol = None if tolerance_ms is None else tolerance_ms / 1e3
    results, roots = [], []
    for p in paths:
        root = Path(p)
        roots.append(root)
        for f in runner.scripts_in(root):
            r = runner.run_file(f, factory, tol, retries, not no_ts_ecr)
            results.append((root, r))
            if as_json:
                click.echo(json.dumps(r.to_dict()))
            else:
                click.echo(r.text())
                if verbose:
                    for n in r.notes:
                        click.echo(f"    note: {n}")
    many = len(results) > 1 or any(r.is_dir() for r in roots)
    if many:
        rows = []
        for root in roots:
            rows.extend(runner.summary([r for rt, r in results if rt == root], root))
        if as_json:
            click.echo(json.dumps({"summary": rows}))
        else:
            click.echo("")
            click.echo(runner.summary_text(rows))
    bad = any(r.status in ("fail", "error") for _, r in results)
    sys.exit(1 if bad else 0)


def _stack_spec(name: str) -> dict:
    """A profile name, or a preset name (applied over the `rfc` profile as `tcplab variants`
    defines it), as a flow's `tcp` table."""
    from .. import _core

    profiles = json.loads(_core.profiles())
    names = profiles if isinstance(profiles, list) else list(profiles)
    if name in names:
        return {"profile": name}
    return {"preset": name}


def _empty():
    from .parser import Script

    return Script("<check>")
