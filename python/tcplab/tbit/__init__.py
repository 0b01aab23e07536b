"""TBIT: infer a TCP sender's behaviour by probing it (Padhye & Floyd 2001; Ladha et al. 2004).

    >>> import tcplab
    >>> tcplab.tbit(sim="sack-iw-lt-abc1-er")          # a simulated stack: a preset or profile
    >>> tcplab.tbit(host="10.0.0.2:80", url="/big")     # a real server (root, raw sockets)

The tests are written once (`probe.py`) over a transport (`transport.py`): the simulated server
of `tcplab-core` (`SimTransport`) or raw frames through an AF_PACKET socket (`real.py`).
"""

from __future__ import annotations

import json

from .probe import MSS, TESTS, Inconclusive, run_suite
from .transport import SimTransport, Transport

__all__ = ["tbit", "run", "sim_stack", "TESTS", "SimTransport", "Transport", "Inconclusive"]


def sim_stack(name: str | dict) -> dict:
    """A stack description for the simulated transport: a preset name (over the `rfc` profile),
    a profile name, "PROFILE/PRESET", or a flow's `tcp` table as a dict."""
    if isinstance(name, dict):
        return dict(name)
    from .. import _core

    presets = json.loads(_core.presets())
    profiles = json.loads(_core.profiles())
    prof, _, pre = name.partition("/") if "/" in name else ("", "", name)
    if prof:
        if prof not in profiles:
            raise ValueError(f"unknown profile {prof!r}; expected one of: {', '.join(profiles)}")
        if pre not in presets:
            raise ValueError(f"unknown preset {pre!r}; expected one of: {', '.join(presets)}")
        return {"profile": prof, "preset": pre}
    if name in presets:
        return {"preset": name}
    if name in profiles:
        return {"profile": name}
    raise ValueError(f"unknown stack {name!r}: expected a preset ({', '.join(presets)}), a profile ({', '.join(profiles)}) or PROFILE/PRESET")


def run(sim=None, host=None, url: str = "/", tests=None, runs: int = 5, runs_for=None, **real_kw) -> list[dict]:
    """The rows of `tbit` as dicts (the simulated rows carry `configured` and `match`)."""
    if (sim is None) == (host is None):
        raise ValueError("give exactly one of sim= (a preset or profile) or host= (ADDR[:PORT])")
    if sim is not None:
        from .expect import expected, timers_match

        tr = SimTransport(sim_stack(sim))
        rows = run_suite(tr, tests, runs, url, runs_for)
        facts = tr.facts[MSS]
        exp = expected(tr.config, facts)
        for r in rows:
            r["configured"] = exp[r["test"]]
            if r["test"] in ("rto_data", "rto_syn") and r.get("intervals"):
                r["match"] = timers_match(r["intervals"], tr.config, facts, syn=r["test"] == "rto_syn")
            else:
                r["match"] = r["verdict"] == r["configured"]
        return rows
    from .real import RawTransport

    tr = RawTransport.for_host(host, **real_kw)
    try:
        return run_suite(tr, tests, runs, url, runs_for)
    finally:
        tr.shutdown()


def tbit(sim=None, host=None, url: str = "/", tests=None, runs: int = 5, runs_for=None, **real_kw):
    """Run TBIT's tests against a simulated stack (`sim`) or a real server (`host`); one row per
    test: verdict, runs agreeing, and for `sim` what the configuration says."""
    import pandas as pd

    return pd.DataFrame(run(sim, host, url, tests, runs, runs_for, **real_kw))


class _CallableModule(type(json)):
    """`tcplab.tbit(...)` calls `tbit`, while `tcplab.tbit.probe` and the rest stay reachable."""

    def __call__(self, *args, **kwargs):
        return tbit(*args, **kwargs)


import sys as _sys  # noqa: E402

_sys.modules[__name__].__class__ = _CallableModule
