"""tcplab: a laboratory for TCP start-up, congestion control and loss recovery.

    >>> import tcplab
    >>> r = tcplab.run("experiments/examples/demo.toml", seed=1)
    >>> r.connections[["name", "goodput_bps", "retransmits"]]
    >>> s = tcplab.sweep("experiments/sweeps/sweep_demo.toml")   # a grid of runs, stored
    >>> s.summary(["goodput_bps"])                               # mean and spread over seeds

numpy and pandas are imported when first needed (`tcplab.analysis`, `tcplab.models` and
`tcplab.plot` on first use), so that the command line starts fast.
"""

import importlib as _importlib

from . import trace
from ._core import CoreError, RunLimitError, ScenarioError, TraceError, __version__
from .api import Result, load_scenario, profiles, run, validate, variants
from .errors import ExecutorError
from .store import StoreError, load
from .sweep import SweepError, SweepResult, sweep

_LAZY_MODULES = ("analysis", "models", "plot")


def __getattr__(name: str):
    if name in _LAZY_MODULES:
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tcplab' has no attribute {name!r}")


__all__ = [
    "run", "validate", "profiles", "variants", "load_scenario", "Result", "ScenarioError", "CoreError", "RunLimitError", "TraceError",
    "trace", "plot",
    "__version__", "sweep", "load", "SweepResult", "SweepError", "StoreError", "ExecutorError", "models", "analysis",
]  # fmt: skip
