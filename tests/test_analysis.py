"""Fits and summaries of `tcplab.analysis`: exact data gives exact answers, noisy data the stated accuracy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tcplab
from tcplab import analysis as a

P_GRID = np.logspace(-4, -1, 12)  # four decades of loss, as in Mathis Figs. 3-4


def noisy_windows(c, k, n, sigma, seed):
    """n runs with p uniform in log p over 1e-4 ... 1e-1 and y = C p^k e^eps, eps ~ N(0, sigma)."""
    rng = np.random.default_rng(seed)
    p = 10 ** rng.uniform(-4, -1, n)
    return c * p**k * np.exp(rng.normal(0, sigma, n)), p


# -- fit_c (eq. 3, k = -1/2) ----------------------------------------------------------------------


def test_fit_c_exact_data():
    fit = a.fit_c(0.938 / np.sqrt(P_GRID), P_GRID)
    assert fit.C == pytest.approx(0.938, rel=1e-12)
    assert fit.C_err == pytest.approx(0.0, abs=1e-12)
    assert fit.C_sd == pytest.approx(0.0, abs=1e-12)
    assert fit.rms_log == pytest.approx(0.0, abs=1e-12)
    assert (fit.k, fit.k_err, fit.n, fit.k_fixed) == (-0.5, 0.0, 12, True)


def test_fit_c_is_the_geometric_mean_of_per_run_c():
    y = np.array([12.0, 40.0, 95.0])
    p = np.array([0.01, 0.001, 0.0002])
    per_run = y * np.sqrt(p)  # 1.2, 1.2649, 1.3435
    fit = a.fit_c(y, p)
    assert fit.C == pytest.approx(np.exp(np.mean(np.log(per_run))))
    sd = np.std(np.log(per_run), ddof=1)
    assert fit.C_sd == pytest.approx(fit.C * sd)
    assert fit.C_err == pytest.approx(fit.C * sd / math.sqrt(3))
    assert fit.rms_log == pytest.approx(np.std(np.log(per_run)))


def test_fit_c_noisy_within_tolerance():
    # 10 % log-normal scatter, 200 runs: the standard error of ln C is 0.1/sqrt(200) = 0.007.
    y, p = noisy_windows(1.31, -0.5, 200, 0.1, seed=4)
    fit = a.fit_c(y, p)
    assert fit.C == pytest.approx(1.31, rel=0.03)  # about 4 standard errors
    assert abs(fit.C - 1.31) < 4 * fit.C_err
    assert fit.C_err == pytest.approx(1.31 * 0.1 / math.sqrt(200), rel=0.2)
    assert fit.C_sd == pytest.approx(1.31 * 0.1, rel=0.2)
    assert fit.rms_log == pytest.approx(0.1, rel=0.2)


def test_fit_c_other_fixed_k():
    fit = a.fit_c(0.7 * P_GRID**-0.6, P_GRID, k=-0.6)
    assert fit.C == pytest.approx(0.7) and fit.k == -0.6 and fit.k_fixed
    # Fitting the wrong exponent leaves a trend in the residuals.
    assert a.fit_c(0.7 * P_GRID**-0.6, P_GRID).rms_log > 0.1


def test_fit_c_single_run():
    fit = a.fit_c([10.0], [0.01])
    assert fit.C == pytest.approx(1.0)
    assert math.isnan(fit.C_err) and math.isnan(fit.C_sd)


def test_standard_errors_shrink_with_n():
    # Averaged over 40 data sets per size, so that one unlucky small sample cannot decide the test.
    def mean_errors(n):
        fits_c = [a.fit_c(*noisy_windows(0.93, -0.5, n, 0.15, seed=s)) for s in range(40)]
        fits_ck = [a.fit_ck(*noisy_windows(0.93, -0.5, n, 0.15, seed=s)) for s in range(40)]
        return (
            np.mean([f.C_err for f in fits_c]),
            np.mean([f.C_sd for f in fits_c]),
            np.mean([f.k_err for f in fits_ck]),
            np.mean([f.C_err for f in fits_ck]),
        )

    errors = {n: mean_errors(n) for n in (10, 100, 1000)}
    for small, large in ((10, 100), (100, 1000)):
        ce_s, sd_s, ke_s, cke_s = errors[small]
        ce_l, sd_l, ke_l, cke_l = errors[large]
        # se ~ 1/sqrt(N): ten times the runs, about a third of the error; the SD stays put.
        assert ce_l / ce_s == pytest.approx(1 / math.sqrt(10), rel=0.25)
        assert ke_l / ke_s == pytest.approx(1 / math.sqrt(10), rel=0.3)
        assert cke_l / cke_s == pytest.approx(1 / math.sqrt(10), rel=0.3)
        assert sd_l == pytest.approx(sd_s, rel=0.15)
    # For fit_c the standard error is exactly the SD over sqrt(N).
    fit = a.fit_c(*noisy_windows(0.93, -0.5, 64, 0.15, seed=3))
    assert fit.C_err == pytest.approx(fit.C_sd / 8)


# -- fit_ck (eq. 5, k free) -----------------------------------------------------------------------


def test_fit_ck_exact_data():
    fit = a.fit_ck(1.205 * P_GRID**-0.513, P_GRID)
    assert fit.C == pytest.approx(1.205, rel=1e-10)
    assert fit.k == pytest.approx(-0.513, rel=1e-10)
    assert fit.k_err == pytest.approx(0.0, abs=1e-9)
    assert fit.C_err == pytest.approx(0.0, abs=1e-9)
    assert fit.rms_log == pytest.approx(0.0, abs=1e-12)
    assert fit.n == 12 and not fit.k_fixed


def test_fit_ck_two_points_is_the_line_through_them():
    fit = a.fit_ck([10.0, 100.0], [0.01, 0.0001])  # a decade in y per two decades in p
    assert fit.k == pytest.approx(-0.5)
    assert fit.C == pytest.approx(1.0)
    assert math.isnan(fit.k_err) and math.isnan(fit.C_err)  # no residual degrees of freedom


def test_fit_ck_noisy_within_tolerance():
    y, p = noisy_windows(0.75, -0.52, 300, 0.1, seed=7)
    fit = a.fit_ck(y, p)
    # ln p spans 3 decades (sd about 2.0), so se(k) is about 0.1/(2.0 sqrt(300)) = 0.003.
    assert fit.k == pytest.approx(-0.52, abs=0.015)
    assert abs(fit.k + 0.52) < 4 * fit.k_err
    assert fit.k_err == pytest.approx(0.1 / (np.std(np.log(p)) * math.sqrt(300)), rel=0.1)
    assert abs(math.log(fit.C / 0.75)) < 4 * fit.C_err / fit.C
    assert fit.C == pytest.approx(0.75, rel=0.15)


def test_fit_ck_errors_against_textbook_ols():
    # Standard errors equal numpy's covariance of a degree-1 polyfit in log space.
    y, p = noisy_windows(1.0, -0.5, 40, 0.2, seed=11)
    fit = a.fit_ck(y, p)
    (slope, intercept), cov = np.polyfit(np.log(p), np.log(y), 1, cov="unscaled")
    resid = np.log(y) - (intercept + slope * np.log(p))
    s2 = np.sum(resid**2) / (40 - 2)
    assert fit.k == pytest.approx(slope)
    assert fit.C == pytest.approx(math.exp(intercept))
    assert fit.k_err == pytest.approx(math.sqrt(s2 * cov[0, 0]))
    assert fit.C_err == pytest.approx(fit.C * math.sqrt(s2 * cov[1, 1]))


def test_fit_str():
    fixed = a.Fit(C=0.9381, C_err=0.0362, k=-0.5, k_err=0.0, n=10, rms_log=0.05, k_fixed=True)
    assert str(fixed) == "C = 0.938 ± 0.036 (k = −1/2, N = 10)"
    free = a.Fit(C=0.792, C_err=0.012, k=-0.518, k_err=0.0041, n=10, rms_log=0.05)
    assert str(free) == "C = 0.792 ± 0.012, k = −0.518 ± 0.004 (N = 10)"
    assert "k = −1/2" in str(a.fit_c(1 / np.sqrt(P_GRID), P_GRID))


# -- Halving share --------------------------------------------------------------------------------


def test_halving_share():
    assert a.halving_share(99, 1) == pytest.approx(0.99)
    assert a.halving_share(0, 5) == 0.0
    # Arrays are pooled: (10 + 90) / (10 + 90 + 10 + 0).
    assert a.halving_share([10, 90], [10, 0]) == pytest.approx(100 / 110)
    assert math.isnan(a.halving_share(0, 0))
    assert math.isnan(a.halving_share([0, 0], [0, 0]))


def test_share_at_pools_runs_near_p0():
    p = np.array([0.0079, 0.0081, 0.01, 0.0124, 0.0126, 0.033, 0.1])
    ca = np.array([1000, 50, 90, 80, 1000, 30, 5])
    nonca = np.array([0, 50, 10, 20, 0, 10, 15])
    # Band 0.8 p0 ... 1.25 p0 around 0.01: runs 2-4 only.
    assert a.share_at(p, ca, nonca, 0.01) == pytest.approx((50 + 90 + 80) / (50 + 90 + 80 + 50 + 10 + 20))
    np.testing.assert_allclose(a.share_at(p, ca, nonca, np.array([0.033, 0.1])), [0.75, 0.25])
    assert math.isnan(a.share_at(p, ca, nonca, 0.3))  # nothing in the band
    # A wider band takes in the outer runs too.
    assert a.share_at(p, ca, nonca, 0.01, rel_band=0.3) == pytest.approx((2220) / (2220 + 80))


# -- Metrics --------------------------------------------------------------------------------------


def test_jain_index_known_values():
    assert a.jain_index([3.0, 3.0, 3.0, 3.0]) == pytest.approx(1.0)
    assert a.jain_index([0, 0, 7.0, 0, 0]) == pytest.approx(1 / 5)
    assert a.jain_index([1.0, 3.0]) == pytest.approx(16 / 20)
    # FI = 1/(1 + CV^2) with the population CV (the self-check of TARGETS §7 rank 6).
    x = np.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    assert a.jain_index(x) == pytest.approx(1 / (1 + (x.std() / x.mean()) ** 2))
    assert math.isnan(a.jain_index([0.0, 0.0]))


def test_network_power():
    assert a.network_power(8e5, 0.5) == pytest.approx(1.6e6)
    np.testing.assert_allclose(a.network_power(np.array([1.0, 2.0]), np.array([2.0, 4.0])), [0.5, 0.5])


def test_quantiles_median_and_ecdf():
    x = np.arange(1.0, 12.0)  # 1 ... 11
    q = a.quantiles(x)
    assert list(q) == [0.1, 0.25, 0.5, 0.75, 0.9]
    assert q == pytest.approx({0.1: 2.0, 0.25: 3.5, 0.5: 6.0, 0.75: 8.5, 0.9: 10.0})
    assert a.quantiles([5.0, 1.0], qs=(0.0, 1.0)) == {0.0: 1.0, 1.0: 5.0}
    assert a.median([3.0, 1.0, 2.0, 10.0]) == 2.5
    xs, f = a.ecdf([3.0, 1.0, 2.0, 2.0])
    assert xs.tolist() == [1.0, 2.0, 2.0, 3.0]
    assert f.tolist() == [0.25, 0.5, 0.75, 1.0]


def test_interpolate_at_log_log():
    # A power law is a straight line in log-log: interpolation is exact between grid points.
    y = 0.9 * P_GRID**-0.5
    for p0 in (0.01, 0.033, 0.1, 1e-4):
        assert a.interpolate_at(P_GRID, y, p0) == pytest.approx(0.9 / math.sqrt(p0))
    out = a.interpolate_at(P_GRID[::-1], y[::-1], np.array([0.002, 0.05]))  # order does not matter
    np.testing.assert_allclose(out, 0.9 / np.sqrt([0.002, 0.05]))
    # Replicates at one p are averaged geometrically.
    assert a.interpolate_at([0.01, 0.01, 0.1], [4.0, 9.0, 1.0], 0.01) == pytest.approx(6.0)
    # Halfway in log p between 0.01 and 0.1 -> geometric mean of 6 and 1.
    assert a.interpolate_at([0.01, 0.01, 0.1], [4.0, 9.0, 1.0], math.sqrt(0.001)) == pytest.approx(math.sqrt(6.0))


def test_fit_c_ls_exact_data_and_closed_form():
    p = np.logspace(-4, -1, 8)
    f = a.fit_c_ls(1.3 / np.sqrt(p), p)
    assert f.C == pytest.approx(1.3) and f.k == -0.5 and f.k_fixed and f.n == 8
    assert f.C_err == pytest.approx(0.0, abs=1e-12)
    # Two runs by hand: C = sum(x*y) / sum(x^2), x = p^-1/2.
    y, q = np.array([100.0, 12.0]), np.array([1e-4, 1e-2])
    x = q**-0.5
    assert a.fit_c_ls(y, q).C == pytest.approx((x @ y) / (x @ x))


def test_least_squares_fit_is_dominated_by_the_low_p_runs():
    # C falls with p (as the simulated TCPs' does): C = 1.3 at p = 1e-4 down to 0.9 at p = 0.1.
    # Least squares of y (the paper's fit) lands near the low-p value; the log fit in the middle.
    p = np.logspace(-4, -1, 7)
    c_true = np.interp(np.log10(p), [-4, -1], [1.3, 0.9])
    y = c_true / np.sqrt(p)
    lin, log = a.fit_c_ls(y, p), a.fit_c(y, p)
    assert 1.25 < lin.C < 1.3
    assert log.C == pytest.approx(np.exp(np.mean(np.log(c_true))))
    assert lin.C > log.C + 0.1


def test_fit_ck_ls_exact_and_noisy():
    p = np.logspace(-4, -1, 9)
    f = a.fit_ck_ls(1.2 * p**-0.52, p)
    assert f.C == pytest.approx(1.2, rel=1e-6) and f.k == pytest.approx(-0.52, abs=1e-6) and not f.k_fixed
    rng = np.random.default_rng(3)
    y = 1.2 * p**-0.52 * np.exp(rng.normal(0.0, 0.03, len(p)))
    f = a.fit_ck_ls(y, p)
    assert abs(f.k + 0.52) < 3 * f.k_err + 0.01 and f.k_err > 0 and f.C_err > 0
    with pytest.raises(ValueError, match="two distinct"):
        a.fit_ck_ls([1.0, 2.0], [0.01, 0.01])


def test_package_exports():
    assert tcplab.analysis is a
    assert "analysis" in tcplab.__all__ and "models" in tcplab.__all__
    assert tcplab.models.mathis_window(0.01, C=1.0) == pytest.approx(10.0)


# -- Input checks ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: a.fit_c([1.0, 2.0], [0.01]), "lengths differ"),
        (lambda: a.fit_c([1.0, -2.0], [0.01, 0.02]), "y must be > 0"),
        (lambda: a.fit_c([1.0, 2.0], [0.0, 0.02]), "p must be > 0"),
        (lambda: a.fit_c([], []), "at least 1"),
        (lambda: a.fit_c([1.0, np.nan], [0.01, 0.02]), "finite"),
        (lambda: a.fit_ck([1.0], [0.01]), "at least 2"),
        (lambda: a.fit_ck([1.0, 2.0], [0.01, 0.01]), "two distinct"),
        (lambda: a.fit_ck([[1.0, 2.0]], [[0.1, 0.2]]), "one-dimensional"),
        (lambda: a.halving_share([1, 2], [1]), "lengths differ"),
        (lambda: a.halving_share(-1, 2), "must be >= 0"),
        (lambda: a.share_at([0.01], [1], [1, 2], 0.01), "lengths differ"),
        (lambda: a.share_at([0.01], [1], [1], 0.01, rel_band=0), "rel_band"),
        (lambda: a.jain_index([]), "at least 1"),
        (lambda: a.jain_index([1.0, -1.0]), "must be >= 0"),
        (lambda: a.network_power(1.0, 0.0), "delay must be"),
        (lambda: a.network_power(np.ones(2), np.ones(3)), "broadcast"),
        (lambda: a.quantiles([1.0], qs=(1.5,)), r"qs must lie in \[0, 1\]"),
        (lambda: a.median([]), "at least 1"),
        (lambda: a.ecdf([1.0, np.inf]), "finite"),
        (lambda: a.interpolate_at([0.01, 0.1], [1.0, 2.0], 0.5), "does not extrapolate"),
        (lambda: a.interpolate_at([0.01, 0.1], [1.0, 0.0], 0.05), "y must be > 0"),
    ],
)
def test_bad_input_raises(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- applications: page delay, goodput, network power (RFC 2415 §2.4) ------------------------------

WEB = """
duration = "{duration}"
{warmup}
[topology]
kind = "dumbbell"
pairs = 2
access_rate = "10Mbps"
access_delay = "1ms"
bottleneck_rate = "1.5Mbps"
bottleneck_delay = "50ms"
queue = 25

