"""The path's one-way excess over the delay box's model, from the captures at both ends.

For every packet seen at the sending host's capture and again at the receiving host's, its
arrival less the time the box's model gives for it from its departure: a FIFO at the link's rate
counting IP bytes (the frame less its Ethernet header, as the box and the simulator count), then
the propagation delay. Positive = later than the model. `boxacc` reports these errors for the data
direction; the `drops` experiment uses the median of each direction for its calibrated comparison
(the case simulated again with the link's delay lengthened by the measured excess).
"""

from __future__ import annotations

import statistics as st
from typing import Dict, List, Optional

#: IPv4 and TCP headers without options.
IP_TCP = 40
#: The timestamp option as Linux pads it (NOP, NOP, kind 8, length 10).
TS_OPTION = 12


def _ip_bytes(ln: int, sack, ts: bool, extra: int) -> int:
    # SACK option: NOP, NOP, kind, length and 8 bytes a block (Linux pads it to 4 bytes).
    blocks = len(sack) if isinstance(sack, (list, tuple)) else 0
    return IP_TCP + (TS_OPTION if ts else 0) + (4 + 8 * blocks if blocks else 0) + int(ln) + extra


def errors_ms(src_pcap, dst_pcap, direction: str, rate_bps: float, delay_s: float, ts: bool = True,
              extra: int = 0, data_only: bool = True) -> List[float]:
    """One-way errors (ms) of the packets of `direction` ("a2b": from the connection's opener;
    "b2a": back), matched by sequence number (data, first transmissions) or, with
    `data_only=False`, by (ack, tsval, window) for the packets without payload too. `extra`: bytes
    the shaper counts beyond the IP packet (tbf: 14, the Ethernet header)."""
    from .. import trace

    ps, pr = trace.packets(src_pcap), trace.packets(dst_pcap)
    s = ps[ps["dir"] == direction]
    r = pr[pr["dir"] == direction]
    if data_only:
        s, r = s[s["len"] > 0], r[r["len"] > 0]

    def num(v) -> int:
        try:
            return int(v)
        except (TypeError, ValueError):  # a missing field (a SYN's ack, no timestamp)
            return -1

    def key(seq, ln, ack, tsval, win):
        return ("d", num(seq)) if num(ln) > 0 else ("a", num(seq), num(ack), num(tsval), num(win))

    arrive: Dict[tuple, float] = {}
    for t, seq, ln, ack, tsval, win in zip(r["time_s"], r["seq"], r["len"], r["ack"], r["tsval"], r["win"]):
        arrive.setdefault(key(seq, ln, ack, tsval, win), float(t))
    # A packet sent more than once (a retransmission, a dropped segment's) is left out: which
    # copy arrived is not known.
    sent: Dict[tuple, int] = {}
    for seq, ln, ack, tsval, win in zip(s["seq"], s["len"], s["ack"], s["tsval"], s["win"]):
        k = key(seq, ln, ack, tsval, win)
        sent[k] = sent.get(k, 0) + 1
    busy, errs = 0.0, []
    for t, seq, ln, ack, tsval, win, sack in zip(s["time_s"], s["seq"], s["len"], s["ack"], s["tsval"], s["win"], s["sack"]):
        k = key(seq, ln, ack, tsval, win)
        start = max(float(t), busy)
        busy = start + _ip_bytes(ln, sack, ts, extra) * 8 / rate_bps
        if sent[k] == 1 and k in arrive:
            errs.append((arrive.pop(k) - (busy + delay_s)) * 1e3)
    return errs


def median_excess_ms(sender_pcap, receiver_pcap, rate_bps: float, delay_s: float, ts: bool = True) -> Optional[dict]:
    """The median one-way excess (ms) of each direction of a single-link run: `forward` (the
    sender's packets at the receiver), `reverse` (the receiver's ACKs at the sender), and their
    mean, the lengthening of the one-way delay that gives the measured round trip."""
    fwd = errors_ms(sender_pcap, receiver_pcap, "a2b", rate_bps, delay_s, ts=ts, data_only=False)
    rev = errors_ms(receiver_pcap, sender_pcap, "b2a", rate_bps, delay_s, ts=ts, data_only=False)
    if not fwd or not rev:
        return None
    f, r = st.median(fwd), st.median(rev)
    return {"forward_ms": f, "reverse_ms": r, "one_way_ms": (f + r) / 2, "forward_n": len(fwd), "reverse_n": len(rev)}
