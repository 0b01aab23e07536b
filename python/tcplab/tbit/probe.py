"""TBIT's tests, each written once: the segments the prober sends (a script over a `Transport`)
and the rule that reads the server's answer. The procedures and rules are Ladha et al. 2004 §3
(LT, ABC, ABC's L, ER), Padhye & Floyd 2001 (initial window, SACK, the congestion-control
test), Seddigh & Devetsikiotis (the initial RTO and its backoff from a dropped SYN); docs/tbit.md
gives each script and rule with its source.

Every test is run `runs` times (5, as the paper) on fresh connections; its result stands only when
at least 4 of 5 runs (80 %) agree, otherwise it is "eliminated: runs disagree", as the paper excludes
such servers from that test.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from .transport import ACK, CWR, ECE, PSH, SYN, Transport

WND = 65535
#: Test MSS (Ladha et al. 2004 §3: 128 bytes; the ER test 1000 bytes).
MSS = 128
ER_MSS = 1000
#: Most segments one run reads (a bound on every loop, whatever the server does).
MAX_SEGMENTS = 5000
#: The first lost packet of the SACK-used and congestion-control tests (late enough that the
#: window holds three packets above each hole whatever the initial window).
FIRST_HOLE = 20


class Inconclusive(Exception):
    """A run that cannot be read; the message is the verdict. The paper's words: a test "exits
    without conclusion"; a server whose runs do not agree is "eliminated"."""


@dataclass
class Data:
    t: float
    k: int  # packet number: data segment k covers bytes [1 + (k-1)·MSS, 1 + k·MSS)
    seq: int
    end: int
    retx: bool
    tos: int = 0  # the IPv4 TOS octet (its low two bits: the ECN field)


