"""Closed-form TCP throughput models, to set beside the simulator's measurements.

Mathis, Semke, Mahdavi and Ott 1997, "The Macroscopic Behavior of the TCP Congestion Avoidance
Algorithm" (eq. 1-5, 6-13 after Floyd 1991, and 14), and the full and approximate models of Padhye,
Firoiu, Towsley and Kurose 1998 ("PFTK"). Equation numbers are the Mathis paper's unless stated.

Every function takes floats or numpy arrays (broadcast together) and returns a float when all its
inputs are scalars, an array otherwise. Units: MSS in bytes, RTT and RTO in seconds, bandwidth in
bytes per second (Mathis) or packets per second (PFTK), p a probability per packet.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "C_TABLE1", "C_PERIODIC_EVERY", "C_PERIODIC_DELAYED",
    "mathis_window", "mathis_bw", "mathis_bw_k", "required_loss", "sawtooth",
    "pftk_bw", "pftk_bw_approx",
    "floyd_share", "floyd_share_small_q", "floyd_share_large_q",
    "model_percent",
]  # fmt: skip

# Mathis et al. Table 1: the constant C of eq. 3, by loss process and ACK strategy. The periodic
# values are closed forms (sawtooth, eq. 1-2); the random-loss values are from Ott, Kemperman and
# Mathis 1996 as quoted in Table 1.
C_PERIODIC_EVERY = math.sqrt(3.0 / 2.0)  # 1.2247: ACK every packet, window +1 per RTT
C_PERIODIC_DELAYED = math.sqrt(3.0 / 4.0)  # 0.8660: delayed ACKs, window +1/2 per RTT (C / sqrt 2)
C_TABLE1 = {
    ("periodic", "every"): 1.22,
    ("periodic", "delayed"): 0.87,
    ("random", "every"): 1.31,
    ("random", "delayed"): 0.93,
}


def _arrays(**named):
    """The named inputs as float arrays, and whether every one was a scalar."""
    arrs = {k: np.asarray(v, dtype=float) for k, v in named.items()}
    scalar = all(a.ndim == 0 for a in arrs.values())
    return arrs, scalar


def _out(value, scalar):
    return float(value) if scalar else value


def _check(name, a, ok, what):
    """Raise ValueError naming `name` unless `ok` (a boolean array over `a`) holds everywhere."""
    if not np.all(ok):
        bad = np.ravel(a[~ok] if a.ndim else a)[:3].tolist()
        raise ValueError(f"{name} must be {what}; got {bad}")


def _positive(name, a):
    _check(name, a, np.isfinite(a) & (a > 0), "finite and > 0")


def _nonnegative(name, a):
    _check(name, a, np.isfinite(a) & (a >= 0), "finite and >= 0")


def _check_p(p, *, allow_one=True):
    ok = (p > 0) & ((p <= 1) if allow_one else (p < 1))
    _check("p", p, ok, "in (0, 1]" if allow_one else "in (0, 1)")


# --------------------------------------------------------------------------------------------------
# Mathis et al. 1997
# --------------------------------------------------------------------------------------------------


def mathis_window(p, C=C_PERIODIC_EVERY):
    """Average congestion window in packets, C/sqrt(p): eq. 3 rescaled by RTT/MSS.

    This is the y-axis of the paper's log-log plots (BW*RTT/MSS against p). With the default
    C = sqrt(3/2) it is the mean of the periodic-loss sawtooth, 3W/4 with W from eq. 1.
    """
    a, scalar = _arrays(p=p, C=C)
    _check_p(a["p"])
    _positive("C", a["C"])
    return _out(a["C"] / np.sqrt(a["p"]), scalar)


def mathis_bw(mss, rtt, p, C=C_PERIODIC_EVERY):
    """Eq. 3: BW = (MSS/RTT) * C/sqrt(p), in bytes per second (MSS in bytes, RTT in seconds).

    C per Table 1 (`C_TABLE1`); p is congestion signals (CA events) per acknowledged packet.
    """
    a, scalar = _arrays(mss=mss, rtt=rtt, p=p, C=C)
    _positive("mss", a["mss"])
    _positive("rtt", a["rtt"])
    _check_p(a["p"])
    _positive("C", a["C"])
    return _out(a["mss"] / a["rtt"] * a["C"] / np.sqrt(a["p"]), scalar)


def mathis_bw_k(mss, rtt, p, C, k):
    """Eq. 5, the generalised fit: BW = (MSS/RTT) * C * p**k, in bytes per second (k about -1/2)."""
    a, scalar = _arrays(mss=mss, rtt=rtt, p=p, C=C, k=k)
    _positive("mss", a["mss"])
    _positive("rtt", a["rtt"])
    _check_p(a["p"])
    return _out(a["mss"] / a["rtt"] * a["C"] * a["p"] ** a["k"], scalar)


def required_loss(bw, mss, rtt, C=1.0):
    """Eq. 14: the loss rate a connection must stay under to reach `bw`, p < (C*MSS/(BW*RTT))**2.

    `bw` in bytes per second, MSS in bytes, RTT in seconds. The paper takes C = 1 (an upper bound,
    since C < 1 with delayed ACKs, eq. 4): 1 Mb/s at 100 ms needs p < 0.18 % with a 536-byte MSS,
    1.4 % with 1460 bytes and about 11 % with 4312 bytes (§7).
    """
    a, scalar = _arrays(bw=bw, mss=mss, rtt=rtt, C=C)
    for name in ("bw", "mss", "rtt", "C"):
        _positive(name, a[name])
    return _out((a["C"] * a["mss"] / (a["bw"] * a["rtt"])) ** 2, scalar)


def sawtooth(p):
    """The periodic-loss sawtooth of eq. 1-2: one loss every 1/p packets, window W/2 ... W.

    Returns a dict (floats, or arrays for array p):

    * ``W`` -- the peak window in packets, sqrt(8/(3p)) (eq. 1);
    * ``W_min`` -- the window just after the halving, W/2;
    * ``packets_per_cycle`` -- (W/2)**2 + (W/2)**2/2 = 3W**2/8 = 1/p;
    * ``cycle_rtts`` -- the cycle length in round trips, W/2 (the window grows by 1 per RTT);
    * ``window_avg`` -- packets per cycle over RTTs per cycle, 3W/4 = sqrt(3/(2p)) (eq. 2).
    """
    a, scalar = _arrays(p=p)
    p = a["p"]
    _check_p(p)
    w = np.sqrt(8.0 / (3.0 * p))
    parts = {
        "W": w,
        "W_min": w / 2.0,
        "packets_per_cycle": 1.0 / p,
        "cycle_rtts": w / 2.0,
        "window_avg": 3.0 * w / 4.0,
    }
    return {k: _out(v, scalar) for k, v in parts.items()}


# --------------------------------------------------------------------------------------------------
# Padhye, Firoiu, Towsley, Kurose 1998
# --------------------------------------------------------------------------------------------------


def _pftk_q_hat(p, w):
    """PFTK's Q^(p, w): the probability that a loss in a window of w packets ends in a timeout."""
    q = 1.0 - p
    num = (1.0 - q**3) * (1.0 + q**3 * (1.0 - q ** (w - 3.0)))
    return np.minimum(1.0, num / (1.0 - q**w))


