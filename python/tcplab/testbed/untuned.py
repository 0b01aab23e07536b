"""The kernel the testbed compares against, and where the simulated profile differs from it.

By default the testbed runs Linux untuned: every mechanism at the kernel's default (RACK, TLP,
timestamps, F-RTO, D-SACK, compressed SACKs, linear SYN timeouts, ECN when asked), and only the
congestion control set, to the flow's `cc` (CUBIC for the `linux` profile). `divergences` names
every knob of a flow's resolved configuration that models something else than what that kernel
will do, so that `tcplab testbed` can say so loudly (printed as a table when the run starts, kept
in `testbed.json` as `divergences`, repeated by the comparison).

The one profile that models a kernel tuned to resemble it, `rfc6675-iw10` (the old `linux`
profile: RFC 6675 recovery with Reno, no RACK, TLP or timestamps), gets the tuned settings of
`TUNED` when a scenario asks for it by name, unless the run is `--stock`.
"""

from __future__ import annotations

from typing import Optional

#: Linux 6.x's own values (net/ipv4/tcp_ipv4.c tcp_sk_init, net/ipv4/sysctl_net_ipv4.c), written
#: explicitly into every host namespace so that no tuning of the machine leaks into a run.
UNTUNED = {
    "net.ipv4.tcp_timestamps": 1,           # RFC 7323 timestamps
    "net.ipv4.tcp_early_retrans": 3,        # the tail loss probe (RFC 8985 §7)
    "net.ipv4.tcp_recovery": 1,             # RACK loss detection (RFC 8985)
    "net.ipv4.tcp_frto": 2,                 # F-RTO (RFC 5682) with SACK
    "net.ipv4.tcp_dsack": 1,                # D-SACK (RFC 2883) and undo on it
    "net.ipv4.tcp_comp_sack_nr": 44,        # compressed SACKs
    "net.ipv4.tcp_syn_linear_timeouts": 4,  # the first four SYN timeouts linear (Linux 6.x)
    "net.ipv4.tcp_autocorking": 1,
}
#: net.ipv4.tcp_ecn's default (ECN agreed to when asked, never asked for), set on every host; a
#: flow with `ecn = "on"` sets 1 on its hosts.
ECN_DEFAULT = 2

#: The profile that models a tuned kernel, and the settings that make the kernel resemble it
#: (only when a scenario names this profile; `--stock` leaves the kernel untuned anyway).
TUNED_PROFILE = "rfc6675-iw10"
TUNED = {
    "net.ipv4.tcp_timestamps": 0,           # as the profile's `timestamps` (tcp_settings)
    "net.ipv4.tcp_early_retrans": 0,        # no tail-loss probe
    "net.ipv4.tcp_recovery": 0,             # no RACK: loss detection by duplicate ACKs
    "net.ipv4.tcp_frto": 0,                 # no F-RTO
    "net.ipv4.tcp_dsack": 0,                # no D-SACK, and no undo on it
    "net.ipv4.tcp_comp_sack_nr": 0,         # a SACK for every out-of-order segment
    "net.ipv4.tcp_syn_linear_timeouts": 0,  # SYN timeouts double from the first (RFC 6298 §5.5)
    "net.ipv4.tcp_autocorking": 0,
}

#: Linux mechanisms no profile models; the untuned kernel runs them whatever the profile says.
#: What the untuned kernel does that no knob of the simulator models (each listed as a divergence
#: of every untuned run): none left since F-RTO, D-SACK and its undo, and the linear SYN timeouts
#: became knobs of the `linux` profile.
UNMODELLED: tuple = ()


def kernel_cc(k: dict, stock: bool, congctl: Optional[str]) -> Optional[str]:
    """The real side's congestion control for a flow's knobs `k`: `--congctl`, else the flow's
    `cc`; None with `--stock` and no `--congctl` (the host's default, known after the run)."""
    if congctl:
        return congctl
    if stock:
        return None
    return k.get("cc", "reno")


def tuned(profile: Optional[str], stock: bool) -> bool:
    """Whether the kernel is tuned for a flow: the profile the scenario names for it is
    `TUNED_PROFILE`, and the run is not `--stock`."""
    return profile == TUNED_PROFILE and not stock


def divergences(k: dict, where: str, stock: bool, congctl: Optional[str], hz: Optional[int], profile: Optional[str] = None) -> list:
    """Every knob of the resolved configuration `k` (a flow at `where`, of the named `profile`)
    whose simulated value models something else than what the kernel will do:
    [{where, knob, sim, kernel}]."""
    out = []

    def diff(knob, sim, kernel):
        out.append({"where": where, "knob": knob, "sim": sim, "kernel": kernel})

    cc = kernel_cc(k, stock, congctl)
    want = k.get("cc", "reno")
    if cc is not None and cc != want:
        diff("cc", want, f"{cc} (--congctl)")
    # The kernel's SYN options in the simulator's count (timestamps apart): MSS, SACK-permitted
    # with its padding and NOP, window scale (12); without SACK (net.ipv4.tcp_sack 0) MSS and
    # NOP, window scale (8).
    syn_options = 12 if k.get("sack") else 8
    if tuned(profile, stock):
        # The kernel is tuned to the profile; what remains is what no setting reaches.
        kern = {"rto_model": "linux", "delack_model": "linux", "reduction": "prr", "cwnd_validation": "linux",
                "fin_with_data": True, "tso_defer": True, "rcv_buffer": "linux", "syn_options": syn_options, "handshake_ack_alone": True}
        if want == "reno":
            kern["ssthresh_from_cwnd"] = True
        for knob, kv in kern.items():
            if k.get(knob, _RFC.get(knob)) != kv:
                diff(knob, k.get(knob, _RFC.get(knob)), _KERNEL_DOES[knob])
        return out
    for knob, kv in (("loss", "rack"), ("tlp", True), ("timestamps", True), ("rto_model", "linux"), ("delack_model", "linux"),
                     ("reduction", "prr"), ("cwnd_validation", "linux"), ("fin_with_data", True), ("tso_defer", True),
                     ("rcv_buffer", "linux"), ("syn_options", syn_options), ("handshake_ack_alone", True), ("dsack", True), ("undo", True),
                     ("frto", True), ("syn_linear_timeouts", 4)) + ((("ssthresh_from_cwnd", True),) if want == "reno" else ()):
        if k.get(knob, _RFC.get(knob)) != kv:
            diff(knob, k.get(knob, _RFC.get(knob)), _KERNEL_DOES[knob])
    n = int(k.get("comp_sack_nr", 0))
    if n != UNTUNED["net.ipv4.tcp_comp_sack_nr"]:
        diff("comp_sack_nr", n, "compresses SACKs (net.ipv4.tcp_comp_sack_nr 44)")
    if hz is not None and int(k.get("hz", 0)) != hz:
        diff("hz", int(k.get("hz", 0)), f"keeps its timers in jiffies of CONFIG_HZ={hz}")
    for name, what in UNMODELLED:
        diff("(not modelled)", "—", what)
    return out


#: Each knob's value when a resolved configuration leaves it out (the `rfc` profile's).
_RFC = {"loss": "dupthresh", "tlp": False, "timestamps": False, "rto_model": "rfc6298", "delack_model": "rfc", "reduction": "halve",
        "cwnd_validation": "rfc5681", "fin_with_data": False, "tso_defer": False, "rcv_buffer": "fixed", "syn_options": 8, "handshake_ack_alone": False,
        "ssthresh_from_cwnd": False, "dsack": False, "undo": False, "frto": False, "syn_linear_timeouts": 0}
#: What the untuned kernel does for each knob.
_KERNEL_DOES = {
    "loss": "detects losses by RACK (net.ipv4.tcp_recovery 1)",
    "tlp": "sends tail loss probes (net.ipv4.tcp_early_retrans 3)",
    "timestamps": "sends timestamps (net.ipv4.tcp_timestamps 1: 12 option bytes, payload MSS − 12)",
    "rto_model": "runs its own RTT estimator and RTO (tcp_rtt_estimator, tcp_set_rto), sampled on every ACK",
    "delack_model": "ACKs with quick-ACK mode and the adaptive ATO (tcp_event_data_recv)",
    "reduction": "reduces the window by PRR (tcp_cwnd_reduction)",
    "cwnd_validation": "restarts the window after idle by tcp_cwnd_restart",
    "fin_with_data": "puts the FIN on the last data segment (tcp_send_fin) and gates a bare FIN by cwnd (tcp_cwnd_test)",
    "ssthresh_from_cwnd": "halves cwnd, not FlightSize, on a loss with reno (tcp_reno_ssthresh)",
    "tso_defer": "defers sends for a skb's worth of window (tcp_tso_should_defer)",
    "rcv_buffer": "grows its receive window with the buffer (tcp_grow_window, tcp_rcv_space_adjust), each growth ACKed at once",
    "syn_options": "writes MSS, SACK-permitted, timestamps and window scale on its SYN and SYN-ACK (tcp_syn_options: syn_options 12 with SACK, 8 without; a 60-byte SYN with SACK and timestamps)",
    "handshake_ack_alone": "acknowledges the SYN-ACK with a pure ACK before the first data (tcp_rcv_synsent_state_process → tcp_send_ack)",
    "dsack": "reports duplicate segments in D-SACK blocks (net.ipv4.tcp_dsack 1)",
    "undo": "undoes a reduction its D-SACKs or echoed timestamps prove spurious (tcp_try_undo_*)",
    "frto": "runs F-RTO after a timeout (net.ipv4.tcp_frto 2: new data on the first ACK, undo when originals arrive)",
    "syn_linear_timeouts": "retransmits the SYN 1 s apart five times before doubling (net.ipv4.tcp_syn_linear_timeouts 4)",
}


def render(divs: list) -> str:
    """The loud form of `divergences`: a warning line, then one row per knob and flow."""
    if not divs:
        return ""
    rows = {}
    for d in divs:
        rows.setdefault((d["knob"], str(d["sim"]), d["kernel"]), []).append(d["where"])
    lines = [f"warning: the simulated profile and the kernel differ in {len(rows)} knob(s); "
             "results differ by construction where these act:",
             f"  {'knob':<16} {'simulated':<12} kernel (flows)"]
    for (knob, sim, kern), where in rows.items():
        lines.append(f"  {knob:<16} {sim:<12} {kern} ({', '.join(where)})")
    return "\n".join(lines)
