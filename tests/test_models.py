"""The closed-form models of `tcplab.models` against the numbers of Mathis et al. 1997 and hand arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tcplab import models as m

MBPS_IN_BYTES = 1e6 / 8  # 1 Mb/s in bytes per second


# -- Table 1 and the sawtooth ---------------------------------------------------------------------


def test_table1_constants():
    assert m.C_TABLE1 == {
        ("periodic", "every"): 1.22,
        ("periodic", "delayed"): 0.87,
        ("random", "every"): 1.31,
        ("random", "delayed"): 0.93,
    }
    assert m.C_PERIODIC_EVERY == pytest.approx(1.2247448713915890)
    assert m.C_PERIODIC_DELAYED == pytest.approx(0.8660254037844386)
    # Delayed ACKs halve the window growth and lower C by sqrt(2) (§2).
    assert m.C_PERIODIC_EVERY / m.C_PERIODIC_DELAYED == pytest.approx(math.sqrt(2))
    # The printed values are the exact ones rounded to two places.
    assert round(m.C_PERIODIC_EVERY, 2) == m.C_TABLE1[("periodic", "every")]
    assert round(m.C_PERIODIC_DELAYED, 2) == m.C_TABLE1[("periodic", "delayed")]


def test_sawtooth_p_001():
    s = m.sawtooth(0.01)
    w = math.sqrt(800 / 3)  # 16.33 packets
    assert s["W"] == pytest.approx(w)
    assert s["W_min"] == pytest.approx(w / 2)
    assert s["packets_per_cycle"] == pytest.approx(100.0)
    assert s["cycle_rtts"] == pytest.approx(w / 2)
    # Packets in one cycle: the trapezoid under the window, (W/2)^2 + (W/2)^2/2 = 3W^2/8 = 1/p.
    assert (w / 2) ** 2 + 0.5 * (w / 2) ** 2 == pytest.approx(s["packets_per_cycle"])
    # Average window = packets per cycle / RTTs per cycle = C/sqrt(p) with C = sqrt(3/2).
    assert s["window_avg"] == pytest.approx(s["packets_per_cycle"] / s["cycle_rtts"])
    assert s["window_avg"] == pytest.approx(m.mathis_window(0.01))


def test_sawtooth_vectorised():
    p = np.array([1e-4, 1e-2, 0.25])
    s = m.sawtooth(p)
    assert isinstance(s["W"], np.ndarray) and s["W"].shape == (3,)
    np.testing.assert_allclose(3 * s["W"] ** 2 / 8, 1 / p)
    assert isinstance(m.sawtooth(0.5)["W"], float)


def test_mathis_window_and_bw_agree():
    # One MSS per RTT times the window in packets.
    for p in (1e-5, 1e-3, 0.05):
        assert m.mathis_bw(1460, 0.08, p) == pytest.approx(1460 / 0.08 * m.mathis_window(p))
    assert m.mathis_window(0.0001, C=0.9) == pytest.approx(90.0)
    # eq. 5 with k = -1/2 is eq. 3.
    assert m.mathis_bw_k(536, 0.1, 0.003, 0.93, -0.5) == pytest.approx(m.mathis_bw(536, 0.1, 0.003, 0.93))
    # eq. 5 with another k: (MSS/RTT) C p^k.
    assert m.mathis_bw_k(1000, 0.2, 0.01, 0.6, -0.6) == pytest.approx(5000 * 0.6 * 0.01**-0.6)


def test_mathis_bw_vectorised_and_scalar():
    p = np.logspace(-4, -1, 4)
    bw = m.mathis_bw(1000, 0.1, p, C=1.0)
    assert isinstance(bw, np.ndarray)
    np.testing.assert_allclose(bw, 10_000 / np.sqrt(p))
    # Each factor of 100 in p costs a factor of 10 in bandwidth.
    assert bw[0] / bw[2] == pytest.approx(10.0)
    assert isinstance(m.mathis_bw(1000, 0.1, 0.01), float)
    # Broadcast over RTT as well.
    assert m.mathis_bw(1000, np.array([0.1, 0.2]), 0.01).tolist() == pytest.approx(
        [10_000 * m.C_PERIODIC_EVERY * 10, 5_000 * m.C_PERIODIC_EVERY * 10]
    )


# -- Tables 2 and 3: the model cells ---------------------------------------------------------------

# (p as events / packets, RTT in seconds, the recomputed model in kb/s, the published cell).
# Link Model uses the link's p (drops / packets) and the connection's RTT Estimate; TCP Model the
# connection's own p (CA events / packets acknowledged) and its TCP RTT. C = 0.8, MSS = 1000 B.
TABLE2_CELLS = [
    ("T2 DT TCP1 link", 259 / 48795, 0.305, 288.0, 288),
    ("T2 DT TCP1 tcp", 103 / 8287, 0.325, 176.6, 177),
    ("T2 DT TCP2 link", 259 / 48795, 0.315, 278.9, 279),
    ("T2 DT TCP2 tcp", 41 / 40508, 0.315, 638.6, 638),
    ("T2 RED TCP1 link", 139 / 49853, 0.299, 405.4, 405),
    ("T2 RED TCP1 tcp", 64 / 26851, 0.304, 431.2, 432),
    ("T2 RED TCP2 tcp", 73 / 23002, 0.307, 370.1, 370),
    ("T3 DT TCP1 link", 20 / 50000, 1.022, 313.1, 313),
    ("T3 DT TCP2 tcp", 5 / 34750, 1.029, 518.5, 518),
    ("T3 RED TCP1 tcp", 68 / 25039, 0.304, 404.0, 404),
    ("T3 RED TCP2 tcp", 69 / 24806, 0.307, 395.3, 395),
]


@pytest.mark.parametrize("cell, p, rtt, recomputed, published", TABLE2_CELLS, ids=[c[0] for c in TABLE2_CELLS])
def test_tables_2_and_3_model_cells(cell, p, rtt, recomputed, published):
    kbps = m.mathis_bw(1000, rtt, p, C=0.8) * 8 / 1000
    assert kbps == pytest.approx(recomputed, abs=0.05)
    # The published cells are rounded from unrounded RTTs: within 1 % of the recomputation.
    assert kbps == pytest.approx(published, rel=0.01)


def test_model_percent_as_in_the_tables():
    # Table 2, drop-tail TCP2: TCP Model 638 against 648 kb/s measured -> "2 %".
    assert m.model_percent(638, 648) == pytest.approx(1.543, abs=1e-3)
    assert round(m.model_percent(638, 648)) == 2
    # Table 2, drop-tail TCP1: link model 288 against 133 measured -> 116.5 % (published 118 %,
    # within rounding of unrounded inputs, TARGETS §5.5).
    assert m.model_percent(288, 133) == pytest.approx(116.54, abs=0.01)
    # Table 2, RED TCP1: 432 against 430 -> 0.47 %, printed "1 %"; symmetric in sign.
    assert m.model_percent(432, 430) == pytest.approx(m.model_percent(428, 430))
    np.testing.assert_allclose(m.model_percent(np.array([405, 393]), np.array([430, 368])), [5.814, 6.793], atol=1e-3)


# -- eq. 14 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mss, exact_percent, printed_percent",
    [(536, 0.184, 0.18), (1460, 1.36, 1.4), (4312, 11.9, 11.0)],
)
def test_required_loss_eq14(mss, exact_percent, printed_percent):
    # 1 GB in 2 hours needs about 1 Mb/s; at 100 ms RTT with C = 1 (§7).
    p = m.required_loss(MBPS_IN_BYTES, mss, 0.1)
    assert p == pytest.approx((mss / 12_500) ** 2)
    assert 100 * p == pytest.approx(exact_percent, rel=0.01)
    # The paper's rounded figures ("0.18 %", "1.4 %", "11 %") are within 10 % of the exact ones.
    assert 100 * p == pytest.approx(printed_percent, rel=0.10)


def test_required_loss_inverts_mathis_bw():
    p = m.required_loss(MBPS_IN_BYTES, 1460, 0.1, C=0.87)
    assert m.mathis_bw(1460, 0.1, p, C=0.87) == pytest.approx(MBPS_IN_BYTES)
    # Rule of thumb (§7): tripling the MSS allows about ten times the loss (exactly 9).
    assert m.required_loss(1e5, 3 * 536, 0.1) / m.required_loss(1e5, 536, 0.1) == pytest.approx(9.0)


def test_section7_modem_and_r_and_e_examples():
    # R&E user, 3 % loss, 536-B MSS, 100 ms: average window about 5 packets, under ~250 kb/s (C < 1).
    assert m.mathis_window(0.03, C=1.0) == pytest.approx(5.77, abs=0.01)
    assert m.mathis_bw(536, 0.1, 0.03, C=1.0) * 8 < 250e3
    # Modem with an average window of 5 and C = 1.2: p = (1.2/5)^2 = 5.8 % (TARGETS §5.9 [D]).
    assert m.required_loss(5 * 1000 / 0.4, 1000, 0.4, C=1.2) == pytest.approx(0.0576)


# -- PFTK -----------------------------------------------------------------------------------------


def pftk_by_hand_p001():
    """PFTK at p = 0.01, RTT = 0.1 s, T0 = 1 s, b = 2, step by step in plain arithmetic."""
    p, rtt, t0, b = 0.01, 0.1, 1.0, 2
    q = 1 - p
    a = (2 + b) / (3 * b)  # 2/3
    ew = a + math.sqrt(8 * q / (3 * b * p) + a * a)  # 2/3 + sqrt(132 + 4/9) = 12.1751
    f = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6  # 1.010204
    qhat = min(1, (1 - q**3) * (1 + q**3 * (1 - q ** (ew - 3))) / (1 - q**ew))  # 0.279922
    unlimited = (q / p + ew + qhat / q) / (rtt * (b * ew / 2 + 1) + qhat * t0 * f / q)
    wm = 8
    qhat8 = min(1, (1 - q**3) * (1 + q**3 * (1 - q ** (wm - 3))) / (1 - q**wm))  # 0.402735
    limited = (q / p + wm + qhat8 / q) / (rtt * (b * wm / 8 + q / (p * wm) + 2) + qhat8 * t0 * f / q)
    approx = 1 / (rtt * math.sqrt(2 * b * p / 3) + t0 * min(1, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p))
    return ew, unlimited, limited, approx


def test_pftk_hand_computed_point():
    ew, unlimited, limited, approx = pftk_by_hand_p001()
    assert ew == pytest.approx(12.17512, abs=1e-5)
    assert unlimited == pytest.approx(69.5245, abs=1e-4)  # 111.4579 / 1.603148
    assert m.pftk_bw(0.01, 0.1, 1.0) == pytest.approx(unlimited, rel=1e-12)
    assert m.pftk_bw(0.01, 0.1, 1.0, b=2, wmax=100) == pytest.approx(unlimited, rel=1e-12)  # E[W] < Wmax
    assert m.pftk_bw(0.01, 0.1, 1.0, wmax=8) == pytest.approx(limited, rel=1e-12)  # E[W] >= Wmax
    assert limited == pytest.approx(52.4331, abs=1e-4)
    assert m.pftk_bw_approx(0.01, 0.1, 1.0) == pytest.approx(approx, rel=1e-12)
    assert approx == pytest.approx(70.6544, abs=1e-4)
    # The approximation's window cap: Wmax/RTT = 80 packets/s does not bind here.
    assert m.pftk_bw_approx(0.01, 0.1, 1.0, wmax=8) == pytest.approx(approx)
    assert m.pftk_bw_approx(0.01, 0.1, 1.0, wmax=5) == pytest.approx(50.0)


def test_pftk_small_p_limit_is_mathis():
    # p -> 0: B -> sqrt(3/(2bp))/RTT, i.e. eq. 3 with C = sqrt(3/(2b)) (sqrt(3/4) for b = 2).
    for b in (1, 2):
        for p in (1e-8, 1e-10):
            limit = math.sqrt(3 / (2 * b * p)) / 0.1
            assert m.pftk_bw(p, 0.1, 1.0, b=b) == pytest.approx(limit, rel=1e-3)
            assert m.pftk_bw_approx(p, 0.1, 1.0, b=b) == pytest.approx(limit, rel=1e-3)
    # The same limit through mathis_bw with C_PERIODIC_DELAYED, in packets per second (MSS = 1).
    assert m.pftk_bw(1e-9, 0.05, 0.5) == pytest.approx(m.mathis_bw(1, 0.05, 1e-9, m.C_PERIODIC_DELAYED), rel=1e-3)
    # With a window limit the full model tends to Wmax/RTT.
    assert m.pftk_bw(1e-9, 0.1, 1.0, wmax=20) == pytest.approx(200.0, rel=1e-5)


def test_pftk_approximation_region_by_region():
    p_low = np.logspace(-7, -3, 50)
    for b in (1, 2):
        for rto in (0.2, 1.0, 3.0):
            full = m.pftk_bw(p_low, 0.1, rto, b=b)
            approx = m.pftk_bw_approx(p_low, 0.1, rto, b=b)
            # Low loss: the approximation drops the "+1" round and the E[W] offset, so it is a little
            # higher than the full model, and within 2 %.
            assert np.all(approx >= full)
            assert np.all(approx <= 1.02 * full)
    # Timeout-dominated region: the approximation underestimates.
    p_high = np.array([0.05, 0.1, 0.2, 0.3])
    assert np.all(m.pftk_bw_approx(p_high, 0.1, 1.0) < m.pftk_bw(p_high, 0.1, 1.0))


def test_pftk_monotone_and_ordered():
    p = np.logspace(-6, math.log10(0.9), 200)
    full = m.pftk_bw(p, 0.1, 1.0)
    assert np.all(np.diff(full) < 0)  # more loss, less throughput
    # A longer RTO lowers throughput once timeouts matter; a window limit never raises it.
    assert np.all(m.pftk_bw(p, 0.1, 3.0) < full)
    assert np.all(m.pftk_bw(p, 0.1, 1.0, wmax=10) <= full * (1 + 1e-12))
    # Vectorised over everything, broadcast together; scalars give floats.
    grid = m.pftk_bw(np.array([[0.001], [0.01]]), np.array([0.05, 0.1, 0.2]), 1.0)
    assert grid.shape == (2, 3)
    assert np.all(np.diff(grid, axis=1) < 0)
    assert isinstance(m.pftk_bw(0.01, 0.1, 1.0), float)
    assert isinstance(m.pftk_bw_approx(0.01, 0.1, 1.0), float)
    # Mixed branches in one call agree with separate calls.
    ps = np.array([1e-5, 0.05])  # E[W] 365 (>= 20, limited) and 5.1 (< 20)
    np.testing.assert_allclose(
        m.pftk_bw(ps, 0.1, 1.0, wmax=20), [m.pftk_bw(1e-5, 0.1, 1.0, wmax=20), m.pftk_bw(0.05, 0.1, 1.0, wmax=20)]
    )


# -- Multiple congested gateways (eq. 6-13) --------------------------------------------------------


def test_floyd_share_one_gateway_is_half():
    # n = 1: both connections cross the same single gateway with the same RTT.
    assert m.floyd_share(1, 0.05, 0.005, 0.02) == pytest.approx(0.5)
    assert m.floyd_share_small_q(1) == pytest.approx(0.5)
    assert m.floyd_share_large_q(1) == pytest.approx(0.5)


def test_floyd_share_by_hand():
    # n = 3, d_L = 50 ms, d_S = 5 ms, Q = 10 ms: tau_i = 0.13 s, tau_0 = 10*0.05 + 0.03 + 0.02 = 0.55 s.
    tau_i, tau_0 = 2 * 0.05 + 0.01 + 4 * 0.005, 2 * 5 * 0.05 + 3 * 0.01 + 4 * 0.005
    assert (tau_i, tau_0) == pytest.approx((0.13, 0.55))
    assert m.floyd_share(3, 0.05, 0.005, 0.01) == pytest.approx(1 / (1 + 0.55 * math.sqrt(3) / 0.13))
    assert m.floyd_share_small_q(3) == pytest.approx(1 / (1 + math.sqrt(3) * 5))
    assert m.floyd_share_large_q(3) == pytest.approx(1 / (1 + 3**1.5))


@pytest.mark.parametrize("n", [2, 3, 5, 10])
def test_floyd_share_limits(n):
    # Q and d_S -> 0: eq. 11 -> eq. 12 (exactly at 0).
    assert m.floyd_share(n, 0.05, 0.0, 0.0) == pytest.approx(m.floyd_share_small_q(n))
    assert m.floyd_share(n, 0.05, 1e-7, 1e-7) == pytest.approx(m.floyd_share_small_q(n), rel=1e-4)
    # Q dominant: eq. 11 -> eq. 13.
    assert m.floyd_share(n, 0.05, 0.005, 1e4) == pytest.approx(m.floyd_share_large_q(n), rel=1e-4)
    # Queueing delay helps the long connection (its RTT grows n-fold in Q, the short ones' only by Q,
    # while its propagation share grows 2n-1-fold): eq. 12 < eq. 11 < eq. 13.
    mid = m.floyd_share(n, 0.05, 0.005, 0.05)
    assert m.floyd_share_small_q(n) < mid < m.floyd_share_large_q(n)


def test_floyd_share_vectorised_in_n():
    n = np.arange(1, 6)
    shares = m.floyd_share(n, 0.05, 0.005, 0.01)
    assert shares.shape == (5,)
    assert np.all(np.diff(shares) < 0)  # more congested hops, smaller share
    np.testing.assert_allclose(m.floyd_share_small_q(n), 1 / (1 + np.sqrt(n) * (2 * n - 1)))


# -- Input checks ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: m.mathis_bw(1000, 0.1, 0.0), "p must be in"),
        (lambda: m.mathis_bw(1000, 0.1, 1.5), "p must be in"),
        (lambda: m.mathis_bw(1000, 0.0, 0.01), "rtt must be"),
        (lambda: m.mathis_bw(-1, 0.1, 0.01), "mss must be"),
        (lambda: m.mathis_window(np.array([0.01, np.nan])), "p must be in"),
        (lambda: m.required_loss(0, 1460, 0.1), "bw must be"),
        (lambda: m.pftk_bw(1.0, 0.1, 1.0), r"p must be in \(0, 1\)"),
        (lambda: m.pftk_bw(0.01, 0.1, -1.0), "rto must be"),
        (lambda: m.pftk_bw(0.01, 0.1, 1.0, wmax=0), "wmax must be"),
        (lambda: m.pftk_bw_approx(0.01, 0.1, 1.0, b=0), "b must be"),
        (lambda: m.floyd_share(0, 0.05, 0.005, 0.01), "n must be"),
        (lambda: m.floyd_share(2, 0.0, 0.0, 0.0), "must not all be 0"),
        (lambda: m.model_percent(100, 0), "measured must be"),
    ],
)
def test_bad_input_raises(call, message):
    with pytest.raises(ValueError, match=message):
        call()