def _pftk_f(p):
    """PFTK's f(p) = 1 + p + 2p^2 + ... + 32p^6: the backoff factor of a run of timeouts."""
    return 1.0 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def _pftk_inputs(p, rtt, rto, b, wmax, *, allow_one):
    unlimited = wmax is None
    a, scalar = _arrays(p=p, rtt=rtt, rto=rto, b=b, wmax=np.inf if unlimited else wmax)
    _check_p(a["p"], allow_one=allow_one)
    _positive("rtt", a["rtt"])
    _nonnegative("rto", a["rto"])
    _positive("b", a["b"])
    _check("wmax", a["wmax"], a["wmax"] > 0, "> 0 (or None for unlimited)")
    return np.broadcast_arrays(a["p"], a["rtt"], a["rto"], a["b"], a["wmax"]), scalar


def pftk_bw(p, rtt, rto, b=2, wmax=None):
    """Full PFTK model (Padhye et al. 1998, eq. 31 there), in packets per second.

    p: loss probability per packet, 0 < p < 1; rtt, rto (T0) in seconds; b: packets acknowledged
    per ACK (2 with delayed ACKs); wmax: receiver window in packets, None for unlimited. With
    E[W] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))**2),
    f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6 and
    Q^(p,w) = min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w)):

    * E[W] < Wmax: B = [(1-p)/p + E[W] + Q^(p,E[W])/(1-p)]
      / [RTT(b E[W]/2 + 1) + Q^(p,E[W]) T0 f(p)/(1-p)];
    * otherwise:   B = [(1-p)/p + Wmax + Q^(p,Wmax)/(1-p)]
      / [RTT(b Wmax/8 + (1-p)/(p Wmax) + 2) + Q^(p,Wmax) T0 f(p)/(1-p)].

    As p -> 0 without a window limit it tends to sqrt(3/(2bp))/RTT, Mathis eq. 3 with C = sqrt(3/(2b)).
    """
    (p, rtt, rto, b, wmax), scalar = _pftk_inputs(p, rtt, rto, b, wmax, allow_one=False)
    q = 1.0 - p
    f = _pftk_f(p)
    c0 = (2.0 + b) / (3.0 * b)
    ew = c0 + np.sqrt(8.0 * q / (3.0 * b * p) + c0**2)
    limited = ew >= wmax
    # Evaluate each branch only where it applies: the other one may divide by an infinite Wmax.
    out = np.empty_like(p)
    u = ~limited
    if np.any(u):
        w, qh = ew[u], _pftk_q_hat(p[u], ew[u])
        num = q[u] / p[u] + w + qh / q[u]
        den = rtt[u] * (b[u] * w / 2.0 + 1.0) + qh * rto[u] * f[u] / q[u]
        out[u] = num / den
    if np.any(limited):
        m = limited
        w, qh = wmax[m], _pftk_q_hat(p[m], wmax[m])
        num = q[m] / p[m] + w + qh / q[m]
        den = rtt[m] * (b[m] * w / 8.0 + q[m] / (p[m] * w) + 2.0) + qh * rto[m] * f[m] / q[m]
        out[m] = num / den
    return _out(out, scalar)


