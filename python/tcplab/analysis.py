"""Fits and summaries for tcplab results: the Mathis et al. 1997 model fits and the usual metrics.

`fit_c` and `fit_ck` fit eq. 3 (k fixed at -1/2) and eq. 5 (k free) of Mathis, Semke, Mahdavi and
Ott 1997 to the window BW*RTT/MSS against p by least squares of ln y (every run weighs the same);
`fit_c_ls` and `fit_ck_ls` fit them by least squares of y itself, the paper's "least-mean-squares
fit" of its Table 4, in which the windows of the low-p runs dominate; `halving_share` and `share_at` give
its "proportion of successful W/2 adjustments"; `jain_index` (Jain, Chiu and Hawe 1984) and
`network_power` (goodput / delay, as in RFC 2415) are the fairness and power metrics of the other
seed papers. `median_page_delay`, `app_goodput`, `rfc2415_power` and `normalised_power` read a run's
`objects` and `pages` records (RFC 2415 §2.4, TARGETS.md §2.4): the web page delay, each
application's goodput and the network power one call away. Every function checks its input and
raises ValueError with a message naming the fault.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import units

__all__ = [
    "Fit", "fit_c", "fit_ck", "fit_c_ls", "fit_ck_ls", "halving_share", "share_at", "jain_index", "network_power",
    "quantiles", "median", "ecdf", "interpolate_at",
    "median_page_delay", "app_goodput", "rfc2415_power", "normalised_power",
]  # fmt: skip


@dataclass(frozen=True)
class Fit:
    """A fit of y = C * p**k (Mathis eq. 3 when k is fixed at -1/2, eq. 5 when k is free).

    C_err and k_err are standard errors (k_err is 0 when k was fixed); C_sd is C times the residual
    standard deviation in log space, the spread of single runs about the fit rather than the
    uncertainty of C. rms_log is the root-mean-square residual of ln y. Mathis et al. do not say
    whether their "±" is a standard deviation or a standard error; keep both at hand.
    """

    C: float
    C_err: float
    k: float
    k_err: float
    n: int
    rms_log: float
    C_sd: float = math.nan
    k_fixed: bool = False

    def __str__(self) -> str:
        c = f"C = {self.C:.3f} ± {self.C_err:.3f}"
        if self.k_fixed:
            k = "−1/2" if self.k == -0.5 else _signed(self.k)
            return f"{c} (k = {k}, N = {self.n})"
        return f"{c}, k = {_signed(self.k)} ± {self.k_err:.3f} (N = {self.n})"


def _signed(x: float) -> str:
    """x to three decimals with a typographic minus, as printed in the paper's tables."""
    return f"{x:.3f}".replace("-", "−")