@dataclass
class Session:
    """One TBIT connection: the handshake, then data segments numbered as packets."""

    tr: Transport
    mss: int = MSS
    offer_sack: bool = False
    log: list = field(default_factory=list)
    acks: list = field(default_factory=list)  # (send time, ack, sack blocks)
    max_end: int = 1
    peer_sack: bool = False
    sack_ok: bool = False
    our_seq: int = 1
    rtt: float = 0.0
    seen: int = 0
    #: Flags added to the SYN (ECE|CWR: an ECN-setup SYN, RFC 3168 §6.1.1); the SYN-ACK's flags.
    syn_extra: int = 0
    synack_flags: int = 0

    def handshake(self, path: str = "/", range_segments: int | None = None, wait: float | None = None) -> None:
        """SYN (MSS option, SACK-permitted if offered), SYN-ACK, then the ACK carrying the
        request; `range_segments`: ask for that many segments' worth of bytes (a byte range)."""
        tr = self.tr
        tr.open()
        t0 = tr.send(SYN | self.syn_extra, 0, 0, WND, sack_permitted=self.offer_sack, mss=self.mss)
        wait = min(tr.max_wait, 10.0) if wait is None else wait
        deadline = tr.now() + wait
        while True:
            s = tr.recv(deadline - tr.now())
            if s is None:
                raise Inconclusive("without conclusion: no SYN-ACK")
            if s.rst:
                raise Inconclusive("without conclusion: connection refused")
            if s.syn:
                break
        self.peer_sack = s.sack_permitted
        self.synack_flags = s.flags
        self.sack_ok = self.offer_sack and s.sack_permitted
        self.rtt = max(s.t - t0, 0.0)
        if s.mss:
            # The server sends at most its own MSS (RFC 9293 §3.7.1): packets are numbered in it.
            self.mss = min(self.mss, s.mss)
        byte_range = None if range_segments is None else (0, range_segments * self.mss - 1)
        req = tr.request(path, byte_range)
        tr.send(ACK | PSH, 1, 1, WND, payload=req)
        self.our_seq = 1 + len(req)

    def next_data(self, timeout: float) -> Data | None:
        """The next data segment within `timeout` (pure ACKs, a FIN and retransmitted SYN-ACKs are
        passed over)."""
        tr = self.tr
        deadline = tr.now() + timeout
        while self.seen < MAX_SEGMENTS:
            s = tr.recv(max(0.0, deadline - tr.now()))
            if s is None:
                return None
            self.seen += 1
            if s.rst:
                raise Inconclusive("without conclusion: connection reset")
            if s.length == 0 or s.syn:
                continue
            if s.length > self.mss:
                raise Inconclusive("without conclusion: MSS not honoured")
            d = Data(s.t, (s.seq - 1) // self.mss + 1, s.seq, s.seq + s.length, s.seq < self.max_end, getattr(s, "tos", 0))
            self.max_end = max(self.max_end, d.end)
            self.log.append(d)
            return d
        raise Inconclusive("without conclusion: too many segments")

    def ack(self, ack: int, sack=()) -> float:
        blocks = tuple(sack) if self.sack_ok else ()
        t = self.tr.send(ACK, self.our_seq, ack, WND, sack=blocks)
        self.acks.append((t, ack, blocks))
        return t

    def start(self, k: int) -> int:
        """First byte of packet k."""
        return 1 + (k - 1) * self.mss

    def ack_packet(self, k: int, sack=()) -> float:
        return self.ack(self.start(k + 1), sack)

    def until_retransmission(self, on_data=None) -> Data:
        """Read data until the first retransmission (each new packet handed to `on_data`)."""
        while True:
            d = self.next_data(self.tr.max_wait)
            if d is None:
                raise Inconclusive("without conclusion: no retransmission")
            if d.retx:
                return d
            if on_data is not None:
                on_data(d)

    def highest_before_retransmission(self) -> int:
        hi = 0
        for d in self.log:
            if d.retx:
                break
            hi = max(hi, d.k)
        return hi

    def finish(self) -> None:
        self.tr.close()


# -------------------------------------------------------------------------------------------
# The tests. Each: a script `(transport, ctx) -> observation` and a rule `(obs, ctx) -> verdict`.


def fmt_s(x: float) -> str:
    """A timer value, two significant digits."""
    return f"{round(x, 6):.2g}"


def icw_script(tr, ctx):
    s = Session(tr)
    s.handshake(ctx.get("path", "/"))
    first = s.next_data(tr.max_wait)
    if first is None:
        raise Inconclusive("without conclusion: no data")
    r = s.until_retransmission()
    s.finish()
    return {"highest": s.highest_before_retransmission(), "retx_k": r.k, "rto": r.t - first.t}


def icw_rule(o, ctx):
    # Padhye & Floyd 2001 (TBIT's ICW test): nothing is acknowledged, so every packet before
    # the first retransmission belongs to the initial window.
    if o["retx_k"] != 1:
        return "without conclusion: first retransmission not of packet 1"
    return str(o["highest"])


def sack_adv_script(tr, ctx):
    s = Session(tr, offer_sack=True)
    s.handshake(ctx.get("path", "/"))
    s.finish()
    return {"sack_permitted": s.peer_sack}


def sack_adv_rule(o, ctx):
    return "yes" if o["sack_permitted"] else "no"


class Receiver:
    """The prober as an ordinary receiver: a cumulative ACK and RFC 2018 §4 SACK blocks (the
    block of the latest segment first, then the others, highest first, at most 3)."""

    def __init__(self):
        self.blocks: list[list[int]] = []  # out-of-order [left, right) above cum
        self.cum = 1

    def add(self, seq: int, end: int) -> tuple:
        if end <= self.cum:
            return ()
        seq = max(seq, self.cum)
        merged = [seq, end]
        rest = []
        for b in self.blocks:
            if b[1] < merged[0] or b[0] > merged[1]:
                rest.append(b)
            else:
                merged = [min(b[0], merged[0]), max(b[1], merged[1])]
        if merged[0] <= self.cum:
            self.cum = max(self.cum, merged[1])
            rest2 = []
            for b in sorted(rest):
                if b[0] <= self.cum:
                    self.cum = max(self.cum, b[1])
                else:
                    rest2.append(b)
            self.blocks = rest2
            return tuple((a, b) for a, b in sorted(self.blocks, key=lambda b: -b[1]))[:3]
        self.blocks = rest + [merged]
        others = sorted(rest, key=lambda b: -b[1])
        return tuple((a, b) for a, b in [merged] + others)[:3]


def holes_script(tr, ctx, *, sack: bool, holes: tuple, hold: bool = False):
    """An ordinary receiver (every segment ACKed at once, SACK blocks if agreed) that drops the
    first transmission of each packet in `holes`; runs until all holes are filled and 10 more
    packets came. With `hold`, once its ACK reaches the last hole (the partial ACK) it ACKs
    nothing more until that hole is resent, so that no duplicate ACK can trigger its
    retransmission: only the partial ACK or the timer can."""
    s = Session(tr, offer_sack=sack)
    s.handshake(ctx.get("path", "/"))
    rcv = Receiver()
    last_hole_start, last_hole_end = s.start(max(holes)), s.start(max(holes) + 1)
    dropped = set()
    after = 0
    arrivals = []
    holding = False
    while after < 10:
        d = s.next_data(tr.max_wait)
        if d is None:
            break
        if d.k in holes and d.k not in dropped and not d.retx:
            dropped.add(d.k)
            arrivals.append((d.t, d.k, d.retx, True))
            continue
        arrivals.append((d.t, d.k, d.retx, False))
        blocks = rcv.add(d.seq, d.end)
        if holding and d.k != max(holes):
            continue
        holding = hold and last_hole_start <= rcv.cum < last_hole_end
        s.ack(rcv.cum, blocks)
        if rcv.cum >= last_hole_end:
            after += 1
    s.finish()
    return {"arrivals": arrivals, "acks": [(t, a) for t, a, _ in s.acks], "sack_ok": s.sack_ok, "peer_sack": s.peer_sack,
            "rtt": s.rtt, "mss": s.mss, "holes": list(holes), "filled": rcv.cum >= last_hole_end}


def _first_ack_reaching(o, k):
    start = 1 + (k - 1) * o["mss"]
    return next((t for t, a in o["acks"] if a >= start), math.inf)


def _first_retx(o, k):
    return next((t for t, kk, r, drop in o["arrivals"] if kk == k and not drop and (r or kk in o["holes"])), None)


def sack_used_script(tr, ctx):
    h = FIRST_HOLE
    return holes_script(tr, ctx, sack=True, holes=(h, h + 2, h + 4))


def sack_used_rule(o, ctx):
    # A sender that reads SACK blocks retransmits a later hole before the cumulative ACK reaches
    # it (it knows the hole from the blocks); one that does not must wait for the partial ACK
    # (NewReno, RFC 6582) or the timer (RFC 2018 §1 and Fall & Floyd 1996 on what SACK adds).
    if not o["peer_sack"]:
        return "n/a: SACK not advertised"
    if not o["filled"]:
        return "without conclusion: holes not repaired"
    h = o["holes"]
    if _first_retx(o, h[0]) is None:
        return "without conclusion: no retransmission"
    # An ACK reaches the server half a round trip after it leaves; a retransmission it caused
    # arrives a whole round trip after it: one arriving before ack + RTT/2 was sent without it.
    early = [k for k in h[1:] if (t := _first_retx(o, k)) is not None and t < _first_ack_reaching(o, k) + o["rtt"] / 2]
    return "yes" if early else "no"


def cc_script(tr, ctx):
    h = FIRST_HOLE
    return holes_script(tr, ctx, sack=False, holes=(h, h + 3), hold=True)


def cc_rule(o, ctx):
    # Padhye & Floyd 2001 (the Reno/NewReno/Tahoe test), two losses close together, no SACK:
    # Tahoe resends packets the receiver holds without a timeout; NewReno resends the second hole
    # on the partial ACK; Reno needs three more duplicate ACKs, which the prober withholds after
    # the partial ACK, so the timer. A stack that uses SACK information (the SACK-used test) is
    # "SACK".
    if ctx.get("sack_used") == "yes":
        return "SACK"
    if not o["filled"]:
        return "without conclusion: holes not repaired"
    d, e = o["holes"]
    gap_timeout = max(0.1, 10 * o["rtt"])
    # Each arrival with whether a silence long enough for a timeout came before it.
    arr, prev = [], None
    for t, k, retx, drop in o["arrivals"]:
        arr.append((t, k, retx, drop, prev is not None and t - prev > gap_timeout))
        prev = t
    rd = next((a for a in arr if a[1] == d and a[2]), None)
    if rd is None or rd[4]:
        return "without conclusion: no fast retransmit"
    received, tahoe = set(), False
    for t, k, retx, drop, timeout in arr:
        if timeout:
            break
        if retx and k in received and k not in (d, e):
            tahoe = True
        if not drop:
            received.add(k)
    if tahoe:
        return "Tahoe"
    re = next((a for a in arr if a[1] == e and not a[3]), None)
    if re is not None:
        t = re[0]
        if re[4]:
            return "Reno"
        start_e = 1 + (e - 1) * o["mss"]
        partial = _first_ack_reaching(o, e)
        dups = sum(1 for ta, a in o["acks"] if a == start_e and partial < ta < t)
        return "Reno" if dups >= 3 else "NewReno"
    return "without conclusion: second hole not retransmitted"


def lt_script(tr, ctx):
    s = Session(tr)
    s.handshake(ctx.get("path", "/"))
    state = {"acked1": False, "dup": False}

    def on(d):
        if d.k == 1 and not state["acked1"]:
            state["acked1"] = True
            s.ack_packet(1)
        elif d.k == 3 and not state["dup"]:
            state["dup"] = True
            s.ack(s.start(2))  # one duplicate ACK (packet 2 is "lost": never ACKed)

    r = s.until_retransmission(on)
    s.finish()
    return {"highest": s.highest_before_retransmission(), "retx_k": r.k, "dup_sent": state["dup"]}


def _icw(ctx):
    icw = ctx.get("icw")
    if icw is None or not str(icw).isdigit():
        raise Inconclusive("without conclusion: ICW unknown")
    return int(icw)


def lt_rule(o, ctx):
    # Ladha et al. 2004 §3: highest = ICW+3 → LT; < ICW+3 → no LT; > ICW+3 → without conclusion.
    icw = _icw(ctx)
    if not o["dup_sent"]:
        return "without conclusion: packet 3 never sent"
    hi = o["highest"]
    if hi == icw + 3:
        return "yes"
    return "no" if hi < icw + 3 else "without conclusion: highest > ICW+3"


def abc_script(tr, ctx):
    s = Session(tr)
    s.handshake(ctx.get("path", "/"))
    state = {"done": False}

    def on(d):
        if d.k == 1 and not state["done"]:
            state["done"] = True
            s.ack(s.start(1) + s.mss // 2)  # two split ACKs, each for half of packet 1
            s.ack(s.start(2))

    r = s.until_retransmission(on)
    s.finish()
    return {"highest": s.highest_before_retransmission(), "retx_seq": r.seq, "p2": s.start(2)}


def abc_rule(o, ctx):
    # Ladha et al. 2004 §3: highest > ICW+2 → no ABC; ≤ ICW+2 → ABC; a retransmission below
    # packet 2 → without conclusion (the split ACKs were not honoured).
    icw = _icw(ctx)
    if o["retx_seq"] < o["p2"]:
        return "without conclusion: split ACKs not honoured"
    return "no" if o["highest"] > icw + 2 else "yes"


def abc_l_script(tr, ctx):
    s = Session(tr)
    s.handshake(ctx.get("path", "/"))
    state = {"a1": False, "a3": False}

    def on(d):
        if d.k == 1 and not state["a1"]:
            state["a1"] = True
            s.ack_packet(1)
        elif d.k == 3 and not state["a3"]:
            state["a3"] = True
            s.ack_packet(3)  # one (delayed) ACK for packets 2 and 3

    r = s.until_retransmission(on)
    s.finish()
    return {"highest": s.highest_before_retransmission(), "retx_seq": r.seq, "p4": s.start(4)}


def abc_l_rule(o, ctx):
    # Ladha et al. 2004 §3: ICW+5 → L=1, ICW+6 → L=2, otherwise without conclusion; meaningful only
    # for a server the ABC test found counting bytes (a per-ACK counter also gives ICW+5).
    if ctx.get("abc") != "yes":
        return "n/a: no ABC"
    icw = _icw(ctx)
    if o["retx_seq"] < o["p4"]:
        return "without conclusion: retransmission below packet 4"
    hi = o["highest"]
    return {icw + 5: "1", icw + 6: "2"}.get(hi, "without conclusion: highest not ICW+5 or ICW+6")


def er_script(tr, ctx):
    s = Session(tr, mss=ER_MSS, offer_sack=True)
    s.handshake(ctx.get("path", "/"), range_segments=2)
    got2 = None
    dup_at = None
    acked1 = False
    rcv = Receiver()
    while True:
        d = s.next_data(tr.max_wait)
        if d is None:
            break
        if d.k == 2 and not d.retx:
            continue  # packet 2 is lost
        if d.k > 3:
            s.finish()
            raise Inconclusive("without conclusion: no byte-range support")
        blocks = rcv.add(d.seq, d.end)
        if d.k == 1 and not acked1:
            acked1 = True
            s.ack(rcv.cum, blocks)
        elif d.k == 3 and dup_at is None:
            dup_at = s.ack(rcv.cum, blocks)  # the one duplicate ACK
        elif d.k == 2 and d.retx:
            got2 = d.t
            s.ack(rcv.cum, blocks)
            break
        else:
            s.ack(rcv.cum, blocks)  # from here on an ordinary receiver
    s.finish()
    if dup_at is None:
        raise Inconclusive("without conclusion: packet 3 never sent")
    return {"delay": None if got2 is None else got2 - dup_at, "rtt": s.rtt}


def er_rule(o, ctx):
    # Ladha et al. 2004 §3: a retransmission of packet 2 → ER. The rule alone cannot tell ER from
    # the timer, so the retransmission must follow the duplicate ACK as a reaction to it does
    # (RFC 5827 §3: ER acts on the duplicate ACK): within two round trips and 20 ms, and within
    # half the RTO this server showed in the ICW test.
    if o["delay"] is None:
        return "no"
    rto = ctx.get("rto_s")
    if rto is None:
        return "without conclusion: RTO unknown"
    return "yes" if o["delay"] < min(rto / 2, 2 * o["rtt"] + 0.02) else "no"


def rto_data_script(tr, ctx):
    n = ctx.get("timer_intervals", 3)
    s = Session(tr)
    s.handshake(ctx.get("path", "/"))
    times = []
    while len(times) < n + 1:
        d = s.next_data(tr.max_wait)
        if d is None:
            break
        if d.k == 1:
            times.append(d.t)
    s.finish()
    if len(times) < 2:
        raise Inconclusive("without conclusion: no retransmission")
    return {"intervals": [b - a for a, b in zip(times, times[1:])]}


def intervals_rule(o, ctx):
    # Seddigh & Devetsikiotis §3: the first interval is the initial RTO, the following ones its
    # backoff (RFC 6298 §5.5 doubles it).
    return " ".join(fmt_s(x) for x in o["intervals"])


def rto_syn_script(tr, ctx):
    n = ctx.get("timer_intervals", 3)
    tr.open()
    if not tr.peer_connect():
        raise Inconclusive("n/a: no SYN (no handshake)")
    times = []
    deadline = tr.now() + tr.max_wait * (n + 1)
    count = 0
    while len(times) < n + 1 and count < MAX_SEGMENTS:
        s = tr.recv(max(0.0, deadline - tr.now()))
        count += 1
        if s is None:
            break
        if s.syn and not (s.flags & ACK):
            times.append(s.t)
    tr.close()
    if len(times) < 2:
        raise Inconclusive("without conclusion: no SYN retransmission")
    return {"intervals": [b - a for a, b in zip(times, times[1:])]}


# -- Today's TCP: tail-loss probes, RACK, the multiplicative decrease, ECN ---------------------

#: The TLP test's response: a byte range of this many MSS (plus the HTTP header, so the last
#: segment is short, which is how the prober knows the tail).
TLP_SEGMENTS = 8


def _tail_bound(o, ctx):
    """The bound separating a reaction within a few round trips from the retransmission timer:
    min(RTO/2, 2·RTT + 40 ms), the RTO being this server's (from the `icw` runs)."""
    rto = ctx.get("rto_s")
    if rto is None:
        raise Inconclusive("without conclusion: RTO unknown")
    return min(rto / 2, 2 * o["rtt"] + 0.04)


def tlp_script(tr, ctx):
    """SACK offered; a short response (a byte range of TLP_SEGMENTS MSS); the prober ACKs
    packet 1 at once and then each packet when the next one arrives, so that the last two
    packets (the tail: the short last segment and the one before it) are never ACKed; then it
    stays silent and reads the first retransmission, timed from the last new packet. Two packets
    stay out, not one: with one packet out Linux adds the minimum RTO to the probe timeout for a
    delayed ACK (`tcp_schedule_loss_probe`), which would put the probe at the RTO. (A sender
    with Nagle's rule holds the short tail while data is unacknowledged: then the last new
    packet is the one before it.)"""
    s = Session(tr, offer_sack=True)
    s.handshake(ctx.get("path", "/"), range_segments=TLP_SEGMENTS)
    rcv = Receiver()
    prev = None  # the latest packet received, not yet ACKed
    tail_seen = False
    last_new = None
    first = None
    while True:
        d = s.next_data(tr.max_wait)
        if d is None:
            break
        if d.retx:
            first = d
            break
        if tail_seen:
            s.finish()
            raise Inconclusive("without conclusion: data after the short last segment")
        last_new = d.t
        if d.end - d.seq < s.mss:
            tail_seen = True  # the short last segment: the tail; nothing more is ACKed
            continue
        if d.k == 1:
            rcv.add(d.seq, d.end)
            s.ack(rcv.cum)  # packet 1 at once (an initial window of 1 would stall otherwise)
            continue
        if prev is not None:
            rcv.add(prev.seq, prev.end)
            s.ack(rcv.cum)  # everything up to the packet before this one
        prev = d
    s.finish()
    if last_new is None:
        raise Inconclusive("without conclusion: no data")
    if first is None:
        raise Inconclusive("without conclusion: no retransmission")
    return {"delay": first.t - last_new, "retx_k": first.k, "retx_is_tail": first.end - first.seq < s.mss, "tail_seen": tail_seen, "rtt": s.rtt,
            "sack_ok": s.sack_ok}  # fmt: skip


def tlp_rule(o, ctx):
    # RFC 8985 §7 (Linux `tcp_schedule_loss_probe`): with nothing ACKed after the tail, a TLP
    # sender probes one PTO after its last send: 2·SRTT plus at most 2 ms (Linux; a timer tick
    # more), resending the last segment when it has no new data. The RTO comes at least 200 ms
    # + SRTT later on Linux (1 s by RFC 6298): anything before min(RTO/2, 2·RTT + 40 ms) is the
    # probe, anything later the timer.
    return "yes" if o["delay"] < _tail_bound(o, ctx) else "no"


#: The RACK test: the hole, and how many packets at least must be out when its SACK goes (RFC
#: 5827 §2: Early Retransmit only acts with fewer than 4 outstanding).
RACK_MIN_OUT = 8


def rack_script(tr, ctx):
    """SACK offered; an ordinary receiver (every packet ACKed at once) up to packet FIRST_HOLE,
    whose first transmission it drops; on the next packet one duplicate ACK with a SACK block for
    it; then silence. Reads the first retransmission: which packet, how long after that ACK."""
    s = Session(tr, offer_sack=True)
    s.handshake(ctx.get("path", "/"))
    h = FIRST_HOLE
    rcv = Receiver()
    dup_at, first = None, None
    while True:
        d = s.next_data(tr.max_wait)
        if d is None:
            break
        if d.retx:
            first = d
            break
        if dup_at is not None:
            continue  # silent: new data after the duplicate ACK is read, never ACKed
        if d.k == h:
            continue  # the hole
        blocks = rcv.add(d.seq, d.end)
        if d.k > h:
            dup_at = s.ack(rcv.cum, blocks)  # the one duplicate ACK, SACKing packet h+1
            continue
        s.ack(rcv.cum, blocks)
    s.finish()
    if dup_at is None:
        raise Inconclusive("without conclusion: the packet after the hole never came")
    if first is None:
        raise Inconclusive("without conclusion: no retransmission")
    # Packets out when the duplicate ACK arrived: from the hole to the highest sent, less the two
    # new ones a duplicate ACK may release (Limited Transmit, RFC 3042; RFC 6675 §5 (C)).
    hi = s.highest_before_retransmission()
    return {"delay": first.t - dup_at, "retx_k": first.k, "hole": h, "highest": hi, "out": hi - h + 1 - 2,
            "rtt": s.rtt, "sack_ok": s.sack_ok}  # fmt: skip


def rack_rule(o, ctx):
    # RFC 8985 §6.2 (Linux `tcp_rack_detect_loss`, `tcp_rack_reo_timeout`): one SACKed segment
    # sent after the hole marks it lost once RACK.rtt + reo_wnd (min_RTT/4) has passed since
    # it was sent: the hole comes back about 1.25·RTT after the duplicate ACK left (+2 ms
    # timer slack). A DupThresh sender (RFC 6675 §5) needs two more duplicate ACKs, which never
    # come: the hole at the RTO, or first a tail-loss probe (RFC 8985 §7) resending the last
    # packet sent, not the hole. With fewer than RACK_MIN_OUT packets out, RFC 5827's Early
    # Retransmit could explain a quick retransmission: without conclusion.
    if o["out"] < RACK_MIN_OUT:
        return f"without conclusion: {o['out']} packets out (< {RACK_MIN_OUT})"
    if o["retx_k"] == o["hole"] and o["delay"] < _tail_bound(o, ctx):
        return "RACK"
    return "dupthresh"


#: The β test: the first loss goes into the first round that follows one of at least this
#: many packets (slow start doubles it: a window of 20 to 40 packets at the loss).
BETA_ROUND = 12
#: The flight after recovery as a fraction of the window at the loss: below BETA_SPLIT Reno
#: (β 0.5), below BETA_NONE CUBIC (β 717/1024), from BETA_NONE on no multiplicative decrease.
BETA_SPLIT = 0.6
BETA_NONE = 0.85
MAX_ROUNDS = 20


def _rounds(s: Session, tr, on_round, first_timeout: float):
    """Flights: the packets that arrive until a silence of `tr.round_gap`; `on_round(packets)`
    ACKs them and says whether to go on."""
    timeout = first_timeout
    for _ in range(MAX_ROUNDS):
        pk = []
        while True:
            d = s.next_data(timeout if not pk else tr.round_gap)
            if d is None:
                break
            pk.append(d)
        if not pk or not on_round(pk):
            return
        timeout = tr.max_wait


def cc_beta_script(tr, ctx):
    """No SACK (so no TLP or RACK on Linux: the window is all that is read); the prober
    answers in rounds: it reads a flight (until a silence), then ACKs each of its packets as an
    ordinary receiver, so each flight is the sender's window. It drops the first packet of the
    first round after one of BETA_ROUND or more packets; W = that round's size. Then it counts
    the flights that follow."""
    s = Session(tr)
    s.handshake(ctx.get("path", "/"))
    rcv = Receiver()
    sizes: list[int] = []
    st = {"drop_round": None, "dropped": None, "after": []}

    def on_round(pk):
        if st["drop_round"] is None and sizes and sizes[-1] >= BETA_ROUND and not pk[0].retx:
            st["drop_round"] = len(sizes)
            st["dropped"] = pk[0].k
            pk_rest = pk[1:]
        else:
            pk_rest = pk
        sizes.append(len(pk))
        for d in pk_rest:
            rcv.add(d.seq, d.end)
            s.ack(rcv.cum)
        if st["drop_round"] is not None and len(sizes) >= st["drop_round"] + 3:
            st["after"].append(len(pk))
        return len(st["after"]) < 8

    _rounds(s, tr, on_round, tr.max_wait)
    s.finish()
    if st["drop_round"] is None:
        raise Inconclusive(f"without conclusion: the window never reached {BETA_ROUND} packets")
    retx = [d for d in s.log if d.retx]
    hole_back = any(d.k == st["dropped"] for d in retx)
    return {"sizes": sizes, "w": sizes[st["drop_round"]], "after": st["after"], "hole_back": hole_back,
            "timeouts": sum(1 for d in retx if d.k == st["dropped"]) > 1}  # fmt: skip


def cc_beta_rule(o, ctx):
    # Padhye & Floyd's idea applied to the window after one loss: the flight of the first round
    # trip after recovery is cwnd = ssthresh = β·W (Linux `tcp_end_cwnd_reduction`; RFC 9937
    # brings cwnd to ssthresh at the end of recovery, RFC 5681 §3.2 sets it to FlightSize/2 =
    # W/2, CUBIC (RFC 9438 §4.6; Linux `cubictcp_recalc_ssthresh`) to 717/1024·W). BETA_SPLIT
    # = 0.6 lies midway: one RTT of growth after recovery adds at most one packet (Reno) or
    # about one (CUBIC, RFC 9438 §4.3's Reno-friendly region; the cubic term is flat just after
    # the reduction), 0.03 of a 32-packet window, far from the 0.1 on either side. BETA_NONE =
    # 0.85 lies midway between CUBIC's 0.7 and no reduction at all (BBR v1 keeps its window
    # through a loss: Linux `bbr_set_cwnd_to_recover_or_restore`). A sender that restarts from
    # a small window (Tahoe, or a timeout) shows β where slow start stops: the first flight that
    # is not doubled from the one before is ssthresh (`tcp_slow_start` stops cwnd there, RFC 5681
    # §3.1), give or take the one packet congestion avoidance adds; ssthresh is rarely a power
    # of two (CUBIC's 22 of 32), so the last doubled flight (16) would undershoot it.
    if not o["hole_back"]:
        return "without conclusion: the lost packet never came back"
    w, after = o["w"], o["after"]
    if not after:
        return "without conclusion: no flight after recovery"
    f = after[0]
    if f < 0.35 * w:
        for a, b in zip(after, after[1:]):
            if b < 1.5 * a:
                f = b
                break
        else:
            return "without conclusion: slow start did not end after the loss"
    r = f / w
    return "Reno" if r < BETA_SPLIT else "CUBIC" if r < BETA_NONE else "no reduction"


def ecn_script(tr, ctx):
    """An ECN-setup SYN (ECE and CWR, RFC 3168 §6.1.1); the page requested; the first packets
    ACKed as an ordinary receiver: the SYN-ACK's flags and the data packets' ECN field."""
    s = Session(tr, syn_extra=ECE | CWR)
    s.handshake(ctx.get("path", "/"))
    rcv = Receiver()
    ecn_field = []
    while len(ecn_field) < 4:
        d = s.next_data(tr.max_wait)
        if d is None:
            break
        if not d.retx:
            ecn_field.append(d.tos & 3)
        rcv.add(d.seq, d.end)
        s.ack(rcv.cum)
    s.finish()
    if not ecn_field:
        raise Inconclusive("without conclusion: no data")
    return {"synack": s.synack_flags, "ecn": ecn_field}


def ecn_rule(o, ctx):
    # RFC 3168 §6.1.1: an ECN-setup SYN-ACK has ECE set and CWR clear (one with both set answers
    # a SYN that was not ECN-setup: not negotiated); after negotiation, data packets are sent
    # ECT (§6.1.1: "ECT(0) SHOULD be used"; 10 in the ECN field, §5).
    if not (o["synack"] & ECE) or (o["synack"] & CWR):
        return "no"
    if all(e == 2 for e in o["ecn"]):
        return "yes, data ECT(0)"
    if all(e == 0 for e in o["ecn"]):
        return "yes, data not-ECT"
    return "yes, data ECN field " + " ".join(f"{e:02b}" for e in o["ecn"])


#: The pacing test reads flights of at least this many packets, this many rounds.
PACING_MIN_FLIGHT = 8
PACING_ROUNDS = 6
#: A flight paced: it lasted longer than the ACKs that clocked it out by this fraction of the
#: round trip (and by 1 ms).
PACING_SPREAD = 0.1


def pacing_script(tr, ctx):
    """No SACK; rounds as in `cc_beta` (read a flight until a silence, then ACK each packet),
    no loss. Per round: how long the flight took to arrive (first to last packet), how long the
    ACKs that released it took to leave, and the round trip (flight start to flight start)."""
    s = Session(tr)
    s.handshake(ctx.get("path", "/"))
    rcv = Receiver()
    rounds = []  # (first arrival, last arrival, packets, first ACK sent, last ACK sent)

    def on_round(pk):
        acks = []
        for d in pk:
            rcv.add(d.seq, d.end)
            acks.append(s.ack(rcv.cum))
        rounds.append((pk[0].t, pk[-1].t, len(pk), acks[0], acks[-1]))
        return len(rounds) < PACING_ROUNDS + 3

    _rounds(s, tr, on_round, tr.max_wait)
    s.finish()
    flights = []
    for prev, cur in zip(rounds, rounds[1:]):
        if cur[2] >= PACING_MIN_FLIGHT:
            flights.append({"span": cur[1] - cur[0], "ack_span": prev[4] - prev[3], "rtt": cur[0] - prev[0], "n": cur[2]})
    if not flights:
        raise Inconclusive(f"without conclusion: no flight of {PACING_MIN_FLIGHT} packets")
    return {"flights": flights}


def pacing_rule(o, ctx):
    # An unpaced sender sends a packet for each ACK as it arrives (ACK clocking), so a flight
    # lasts as long as the burst of ACKs that released it; a paced one (Linux with BBR, which
    # sets SK_PACING_NEEDED, or the fq qdisc; `tcp_update_pacing_rate`: 2·cwnd/SRTT in slow
    # start) spreads it over a good part of the round trip. Paced: the median flight outlasts
    # its ACKs by more than PACING_SPREAD of the round trip (and 1 ms).
    extra = sorted(f["span"] - f["ack_span"] - max(PACING_SPREAD * f["rtt"], 0.001) for f in o["flights"])
    return "yes" if extra[len(extra) // 2] > 0 else "no"


#: The HyStart test: from the first flight of at least this many packets the prober holds its
#: ACKs HYSTART_DELAY longer. Linux's HyStart acts from cwnd 16 (`hystart_low_window`) and
#: decides after 8 RTT samples of a round (HYSTART_MIN_SAMPLES), by when slow start has added 8
#: packets: from a flight of 32 the window it stops at is at most 1.25 times the flight.
HYSTART_FROM = 32
HYSTART_DELAY = 0.015


def hystart_script(tr, ctx):
    """No SACK; rounds as in `cc_beta`, no loss; from the first flight of HYSTART_FROM packets on
    the prober waits HYSTART_DELAY before it ACKs a flight (the round trip grows by that much);
    reads the flights: the one it first delayed and the next."""
    s = Session(tr)
    s.handshake(ctx.get("path", "/"))
    rcv = Receiver()
    sizes: list[int] = []
    st = {"first": None}

    def on_round(pk):
        sizes.append(len(pk))
        if st["first"] is None and len(pk) >= HYSTART_FROM:
            st["first"] = len(sizes) - 1
        if st["first"] is not None:
            # Wait on the transport's clock (virtual time on the simulated one). A window-limited
            # sender sends nothing until the ACKs come: a segment arriving meanwhile (a timer's
            # retransmission, or a sender not limited by its window) spoils the run.
            if s.next_data(HYSTART_DELAY) is not None:
                st["early"] = True
        for d in pk:
            rcv.add(d.seq, d.end)
            s.ack(rcv.cum)
        return st["first"] is None or len(sizes) < st["first"] + 3

    _rounds(s, tr, on_round, tr.max_wait)
    s.finish()
    if st["first"] is None or len(sizes) < st["first"] + 2:
        raise Inconclusive(f"without conclusion: no flight of {HYSTART_FROM} packets followed by another")
    return {"sizes": sizes, "first": st["first"], "loss": any(d.retx for d in s.log) or st.get("early", False)}


def hystart_rule(o, ctx):
    # HyStart (Ha & Rhee 2011; Linux `hystart_update`, the delay detector): in slow start from
    # cwnd 16 on, a round whose minimum RTT exceeds the connection's minimum by clamp(min/8,
    # 4 ms, 16 ms) ends slow start (ssthresh = cwnd) without a loss, so the flight after the
    # delayed one grows linearly instead of doubling; a sender without it doubles. 15 ms added
    # is above the largest threshold Linux uses (16 ms only for a minimum RTT of 128 ms or
    # more). Split: the next flight under 1.5 times the delayed one (between 1 and 2).
    # HyStart++ (RFC 9406 §4.2) compares a round's minimum with the previous round's, and its
    # rounds end when SND.NXT of their start is acknowledged, not at the prober's flights: the
    # round that holds the first delayed ACKs began with undelayed ones, so it decides a round
    # later, and Conservative Slow Start (a quarter of the growth) shows in the flight after
    # next. Either of the two flights after the delayed one growing under 1.5 times reads "yes".
    if o["loss"]:
        return "without conclusion: a retransmission, or data during the added delay"
    sizes, first = o["sizes"], o["first"]
    n = sizes[first]
    if n > 128:
        return "without conclusion: the window reached the receiver's limit"
    after = sizes[first:first + 3]
    return "yes" if any(b < 1.5 * a for a, b in zip(after, after[1:])) else "no"


@dataclass(frozen=True)
class Test:
    name: str
    title: str
    script: object
    rule: object
    needs: tuple = ()
    peer: bool = False  # the test needs the server to open a connection (Transport.peer_connect)


TESTS = {
    t.name: t
    for t in [
        Test("sack_advertised", "SACK advertised", sack_adv_script, sack_adv_rule),
        Test("icw", "initial window (packets)", icw_script, icw_rule),
        Test("rto_data", "data timeouts (s)", rto_data_script, intervals_rule),
        Test("sack_used", "SACK information used", sack_used_script, sack_used_rule),
        Test("lt", "Limited Transmit", lt_script, lt_rule, ("icw",)),
        Test("abc", "ABC supported", abc_script, abc_rule, ("icw",)),
        Test("abc_l", "ABC limit L", abc_l_script, abc_l_rule, ("icw", "abc")),
        Test("er", "Early Retransmit", er_script, er_rule, ("icw",)),
        Test("cc", "congestion control", cc_script, cc_rule, ("sack_used",)),
        Test("rto_syn", "SYN timeouts (s)", rto_syn_script, intervals_rule, peer=True),
        Test("tlp", "tail-loss probe", tlp_script, tlp_rule, ("icw",)),
        Test("rack", "loss detection (RACK or dupthresh)", rack_script, rack_rule, ("icw",)),
        Test("cc_beta", "window after a loss (CUBIC or Reno)", cc_beta_script, cc_beta_rule),
        Test("ecn", "ECN negotiated", ecn_script, ecn_rule),
        Test("pacing", "pacing", pacing_script, pacing_rule),
        Test("hystart", "slow start ended by a delay (HyStart)", hystart_script, hystart_rule),
    ]
}


def run_once(test: Test, tr: Transport, ctx: dict) -> tuple[str, dict]:
    try:
        o = test.script(tr, ctx)
        return test.rule(o, ctx), o
    except Inconclusive as e:
        try:
            tr.close()
        except Exception:  # noqa: BLE001 - closing after a failed run is best effort
            pass
        return str(e), {}


def agree(verdicts: list[str]) -> tuple[str, int]:
    """The paper's validity rule: a result stands when at least 4 of 5 runs (80 %) give it."""
    if not verdicts:
        return "eliminated: no runs", 0
    v, n = Counter(verdicts).most_common(1)[0]
    if n >= math.ceil(0.8 * len(verdicts)):
        return v, n
    detail = ", ".join(f"{k} ×{c}" for k, c in Counter(verdicts).most_common())
    return f"eliminated: runs disagree ({detail})", n


def agree_timers(obs: list[dict], verdicts: list[str]) -> tuple[str, int, list[float] | None]:
    """The validity rule for timer values: runs agree when each interval is within 10 % (or
    20 ms) of the median run's; the result is the median."""
    ivs = [o["intervals"] for o in obs if o.get("intervals")]
    n = min((len(x) for x in ivs), default=0)
    if not ivs or n == 0:
        v, c = agree(verdicts)
        return v, c, None
    med = [sorted(x[i] for x in ivs)[len(ivs) // 2] for i in range(n)]
    close = sum(1 for x in ivs if all(abs(x[i] - med[i]) <= max(0.1 * med[i], 0.02) for i in range(n)))
    if close >= math.ceil(0.8 * len(verdicts)):
        return " ".join(fmt_s(x) for x in med), close, med
    return f"eliminated: runs disagree ({', '.join(verdicts)})", close, None


def with_needs(names) -> list[str]:
    """The tests named and those whose results their rules read, in suite order."""
    want = set(names)
    for n in list(names):
        want |= set(TESTS[n].needs)
        for m in TESTS[n].needs:
            want |= set(TESTS[m].needs)
    return [n for n in TESTS if n in want]


def run_suite(tr: Transport, tests=None, runs: int = 5, path: str = "/", runs_for: dict | None = None, timer_intervals: int = 3) -> list[dict]:
    """Run the tests (all, or those named and the ones their rules need, in suite order) `runs`
    times each (`runs_for`: per test); the timer tests read `timer_intervals` timeouts. One row
    per test."""
    unknown = set(tests or ()) - set(TESTS)
    if unknown:
        raise ValueError(f"unknown TBIT test(s) {sorted(unknown)}; expected some of: {', '.join(TESTS)}")
    names = list(TESTS) if tests is None else with_needs(tests)
    if not 1 <= timer_intervals <= 10:
        raise ValueError(f"timer_intervals must be 1 to 10, got {timer_intervals}")
    ctx: dict = {"path": path, "timer_intervals": timer_intervals}
    rows = []
    for name in names:
        t = TESTS[name]
        n = (runs_for or {}).get(name, runs)
        if t.peer and not tr.can_peer_connect():
            why = "skipped: this transport cannot make the server open a connection (only a --lab server can)"
            ctx[name] = why
            rows.append({"test": name, "title": t.title, "verdict": why, "agree": 0, "runs": 0, "verdicts": [], "skipped": True})
            continue
        verdicts, obs = [], []
        bad0 = getattr(tr, "malformed", None)
        for _ in range(n):
            v, o = run_once(t, tr, ctx)
            verdicts.append(v)
            obs.append(o)
        med = None
        if t.rule is intervals_rule:
            verdict, votes, med = agree_timers(obs, verdicts)
        else:
            verdict, votes = agree(verdicts)
        ctx[name] = verdict
        if name == "icw":
            rtos = sorted(o["rto"] for o in obs if "rto" in o)
            if rtos:
                ctx["rto_s"] = rtos[len(rtos) // 2]
        row = {"test": name, "title": t.title, "verdict": verdict, "agree": votes, "runs": n, "verdicts": verdicts}
        if med is not None:
            row["intervals"] = med
        if bad0 is not None:
            # Frames the transport dropped as malformed during this test's runs.
            row["malformed"] = tr.malformed - bad0
        rows.append(row)
    return rows
