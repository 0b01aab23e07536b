"""`tcplab sweep`: a grid of overrides times seeds, run and stored (docs/sweeps.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .. import _core
from .. import limits as _limits
from ..errors import ExecutorError
from ..errors import SweepError
from .common import _fail, _load_error


def _axis_summary(values: tuple) -> str:
    from ..sweep import toml_literal

    shown = [toml_literal(v[0] if len(v) == 1 else list(v)) for v in values]
    if len(shown) > 6:
        shown = shown[:3] + ["..."] + shown[-2:]
    return ", ".join(shown)


@click.command("sweep")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--workers", type=click.IntRange(min=0), default=None, help="Worker processes (default: every core; 0 = in this process). With --dask local: Dask workers.")
@click.option("--dask", metavar="ADDRESS|local", default=None, help="Run on a Dask scheduler (tcp://host:8786 or host:8786) or a LocalCluster ('local').")
@click.option("--store", type=click.Path(dir_okay=False), default=None, help="Results store (default results/<sweep name>.duckdb).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a key of the base scenario, before the axes.")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="Runs per task (default: adaptive, about 0.2 s of work).")
@click.option("--retry-failed", is_flag=True, help="Run again the runs recorded as failed (timeout and memory too).")
@click.option("--run-timeout", default=None, metavar="DURATION", help="Wall time each run may take (60s, 2min); a run over it is stopped and recorded as timeout.")
@click.option("--run-memory", default=None, metavar="SIZE", help="Resident memory a worker may reach (2GB); over it, its run is killed and recorded as memory.")
@click.option("--progress-interval", type=click.FloatRange(min=0), default=5.0, show_default=True, help="Seconds between progress lines when stderr is not a terminal.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output.")
@click.option("--dry-run", is_flag=True, help="Check the sweep and print its grid; run nothing.")
def sweep_cmd(scenario: str, workers, dask, store, sets, batch_size, retry_failed, run_timeout, run_memory, progress_interval, quiet, dry_run) -> None:
    """Run the [sweep] of SCENARIO: every grid point once per replicate seed, into a DuckDB store.

    A rerun skips every run already stored, so an interrupted sweep resumes where it stopped.
    """
    from ..store import StoreError
    from ..sweep import check_axes, default_store, expand, parse_spec, sweep

    try:
        run_timeout = _limits.seconds(run_timeout, "--run-timeout")
    except ValueError as e:
        _fail(str(e))
    try:
        if dry_run:
            spec = parse_spec(Path(scenario), sets=list(sets))
            base_json = json.dumps(spec.base)
            check_axes(spec, base_json)
            tasks = expand(spec, base_json)
            invalid = len({t.point for t in tasks if t.error})
            click.echo(f"sweep {spec.name}: {spec.points} points x {len(spec.seeds)} replicates = {spec.runs} runs; store {store or default_store(spec.name)}")
            for a in spec.axes:
                click.echo(f"  {' + '.join(a.keys)} ({len(a)} values): {_axis_summary(a.values)}")
            click.echo(f"  seeds: {_axis_summary(tuple((x,) for x in spec.seeds))}")
            if invalid:
                click.echo(f"  {invalid} points are refused by the scenario checks and would be recorded as failed")
            return
        res = sweep(
            Path(scenario), store=store, workers=workers, dask=dask, batch_size=batch_size, sets=list(sets),
            retry_failed=retry_failed, progress=False if quiet else None, progress_interval=progress_interval,
            run_timeout=run_timeout, run_memory=run_memory, tables=False,
        )  # fmt: skip
    except (OSError, UnicodeDecodeError) as e:
        _load_error(scenario, e)
    except (_core.ScenarioError, SweepError) as e:
        _fail(f"{scenario}: {e}")
    except (StoreError, ExecutorError, _core.CoreError) as e:
        _fail(str(e))
    except KeyboardInterrupt:
        click.echo("interrupted: every finished run is stored; run the same command again to resume", err=True)
        sys.exit(130)
    st = res.stats
    ran = st.get("ok", 0) + st.get("failed", 0)
    from ..sweep import LIMIT_STATUSES

    stopped = ", ".join(f"{st[k]} {k}" for k in LIMIT_STATUSES if st.get(k))
    click.echo(
        f"sweep {st['name']}: {st['runs']} runs: {ran} run now ({st.get('ok', 0)} ok, {st.get('failed', 0)} failed"
        f"{f': {stopped}' if stopped else ''}), "
        f"{st['skipped']} already stored; {st['wall_s']:.1f} s; store {res.store or '(memory)'}"
    )
    if st.get("lost_batches"):
        n = st["lost_batches"]
        click.echo(f"{n} {'batch was' if n == 1 else 'batches were'} lost with a worker process and run again", err=True)
    failed = st["failed_runs"]
    if failed:
        click.echo(f"{len(failed)} runs of this sweep are recorded as failed (--retry-failed runs them again); the first:", err=True)
        for r in failed[:5]:
            click.echo(f"  {', '.join(r['overrides']) or '(base)'} seed {r['seed']}: {r['error']}", err=True)
        sys.exit(1)  # every run is stored, but not every run gave results (docs/sweeps.md, "Exit status")