def pftk_bw_approx(p, rtt, rto, b=2, wmax=None):
    """Approximate PFTK model (Padhye et al. 1998, eq. 33 there), in packets per second.

    B = min(Wmax/RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32p^2))); arguments as
    for `pftk_bw` (here p = 1 is allowed). Without the timeout term it is Mathis eq. 3 with
    C = sqrt(3/(2b)).
    """
    (p, rtt, rto, b, wmax), scalar = _pftk_inputs(p, rtt, rto, b, wmax, allow_one=True)
    den = rtt * np.sqrt(2.0 * b * p / 3.0) + rto * np.minimum(1.0, 3.0 * np.sqrt(3.0 * b * p / 8.0)) * p * (
        1.0 + 32.0 * p**2
    )
    return _out(np.minimum(wmax / rtt, 1.0 / den), scalar)


# --------------------------------------------------------------------------------------------------
# Multiple congested gateways (Mathis §6 after Floyd 1991)
# --------------------------------------------------------------------------------------------------


def floyd_share(n, d_long, d_short, q):
    """Eq. 11: the share B0/B of the connection crossing all n congested gateways.

    B0/B = 1 / (1 + tau0 sqrt(n) / tau_i), with the round-trip times of eq. 6-7:
    tau_i = 2 d_L + Q + 4 d_S (a connection crossing one congested gateway) and
    tau_0 = 2(2n-1) d_L + n Q + 4 d_S (the long connection). d_long, d_short: one-way long- and
    short-link delays; q: average queueing delay per congested hop (same unit throughout). C, MSS and
    p cancel (eq. 8-10). Q, d_S -> 0 gives eq. 12; Q dominant gives eq. 13.
    """
    a, scalar = _arrays(n=n, d_long=d_long, d_short=d_short, q=q)
    _check("n", a["n"], np.isfinite(a["n"]) & (a["n"] >= 1), "finite and >= 1")
    for name in ("d_long", "d_short", "q"):
        _nonnegative(name, a[name])
    n, dl, ds, qd = a["n"], a["d_long"], a["d_short"], a["q"]
    tau_i = 2.0 * dl + qd + 4.0 * ds
    tau_0 = 2.0 * (2.0 * n - 1.0) * dl + n * qd + 4.0 * ds
    if np.any(tau_i <= 0):
        raise ValueError("d_long, d_short and q must not all be 0 (the round-trip times would be 0)")
    return _out(1.0 / (1.0 + tau_0 * np.sqrt(n) / tau_i), scalar)


def floyd_share_small_q(n):
    """Eq. 12: B0/B ~ 1/(1 + sqrt(n)(2n-1)) when queueing and short-link delays are negligible."""
    a, scalar = _arrays(n=n)
    _check("n", a["n"], np.isfinite(a["n"]) & (a["n"] >= 1), "finite and >= 1")
    n = a["n"]
    return _out(1.0 / (1.0 + np.sqrt(n) * (2.0 * n - 1.0)), scalar)


def floyd_share_large_q(n):
    """Eq. 13: B0/B ~ 1/(1 + n**1.5) when queueing delay dominates (overbuffered drop-tail)."""
    a, scalar = _arrays(n=n)
    _check("n", a["n"], np.isfinite(a["n"]) & (a["n"] >= 1), "finite and >= 1")
    return _out(1.0 / (1.0 + a["n"] ** 1.5), scalar)


# --------------------------------------------------------------------------------------------------


def model_percent(model, measured):
    """|model - measured| / measured * 100: the percentages beside the model cells of Tables 2-3."""
    a, scalar = _arrays(model=model, measured=measured)
    _nonnegative("model", a["model"])
    _positive("measured", a["measured"])
    return _out(np.abs(a["model"] - a["measured"]) / a["measured"] * 100.0, scalar)
