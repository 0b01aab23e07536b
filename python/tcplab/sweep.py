"""Sweeps: a grid of scenario overrides times replicate seeds, run by an executor, kept in a store.

A sweep is a `[sweep]` table next to a scenario (or the same as a dict). Each axis is a scenario key
path, written as for `--set`, with a list of values or a generator; zipped axes vary together.
Every point of the grid runs once per replicate seed. A run is identified by its key, a hash of the
scenario as the core resolves it (every default written out), the seed and the simulator version,
so the store skips what is already done and a resumed sweep never runs anything twice.
See docs/sweeps.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union


from . import _core
from . import limits as _limits
from .api import ScenarioLike, _json_default, _seed, _sets, load_scenario

if TYPE_CHECKING:
    import pandas as pd

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

GENERATORS = ("logspace", "linspace", "range")
SWEEP_KEYS = ("name", "axes", "zip", "replicates", "seed", "seeds")
DEFAULT_SCENARIO_SEED = 1  # the core's default for a scenario without `seed`
# The most runs a sweep may have (grid points x replicates; docs/sweeps.md). The count is taken
# from the spec before any value is generated, so a sweep past it is refused at once.
MAX_RUNS = 1_000_000


from .results import SweepResult, _empty_frame, identifier, summarise  # noqa: E402,F401  (re-exported)
from .errors import SweepError  # noqa: E402  (defined apart so that `import tcplab` stays light)


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: one key, or several keys zipped together (same length)."""

    keys: tuple
    values: tuple  # one tuple of len(keys) values per position

    def __len__(self) -> int:
        return len(self.values)


@dataclass
class Spec:
    """A parsed sweep: the base scenario (without `[sweep]`), the axes and the replicate seeds."""

    name: str
    base: dict
    axes: list
    seeds: list
    sets: list = field(default_factory=list)  # overrides applied to every run, before the axes

    @property
    def keys(self) -> list:
        return [k for a in self.axes for k in a.keys]

    @property
    def points(self) -> int:
        return math.prod(len(a) for a in self.axes)

    @property
    def runs(self) -> int:
        return self.points * len(self.seeds)

    def to_dict(self) -> dict:
        """The sweep as a plain dict, every generator expanded (stored as provenance)."""
        return {
            "name": self.name,
            "axes": [{"keys": list(a.keys), "values": [list(v) for v in a.values]} for a in self.axes],
            "seeds": list(self.seeds),
            "sets": list(self.sets),
        }


@dataclass(frozen=True)
class Task:
    """One run of the sweep: a grid point with one replicate seed."""

    key: str
    point: int
    replicate: int
    seed: int
    params: tuple  # ((axis key, value), ...)
    sets: tuple  # every override string, base sets first
    scenario_hash: str
    error: Optional[str] = None  # set when the point's scenario is invalid: recorded, never run


# --- values and generators ---------------------------------------------------------------------