def _vector(name, x, *, positive=False, nonnegative=False, min_len=1):
    """x as a finite 1-D float array, checked; ValueError naming `name` otherwise."""
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if len(a) < min_len:
        raise ValueError(f"{name} needs at least {min_len} value(s), got {len(a)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    if positive and not np.all(a > 0):
        raise ValueError(f"{name} must be > 0 everywhere (logarithms are taken); got {a[a <= 0][:3].tolist()}")
    if nonnegative and not np.all(a >= 0):
        raise ValueError(f"{name} must be >= 0 everywhere; got {a[a < 0][:3].tolist()}")
    return a


def _same_length(**arrays):
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError("lengths differ: " + ", ".join(f"{k} {n}" for k, n in lengths.items()))


# --------------------------------------------------------------------------------------------------
# Model fits (Mathis Table 4)
# --------------------------------------------------------------------------------------------------


def fit_c(y, p, k=-0.5) -> Fit:
    """Fit eq. 3, y = C * p**k with k fixed (-1/2 by default), by least squares of ln y.

    y is the window in packets, BW*RTT/MSS, one value per run; p the loss measure of each run (CA
    events per acknowledged packet). With z = ln y - k ln p, ln C = mean(z). Choice recorded here:
    C_err is the standard error of C, C * sd(z)/sqrt(N) (the standard error of the mean in log space
    carried to C); C_sd = C * sd(z) is the run-to-run spread. Mathis et al. do not say which of the
    two their "±" is. A single run gives C with C_err and C_sd NaN.
    """
    y = _vector("y", y, positive=True)
    p = _vector("p", p, positive=True)
    _same_length(y=y, p=p)
    k = float(k)
    if not math.isfinite(k):
        raise ValueError(f"k must be finite, got {k}")
    z = np.log(y) - k * np.log(p)
    n = len(z)
    log_c = float(z.mean())
    resid = z - log_c
    sd = float(np.sqrt(np.sum(resid**2) / (n - 1))) if n > 1 else math.nan
    c = math.exp(log_c)
    return Fit(
        C=c,
        C_err=c * sd / math.sqrt(n),
        k=k,
        k_err=0.0,
        n=n,
        rms_log=float(np.sqrt(np.mean(resid**2))),
        C_sd=c * sd,
        k_fixed=True,
    )


def fit_ck(y, p) -> Fit:
    """Fit eq. 5, y = C * p**k with C and k free, by ordinary least squares of ln y on ln p.

    k_err is the usual OLS standard error of the slope; C_err = C * se(ln C) (delta method), where
    se(ln C) is the standard error of the intercept, i.e. of ln y at p = 1 (an extrapolation, so it
    is wider than the fit's uncertainty within the data). With exactly two points there are no
    residual degrees of freedom and the errors are NaN. C_sd = C times the residual standard
    deviation in log space.
    """
    y = _vector("y", y, positive=True, min_len=2)
    p = _vector("p", p, positive=True, min_len=2)
    _same_length(y=y, p=p)
    x, z = np.log(p), np.log(y)
    n = len(x)
    x_mean = x.mean()
    sxx = float(np.sum((x - x_mean) ** 2))
    if sxx <= 0:
        raise ValueError("p must take at least two distinct values to fit k")
    k = float(np.sum((x - x_mean) * (z - z.mean())) / sxx)
    log_c = float(z.mean() - k * x_mean)
    resid = z - (log_c + k * x)
    ssr = float(np.sum(resid**2))
    s2 = ssr / (n - 2) if n > 2 else math.nan
    se_k = math.sqrt(s2 / sxx)
    se_log_c = math.sqrt(s2 * (1.0 / n + x_mean**2 / sxx))
    c = math.exp(log_c)
    return Fit(
        C=c,
        C_err=c * se_log_c,
        k=k,
        k_err=se_k,
        n=n,
        rms_log=math.sqrt(ssr / n),
        C_sd=c * math.sqrt(s2),
        k_fixed=False,
    )


def fit_c_ls(y, p, k=-0.5) -> Fit:
    """Fit eq. 3, y = C * p**k with k fixed, by least squares of y itself (not of ln y).

    Mathis et al. fit their Table 4 by "least-mean-squares" of the model to the window: with
    x = p**k, C = sum(x*y) / sum(x**2). The residuals are in packets, so the runs with large windows
    (small p) weigh most; where C drifts with p this fit sits near the low-p end of the grid, the log
    fit (`fit_c`) in its middle. C_err = s / sqrt(sum(x**2)), the usual standard error (s the residual
    standard deviation with N - 1 degrees of freedom); C_sd = C times the residual standard deviation
    of ln y about the fit, comparable with `fit_c`'s.
    """
    y = _vector("y", y, positive=True)
    p = _vector("p", p, positive=True)
    _same_length(y=y, p=p)
    k = float(k)
    if not math.isfinite(k):
        raise ValueError(f"k must be finite, got {k}")
    x = p**k
    sxx = float(np.sum(x * x))
    c = float(np.sum(x * y) / sxx)
    n = len(y)
    resid = y - c * x
    s = float(np.sqrt(np.sum(resid**2) / (n - 1))) if n > 1 else math.nan
    log_resid = np.log(y) - np.log(c * x)
    sd_log = float(np.sqrt(np.sum(log_resid**2) / (n - 1))) if n > 1 else math.nan
    return Fit(
        C=c,
        C_err=s / math.sqrt(sxx),
        k=k,
        k_err=0.0,
        n=n,
        rms_log=float(np.sqrt(np.mean(log_resid**2))),
        C_sd=c * sd_log,
        k_fixed=True,
    )


def fit_ck_ls(y, p) -> Fit:
    """Fit eq. 5, y = C * p**k with C and k free, by least squares of y itself (the paper's way).

    For each k the best C is `fit_c_ls`'s closed form; k minimises the residual sum of squares
    (golden-section search on [-1.5, 0.5], bracketed by a scan, to 1e-9). Standard errors from the
    Gauss-Newton covariance s**2 * (J^T J)^-1 at the optimum, J = [p**k, C p**k ln p]; NaN with two
    points (no residual degrees of freedom).
    """
    y = _vector("y", y, positive=True, min_len=2)
    p = _vector("p", p, positive=True, min_len=2)
    _same_length(y=y, p=p)
    lp = np.log(p)
    if float(np.ptp(lp)) <= 0:
        raise ValueError("p must take at least two distinct values to fit k")

    def ssr(k):
        x = np.exp(k * lp)
        c = np.sum(x * y) / np.sum(x * x)
        return float(np.sum((y - c * x) ** 2))

    grid = np.linspace(-1.5, 0.5, 201)
    i = int(np.argmin([ssr(k) for k in grid]))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    g = (math.sqrt(5) - 1) / 2
    while b - a > 1e-9:
        c1, c2 = b - g * (b - a), a + g * (b - a)
        if ssr(c1) <= ssr(c2):
            b = c2
        else:
            a = c1
    k = (a + b) / 2
    x = np.exp(k * lp)
    c = float(np.sum(x * y) / np.sum(x * x))
    n = len(y)
    resid = y - c * x
    s2 = float(np.sum(resid**2)) / (n - 2) if n > 2 else math.nan
    jac = np.column_stack([x, c * x * lp])
    try:
        cov = s2 * np.linalg.inv(jac.T @ jac)
        c_err, k_err = math.sqrt(max(cov[0, 0], 0.0)), math.sqrt(max(cov[1, 1], 0.0))
    except np.linalg.LinAlgError:
        c_err = k_err = math.nan
    log_resid = np.log(y) - np.log(c * x)
    return Fit(
        C=c,
        C_err=c_err,
        k=float(k),
        k_err=k_err,
        n=n,
        rms_log=float(np.sqrt(np.mean(log_resid**2))),
        C_sd=c * float(np.sqrt(np.sum(log_resid**2) / (n - 2))) if n > 2 else math.nan,
        k_fixed=False,
    )


# --------------------------------------------------------------------------------------------------
# Proportion of successful W/2 adjustments (Mathis Fig. 8, Table 4 right)
# --------------------------------------------------------------------------------------------------


def halving_share(ca_events, non_ca_events) -> float:
    """CA / (CA + non-CA): the proportion of loss episodes handled by a clock-preserving halving.

    Scalars, or arrays of per-run counts (pooled: sums over the runs, which weights each run by its
    number of episodes). NaN when there was no episode at all.
    """
    ca = _vector("ca_events", ca_events, nonnegative=True)
    nonca = _vector("non_ca_events", non_ca_events, nonnegative=True)
    _same_length(ca_events=ca, non_ca_events=nonca)
    total = ca.sum() + nonca.sum()
    return float(ca.sum() / total) if total > 0 else math.nan


def share_at(p, ca, nonca, p0, rel_band=0.25):
    """`halving_share` pooled over the runs whose loss rate p lies near p0.

    A run is taken when p0/(1 + rel_band) <= p <= p0*(1 + rel_band), a band symmetric in log p
    (default 0.8 p0 ... 1.25 p0). Use it to read the Table 4 columns at p = 0.01, 0.033, 0.1 off a
    sweep. p0 may be a scalar (float result) or an array (array result); NaN where no run with an
    episode falls in the band.
    """
    p = _vector("p", p, positive=True)
    ca = _vector("ca", ca, nonnegative=True)
    nonca = _vector("nonca", nonca, nonnegative=True)
    _same_length(p=p, ca=ca, nonca=nonca)
    rel_band = float(rel_band)
    if not (math.isfinite(rel_band) and rel_band > 0):
        raise ValueError(f"rel_band must be finite and > 0, got {rel_band}")
    targets = np.asarray(p0, dtype=float)
    flat = _vector("p0", targets.ravel(), positive=True)
    half_width = math.log1p(rel_band)
    shares = np.empty(len(flat))
    for i, target in enumerate(flat):
        near = np.abs(np.log(p / target)) <= half_width * (1 + 1e-12)
        total = ca[near].sum() + nonca[near].sum()
        shares[i] = ca[near].sum() / total if total > 0 else math.nan
    return float(shares[0]) if targets.ndim == 0 else shares.reshape(targets.shape)


# --------------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------------


def jain_index(x) -> float:
    """Jain's fairness index (Σx)² / (N Σx²): 1 for equal shares, 1/N when one of N has everything.

    x must be non-negative (throughputs, transfer times, ...). NaN when every x is 0 (undefined).
    """
    x = _vector("x", x, nonnegative=True)
    sq = float(np.sum(x**2))
    return float(np.sum(x) ** 2 / (len(x) * sq)) if sq > 0 else math.nan


def network_power(goodput, delay):
    """Network power, goodput / delay (RFC 2415 uses goodput over median delay). Floats or arrays."""
    return _ratio(goodput, delay, "goodput", "delay")


def _ratio(num, den, num_name: str, den_name: str):
    """num / den for floats or arrays, num finite and >= 0, den finite and > 0."""
    n = np.asarray(num, dtype=float)
    d = np.asarray(den, dtype=float)
    if not np.all(np.isfinite(n) & (n >= 0)):
        raise ValueError(f"{num_name} must be finite and >= 0")
    if not np.all(np.isfinite(d) & (d > 0)):
        raise ValueError(f"{den_name} must be finite and > 0")
    try:
        out = n / d
    except ValueError as e:  # numpy's broadcast error, restated
        raise ValueError(f"{num_name} {n.shape} and {den_name} {d.shape} do not broadcast together") from e
    return float(out) if out.ndim == 0 else out


def quantiles(x, qs=(0.1, 0.25, 0.5, 0.75, 0.9)) -> dict:
    """{q: quantile of x} for each q in qs (numpy's default linear interpolation between order statistics)."""
    x = _vector("x", x)
    q = _vector("qs", qs)
    if not np.all((q >= 0) & (q <= 1)):
        raise ValueError(f"qs must lie in [0, 1], got {q.tolist()}")
    values = np.quantile(x, q)
    return {float(qi): float(v) for qi, v in zip(q, values)}


def median(x) -> float:
    """The median of x."""
    return float(np.median(_vector("x", x)))


def ecdf(x):
    """The empirical CDF: (x sorted, F) with F[i] = (i+1)/N, the fraction of values <= x[i]."""
    x = np.sort(_vector("x", x))
    return x, np.arange(1, len(x) + 1) / len(x)


def interpolate_at(p, y, p0):
    """y at p0 by linear interpolation of ln y against ln p (a straight line on the log-log plot).

    p, y: a sweep curve (any order; y at repeated p values is averaged in log space, i.e. the
    geometric mean of replicates). p0: a scalar (float result) or an array. Refuses to extrapolate:
    every p0 must lie within [min p, max p].
    """
    p = _vector("p", p, positive=True)
    y = _vector("y", y, positive=True)
    _same_length(p=p, y=y)
    targets = np.asarray(p0, dtype=float)
    flat = _vector("p0", targets.ravel(), positive=True)
    lp, ly = np.log(p), np.log(y)
    grid, inverse = np.unique(lp, return_inverse=True)
    ly_mean = np.bincount(inverse, weights=ly) / np.bincount(inverse)
    lt = np.log(flat)
    # Tolerate rounding at the ends (p0 given as exactly the smallest or largest p).
    eps = 1e-12 * max(1.0, float(np.max(np.abs(grid))))
    outside = (lt < grid[0] - eps) | (lt > grid[-1] + eps)
    if np.any(outside):
        raise ValueError(
            f"p0 {flat[outside][:3].tolist()} outside the sampled p range [{p.min():g}, {p.max():g}]; "
            "interpolate_at does not extrapolate"
        )
    out = np.exp(np.interp(np.clip(lt, grid[0], grid[-1]), grid, ly_mean))
    return float(out[0]) if targets.ndim == 0 else out.reshape(targets.shape)


# Applications (RFC 2415 §2.4; TARGETS.md §2.4)
# --------------------------------------------------------------------------------------------------


def _apps_of(result, apps, table: str):
    """The rows of result.<table> of the applications named in `apps` (a name or a list; None:
    all), and the names asked for."""
    df = getattr(result, table, None)
    if df is None:
        raise ValueError(f"expected a tcplab Result (with .{table}), got {type(result).__name__}")
    names = None if apps is None else ([apps] if isinstance(apps, str) else list(apps))
    if df.empty:
        return df, names
    if names is not None:
        known = set(df["client"])
        missing = [n for n in names if n not in known]
        if missing:
            raise ValueError(f"no {table} of application(s) {missing}; the run has: {sorted(known)}")
        df = df[df["client"].isin(names)]
    return df, names


def median_page_delay(result, apps=None) -> float:
    """RFC 2415's median web page delay, in seconds: the median of `delay_s` over the completed
    pages of `apps` (an application name or a list; None: every web client). Pages cut short by the
    end of the run, or whose object's connection gave up, have no delay and are not counted (the
    RFC counts completed pages); with a warmup only the pages after it are in the records."""
    pages, _ = _apps_of(result, apps, "pages")
    delays = pages["delay_s"].dropna().to_numpy(dtype=float) if not pages.empty else np.array([])
    if len(delays) == 0:
        raise ValueError("no completed page" + ("" if apps is None else f" of {apps!r}"))
    return float(np.median(delays))


def _window_s(result) -> float:
    """The measured time of a run: its simulated time, less the warmup."""
    end = float(result.meta["sim_time_s"])
    w = result.scenario.get("warmup")
    start = _duration_s(w) if w else 0.0
    if not end > start:
        raise ValueError(f"the run measured no time (sim_time_s {end}, warmup {w!r})")
    return end - start


def _duration_s(text) -> float:
    return units.seconds(text, "warmup")


def _useful_bytes(result, objects):
    """Per object row, the bytes its application fetched: the response delivered at the client, or
    for an FTP upload (`direction = "upload"`) the file delivered at the server."""
    uploads = {
        a.get("name") or f"app{i}"
        for i, a in enumerate(result.scenario.get("apps", []))
        if a.get("kind") == "ftp" and a.get("direction") == "upload"
    }
    up = objects["client"].isin(uploads)
    request = objects["request_delivered"] if "request_delivered" in objects else 0
    return objects["bytes_delivered"].where(~up, request)


def app_goodput(result):
    """Per-application goodput: a DataFrame with one row per application that fetched objects,
    columns app, client (its name), objects, complete (objects whose response was delivered in
    full), bytes (response bytes delivered to the client; for an FTP upload, the file bytes
    delivered to the server), mbytes (bytes / 10^6, RFC 2415's "MB delivered"), goodput_bps (bits per second over
    the measured time: the run less its warmup)."""
    import pandas as pd

    objects, _ = _apps_of(result, None, "objects")
    cols = ["app", "client", "objects", "complete", "bytes", "mbytes", "goodput_bps"]
    if objects.empty:
        return pd.DataFrame(columns=cols)
    window = _window_s(result)
    objects = objects.assign(_useful=_useful_bytes(result, objects))
    g = objects.groupby(["app", "client"], sort=True)
    out = pd.DataFrame({
        "objects": g.size(),
        "complete": g["delivered_s"].apply(lambda x: int(x.notna().sum())),
        "bytes": g["_useful"].sum().astype("int64"),
    }).reset_index()
    out["mbytes"] = out["bytes"] / 1e6
    out["goodput_bps"] = out["bytes"] * 8.0 / window
    return out[cols]


def rfc2415_power(result, apps=None, delay: str = "page") -> float:
    """RFC 2415's network power of `apps` (a name, a list, None: all): their goodput in MB
    (10^6 bytes delivered over the run) divided by their median delay in seconds — TARGETS.md §2.4's
    reading of the RFC's Tables 3 and 5 (8 web clients and 1 FTP: about 40 MB / 9 s = 4.5).

    delay = "page": the median web page delay (web power, the RFC's Figs. 1–2); delay = "object":
    the median time from opening an object's connection to its last byte delivered (FTP power of
    Tables 3 and 5: the median file-transfer delay of FTP clients). Compare scenarios with
    `normalised_power`."""
    objects, names = _apps_of(result, apps, "objects")
    if objects.empty:
        raise ValueError("no objects" + ("" if apps is None else f" of {apps!r}"))
    mbytes = float(_useful_bytes(result, objects).sum()) / 1e6
    if delay == "page":
        d = median_page_delay(result, names)
    elif delay == "object":
        done = objects.dropna(subset=["delivered_s"])
        if done.empty:
            raise ValueError("no completed object" + ("" if apps is None else f" of {apps!r}"))
        d = float(np.median(done["delivered_s"].to_numpy(float) - done["start_s"].to_numpy(float)))
    else:
        raise ValueError(f"delay must be \"page\" or \"object\", got {delay!r}")
    return network_power(mbytes, d)


def normalised_power(power, baseline):
    """Power relative to a baseline run, power / baseline (RFC 2415 Fig. 2: power(IW) / power(IW=1)).
    Floats or arrays; the baseline must be finite and > 0."""
    return _ratio(power, baseline, "power", "baseline")
