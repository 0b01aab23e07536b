"""tcplab: a laboratory for TCP start-up, congestion control and loss recovery.

    >>> import tcplab
    >>> r = tcplab.run("experiments/examples/demo.toml", seed=1)
    >>> r.connections[["name", "goodput_bps", "retransmits"]]
    >>> s = tcplab.sweep("experiments/sweeps/sweep_demo.toml")   # a grid of runs, stored
    >>> s.summary(["goodput_bps"])                               # mean and spread over seeds

Every module and name is imported when first used (`tcplab.run` imports `tcplab.api`, a
DataFrame imports pandas), so that the command line starts fast: `tcplab run` loads neither
pandas nor numpy, nor the trace, store or sweep machinery.
"""

import importlib as _importlib

from ._core import CoreError, RunLimitError, ScenarioError, TraceError, __version__
from .errors import ExecutorError, SweepError

_LAZY_MODULES = (
    "analysis", "api", "cli", "executors", "experiments", "limits", "models", "plot", "progress", "report", "results", "series",
    "store", "tbit", "testbed", "trace",
)  # fmt: skip
# Names imported from their module on first use: the sweep machinery (hashing, TOML, dataclasses)
# is not needed to run, validate or trace, the store (DuckDB) only for sweeps and their results.
_LAZY_NAMES = {
    "sweep": ".sweep", "SweepResult": ".results", "StoreError": ".store", "load": ".store",
    "run": ".api", "Result": ".api", "load_scenario": ".api", "profiles": ".api", "validate": ".api", "resolve": ".api", "variants": ".api",
}  # fmt: skip


def __getattr__(name: str):
    if name in _LAZY_MODULES:
        return _importlib.import_module(f".{name}", __name__)
    if name in _LAZY_NAMES:
        value = getattr(_importlib.import_module(_LAZY_NAMES[name], __name__), name)
        globals()[name] = value  # importing .sweep set the attribute to the module: the function it is
        return value
    raise AttributeError(f"module 'tcplab' has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__, *_LAZY_MODULES})


__all__ = [
    "run", "validate", "resolve", "profiles", "variants", "load_scenario", "Result", "ScenarioError", "CoreError", "RunLimitError", "TraceError",
    "trace", "plot", "series",
    "__version__", "sweep", "load", "SweepResult", "SweepError", "StoreError", "ExecutorError", "models", "analysis", "tbit",
]  # fmt: skip