[[apps]]
kind = "http10"
name = "web1"
client = "r1"
server = "s1"
response = {{ exponential = "2920B" }}
pages = "unlimited"
think = {{ uniform = ["1s", "5s"] }}

[[apps]]
kind = "ftp"
name = "ftp1"
client = "r2"
server = "s2"
file = "1MB"
count = "unlimited"
"""


def web_run(duration="60s", warmup=""):
    return tcplab.run(WEB.format(duration=duration, warmup=warmup), seed=1)


def test_median_page_delay_is_the_median_of_the_completed_pages():
    r = web_run()
    delays = r.pages["delay_s"].dropna()
    assert len(delays) >= 5
    assert a.median_page_delay(r) == pytest.approx(float(np.median(delays)))
    assert a.median_page_delay(r, "web1") == a.median_page_delay(r)
    # Each page's delay is its completion less its start, and at least a round trip (104 ms).
    assert a.median_page_delay(r) > 0.104
    with pytest.raises(ValueError, match="nowhere"):
        a.median_page_delay(r, "nowhere")
    with pytest.raises(ValueError, match="no pages of application"):
        a.median_page_delay(r, "ftp1")


def test_app_goodput_adds_up_the_objects_over_the_measured_time():
    r = web_run()
    g = a.app_goodput(r).set_index("client")
    assert list(g.index) == ["web1", "ftp1"]  # by application index
    for name in ["web1", "ftp1"]:
        rows = r.objects[r.objects["client"] == name]
        assert g.loc[name, "objects"] == len(rows)
        assert g.loc[name, "bytes"] == rows["bytes_delivered"].sum()
        assert g.loc[name, "goodput_bps"] == pytest.approx(rows["bytes_delivered"].sum() * 8 / 60.0)
        assert g.loc[name, "mbytes"] == pytest.approx(g.loc[name, "bytes"] / 1e6)
    # Together they stay within the 1.5 Mb/s bottleneck, and the FTP client takes most of it.
    assert g["goodput_bps"].sum() <= 1.5e6
    assert g.loc["ftp1", "goodput_bps"] > g.loc["web1", "goodput_bps"]
    # Every FTP file but the one cut short by the end of the run is complete (1 MB = 2^20 bytes).
    ftp = r.objects[r.objects["client"] == "ftp1"]
    assert (ftp["bytes_delivered"].iloc[:-1] == 2**20).all()


def test_goodput_after_a_warmup_counts_the_objects_after_it_over_the_time_after_it():
    r = web_run(duration="60s", warmup='warmup = "20s"')
    assert (r.objects["start_s"] >= 20.0).all() and (r.pages["start_s"] >= 20.0).all()
    g = a.app_goodput(r).set_index("client")
    rows = r.objects[r.objects["client"] == "web1"]
    assert g.loc["web1", "goodput_bps"] == pytest.approx(rows["bytes_delivered"].sum() * 8 / 40.0)


def test_rfc2415_power_is_goodput_in_mb_over_the_median_delay_in_s():
    r = web_run()
    web = r.objects[r.objects["client"] == "web1"]
    want = web["bytes_delivered"].sum() / 1e6 / a.median_page_delay(r, "web1")
    assert a.rfc2415_power(r, "web1") == pytest.approx(want)
    ftp = r.objects[(r.objects["client"] == "ftp1")].dropna(subset=["delivered_s"])
    file_delay = float(np.median(ftp["delivered_s"] - ftp["start_s"]))
    ftp_all = r.objects[r.objects["client"] == "ftp1"]
    assert a.rfc2415_power(r, "ftp1", delay="object") == pytest.approx(ftp_all["bytes_delivered"].sum() / 1e6 / file_delay)
    # A 1 MB file over 1.5 Mb/s takes at least 5.3 s: the FTP power is at most goodput / 5.3.
    assert file_delay > 8e6 / 1.5e6
    with pytest.raises(ValueError, match="delay must be"):
        a.rfc2415_power(r, "web1", delay="median")
    with pytest.raises(ValueError, match="no pages of application"):
        a.rfc2415_power(r, "ftp1")


def test_normalised_power():
    assert a.normalised_power(4.5, 3.0) == pytest.approx(1.5)
    np.testing.assert_allclose(a.normalised_power(np.array([3.0, 6.0]), 3.0), [1.0, 2.0])
    for bad in [0.0, -1.0, math.nan, math.inf]:
        with pytest.raises(ValueError, match="baseline"):
            a.normalised_power(1.0, bad)
    with pytest.raises(ValueError, match="power"):
        a.normalised_power(-1.0, 1.0)


def test_app_helpers_refuse_what_is_not_a_result_and_runs_without_apps():
    with pytest.raises(ValueError, match="Result"):
        a.median_page_delay({"pages": []})
    r = tcplab.run('[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "1ms"\n[[flows]]\nbytes = 1000\n', seed=1)
    assert a.app_goodput(r).empty
    with pytest.raises(ValueError, match="no completed page"):
        a.median_page_delay(r)
    with pytest.raises(ValueError, match="no objects"):
        a.rfc2415_power(r)


def test_goodput_of_an_upload_counts_the_file_at_the_server():
    r = tcplab.run(
        '[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "5ms"\n'
        '[[apps]]\nkind = "ftp"\nname = "up"\ndirection = "upload"\nfile = "100KB"\ncount = 3\n',
        seed=1,
    )
    g = a.app_goodput(r).set_index("client")
    assert g.loc["up", "bytes"] == 3 * 102400
    assert (r.objects["request_delivered"] == 102400).all() and (r.objects["bytes_delivered"] == 24).all()
