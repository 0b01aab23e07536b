"""What a simulated stack's configuration says each TBIT test must find (the "configured"
column of the tables): read from the resolved configuration, not from the preset's name."""

from __future__ import annotations

from .probe import MSS, fmt_s
from .transport import parse_size as _size


def iw_segments(iw, mss: int) -> int:
    """The initial window in segments at this MSS (the rules of `initial_window`, config.rs)."""
    if isinstance(iw, int):
        b = iw * mss
    elif iw == "rfc3390":
        b = min(4 * mss, max(2 * mss, 4380)) // mss * mss
    elif iw == "rfc6928":
        b = min(10 * mss, max(2 * mss, 14600)) // mss * mss
    elif isinstance(iw, dict):
        segs, byts = iw.get("segments", 0), _size(iw.get("bytes", 0))
        b = (byts // mss * mss) if segs == 0 else (segs * mss if byts == 0 else min(segs * mss, byts // mss * mss))
    else:
        b = _size(iw) // mss * mss
    return max(b, mss) // mss


def _dur(v) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    for suffix, mult in (("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9), ("min", 60.0), ("s", 1.0)):
        if s.endswith(suffix):
            return float(s[: -len(suffix)]) * mult
    return float(s)


CC = {"tahoe": "Tahoe", "reno": "Reno", "newreno": "NewReno"}


def expected(cfg: dict) -> dict:
    """Per test, the verdict the configuration implies (timer tests: the configured values)."""
    sack = bool(cfg["sack"])
    icw = iw_segments(cfg["initial_window"], MSS)
    abc = int(cfg["abc"])
    e = {
        "sack_advertised": "yes" if sack else "no",
        "icw": str(icw),
        "sack_used": "yes" if sack else "n/a: SACK not advertised",
        "lt": "yes" if cfg["limited_transmit"] else "no",
        "abc": "yes" if abc else "no",
        "abc_l": str(abc) if abc else "n/a: no ABC",
        "er": "yes" if cfg["early_retransmit"] else "no",
        "cc": "SACK" if sack else CC[cfg["variant"]],
    }
    e["rto_data"] = " ".join(fmt_s(x) for x in timer_plan(cfg, syn=False)[0])
    e["rto_syn"] = " ".join(fmt_s(x) for x in timer_plan(cfg, syn=True)[0]) if cfg["handshake"] else "n/a: no SYN (no handshake)"
    return e


def timer_plan(cfg: dict, syn: bool, n: int = 3) -> tuple[list[float], float]:
    """The configured timeouts a TBIT timer test should see on a short path, and the slack a
    tick-based timer adds (RFC 6298 §2: RTO = max(rto_min, SRTT + 4·RTTVAR), which is rto_min on
    a path of milliseconds; before any RTT sample, and for the SYN, the initial RTO; §5.5: each
    expiry multiplies it by the backoff, up to rto_max)."""
    backoff = float(cfg["rto_backoff"])
    rmin, rmax, r0 = _dur(cfg["rto_min"]), _dur(cfg["rto_max"]), _dur(cfg["rto_initial"])
    sampled = cfg["handshake"] and cfg["handshake_rtt_sample"]
    first = r0 if (syn or not sampled) else rmin
    slack = 2 * _dur(cfg.get("timer_tick", 0)) + _dur(cfg.get("clock_granularity", 0)) + 0.05
    return [min(first * backoff**i, rmax) for i in range(n)], slack


def timers_match(measured: list[float], cfg: dict, syn: bool) -> bool:
    """Measured intervals agree with the configuration: the first within [plan, plan + slack],
    each next one the backoff times the one before (10 %), or rto_max."""
    plan, slack = timer_plan(cfg, syn, len(measured))
    if not measured or not (plan[0] - 0.01 <= measured[0] <= plan[0] + slack):
        return False
    backoff, rmax = float(cfg["rto_backoff"]), _dur(cfg["rto_max"])
    for a, b in zip(measured, measured[1:]):
        want = min(a * backoff, rmax)
        if abs(b - want) > 0.1 * want + 0.01:
            return False
    return True
