"""tcplab: a laboratory for TCP start-up, congestion control and loss recovery.

    >>> import tcplab
    >>> r = tcplab.run("experiments/examples/demo.toml", seed=1)
    >>> r.connections[["name", "goodput_bps", "retransmits"]]
"""

from ._core import CoreError, ScenarioError, __version__
from .api import Result, load_scenario, profiles, run, validate, variants

__all__ = ["run", "validate", "profiles", "variants", "load_scenario", "Result", "ScenarioError", "CoreError", "__version__"]
