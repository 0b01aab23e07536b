"""Run scenarios from Python: `tcplab.run(scenario, seed=...)`.

A scenario is a path to a TOML (or JSON) file, a TOML string, or a dict of the same structure.
Validation happens once, in the Rust core, which names the key path of anything wrong; a
`ScenarioError` carries it as `.path`.
"""

from __future__ import annotations

import json
import operator
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _core
from . import limits as _limits

ScenarioLike = Union[str, os.PathLike, Mapping[str, Any]]


def _json_default(o: Any) -> Any:
    """Let dicts built in sweeps carry numpy scalars and paths."""
    if hasattr(o, "item") and callable(o.item):
        return o.item()
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    raise TypeError(f"a scenario value must be JSON-like, not {type(o).__name__}")


def _scenario_error(path: str, reason: str) -> Exception:
    """A ScenarioError found on the Python side of the boundary (text the core cannot be given),
    shaped as the core's: `.path` and `.reason`."""
    e = _core.ScenarioError(f"{path}: {reason}" if path else reason)
    e.path, e.reason = path, reason
    return e


def _key_path(key: str) -> str:
    """An override's key as the core writes paths: `flows.0.name` -> `flows[0].name`."""
    out = ""
    for part in key.strip().split("."):
        out += f"[{part}]" if part.isdigit() and out else ("." if out else "") + part
    return out.encode("utf-8", "backslashreplace").decode()


def _lone_surrogate(s: str) -> Optional[tuple[int, str]]:
    """Where a string holds a lone surrogate (which is not text and cannot reach the core), and
    the refusal's words; None for proper text."""
    try:
        s.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        return e.start, f"expected text, got a lone surrogate \\u{ord(s[e.start]):04x} (not a Unicode character)"


def _read_file(p: Path) -> tuple[str, str]:
    if p.is_dir():
        raise IsADirectoryError(f"scenario path is a directory, not a file: {p}")
    if not p.is_file():
        raise FileNotFoundError(f"scenario file not found: {p}")
    fmt = "json" if p.suffix.lower() == ".json" else "toml"
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise _scenario_error("", f"invalid {fmt.upper()}: {p} is not UTF-8 text (byte {e.start})") from None
    return text, fmt


def _find_unjsonable(o: Any, path: str = "", seen: Optional[set] = None) -> Optional[tuple[str, str]]:
    """The key path and type name of the first value of a dict scenario that is not JSON-like."""
    seen = set() if seen is None else seen
    if isinstance(o, (Mapping, list, tuple)):
        if id(o) in seen:
            return path, "a reference to a table that contains it"
        seen.add(id(o))
        items = o.items() if isinstance(o, Mapping) else enumerate(o)
        for k, v in items:
            if isinstance(o, Mapping) and not isinstance(k, str):
                return f"{path}.{k!r}".lstrip("."), f"a key of type {type(k).__name__} (keys are strings)"
            sub = f"{path}[{k}]" if not isinstance(o, Mapping) else f"{path}.{k}".lstrip(".")
            found = _find_unjsonable(v, sub, seen)
            if found:
                return found
        seen.discard(id(o))
        return None
    if o is None or isinstance(o, (str, int, float, bool)):
        return None
    try:
        _json_default(o)
        return None
    except TypeError:
        return path, type(o).__name__


def _dict_json(scenario: Mapping) -> str:
    """A dict scenario as JSON text for the core. Non-finite floats go as `NaN` / `Infinity`,
    which the core reads and refuses by key; a lone surrogate goes as its `\\ud800` escape, which
    the core refuses by key; a value JSON cannot hold is refused here by key."""
    try:
        return json.dumps(scenario, default=_json_default)
    except (TypeError, ValueError):
        found = _find_unjsonable(scenario)
        if found is None:
            raise
        path, what = found
        raise _scenario_error(path, f"expected a string, a number, a boolean, a table or an array, got {what}") from None


def _is_file(s: str) -> bool:
    try:
        return Path(s).is_file()
    except (OSError, ValueError):  # a name too long for a path, an embedded NUL, ...
        return False


def load_scenario(scenario: ScenarioLike) -> tuple[str, str]:
    """Return (text, format) for a path, a TOML string or a dict.

    A `pathlib.Path` (any `os.PathLike`) is always a file. A `str` is a file if it is one line
    naming an existing file; otherwise it is TOML if it is blank or contains a newline or `=`, and
    a missing file if not.
    """
    if isinstance(scenario, Mapping):
        return _dict_json(scenario), "json"
    if isinstance(scenario, os.PathLike):
        return _read_file(Path(os.fspath(scenario)))
    if not isinstance(scenario, str):
        raise TypeError(f"a scenario is a path, a TOML string or a dict, not {type(scenario).__name__}")
    if "\n" not in scenario and scenario.strip():
        if _is_file(scenario):
            return _read_file(Path(scenario))
        if "=" not in scenario:
            return _read_file(Path(scenario))  # raises: missing file or a directory
    bad = _lone_surrogate(scenario)
    if bad:
        line = scenario.count("\n", 0, bad[0]) + 1
        column = bad[0] - (scenario.rfind("\n", 0, bad[0]) + 1) + 1
        raise _scenario_error("", f"invalid TOML (line {line}, column {column}): {bad[1]}")
    return scenario, "toml"


