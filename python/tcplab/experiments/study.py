"""The frame every reproduction fills in.

A reproduction module (mathis97, rfc2415, allman98, ladha04, seddigh01) provides

- its published numbers, its choices where the paper is silent (`CHOICES`) and its grids per
  scale (`SCALES`: `tiny` for the tests, `quick` within minutes, `full` the paper's grids);
- `estimate_seconds(scale, workers)`, the rough wall time `tcplab reproduce` announces;
- `reproduce(out, scale, workers, progress, log, command)`, which opens the report with
  `begin()`, runs its sweeps with `run_sweep()` (stored: a rerun only reads), writes tables with
  `table()` and figures with `figures.plt()` / `figures.save()`, adds its checks (each of a kind,
  paper/derived/calibration/sanity, with a one-line `why`) and closes with `finish()`.

This module holds what they share: the scales, where the scenario files live, the sweep wrapper,
the report's opening and closing, and the table writer.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Callable, Optional, Sequence, Tuple, Union

from ..report import Report, study_report

SCALES = ("tiny", "quick", "full")
HERE = Path(__file__).resolve().parent


def check_scale(scale: str, scales: Sequence[str] = SCALES) -> None:
    if scale not in scales:
        raise ValueError(f"scale must be one of {tuple(scales)}, not {scale!r}")


def scenario_file(*parts: str, what: str = "the base scenario") -> Path:
    """A scenario shipped with the package, under tcplab/experiments/ (which the source tree also
    shows as experiments/): `scenario_file("topologies", "ladha04.toml")`. A directory is
    accepted too (a study whose scenarios are a folder)."""
    p = HERE.joinpath(*parts)
    if not p.exists():
        raise FileNotFoundError(f"{p}: {what} of the reproduction {'are' if what.endswith('s') else 'is'} missing from this installation")
    return p


def run_sweep(scenario, name: str, store_dir: Path, *, axes: Optional[dict] = None, zip: Optional[list] = None, replicates: int = 1,
              seed: int = 1, sets: Optional[Sequence[str]] = None, workers=None, progress=None, columns: Optional[dict] = None):
    """One stored sweep of a reproduction, named `name` and kept in `store_dir/name.duckdb`: over
    `axes` (a grid) and/or `zip` (axes that vary together), `replicates` seeds from `seed`, with
    `sets` applied to the base scenario (a path or a dict). Failed runs are tried again (a worker
    lost to the machine is not a result); finished ones are read from the store. `columns`: the
    result tables' columns to read back (`tcplab.sweep`'s), to keep a large table's read small."""
    from ..sweep import sweep

    spec: dict = {"name": name}
    if zip is not None:
        spec["zip"] = zip
    if axes is not None:
        spec["axes"] = axes
    spec.update({"replicates": replicates, "seed": seed})
    store_dir = Path(store_dir)
    store_dir.mkdir(parents=True, exist_ok=True)
    extra = {} if sets is None else {"sets": list(sets)}
    scenario = scenario if isinstance(scenario, dict) else str(scenario)
    return sweep(scenario, sweep=spec, store=store_dir / f"{name}.duckdb", workers=workers, progress=progress, retry_failed=True,
                 columns=columns, **extra)


def begin(study: str, title: str, out, scale: str, command: Optional[Sequence[str]], seeds: Callable[[], str], sources: str,
          choices: Sequence[str], silent: str = "the paper", scales: Sequence[str] = SCALES) -> Tuple[Report, float]:
    """The report's shared opening (see report.study_report) and the start time of the run."""
    report = study_report(study, title, out, scale, scales, command, seeds, sources, choices, silent=silent)
    why = ns2_refusals(study)
    if why:
        report.text(f"ns-2: not expressible ({why}), so this report has no ns-2 column (docs/ns2.md lists what the export refuses).")
    return report, time.perf_counter()


#: The base scenarios of each study without an ns-2 column, tried in `tcplab.ns2`'s export: the
#: report says why each is refused (the export's own key path and reason, never a text kept here).
NS2_SCENARIOS = {
    "allman98": (("allman98", "modem.toml"), ("allman98", "internet.toml")),
    "rfc2415": (("topologies", "rfc2415.toml"),),
}


def ns2_refusal(scenario, sets: Sequence[str] = ()) -> str:
    """Why `scenario` (with `sets`) cannot run in ns-2: the export's refusal, "key path: reason";
    "" when it exports."""
    from .._core import ScenarioError
    from ..ns2.script import export

    try:
        export(scenario, sets=sets, trace=False)
    except ScenarioError as e:  # the export's refusal, naming the key path
        # Prose, not a repr: a quoted value is written as code (`fack-rh`).
        return re.sub(r"'([\w.+-]+)'", r"`\1`", str(e).replace("ns-2 cannot express this: ", "").split(" (")[0])
    return ""


def ns2_refusals(study: str) -> str:
    """Why the study's base scenarios cannot run in ns-2, from the export's refusals: "file: key
    path: reason" for each refused one; "" when every one exports (or the study lists none)."""
    out = []
    for parts in NS2_SCENARIOS.get(study, ()):
        why = ns2_refusal(scenario_file(*parts))
        if why:
            out.append(f"{parts[-1]}: {why}")
    return "; ".join(out)


def ns2_value(n, why_not: str, f):
    """ns-2's value of a check: f(n) of the study's ns-2 runs `n` (a frame, or None when there
    are none: then `why_not`, or None when ns-2 was not asked for), or "ns-2: no run of this
    point" when f finds none."""
    import math

    if n is None:
        return why_not or None
    try:
        v = f(n)
    except (KeyError, IndexError, ZeroDivisionError):
        return "ns-2: no run of this point"
    return "ns-2: no run of this point" if v is None or (isinstance(v, float) and math.isnan(v)) else v


