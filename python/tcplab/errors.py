"""Errors of the Python layer that the package exports without importing the modules that raise
them (the process pool, the store), so that `import tcplab` stays light."""

from __future__ import annotations


class ExecutorError(RuntimeError):
    """The executor cannot run the sweep (no Dask, an unreachable scheduler, workers that die)."""


class SweepError(ValueError):
    """A sweep specification is invalid; the message names the offending key."""
