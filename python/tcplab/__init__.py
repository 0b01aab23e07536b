"""tcplab: a laboratory for TCP start-up, congestion control and loss recovery.

    >>> import tcplab
    >>> r = tcplab.run("experiments/examples/demo.toml", seed=1)
    >>> r.connections[["name", "goodput_bps", "retransmits"]]
"""

from ._core import CoreError, ScenarioError, TraceError, __version__
from . import trace
from .api import Result, load_scenario, profiles, run, validate

__all__ = ["run", "validate", "profiles", "load_scenario", "Result", "ScenarioError", "CoreError", "TraceError", "trace", "__version__"]