def _number(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SweepError(f"{where}: expected a number, got {v!r}")
    return v


def _count(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise SweepError(f"{where}: the number of values must be an integer >= 1, got {v!r}")
    if v > MAX_RUNS:
        raise SweepError(f"{where}: {v} values, more than a sweep may have runs ({MAX_RUNS})")
    return v


def _generate(spec: Mapping, where: str) -> list:
    """Expand `{logspace = [a, b, n]}`, `{linspace = [a, b, n]}` or `{range = [a, b(, step)]}`,
    with an optional `unit` appended to every value (`{linspace = [10, 50, 5], unit = "ms"}`)."""
    kinds = [k for k in GENERATORS if k in spec]
    unknown = sorted(set(spec) - set(GENERATORS) - {"unit"})
    if unknown:
        raise SweepError(f"{where}: unknown generator key {unknown[0]!r} (expected one of {', '.join(GENERATORS)}, and unit)")
    if len(kinds) != 1:
        raise SweepError(f"{where}: a generator has exactly one of {', '.join(GENERATORS)}")
    kind = kinds[0]
    args = spec[kind]
    if not isinstance(args, (list, tuple)):
        raise SweepError(f"{where}.{kind}: expected a list, got {args!r}")
    if kind in ("logspace", "linspace"):
        if len(args) != 3:
            raise SweepError(f"{where}.{kind}: expected [start, stop, count], got {list(args)!r}")
        a, b = _number(args[0], f"{where}.{kind}"), _number(args[1], f"{where}.{kind}")
        n = _count(args[2], f"{where}.{kind}")
        # numpy.linspace's formula (endpoint included) in Python floats, and 10 ** x with the C
        # library's pow, so the values (and so the run keys) do not depend on numpy's SIMD paths.
        step = (b - a) / (n - 1) if n > 1 else 0.0
        lin = [float(a + i * step) if i < n - 1 else float(b) for i in range(n)]
        try:
            values = [10.0**x for x in lin] if kind == "logspace" else lin
        except OverflowError:
            values = [math.inf]
        bad = next((v for v in values if not math.isfinite(v)), None)
        if bad is not None:
            raise SweepError(f"{where}.{kind}: {list(args)!r} generates a value that is not a finite number ({bad!r})")
    else:
        if len(args) not in (2, 3) or any(isinstance(x, bool) or not isinstance(x, int) for x in args):
            raise SweepError(f"{where}.range: expected integers [start, stop] or [start, stop, step], got {list(args)!r}")
        if len(args) == 3 and args[2] == 0:
            raise SweepError(f"{where}.range: step must not be 0")
        count = len(range(*args))
        if count > MAX_RUNS:
            raise SweepError(f"{where}.range: {list(args)!r} gives {count} values, more than a sweep may have runs ({MAX_RUNS})")
        values = list(range(*args))
        if not values:
            raise SweepError(f"{where}.range: {list(args)!r} gives no values (stop is excluded, as in Python)")
    unit = spec.get("unit")
    if unit is not None:
        if not isinstance(unit, str) or not unit:
            raise SweepError(f"{where}.unit: expected a unit string such as \"ms\", got {unit!r}")
        values = [f"{v!r}{unit}" for v in values]
    return values


def _axis_values(v: Any, where: str) -> list:
    if isinstance(v, Mapping):
        return _generate(v, where)
    if isinstance(v, (list, tuple)):
        if not v:
            raise SweepError(f"{where}: an axis needs at least one value")
        return [_plain(x, where) for x in v]
    raise SweepError(f"{where}: an axis is a list of values or a generator ({{logspace = [...]}}), got {v!r}")


def _plain(v: Any, where: str) -> Any:
    """Axis values become JSON (the store) and TOML (the override): numpy scalars are unwrapped."""
    if hasattr(v, "item") and callable(v.item) and not isinstance(v, (list, tuple, dict, str)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        raise SweepError(f"{where}: {v!r} is not a finite number")
    try:
        toml_literal(v)  # a value the override cannot write (None, an object) is refused here, by axis
    except SweepError as e:
        raise SweepError(f"{where}: {e}") from None
    return v


def _flatten_axes(table: Any, where: str, prefix: str = "") -> dict:
    """`{"topology.loss": [...]}`, `{topology = {loss = [...]}}` (TOML's unquoted dotted keys) and
    `[sweep.axes.topology]` tables all name the axis `topology.loss`. A table that is not a
    generator is a level of the key path."""
    if not isinstance(table, Mapping):
        raise SweepError(f"{where}: expected a table of key paths, got {table!r}")
    out: dict = {}
    for k, v in table.items():
        if not isinstance(k, str) or not k:
            raise SweepError(f"{where}: axis keys are strings, got {k!r}")
        path = f"{prefix}{k}"
        if isinstance(v, Mapping) and not any(g in v for g in GENERATORS):
            out.update(_flatten_axes(v, where, prefix=path + "."))
        else:
            out[path] = v
    return out


def toml_literal(v: Any) -> str:
    """A Python value as a TOML inline value, the form `--set key=value` reads."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)  # shortest round-trip form; TOML reads 1e-05 and 3.0
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # JSON string escapes are TOML basic-string escapes
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_literal(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_literal(x)}" for k, x in v.items()) + " }"
    raise SweepError(f"cannot write {v!r} ({type(v).__name__}) as a scenario value")


# --- parsing a spec ----------------------------------------------------------------------------


def _load_dict(scenario: ScenarioLike) -> dict:
    """A scenario (path, TOML string, dict) as a dict, with its `[sweep]` table if any."""
    if isinstance(scenario, Mapping):
        return json.loads(json.dumps(scenario, default=_json_default))
    text, fmt = load_scenario(scenario)
    try:
        return json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        raise _core.ScenarioError(f"invalid {fmt.upper()}: {e}") from None


def _unnamed(scenario: ScenarioLike, base: dict, table: Mapping) -> str:
    """The name of a sweep that has none (no `sweep.name`, no scenario `name`): its file's stem,
    else `sweep-` and a digest of the scenario and the sweep table, so that two unnamed sweeps get
    stores of their own and rerunning one resumes it."""
    if isinstance(scenario, (str, os.PathLike)) and not (isinstance(scenario, str) and "\n" in scenario):
        stem = Path(os.fspath(scenario)).stem
        if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", stem or ""):
            return stem
    digest = hashlib.sha256(json.dumps([base, table], sort_keys=True, default=_json_default).encode()).hexdigest()[:10]
    return f"sweep-{digest}"


def parse_spec(scenario: ScenarioLike, sweep: Optional[Mapping] = None, sets: Union[str, Sequence[str]] = ()) -> Spec:
    """Read the scenario and its sweep (`sweep=` replaces the scenario's `[sweep]` table) and
    expand every axis. Key paths are not checked here; `check_axes` does that."""
    d = _load_dict(scenario)
    table = d.pop("sweep", None)
    if sweep is not None:
        table = sweep
    if table is None:
        raise SweepError("no sweep: add a [sweep] table to the scenario or pass sweep={...}")
    if not isinstance(table, Mapping):
        raise SweepError(f"sweep: expected a table, got {table!r}")
    unknown = [k for k in table if k not in SWEEP_KEYS]
    if unknown:
        raise SweepError(f"sweep.{unknown[0]}: unknown key (expected one of {', '.join(SWEEP_KEYS)}; axes go in [sweep.axes])")

    name = table.get("name", d.get("name") or _unnamed(scenario, d, table))
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", name):
        raise SweepError(f"sweep.name: {name!r} must be a non-empty file-name-safe word (letters, digits, _ . + -)")

    axes: list = []
    seen: dict = {}

    def add(keys: list, columns: list, where: str) -> None:
        for k in keys:
            if k in seen:
                raise SweepError(f"{where}: axis {k!r} is already given in {seen[k]}")
            if k == "seed":
                raise SweepError(f"{where}: axis 'seed': the run seed is not a scenario value; use sweep.replicates or sweep.seeds")
            seen[k] = where
        axes.append(Axis(tuple(keys), tuple(zip(*columns))))

    for k, v in _flatten_axes(table.get("axes", {}), "sweep.axes").items():
        add([k], [_axis_values(v, f"sweep.axes.{k}")], "sweep.axes")
    zips = table.get("zip", [])
    if isinstance(zips, Mapping):
        zips = [zips]
    if not isinstance(zips, (list, tuple)):
        raise SweepError(f"sweep.zip: expected a list of tables ([[sweep.zip]]), got {zips!r}")
    for i, group in enumerate(zips):
        where = f"sweep.zip[{i}]"
        flat = _flatten_axes(group, where)
        if not flat:
            raise SweepError(f"{where}: a zipped group needs at least one axis")
        cols = {k: _axis_values(v, f"{where}.{k}") for k, v in flat.items()}
        lengths = {k: len(c) for k, c in cols.items()}
        if len(set(lengths.values())) > 1:
            desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
            raise SweepError(f"{where}: zipped axes must have the same number of values ({desc})")
        add(list(cols), list(cols.values()), where)

    points = math.prod(len(a) for a in axes)
    if points > MAX_RUNS:
        sizes = " x ".join(str(len(a)) for a in axes)
        raise SweepError(f"sweep.axes: the grid has {points} points ({sizes}), more than the limit of {MAX_RUNS} runs (docs/sweeps.md)")
    seeds = _replicate_seeds(table, d, points)
    sets = _sets(sets)
    _refuse_captures(d, axes, sets)
    return Spec(name=name, base=d, axes=axes, seeds=seeds, sets=sets)


def _refuse_captures(base: Mapping, axes: list, sets: list) -> None:
    """Every run of a sweep would write a scenario's capture file, one after another or at once:
    a sweep has no captures (docs/sweeps.md). Refused by key path."""
    caps = base.get("capture")
    if caps:
        raise SweepError("capture[0].path: a sweep does not write captures (every run would write the same file); "
                         "take a capture of one point with `tcplab run --set ... --pcap PATH`")
    for a in axes:
        for k in a.keys:
            if k == "capture" or k.startswith("capture."):
                raise SweepError(f"sweep.axes.{k}: a sweep does not write captures (every run would write a file of its own name or the same one)")
    for o in sets:
        if o.strip().startswith("capture"):
            raise SweepError(f"{o.partition('=')[0].strip()}: a sweep does not write captures (every run would write the same file)")


def _replicate_seeds(table: Mapping, scenario: Mapping, points: int = 1) -> list:
    """Replicate r (from 0) runs with seed `seed + r`, the same at every point of the grid (common
    random numbers: paired points see the same random draws). `seed` defaults to the scenario's
    `seed`, else 1. `seeds = [...]` lists them instead."""
    if "seeds" in table:
        if "replicates" in table or "seed" in table:
            raise SweepError("sweep.seeds: give either seeds = [...] or replicates (and seed), not both")
        seeds = table["seeds"]
        if not isinstance(seeds, (list, tuple)) or not seeds:
            raise SweepError(f"sweep.seeds: expected a non-empty list of seeds, got {seeds!r}")
        out = []
        for s in seeds:
            try:
                if s is None:
                    raise ValueError("seed must be a non-negative integer, got None")
                out.append(_seed(s))
            except ValueError as e:
                raise SweepError(f"sweep.seeds: {e}") from None
        if len(set(out)) != len(out):
            raise SweepError(f"sweep.seeds: seeds repeat ({out!r}); each replicate needs its own")
        if len(out) * points > MAX_RUNS:
            raise SweepError(f"sweep.seeds: {len(out)} seeds x {points} points = {len(out) * points} runs, more than the limit of {MAX_RUNS} runs (docs/sweeps.md)")
        return out
    n = table.get("replicates", 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SweepError(f"sweep.replicates: expected an integer >= 1, got {n!r}")
    if n * points > MAX_RUNS:
        raise SweepError(f"sweep.replicates: {n} replicates x {points} points = {n * points} runs, more than the limit of {MAX_RUNS} runs (docs/sweeps.md)")
    base = table.get("seed", scenario.get("seed", DEFAULT_SCENARIO_SEED))
    try:
        if base is None:
            raise ValueError("seed must be a non-negative integer, got None")
        base = _seed(base)
    except ValueError as e:
        raise SweepError(f"sweep.seed: {e}") from None
    if base + n - 1 >= 2**64:
        raise SweepError(f"sweep.seed: seed {base} + {n} replicates passes 2**64 - 1")
    return [base + r for r in range(n)]


# --- checking and expanding --------------------------------------------------------------------


def _dotted(path: str) -> str:
    """The core reports `flows[0].bytes`; overrides are written `flows.0.bytes`."""
    return re.sub(r"\[(\d+)\]", r".\1", path)


def _is_key_error(axis: str, e: Exception) -> bool:
    """Does `e` say that the axis' key path does not exist (rather than that a value is bad)?"""
    path = _dotted(getattr(e, "path", "") or "")
    reason = getattr(e, "reason", "") or str(e)
    if path and path != axis and axis.startswith(path + "."):
        return True  # a parent is not a table, an index is out of range, a table is unknown
    return path == axis and (reason.startswith("unknown field") or "out of range" in reason or "expected an array index" in reason)


def check_axes(spec: Spec, base_json: str) -> None:
    """Refuse, before any run, a base scenario that the core refuses with the sweep's sets, and an
    axis whose key path does not exist, naming the axis. Each key is tried alone with its first
    value: the override changes one key, so an unknown key is the error the core reports. A bad
    value is not refused here: with other axes it may be valid, and otherwise its runs are
    recorded as failed."""
    try:
        _core.validate(base_json, "json", spec.sets)
    except _core.ScenarioError as e:
        raise SweepError(f"the base scenario (before the axes) is invalid: {e}") from None
    for axis in spec.axes:
        for k, v in zip(axis.keys, axis.values[0]):
            try:
                _core.validate(base_json, "json", spec.sets + [f"{k}={toml_literal(v)}"])
            except _core.ScenarioError as e:
                if _is_key_error(k, e):
                    raise SweepError(f"sweep axis {k!r}: no such scenario key ({e})") from None


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]


def scenario_hash(canonical: Mapping) -> str:
    """Hash of a scenario as the core resolved it. The scenario's own `seed` is left out: the run
    seed is part of the run key instead."""
    c = {k: v for k, v in canonical.items() if k != "seed"}
    return _digest(c)


def run_key(scenario_hash_: str, seed: int, version: str = _core.__version__) -> str:
    """Key of a run: (resolved scenario, seed, simulator version)."""
    return _digest(scenario_hash_, seed, version)


def expand(spec: Spec, base_json: Optional[str] = None) -> list:
    """Every run of the sweep in grid order (first axis slowest, replicates innermost), with its key.
    A point the core refuses becomes tasks carrying the error, recorded as failed without running."""
    if base_json is None:
        base_json = json.dumps(spec.base)
    tasks = []
    owner: dict = {}
    grid = itertools.product(*[a.values for a in spec.axes])
    for point, combo in enumerate(grid):
        params = tuple((k, v) for a, row in zip(spec.axes, combo) for k, v in zip(a.keys, row))
        sets = tuple(spec.sets) + tuple(f"{k}={toml_literal(v)}" for k, v in params)
        error = None
        try:
            canonical = json.loads(_core.validate(base_json, "json", list(sets)))
            h = scenario_hash(canonical)
        except _core.ScenarioError as e:
            error = f"ScenarioError: {e}"
            h = _digest({"invalid": spec.base, "sets": list(sets)})
        if h in owner:
            other = owner[h]
            raise SweepError(
                f"sweep points {other} and {point} give the same scenario "
                f"({_describe(tasks[other * len(spec.seeds)].params)} and {_describe(params)}); remove one of the values"
            )
        owner[h] = point
        for r, seed in enumerate(spec.seeds):
            tasks.append(Task(run_key(h, seed), point, r, seed, params, sets, h, error))
    return tasks


def _describe(params: tuple) -> str:
    return ", ".join(f"{k}={toml_literal(v)}" for k, v in params) or "the base scenario"


# --- running -----------------------------------------------------------------------------------

# Finished runs are committed together at most this often: after a SIGKILL, at most the runs of
# this last interval are run again; none is stored in part.
COMMIT_EVERY_S = 0.5
# ... and, where a commit is slow (a busy machine, big results), spaced so that committing takes
# at most this share of the coordinator's time (its CPU is the workers' on a machine they fill),
# but never more than COMMIT_AT_MOST_EVERY_S apart.
COMMIT_SHARE = 0.05
COMMIT_AT_MOST_EVERY_S = 5.0
# TCPLAB_SWEEP_COMMIT_S (seconds, > 0) pins the interval instead: what a SIGKILL can lose at most.
COMMIT_ENV = "TCPLAB_SWEEP_COMMIT_S"


def _pinned_commit_interval() -> Optional[float]:
    text = os.environ.get(COMMIT_ENV)
    if text is None or not text.strip():
        return None
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise SweepError(f"{COMMIT_ENV}={text!r}: expected a number of seconds above 0")
    return v
# A run whose worker died this many times is recorded as failed instead of being tried again.
MAX_ATTEMPTS = 2
# Upper bound of runs per batch: a batch's rows travel as one message and are one transaction.
MAX_BATCH = 2000
# Before anything has finished, batches are this small, to measure how long a run takes.
FIRST_BATCH = 4
# Towards the end of a sweep each worker should still have this many batches to take, so that
# the last ones finish together instead of one worker running a long batch alone.
BATCHES_PER_WORKER = 4
# Statuses of runs stopped by a limit (`run_timeout`, `run_memory`); like `failed`, they count as
# finished until `retry_failed`.
LIMIT_STATUSES = ("timeout", "memory")


class Batcher:
    """How many runs to put in the next batch: enough that a batch lasts about `target_s` of
    worker time (so task overhead is small against simulation), no more than a fair share of
    what remains, or a fixed `size`."""

    def __init__(self, parallelism: int, target_s: float, size: Optional[int] = None) -> None:
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise SweepError(f"batch_size must be an integer >= 1, got {size!r}")
        self.parallelism, self.target_s, self.fixed = parallelism, target_s, size
        self.runs = 0
        self.seconds = 0.0

    def observe(self, runs: int, seconds: float) -> None:
        self.runs += runs
        self.seconds += seconds

    def size(self, remaining: int) -> int:
        if self.fixed:
            return self.fixed
        share = max(1, remaining // (BATCHES_PER_WORKER * self.parallelism))
        if self.runs == 0:
            want = FIRST_BATCH
        else:
            per_run = max(self.seconds / self.runs, 1e-6)
            want = int(self.target_s / per_run)
        return max(1, min(want, share, MAX_BATCH))


class _Pending:
    """Finished runs not yet stored. They are committed together, at most every `COMMIT_EVERY_S`:
    a DuckDB commit costs milliseconds (a WAL write and sync), far more than a tiny run."""

    def __init__(self) -> None:
        self.tasks: list = []
        self.outcomes: list = []
        self.tables: dict = {}
        self.ok = self.failed = 0
        self.stopped: dict = {}  # status -> count, of the failed runs stopped by a limit
        self.since = time.monotonic()

    def add(self, tasks: list, outcomes: list, tables: Optional[dict] = None) -> None:
        self.tasks.extend(tasks)
        self.outcomes.extend(outcomes)
        for name, tbl in (tables or {}).items():
            if tbl is not None:
                self.tables.setdefault(name, []).append(tbl)
        ok = sum(1 for o in outcomes if o["status"] == "ok")
        self.ok += ok
        self.failed += len(outcomes) - ok
        for o in outcomes:
            if o["status"] in LIMIT_STATUSES:
                self.stopped[o["status"]] = self.stopped.get(o["status"], 0) + 1

    def flush(self, store: Any, bar: Any, sweep_name: Optional[str]) -> None:
        if self.tasks:
            store.commit(self.tasks, self.outcomes, self.tables, sweep=sweep_name)
            bar.advance(ok=self.ok, failed=self.failed)
        self.__init__()


def run_tasks(todo: list, base_json: str, ex: Any, store: Any, bar: Any, batch_size: Optional[int] = None, sweep_name: Optional[str] = None,
              series: Optional[tuple] = None, warm_up: bool = False, open_store: Any = None) -> dict:
    """The coordinator: hand batches to `ex`, store finished runs in transactions, and run again,
    one at a time, the runs of a batch whose worker died (a run that kills its worker
    `MAX_ATTEMPTS` times is recorded as failed) or was killed by the pool for its time or memory
    (a run alone in its batch then is recorded as `timeout` / `memory`). Progress counts stored
    runs only. `warm_up`: import pandas while the workers start (for a caller that reads the
    tables back into DataFrames afterwards). With `store` None, `open_store()` gives it once the
    first batches are in the workers' hands (a new store: they run while DuckDB creates it)."""
    stats = {"ok": 0, "failed": 0, **{k: 0 for k in LIMIT_STATUSES}, "lost_batches": 0, "batches": 0, "commits": 0, "sim_wall_s": 0.0}
    done = _Pending()

    pinned = _pinned_commit_interval()
    commit_every = pinned or COMMIT_EVERY_S

    def flush() -> None:
        nonlocal commit_every
        stats["ok"] += done.ok
        stats["failed"] += done.failed
        for k, n in done.stopped.items():
            stats[k] += n
        stats["commits"] += 1
        first = stats["commits"] == 1
        t0 = time.perf_counter()
        done.flush(store, bar, sweep_name)
        took = time.perf_counter() - t0
        # The first commit of a sweep creates the result tables: it says little of what the next
        # ones cost, and spacing them after it would hold back progress and storage for seconds.
        if pinned is None and not first:
            commit_every = min(max(COMMIT_EVERY_S, took / COMMIT_SHARE), COMMIT_AT_MOST_EVERY_S)

    for t in todo:
        if t.error:
            done.add([t], [{"key": t.key, "status": "failed", "error": t.error}])
    pending = deque(t for t in todo if not t.error)
    singles: deque = deque()  # runs of lost batches, sent alone so a fatal run is found
    attempts: dict = {}
    inflight: dict = {}
    batcher = Batcher(ex.parallelism, ex.target_batch_s, batch_size)
    next_id = 0

    def fill() -> None:
        nonlocal next_id
        while (pending or singles) and ex.capacity() > 0:
            if singles:
                batch = [singles.popleft()]
            else:
                n = batcher.size(len(pending))
                batch = [pending.popleft() for _ in range(min(n, len(pending)))]
            next_id += 1
            inflight[next_id] = batch
            ex.submit(next_id, base_json, [(t.key, t.seed, list(t.sets), *([series] if series else [])) for t in batch])

    warmed = not warm_up
    with _deferred_interrupt(enabled=ex.kind != "serial") as signals:
        try:
            while pending or singles or inflight:
                signals.check()
                fill()
                if store is None:
                    store = open_store()
                if not warmed:
                    # While the workers start, import pandas, which reading the tables back needs.
                    # Storing the rows needs neither it nor pyarrow: `tcplab sweep` (which reads
                    # nothing back) never imports them, nor takes their import time from the workers.
                    warmed = True
                    _warm_up()
                for kind, batch_id, payload in ex.wait(timeout=0.25):
                    batch = inflight.pop(batch_id)
                    if kind == "done":
                        done.add(batch, payload["runs"], payload["tables"])
                        stats["batches"] += 1
                        stats["sim_wall_s"] += sum(o.get("wall_time_s") or 0.0 for o in payload["runs"])
                        batcher.observe(len(batch), payload["batch_wall_s"])
                        continue
                    if kind == "returned":  # queued behind a batch whose worker died; never started
                        if len(batch) == 1:
                            singles.appendleft(batch[0])  # perhaps a run being isolated: it stays alone
                        else:
                            pending.extendleft(reversed(batch))
                        continue
                    stats["lost_batches"] += 1
                    if len(batch) > 1:
                        singles.extend(batch)
                        continue
                    t = batch[0]
                    if kind in LIMIT_STATUSES:  # the pool killed the worker of this run: no retry
                        done.add([t], [{"key": t.key, "status": kind, "error": payload, "completed": False}])
                        continue
                    attempts[t.key] = attempts.get(t.key, 0) + 1
                    if attempts[t.key] < MAX_ATTEMPTS:
                        singles.append(t)
                        continue
                    msg = f"{payload}, {attempts[t.key]} times while running this run"
                    done.add([t], [{"key": t.key, "status": "failed", "error": msg}])
                fill()  # the workers get their next batches before the coordinator commits
                if done.tasks and time.monotonic() - done.since >= commit_every:
                    flush()
                bar.refresh()
        finally:
            # Whatever finished is stored, also when the sweep is interrupted (Ctrl-C, an error).
            if done.tasks:
                if store is None:
                    store = open_store()
                flush()
    return stats


class _deferred_interrupt:
    """While the coordinator runs (in the main thread), a first Ctrl-C (SIGINT) or SIGTERM only
    asks it to stop: it stops at its next turn (within a quarter of a second), after storing what
    has finished and stopping its workers, instead of wherever the signal lands (a DuckDB commit
    answers a KeyboardInterrupt with "Query interrupted" and a half-done transaction; SIGTERM's
    default action ends the process with its workers still exiting). Then SIGINT raises
    KeyboardInterrupt and SIGTERM SystemExit(128 + 15), the status its default action gives. A
    second signal acts at once. Only signals left at their defaults are taken over; not for the
    serial executor (`enabled=False`), whose coordinator is inside a run most of the time: there
    Ctrl-C stops the run at once."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.hit: Optional[int] = None  # the first signal that came
        self.old: dict = {}

    @staticmethod
    def _raise(signum: int) -> None:
        import signal

        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    def _handler(self, signum: int, frame: Any) -> None:
        if self.hit is not None:
            self._raise(signum)
        self.hit = signum

    def check(self) -> None:
        """Raise for the signal that came, if one did."""
        if self.hit is not None:
            self._raise(self.hit)

    def __enter__(self):
        import signal
        import threading

        if self.enabled and threading.current_thread() is threading.main_thread():
            for sig, default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
                if signal.getsignal(sig) is default:
                    self.old[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        import signal

        for sig, old in self.old.items():
            signal.signal(sig, old)
        self.old.clear()


def _warm_up() -> None:
    """Import pandas if no one has yet."""
    if "pandas" not in sys.modules:
        import pandas  # noqa: F401


def _workers_import_the_script() -> bool:
    """Whether the local pool's workers import the main script again: outside POSIX only
    (multiprocessing's spawn there re-runs the main module; POSIX workers import tcplab alone)."""
    return os.name != "posix"


def unguarded_script() -> Optional[str]:
    """The path of the main script if tcplab.sweep() is being called from its top-level code
    outside an `if __name__ == "__main__":` block (read from the script's source), or from a
    worker process that is importing it again; None otherwise (a notebook, `python -c`, a guarded
    call, a call from any other module)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not path:
        return None
    if main.__name__ == "__mp_main__":
        return path  # a spawned worker re-running the script's top level
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals is not main.__dict__:
        frame = frame.f_back
    if frame is None or frame.f_code.co_name != "<module>":
        return None
    try:
        import ast

        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    line = frame.f_lineno
    for stmt in tree.body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            return None if _is_main_guard(stmt) else path
    return None


def _is_main_guard(stmt: Any) -> bool:
    import ast

    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    parts = [stmt.test.left, *stmt.test.comparators]
    names = [p.id for p in parts if isinstance(p, ast.Name)]
    consts = [p.value for p in parts if isinstance(p, ast.Constant)]
    return names == ["__name__"] and consts == ["__main__"]


def default_store(name: str) -> Path:
    return Path("results") / f"{name}.duckdb"


def sweep(
    scenario: ScenarioLike,
    sweep: Optional[Mapping] = None,
    *,
    store: Union[str, os.PathLike, None] = None,
    workers: Optional[int] = None,
    dask: Any = None,
    batch_size: Optional[int] = None,
    sets: Union[str, Sequence[str]] = (),
    retry_failed: bool = False,
    progress: Optional[bool] = None,
    progress_interval: float = 5.0,
    run_timeout: Union[float, str, None] = None,
    run_memory: Union[int, str, None] = None,
    series: Any = None,
    series_dir: Union[str, os.PathLike, None] = None,
    tables: bool = True,
    columns: Optional[Mapping] = None,
) -> SweepResult:
    """Run every point of a sweep once per replicate seed and return the tidy tables.

    `scenario` is a path, TOML string or dict with a `[sweep]` table, or `sweep=` gives the table.
    `store` is the DuckDB file (default `results/<name>.duckdb`; `":memory:"` keeps nothing);
    finished runs already in it are not run again (failed ones neither, unless `retry_failed`).
    `workers`: processes of the local pool (default: every core; 0 runs in this process).
    `dask`: `"local"` for a LocalCluster of `workers` processes, a scheduler address
    (`"tcp://host:8786"`) or a `distributed.Client`. `progress`: a bar on a terminal, plain lines
    every `progress_interval` seconds otherwise; None decides by whether stderr is a terminal
    (False: silent). `run_timeout` (seconds, or `"60s"`, `"2min"`): each run's wall-time budget; a
    run over it is stopped and recorded with status `timeout`, and the sweep goes on.
    `run_memory` (bytes, or `"2GB"`; local pool only): a worker whose resident memory passes it is
    killed and its run recorded with status `memory`. `retry_failed` runs all of these again.
    Raises `SweepError` for a bad sweep (before anything runs), `StoreError` for a store that
    cannot be used, `ExecutorError` for limits the executor cannot enforce.

    Time series (docs/series.md): the scenario's `[[series]]` and those of `series` (the forms of
    `tcplab.run`'s) are recorded in every run and written to Parquet, one file per run and table,
    under `series_dir` (default: the store's path with the suffix `.series`):
    `<series_dir>/<table>/<key>.parquet`. `SweepResult.series(table)` reads them back with the
    axis columns. They do not change a run's key: a sweep run again with series records them
    only for the runs it runs.

    `tables=False` does not read the tables back into DataFrames: the result then has
    `stats` and `store` only (its tables are None), and `stats["failed_runs"]` lists the runs of
    the sweep recorded as failed (`overrides`, `seed`, `status`, `error`), as `tcplab sweep` prints
    them. `columns` (result table -> list of column names) reads only those columns of a table
    back (each row still led by the axis values, `replicate`, `seed` and `key`), to keep a large
    table's read small (`Store.load`); a table not named is read whole.
    """
    from .executors import make_executor
    from .progress import Progress
    from .store import Store

    if dask is None and workers != 0 and _workers_import_the_script():
        script = unguarded_script()
        if script:
            raise SweepError(
                f"tcplab.sweep() is called from the top level of {script} without "
                f"`if __name__ == \"__main__\":`; the worker processes import {script} again (Python's "
                f"spawn start method) and would each start the sweep again. Put the call under "
                f"`if __name__ == \"__main__\":`, or pass workers=0 to run the sweep in this process."
            )
    try:
        run_timeout = _limits.seconds(run_timeout, "run_timeout")
        run_memory = _limits.size_bytes(run_memory, "run_memory")
    except ValueError as e:
        raise SweepError(str(e)) from None
    spec = parse_spec(scenario, sweep, sets)
    from . import series as _series

    given = _series.entries(series)
    entries = _series.merge(spec.base.pop("series", None) or [], given or []) if series is not False else []
    spec.base.pop("series", None)
    base_json = json.dumps(spec.base)
    check_axes(spec, base_json)
    tasks = expand(spec, base_json)
    path = default_store(spec.name) if store is None else store
    series_task = None
    if entries:
        if series_dir is None and str(path) == ":memory:":
            raise SweepError("the sweep records time series but its store is \":memory:\": give series_dir, the directory for their Parquet files")
        series_dir = os.fspath(series_dir) if series_dir is not None else os.fspath(Path(path).with_suffix(".series"))
        try:
            _core.validate(json.dumps({**spec.base, "series": entries}), "json", spec.sets)
        except _core.ScenarioError as e:
            raise SweepError(f"series: {e}") from None
        series_task = (os.path.abspath(series_dir), entries)
    with contextlib.ExitStack() as stack:
        executor = lambda: make_executor(workers=workers, dask=dask, run_timeout=run_timeout, run_memory=run_memory)  # noqa: E731
        ex = None
        opened: list = []

        def open_store() -> Store:
            if not opened:
                opened.append(stack.enter_context(Store(path)))
                opened[0].record_spec(spec)
            return opened[0]

        if dask is None and workers != 0 and (str(path) == ":memory:" or not Path(path).exists()):
            # A new store: every run is to do, so the local pool's workers start up, and get
            # their first batches, before DuckDB is even imported to create the store.
            ex = stack.enter_context(executor())
            todo = tasks
        else:
            done = open_store().finished_keys(include_failed=not retry_failed)
            todo = [t for t in tasks if t.key not in done]
        stats = {"name": spec.name, "runs": len(tasks), "skipped": len(tasks) - len(todo)}
        t0 = time.perf_counter()
        if todo:
            with (ex or executor()) as ex:
                stats["executor"], stats["parallelism"] = ex.kind, ex.parallelism
                bar = Progress(total=len(tasks), already=stats["skipped"], name=spec.name, enabled=progress, interval=progress_interval)
                try:
                    stats.update(run_tasks(todo, base_json, ex, opened[0] if opened else None, bar, batch_size=batch_size, sweep_name=spec.name,
                                           series=series_task, warm_up=tables, open_store=open_store))
                finally:
                    bar.close()
        elif ex is not None:
            ex.close()
        st = open_store()
        stats["wall_s"] = time.perf_counter() - t0
        if tables:
            res = st.load(keys=tasks, spec=spec, columns=columns)
        else:
            stats["failed_runs"] = st.failed_runs(tasks)
            res = SweepResult(runs=None, connections=None, links=None, transfers=None, objects=None, pages=None, udp=None)
    res.store = None if str(path) == ":memory:" else os.fspath(path)
    res.series_dir = series_task[0] if series_task else None
    res.stats = stats
    return res


class _SweepModule(type(sys)):
    """`tcplab.sweep` names both this module and the function `sweep()`. The package imports the
    module only when first needed (so that `import tcplab` stays light), and importing a
    submodule makes the package attribute the module: calling the module runs the function, so
    `tcplab.sweep(...)` works whichever of the two the attribute holds."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepModule
