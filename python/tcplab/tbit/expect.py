"""What a simulated stack's configuration says each TBIT test must find (the "configured"
column of the tables): read from the resolved configuration and from the core's own reading of it
(`TbitSim.facts`: segment size, initial window in segments, timers in seconds), not from the
preset's name."""

from __future__ import annotations

from .probe import MSS, fmt_s

CC = {"tahoe": "Tahoe", "reno": "Reno", "newreno": "NewReno"}


def expected(cfg: dict, facts: dict) -> dict:
    """Per test, the verdict the configuration implies (timer tests: the configured values).
    `facts`: the core's numbers for the test MSS (`SimTransport.facts[128]`)."""
    sack = bool(cfg["sack"])
    abc = int(cfg["abc"])
    cubic = cfg.get("cc", "reno") == "cubic"
    slow_start = cfg.get("slow_start", "auto")
    # RACK-TLP (`loss = "rack"`, `tlp`) acts under Linux's recovery only (variant "sack" with
    # SACK in use).
    rack = sack and cfg["variant"] == "sack" and cfg.get("loss") == "rack"
    e = {
        "sack_advertised": "yes" if sack else "no",
        "icw": str(facts["iw_segments"]),
        "sack_used": "yes" if sack else "n/a: SACK not advertised",
        "lt": "yes" if cfg["limited_transmit"] else "no",
        # CUBIC's slow start is Linux's tcp_slow_start: cwnd grows by the segments an ACK
        # acknowledges, with no limit (the `abc` knob is Reno's): a split ACK of half a segment
        # grows nothing, an ACK of two grows it by two.
        "abc": "yes" if abc or cubic else "no",
        "abc_l": "2" if cubic else str(abc) if abc else "n/a: no ABC",
        # RACK's reordering timer resends the hole about min_RTT/4 after one SACK: Linux's early
        # retransmit (RFC 8985 §6.2 replaced RFC 5827 there).
        "er": "yes" if cfg["early_retransmit"] or rack else "no",
        "cc": "SACK" if sack else CC[cfg["variant"]],
        # TLP (RFC 8985 §7, the `tlp` knob) and RACK (RFC 8985 §6, `loss = "rack"`) work only
        # with SACK in use; otherwise the stack probes no tail and detects loss by counting
        # duplicate ACKs (or by the timer). ECN (RFC 3168 §6.1.1) is agreed to an ECN-setup SYN
        # with `ecn` "on" or "accept" (Linux tcp_ecn 1 or 2) or DCTCP, and data then goes out
        # ECT(0). The window after a loss is the controller's: Reno halves it, CUBIC
        # (`cc = "cubic"`) keeps β = 717/1024 of it (RFC 9438 §4.6, tcp_cubic.c).
        "tlp": "yes" if rack and cfg.get("tlp") else "no",
        "rack": "RACK" if rack else "dupthresh",
        "cc_beta": "CUBIC" if cubic else "Reno",
        "ecn": "yes, data ECT(0)" if cfg.get("ecn", "off") in ("on", "accept") or cfg.get("cc") == "dctcp" else "no",
        # Nor pacing (a flight leaves as the ACKs release it). HyStart's delay detector needs 8
        # RTT samples in a round: CUBIC gets them with Linux's per-ACK samples (`rto_model =
        # "linux"`, tcp_ack_update_rtt); with one timed segment per RTT it never fires, nor with
        # `slow_start = "standard"`. HyStart++ (`slow_start = "hystart++"`, RFC 9406) reads an
        # RTT on every ACK whatever the estimator and, after 8 delayed samples, grows a quarter
        # segment an ACK: the next flight about 1.4 times the delayed one, read "yes".
        "pacing": "no",
        "hystart": "yes" if slow_start == "hystart++" or (cubic and slow_start in ("auto", "hystart") and cfg.get("rto_model") == "linux") else "no",
    }
    if cfg["variant"] == "sack" and cfg.get("loss") == "rack":
        # Linux's machine with a peer that does not SACK (the LT test offers none): a duplicate
        # ACK counts as a segment SACKed (`tcp_add_reno_sack`), freeing one segment of window,
        # Limited Transmit's effect whatever the `limited_transmit` knob (RFC 3042's rule, which
        # this machine does not run). With TSO deferral (`tso_defer`) that one segment of room
        # is held for the next ACK (`tcp_tso_should_defer`: less than the autosized 2 segments,
        # the last send under 1 ms ago) unless it is a third of the window
        # (`tcp_tso_win_divisor` 3): after the first ACK cwnd is IW + 1, so the segment goes
        # at IW 1 and 2 and waits from IW 3 on.
        held = cfg.get("tso_defer") and 3 < facts["iw_segments"] + 1
        e["lt"] = "no" if held else "yes"
    if cfg.get("nagle") and cfg["variant"] != "sack-rh":
        # Nagle (RFC 1122 §4.2.3.4) holds the ER test's short third segment while data is
        # unacknowledged, and the test withholds that ACK: it cannot read such a stack. ns-2's
        # SackRH sends by its own rule, which does not apply Nagle (docs/tcp.md).
        e["er"] = "without conclusion: packet 3 never sent"
    e["rto_data"] = " ".join(fmt_s(x) for x in timer_plan(cfg, facts, syn=False)[0])
    e["rto_syn"] = " ".join(fmt_s(x) for x in timer_plan(cfg, facts, syn=True)[0]) if cfg["handshake"] else "n/a: no SYN (no handshake)"
    return e


def timer_plan(cfg: dict, facts: dict, syn: bool, n: int = 3) -> tuple[list[float], float]:
    """The configured timeouts a TBIT timer test should see on a short path, and the slack a
    tick-based timer adds (RFC 6298 §2: RTO = max(rto_min, SRTT + 4·RTTVAR), which is rto_min on
    a path of milliseconds; before any RTT sample, and for the SYN, the initial RTO; §5.5: each
    expiry multiplies it by the backoff, up to rto_max)."""
    backoff = float(cfg["rto_backoff"])
    rmin, rmax, r0 = facts["rto_min_s"], facts["rto_max_s"], facts["rto_initial_s"]
    sampled = cfg["handshake"] and cfg["handshake_rtt_sample"]
    first = r0 if (syn or not sampled) else rmin
    slack = 2 * facts["timer_tick_s"] + facts["clock_granularity_s"] + 0.05
    # Linux's linear SYN timeouts (`syn_linear_timeouts`, tcp_syn_linear_timeouts): the first
    # L + 1 SYN intervals keep the initial RTO, then it doubles.
    linear = int(cfg.get("syn_linear_timeouts", 0)) if syn else 0
    return [min(first * backoff ** max(0, i - linear), rmax) for i in range(n)], slack


def timers_match(measured: list[float], cfg: dict, facts: dict, syn: bool) -> bool:
    """Measured intervals agree with the configuration: the first within [plan, plan + slack],
    each next one the planned step (the backoff, or 1 for a linear SYN timeout) times the one
    before (10 %), or rto_max."""
    plan, slack = timer_plan(cfg, facts, syn, len(measured))
    if not measured or not (plan[0] - 0.01 <= measured[0] <= plan[0] + slack):
        return False
    rmax = facts["rto_max_s"]
    for i, (a, b) in enumerate(zip(measured, measured[1:]), start=1):
        want = min(a * plan[i] / plan[i - 1], rmax)
        if abs(b - want) > 0.1 * want + 0.01:
            return False
    return True


__all__ = ["expected", "timer_plan", "timers_match", "MSS"]
