"""The click application of the `tcplab` command line: every command, its options and its help
(the package's docstring, cli/__init__.py, lists them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .. import _core
from .. import limits as _limits
from ..api import profiles as _profiles
from ..api import run as _run
from ..api import variants as _variants
from ..api import validate as _validate
from ..api import notes as _notes
from ..errors import ExecutorError
from ..errors import SweepError
from .common import _fail, _fmt, _load_error, _table
from .run import run_command


#: What the columns of `tcplab trace` count (docs/traces.md, "Columns").
TRACE_LEGEND = (
    "  data: the direction that carried the data (a2b: from a to b); unique B: distinct data bytes (each counted once); rexmt, rexmt B:\n"
    "  retransmitted data segments and bytes (tcptrace's rexmt data pkts); loss ev: retransmission bursts (loss\n"
    "  events); dupack: duplicate ACKs received by the data sender; IW: segments sent before the first ACK of data;\n"
    "  SYN rx: SYN retransmissions; RTT: mean round-trip time (Karn's rule); time: SYN to the ACK of the last data;\n"
    "  Mb/s: unique bytes over that time. --flows: every column, both directions; docs/traces.md defines each."
)

#: How to read `tcplab tbit` (docs/tbit.md).
TBIT_LEGEND = (
    "  verdict: what the probes inferred, when at least 80 % of the runs agree (Ladha et al.: 4 of 5); otherwise\n"
    "  'eliminated' with the runs' answers; 'without conclusion': a run the test could not read, with the reason.\n"
    "  configured, match (simulated stacks): what the stack is set to, and whether the inference found it. docs/tbit.md"
)


class _Main(click.Group):
    """The command group, with the real-stack testbed's commands (docs/testbed.md), ns-2's
    (docs/ns2.md) and the scripted tests (docs/script.md) loaded only when named or listed: `run`,
    `validate` and `trace` do not import them."""

    _LAZY = {"testbed": ("tcplab.testbed.cli", "testbed_group"), "ns2": ("tcplab.ns2.cli", "ns2_group"),
             "script": ("tcplab.script.cli", "script_cmd")}

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *self._LAZY})

    def get_command(self, ctx, name):
        if name in self._LAZY and name not in self.commands:
            import importlib

            module, attr = self._LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.__version__, prog_name="tcplab")
def main() -> None:
    """tcplab: simulate TCP start-up, congestion control and loss recovery."""


@main.command("run")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), default=None, help="Run seed (default: the scenario's, else 1).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a scenario key, e.g. --set tcp.variant=reno.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option("--pcap", type=click.Path(dir_okay=False), default=None, help="Also write a capture taken at the first flow's sending node.")
@click.option("--max-wall", default=None, metavar="DURATION", help="Stop the run after this much wall time (10s, 2min) and exit with an error.")
@click.option("--max-events", type=click.IntRange(min=1, max=2**64 - 1), default=None, help="Stop the run after this many events and exit with an error.")
def run_cmd(scenario: str, seed, sets, as_json: bool, pcap, max_wall, max_events) -> None:
    """Run SCENARIO (a TOML file) once and print its instruments."""
    run_command(scenario, seed, sets, as_json, pcap, max_wall, max_events)


@main.command("validate")
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE")
def validate_cmd(scenario: str, sets) -> None:
    """Check SCENARIO and print it with every default written out (JSON), each flow's TCP
    settings in full (the profile's and preset's knobs resolved): the output runs the same."""
    try:
        s = _validate(Path(scenario), sets=list(sets), tcp=True)
    except (OSError, UnicodeDecodeError) as e:
        _load_error(scenario, e)
    except _core.ScenarioError as e:
        _fail(f"{scenario}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    for n in _notes(Path(scenario), sets=list(sets)):
        click.echo(f"note: {n}", err=True)
    click.echo(json.dumps(s, indent=2))


def _examples() -> dict:
    """The shipped example scenarios (the package's `examples` directory, in the wheel):
    name -> (path, the first line of its opening comment)."""
    d = Path(__file__).resolve().parent.parent / "examples"
    out = {}
    for p in sorted(d.glob("*.toml")):
        first = next((ln.lstrip("# ").strip() for ln in p.read_text(encoding="utf-8").splitlines() if ln.startswith("#")), "")
        out[p.stem] = (p, first)
    return out


@main.command("example")
@click.argument("name", required=False)
@click.option("-o", "--out", type=click.Path(dir_okay=False), default=None, help="File to write (default NAME.toml here).")
@click.option("--force", is_flag=True, help="Overwrite the file if it exists.")
def example_cmd(name, out, force: bool) -> None:
    """Write the shipped example scenario NAME to start from (NAME.toml in this directory); without
    NAME, list them."""
    ex = _examples()
    if name is None:
        w = max(len(n) for n in ex)
        for n, (_, first) in ex.items():
            click.echo(f"{n.ljust(w)}  {first}")
        click.echo("\nwrite one with `tcplab example NAME`, then `tcplab run NAME.toml`")
        return
    name = name[:-5] if name.endswith(".toml") else name
    if name not in ex:
        import difflib

        near = difflib.get_close_matches(name, list(ex), n=1)
        _fail(f"no example {name!r}" + (f" (did you mean {near[0]!r}?)" if near else "") + f"; examples: {', '.join(ex)}")
    dest = Path(out) if out else Path(f"{name}.toml")
    if dest.exists() and not force:
        _fail(f"{dest} exists; --force overwrites it, -o names another file")
    try:
        dest.write_text(ex[name][0].read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as e:
        _fail(f"{dest}: {getattr(e, 'strerror', None) or e}")
    click.echo(f"{dest}: {ex[name][1]}")
    click.echo(f"run it with `tcplab run {dest}`; `tcplab validate {dest}` shows every default written out")


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


@main.command("variants")
@click.option("--profile", default="rfc", show_default=True, help="Profile the presets are applied over (for --json's full configs).")
@click.option("--json", "as_json", is_flag=True, help="Every preset's settings and full configuration as JSON.")
def variants_cmd(profile: str, as_json: bool) -> None:
    """List the presets (`preset = "..."` in [tcp]): the variants of the studies and their settings.

    A preset sets the mechanism knobs below over the profile; every other knob (timers, MSS,
    delayed ACKs, ...) stays the profile's, so each preset runs with or without delayed ACKs
    (`delayed_ack = true|false`).
    """
    try:
        v = _variants(profile)
    except ValueError as e:
        _fail(str(e))
    if as_json:
        click.echo(json.dumps(v, indent=2))
        return
    cols = ["variant", "sack", "sack_blocks", "initial_window", "limited_transmit", "abc", "early_retransmit"]
    heads = ["preset", "study", "variant", "sack", "blocks", "iw", "lt", "abc", "er", "summary"]
    rows = []
    for name, p in v.items():
        s = p["settings"]
        rows.append([name, p["study"]] + [_fmt_knob(s[c]) for c in cols] + [p["summary"]])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    click.echo("  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip())
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def _fmt_knob(v) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, dict):
        return ",".join(f"{k}={x}" for k, x in v.items())
    return str(v)
def _axis_summary(values: tuple) -> str:
    from ..sweep import toml_literal

    shown = [toml_literal(v[0] if len(v) == 1 else list(v)) for v in values]
    if len(shown) > 6:
        shown = shown[:3] + ["..."] + shown[-2:]
    return ", ".join(shown)


@main.command("sweep")
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


def _exportable(df):
    """Axis columns may mix types (`[1, "rfc3390"]`); Parquet needs one type per column."""
    df = df.copy()
    for c in df.columns:
        if df[c].dtype == object:
            kinds = {type(v) for v in df[c] if v is not None}
            if len(kinds) > 1:
                df[c] = [None if v is None else json.dumps(v) if not isinstance(v, str) else v for v in df[c]]
    return df


#: The tables `tcplab results` summarises and the columns it summarises by default.
RESULT_COLUMNS = {
    "connections": ["goodput_bps", "retransmits", "timeouts"],
    "links": ["drop_rate", "utilization", "avg_queue_delay_s"],
    "transfers": ["transfer_time_s", "retransmits", "timeouts"],
    "objects": ["transfer_time_s", "bytes_delivered", "retransmits"],
    "pages": ["delay_s", "bytes"],
    "udp": ["mean_bps", "delivered_pkts", "dropped_pkts"],
}


@main.command("results")
@click.argument("store", type=click.Path(dir_okay=False))
@click.option("--columns", default=None, help="Columns summarised per grid point (mean, spread over the seeds); default per table: "
              + "; ".join(f"{t}: {','.join(c)}" for t, c in RESULT_COLUMNS.items()) + ".")
@click.option("--table", type=click.Choice(list(RESULT_COLUMNS)), default=None,
              help="Table the columns are taken from (default: connections, or when the runs have none, the first of objects, udp, links with rows).")
@click.option("--sweep", "sweep_name", default=None, help="The sweep to read, by name, when the store holds more than one.")
@click.option("--to", "fmt", type=click.Choice(["parquet", "csv"]), default=None, help="Export every table in this format.")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Directory to export to (default: the store's path without .duckdb).")
def results_cmd(store: str, columns: str, table: str, sweep_name, fmt, out) -> None:
    """Summarise a sweep's results STORE: its runs, then per grid point the mean, standard
    deviation, minimum and maximum over the seeds of --columns; or export its tables (runs,
    connections, links, transfers, and objects, pages, udp when the runs have them) with --to."""
    from ..store import Store, StoreError
    from ..sweep import summarise

    try:
        with Store(store, read_only=True) as st:
            meta = st.meta
            res = st.load(sweep=sweep_name)
    except StoreError as e:
        _fail(str(e))
    if fmt is None:
        counts = res.runs["status"].value_counts().to_dict()
        click.echo(f"store {store}: tcplab {meta.get('tcplab_version')}, sweep {sweep_name or meta.get('sweep', '-')}")
        click.echo(f"runs: {len(res.runs)} ({', '.join(f'{n} {s}' for s, n in sorted(counts.items())) or 'none'})")
        for name in ("connections", "links", "transfers", "objects", "pages", "udp"):
            if name in ("connections", "links", "transfers") or len(getattr(res, name)):
                click.echo(f"{name}: {len(getattr(res, name))} rows")
        axes = res.axes
        if axes:
            click.echo(f"axes: {', '.join(axes)}")
        if table is None:
            table = next((t for t in ("connections", "objects", "udp", "links") if len(getattr(res, t))), "connections")
        elif not len(getattr(res, table)) and len(res.runs):
            have = [t for t in RESULT_COLUMNS if len(getattr(res, t))]
            _fail(f"{store}: the runs have no {table} rows; tables with rows: {', '.join(have) or 'none'} (--table NAME)")
        cols = [c.strip() for c in (columns or ",".join(RESULT_COLUMNS[table])).split(",") if c.strip()]
        try:
            summ = summarise(getattr(res, table), axes, cols, table)
        except ValueError as e:
            _fail(f"{store}: {e}")
        click.echo("")
        click.echo(_summary_table(summ, axes, cols, table))
        return
    outdir = Path(out) if out else Path(store).with_suffix("")
    outdir.mkdir(parents=True, exist_ok=True)
    for name in ("runs", "connections", "links", "transfers", "objects", "pages", "udp"):
        if name in ("objects", "pages", "udp") and getattr(res, name).empty:
            continue  # (written only for sweeps of applications and UDP sources)
        df = _exportable(getattr(res, name))
        p = outdir / f"{name}.{fmt}"
        if fmt == "parquet":
            df.to_parquet(p, index=False)
        else:
            df.to_csv(p, index=False)
        click.echo(f"{p}: {len(df)} rows")


def _summary_table(summ, axes: list, cols: list, table: str) -> str:
    """Per grid point: the axis values, then each column as `mean ± std [min, max]`, then n.
    When every point ran more than one seed and each gave the same values (a scenario with nothing
    random: no loss, random sizes or times), the values alone, and a title that says so."""
    stats = {f"{c}_{s}" for c in cols for s in ("mean", "std", "min", "max")}
    keys = [k for k in summ.columns if k not in stats and k != "n"]
    records = summ.to_dict("records")
    same = bool(records) and all(r["n"] > 1 for r in records) and all(
        r[f"{c}_min"] == r[f"{c}_max"] or (r[f"{c}_min"] != r[f"{c}_min"] and r[f"{c}_max"] != r[f"{c}_max"]) for r in records for c in cols)
    if same:
        rows = [{**{k: r[k] for k in keys}, **{c: _fmt(r[f"{c}_mean"]) for c in cols}, "n": r["n"]} for r in records]
        spec = [(k, k, 1) for k in keys] + [(c, c, 1) for c in cols] + [("n", "n", 1)]
        return _table(f"per point ({table}): every seed gave the same values (nothing in the scenario is random: "
                      "no loss rate, random sizes or start times), so the replicates add nothing", rows, spec)
    rows = []
    for r in summ.to_dict("records"):
        row = {k: r[k] for k in summ.columns if not any(k == f"{c}_{s}" for c in cols for s in ("mean", "std", "min", "max"))}
        for c in cols:
            mean, std, lo, hi = (r[f"{c}_{s}"] for s in ("mean", "std", "min", "max"))
            row[c] = f"{_fmt(mean)} ± {_fmt(std if std == std else 0.0)} [{_fmt(lo)}, {_fmt(hi)}]"
        rows.append(row)
    keys = [k for k in summ.columns if k not in {f"{c}_{s}" for c in cols for s in ("mean", "std", "min", "max")} and k != "n"]
    spec = [(k, k, 1) for k in keys] + [(c, c, 1) for c in cols] + [("n", "n", 1)]
    return _table(f"per point ({table}): mean ± standard deviation [min, max] over the seeds", rows, spec)


@main.command("reproduce")
@click.argument("study", type=click.Choice(["mathis97", "rfc2415", "allman98", "ladha04", "seddigh01"]))
@click.option("--quick", is_flag=True, help="Smaller grids: within about 5 minutes on 2 cores.")
@click.option("--scale", type=click.Choice(["tiny", "quick", "full"]), default=None, help="Grid size (overrides --quick).")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Output directory (default results/STUDY[-quick]).")
@click.option("--workers", type=int, default=None, help="Worker processes (default: every core; 0 = in this process).")
@click.option("--only", default=None, help="mathis97: comma-separated experiments to run (default: all).")
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
def reproduce_cmd(study: str, quick: bool, scale, out, workers, only, quiet: bool) -> None:
    """Reproduce a published study: run its sweeps (stored: a rerun only reads), then write the
    figures (PNG, SVG), the tables (Markdown, CSV) and a report (report.md, report.html) that sets
    the paper's numbers beside tcplab's with the tolerance and verdict of each."""
    import importlib
    import os

    mod = importlib.import_module(f"..experiments.{study}", __package__)
    scale = scale or ("quick" if quick else "full")
    out = out or f"results/{study}" + ("" if scale == "full" else f"-{scale}")
    n = workers if workers is not None else (os.cpu_count() or 1)
    est = mod.estimate_seconds(scale, max(1, n))
    if not quiet:
        when = f"{est:.0f} s" if est < 120 else f"{est / 60:.0f} min"
        click.echo(f"{study} ({scale}): about {when} on {max(1, n)} worker(s) (runs already in {out}/store are not run again)", err=True)
    kwargs = {}
    if only:
        if study != "mathis97":
            _fail(f"--only applies to mathis97, not to {study}")
        kwargs["only"] = [x.strip() for x in only.split(",")]
    try:
        res = mod.reproduce(out, scale=scale, workers=workers, progress=None if not quiet else False,
                            log=(lambda m: None) if quiet else (lambda m: click.echo(m, err=True)),
                            command=["tcplab", *sys.argv[1:]], **kwargs)
    except (ValueError, FileNotFoundError) as e:
        _fail(str(e))
    s = res["summary"]
    if not quiet:
        import pandas as pd

        checks = pd.read_csv(res["paths"]["checks"], keep_default_na=False)
        cols = ["kind", "quantity", "paper", "tcplab", "difference", "tolerance", "verdict"]
        rows = [[str(v) for v in r] for r in checks[cols].itertuples(index=False)]
        widths = [min(60, max(len(c), *(len(r[i]) for r in rows))) for i, c in enumerate(cols)]
        click.echo("  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip())
        for r in rows:
            click.echo("  ".join(v[:w].ljust(w) for v, w in zip(r, widths)).rstrip())
        click.echo("")
    click.echo(f"report: {res['paths']['markdown']} and {res['paths']['html']}")
    click.echo(f"{s['within']} of {s['checks']} paper comparisons within tolerance ({s['elapsed_s']:.0f} s)")
    rest = "; ".join(f"{k} {v['within']} of {v['checks']}" for k, v in s.get("by_kind", {}).items() if k != "paper" and v["shown"])
    if rest:
        click.echo(f"  not counted: {rest}")
    for m in s["missed"]:
        click.echo(f"  missed: {m}")


@main.command("trace")
@click.argument("capture", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the whole analysis as JSON.")
@click.option("--flows", is_flag=True, help="Every connection in full, both directions (as tcptrace -l).")
@click.option("--strict", is_flag=True, help="Exit with an error (status 2) when the capture is cut short or corrupted, instead of analysing what precedes the cut.")
def trace_cmd(capture: str, as_json: bool, flows: bool, strict: bool) -> None:
    """Analyse CAPTURE (pcap or pcapng) per TCP connection, as tcptrace does.

    A capture cut short (tcpdump killed) is analysed up to the cut, with a warning that names
    its byte offset; --strict makes it an error."""
    import warnings

    from .. import trace as _trace

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", _trace.TraceWarning)  # said below, once
            rep = _trace.report(capture)
    except OSError as e:
        _fail(f"{capture}: {getattr(e, 'strerror', None) or e}" if getattr(e, "filename", None) else str(e))
    except _core.TraceError as e:
        _fail(f"{capture}: {e}")
    except _core.CoreError as e:
        _fail(str(e))
    stopped = _trace.stopped_message(capture, rep)
    if stopped and strict:
        _fail(stopped)
    if as_json:
        click.echo(json.dumps(rep, indent=2))
    else:
        click.echo(_trace.render(rep, flows=flows))
        if not flows and rep["connections"]:
            click.echo(TRACE_LEGEND)
    if stopped:
        click.echo(f"warning: {stopped} (--strict makes this an error)", err=True)


@main.group("plot")
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


@main.command("tbit")
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

