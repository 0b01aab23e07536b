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
from .errors import ExecutorError, SweepError
from .store import StoreError, load

_LAZY_MODULES = ("analysis", "models", "plot", "tbit", "series")
# Names imported from their module on first use: the sweep machinery (hashing, TOML, dataclasses)
# is not needed to run, validate or trace.
_LAZY_NAMES = {"sweep": ".sweep", "SweepResult": ".sweep"}


def __getattr__(name: str):
    if name in _LAZY_MODULES:
        return _importlib.import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        value = getattr(_importlib.import_module(_LAZY_NAMES[name], __name__), name)
        globals()[name] = value  # importing .sweep set the attribute to the module: the function it is
        return value
    raise AttributeError(f"module 'tcplab' has no attribute {name!r}")


__all__ = [
    "run", "validate", "profiles", "variants", "load_scenario", "Result", "ScenarioError", "CoreError", "RunLimitError", "TraceError",
    "trace", "plot", "series",
    "__version__", "sweep", "load", "SweepResult", "SweepError", "StoreError", "ExecutorError", "models", "analysis", "tbit",
]  # fmt: skip