def ns2_cached_run(scenario, sets: Sequence[str], seed: int, folder, stem: str, cells: Callable[[object], dict], *,
                   version: Union[int, str] = 1, trace: bool = True, monitor: Sequence[str] = (), max_wall: float = 120.0,
                   record: Optional[dict] = None, log: Optional[Callable[[str], None]] = None, label: str = "") -> dict:
    """One ns-2 run of a reproduction, read from its cache when it has one: `cells(run)` of
    `scenario` (a path or a dict) with the override strings `sets` at `seed`.

    The cache file is `folder/<stem>_<digest>.json`, the digest the first 16 hex digits of
    sha256("<version>\n<exported Tcl>"): the scenario, its overrides and the seed as ns-2 runs
    them, and `version`, which a study bumps when `cells` changes meaning (old files are then
    ignored). With `trace` the run is `tcplab.ns2.runner.run` (the packets, `Ns2Run`); without it
    `runner.run_log` with the `monitor` links (`Ns2Log`), for runs too long to trace. The file holds
    `{"scenario", "sets", **record, "seed", "ns_wall_s", "cells"}`; `record` adds what the study wants
    kept beside them, and `scenario` is written as `record["scenario"]` when given, else the path's
    last two parts. `cells` must return a dict JSON can hold (floats written as floats). `log`, when
    given, is told `"  ns-2: <label>"` before a run that is not cached.

    Raises `runner.Ns2NotFound` (no `ns`: nothing cached to read) and `runner.Ns2Error` (ns-2
    failed or ran out of `max_wall` seconds); the caller decides what a missing run means."""
    import hashlib
    import json

    from ..ns2 import runner, script as ns2script

    sets = list(sets)
    kw = {} if trace else {"monitor": list(monitor)}
    tcl = ns2script.export(scenario, sets=sets, seed=seed, trace=trace, **kw).tcl
    digest = hashlib.sha256(f"{version}\n{tcl}".encode()).hexdigest()[:16]
    folder = Path(folder)
    cache = folder / f"{stem}_{digest}.json"
    if cache.is_file():
        return json.loads(cache.read_text())["cells"]
    if log is not None:
        log(f"  ns-2: {label or stem}")
    if trace:
        run = runner.run(scenario, sets, max_wall=max_wall, seed=seed)
    else:
        run = runner.run_log(scenario, sets, max_wall=max_wall, seed=seed, monitor=list(monitor))
    c = cells(run)
    rec = dict(record or {})
    name = rec.pop("scenario", None) or ("/".join(Path(scenario).parts[-2:]) if isinstance(scenario, (str, Path)) else "(dict)")
    folder.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"scenario": name, "sets": sets, **rec, "seed": seed, "ns_wall_s": round(run.wall_time_s, 3), "cells": c},
                                indent=1, default=float))
    return c


def ns2_map(calls: Sequence[Callable[[], object]], workers: Optional[int] = None, keep: tuple = (Exception,)) -> list:
    """Each zero-argument call (an ns-2 run of a study, `ns2_cached_run`) made on up to `workers`
    threads, the results in the calls' order. An exception of a `keep` class that a call raised
    (ns-2's own failures, `runner.Ns2Error`, for the caller to count) stands in its place; any
    other (a bug) is raised, the first in the calls' order, once every call is over.

    ns-2 runs as a child process, so a thread only waits for it and reads its log back: `workers`
    runs of `ns` go on at once (`workers` None: one a core). What the calls share (the cache
    folder, a `failed` list) must take concurrent writes of distinct files and `list.append`."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    def guarded(call):
        try:
            return call()
        except Exception as e:  # handed back to the caller, which decides what a failed run means
            return e

    n = max(1, min(len(calls), workers if workers else (os.cpu_count() or 1)))
    if n == 1:
        got = [guarded(c) for c in calls]
    else:
        with ThreadPoolExecutor(max_workers=n, thread_name_prefix="ns2") as pool:
            got = list(pool.map(guarded, calls))
    bug = next((g for g in got if isinstance(g, BaseException) and not isinstance(g, keep)), None)
    if bug is not None:
        raise bug
    return got


def table(report: Report, df, out: Path, stem: str, caption: str) -> Path:
    """Write `df` to out/tables/<stem>.csv and show it in the report under `caption`."""
    csv = Path(out) / "tables" / f"{stem}.csv"
    df.to_csv(csv, index=False)
    report.table(df, caption, csv)
    return csv


def scale_limits(study: str, scale: str) -> list:
    """The study's `SCALE_LIMITS[scale]`: (pattern over a check's name, how this scale's grid
    differs from the full one for it) pairs; [] for the full scale or a study without them."""
    import importlib

    try:
        mod = importlib.import_module(f"{__package__}.{study}")
    except ImportError:
        return []
    return list(getattr(mod, "SCALE_LIMITS", {}).get(scale, []))


def finish(report: Report, out: Path, t0: float) -> dict:
    """The closing lines: mark the checks the scale's grid weakens (the study's `SCALE_LIMITS`),
    write the report (report.md, report.html, checks.csv) under `out` and return its paths, the
    summary (with the elapsed time), `out` and the checks."""
    if getattr(report, "scale", "") and report.scale != "full":
        report.mark_scale_limits(scale_limits(getattr(report, "study", ""), report.scale))
    paths = report.write(out)
    summary = report.summary()
    summary["elapsed_s"] = time.perf_counter() - t0
    return {"paths": paths, "summary": summary, "out": out, "checks": report.checks}