def _sets(sets: Union[str, Sequence[str]]) -> list:
    """One override may be given as a plain string. An override holding a lone surrogate (not
    text: it cannot reach the core) is refused with its key path."""
    out = [sets] if isinstance(sets, str) else [str(s) for s in sets]
    for s in out:
        bad = _lone_surrogate(s)
        if bad:
            key, sep, _ = s.partition("=")
            raise _scenario_error(_key_path(key) if sep else _key_path(s), bad[1])
    return out


def _seed(seed: Any) -> Optional[int]:
    if seed is None:
        return None
    try:
        if isinstance(seed, bool):
            raise TypeError
        n = operator.index(seed)  # int and numpy integers
    except TypeError:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}") from None
    if not 0 <= n < 2**64:
        raise ValueError(f"seed must be an integer from 0 to 2**64 - 1, got {seed!r}")
    return n


def _every_knob(tcp: dict) -> dict:
    """A flow's resolved TCP configuration with every knob: the run's JSON leaves out the knobs
    added for the `ns2` profile while they hold their RFC default (so that results recorded before
    them stay byte-identical); those defaults are the `rfc` profile's values."""
    rfc = _rfc_knobs()
    return {**rfc, **tcp} if set(rfc) - set(tcp) else tcp


_RFC_KNOBS: dict = {}


def _rfc_knobs() -> dict:
    if not _RFC_KNOBS:
        _RFC_KNOBS.update(json.loads(_core.profiles())["rfc"])
    return _RFC_KNOBS


@dataclass
class Result:
    """The result of one run: DataFrames of connections, link directions and transfers, the
    objects fetched by applications (``[[apps]]``) and the pages of web clients (each empty
    without them), the scenario as run
    (every default written out), and run metadata."""

    connections: pd.DataFrame
    links: pd.DataFrame
    transfers: pd.DataFrame
    scenario: dict
    tcp: list
    meta: dict
    wall_time_s: float = field(default=0.0)
    objects: pd.DataFrame = field(default_factory=pd.DataFrame)
    pages: pd.DataFrame = field(default_factory=pd.DataFrame)

    @classmethod
    def from_json(cls, text: str, wall_time_s: float = 0.0) -> "Result":
        d = json.loads(text)
        return cls(
            connections=pd.DataFrame(d["connections"]),
            links=pd.DataFrame(d["links"]),
            transfers=pd.DataFrame(d["transfers"]),
            scenario=d["scenario"],
            tcp=[_every_knob(t) for t in d["flows_tcp"]],
            meta=d["meta"],
            wall_time_s=wall_time_s,
            objects=pd.DataFrame(d.get("objects", [])),
            pages=pd.DataFrame(d.get("pages", [])),
        )

    def to_dict(self) -> dict:
        """Plain JSON-ready form (NaN becomes None)."""

        def records(df: pd.DataFrame) -> list:
            return json.loads(df.to_json(orient="records"))

        d = {
            "scenario": self.scenario,
            "meta": self.meta,
            "connections": records(self.connections),
            "links": records(self.links),
            "transfers": records(self.transfers),
        }
        for key, df in (("objects", self.objects), ("pages", self.pages)):
            if not df.empty:
                d[key] = records(df)
        return d


def run(
    scenario: ScenarioLike,
    seed: Optional[int] = None,
    sets: Union[str, Sequence[str]] = (),
    pcap: Optional[Union[str, os.PathLike]] = None,
    max_wall: Union[float, str, None] = None,
    max_events: Optional[int] = None,
) -> Result:
    """Run `scenario` once with `seed` (default: the scenario's own, else 1).

    `sets` are overrides written `key.path=value` (`"tcp.variant=reno"`, `"flows.0.bytes=\\"16KB\\""`).
    `pcap` adds a capture at the first flow's sending node (docs/traces.md) to those of the scenario.
    `max_wall` (seconds, or `"10s"`, `"2min"`) and `max_events` bound the run: a run still going
    when it reaches either stops and raises `RunLimitError` (`.limit`, `.events`, `.sim_time_s`).
    Raises `ScenarioError` for invalid input and `CoreError` if the simulator fails internally.
    """
    text, fmt = load_scenario(scenario)
    seed = _seed(seed)
    limits = {"max_wall_s": _limits.seconds(max_wall, "max_wall"), "max_events": _limits.events(max_events)}
    if pcap is not None:
        d = json.loads(_core.validate(text, fmt, _sets(sets)))
        d.setdefault("capture", []).append({"path": os.fspath(pcap)})
        text, fmt, sets = json.dumps(d), "json", ()
    t0 = time.perf_counter()
    out = _core.run_scenario(text, fmt, seed, _sets(sets), **limits)
    return Result.from_json(out, wall_time_s=time.perf_counter() - t0)


def validate(scenario: ScenarioLike, sets: Union[str, Sequence[str]] = ()) -> dict:
    """Validate a scenario without running it; returns it with every default written out."""
    text, fmt = load_scenario(scenario)
    return json.loads(_core.validate(text, fmt, _sets(sets)))


def profiles() -> dict:
    """The named TCP profiles (`rfc`, `ns2`, `bsd`, ...) and every knob they set."""
    return json.loads(_core.profiles())


def variants(profile: str = "rfc") -> dict:
    """The named stacks (`preset = "..."` in a scenario): the variants of the Mathis and Ladha
    studies. For each: `study`, `summary`, `settings` (the mechanism knobs the preset sets) and
    `config` (the whole TCP configuration it gives over `profile`)."""
    return json.loads(_core.presets(profile))
