"""tcplab: a laboratory for TCP start-up, congestion control and loss recovery.

    >>> import tcplab
    >>> r = tcplab.run("experiments/examples/demo.toml", seed=1)
    >>> r.connections[["name", "goodput_bps", "retransmits"]]
    >>> s = tcplab.sweep("experiments/sweeps/sweep_demo.toml")   # a grid of runs, stored
    >>> s.connections.groupby("topology.loss")["goodput_bps"].mean()
"""

from . import analysis, models
from ._core import CoreError, RunLimitError, ScenarioError, TraceError, __version__
from . import trace
from .api import Result, load_scenario, profiles, run, validate, variants
from .executors import ExecutorError
from .store import StoreError, load
from .sweep import SweepError, SweepResult, sweep

__all__ = [
    "run", "validate", "profiles", "variants", "load_scenario", "Result", "ScenarioError", "CoreError", "RunLimitError", "TraceError",
    "trace",
    "__version__", "sweep", "load", "SweepResult", "SweepError", "StoreError", "ExecutorError", "models", "analysis",
]  # fmt: skip
