"""Run scenarios from Python: `tcplab.run(scenario, seed=...)`.

A scenario is a path to a TOML (or JSON) file, a TOML string, or a dict of the same structure.
Validation happens once, in the Rust core, which names the key path of anything wrong; a
`ScenarioError` carries it as `.path`.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

import pandas as pd

from . import _core

ScenarioLike = Union[str, os.PathLike, Mapping[str, Any]]


def load_scenario(scenario: ScenarioLike) -> tuple[str, str]:
    """Return (text, format) for a path, a TOML string or a dict."""
    if isinstance(scenario, Mapping):
        return json.dumps(scenario), "json"
    if isinstance(scenario, os.PathLike):
        scenario = os.fspath(scenario)
    if not isinstance(scenario, str):
        raise TypeError(f"a scenario is a path, a TOML string or a dict, not {type(scenario).__name__}")
    looks_like_path = "\n" not in scenario and "=" not in scenario
    if looks_like_path:
        p = Path(scenario)
        if not p.exists():
            raise FileNotFoundError(f"scenario file not found: {scenario}")
        text = p.read_text(encoding="utf-8")
        return text, ("json" if p.suffix.lower() == ".json" else "toml")
    return scenario, "toml"


@dataclass
class Result:
    """The result of one run: DataFrames of connections, link directions and transfers, the
    scenario as run (every default written out), and run metadata."""

    connections: pd.DataFrame
    links: pd.DataFrame
    transfers: pd.DataFrame
    scenario: dict
    tcp: list
    meta: dict
    wall_time_s: float = field(default=0.0)

    @classmethod
    def from_json(cls, text: str, wall_time_s: float = 0.0) -> "Result":
        d = json.loads(text)
        return cls(
            connections=pd.DataFrame(d["connections"]),
            links=pd.DataFrame(d["links"]),
            transfers=pd.DataFrame(d["transfers"]),
            scenario=d["scenario"],
            tcp=d["flows_tcp"],
            meta=d["meta"],
            wall_time_s=wall_time_s,
        )

    def to_dict(self) -> dict:
        """Plain JSON-ready form (NaN becomes None)."""

        def records(df: pd.DataFrame) -> list:
            return json.loads(df.to_json(orient="records"))

        return {
            "scenario": self.scenario,
            "meta": self.meta,
            "connections": records(self.connections),
            "links": records(self.links),
            "transfers": records(self.transfers),
        }


def run(scenario: ScenarioLike, seed: int | None = None, sets: Sequence[str] = ()) -> Result:
    """Run `scenario` once with `seed` (default: the scenario's own, else 1).

    `sets` are overrides written `key.path=value` (`"tcp.variant=reno"`, `"flows.0.bytes=\\"16KB\\""`).
    Raises `ScenarioError` for invalid input and `CoreError` if the simulator fails internally.
    """
    text, fmt = load_scenario(scenario)
    if seed is not None and (not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    t0 = time.perf_counter()
    out = _core.run_scenario(text, fmt, seed, list(sets))
    return Result.from_json(out, wall_time_s=time.perf_counter() - t0)


def validate(scenario: ScenarioLike, sets: Sequence[str] = ()) -> dict:
    """Validate a scenario without running it; returns it with every default written out."""
    text, fmt = load_scenario(scenario)
    return json.loads(_core.validate(text, fmt, list(sets)))


def profiles() -> dict:
    """The named TCP profiles (`rfc`, `ns2`, `bsd`, ...) and every knob they set."""
    return json.loads(_core.profiles())
