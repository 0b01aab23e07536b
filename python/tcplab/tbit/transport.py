"""What a TBIT probe needs from the network, and the simulated transport.

A transport opens connections to one server and moves single segments: the probe (`probe.py`)
sends exactly the segments its script says and reads each of the server's segments with its
arrival time. Sequence numbers are relative on both sides (a SYN takes 0, data starts at 1), as
tcpdump prints them with `-S` off. Two implementations: `SimTransport` (here: a simulated server of
any profile or preset, in virtual time) and `RawTransport` (`real.py`: raw frames to a real
kernel through an AF_PACKET socket).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import json
from dataclasses import dataclass, field

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
#: RFC 3168 §6.1: ECN-Echo and Congestion Window Reduced.
ECE, CWR = 0x40, 0x80


@dataclass(frozen=True)
class Seg:
    """A segment the server sent, as the prober received it."""

    t: float  # arrival, seconds since the transport opened the connection
    flags: int
    seq: int  # relative: SYN 0, first data byte 1
    ack: int
    length: int
    wnd: int = 0
    sack_permitted: bool = False
    sack: tuple = ()
    mss: int | None = None
    #: Every TCP option in wire order, as (name, values...): ("mss", 1460), ("sackOK",),
    #: ("nop",), ("wscale", 7), ("sack", ((a, b), ...)), ("TS", val, ecr), ("eol",), or
    #: ("kind", number). Filled by the raw transport; scripted tests compare it.
    options: tuple = ()
    #: The IPv4 TOS octet; its two low bits are the ECN field (RFC 3168 §5: 10 = ECT(0),
    #: 01 = ECT(1), 11 = CE). The simulated transport fills the ECN field alone.
    tos: int = 0

    @property
    def syn(self) -> bool:
        return bool(self.flags & SYN)

    @property
    def rst(self) -> bool:
        return bool(self.flags & RST)


class Transport(ABC):
    """The interface both transports implement (see the module docstring)."""

    name = "abstract"
    #: How long a probe may wait for one retransmission before it gives up (seconds on the
    #: transport's clock): longer than any initial RTO it may meet.
    max_wait = 130.0
    #: A silence this long (transport clock) ends a flight: the window tests (`cc_beta`) read
    #: the packets of one round trip as those that arrive before it.
    round_gap = 0.02

    @abstractmethod
    def open(self) -> None:
        """Start a fresh connection (a new server instance or a new local port)."""
        ...

    @abstractmethod
    def send(self, flags: int, seq: int, ack: int, wnd: int, payload: bytes = b"", sack=(), sack_permitted: bool = False, mss: int | None = None) -> float:
        """Send one segment; returns the send time on the transport's clock."""
        ...

    @abstractmethod
    def recv(self, timeout: float) -> Seg | None:
        """The server's next segment for this connection, or None after `timeout` seconds."""
        ...

    @abstractmethod
    def now(self) -> float:
        ...

    @abstractmethod
    def peer_connect(self) -> bool:
        """Make the stack under test open a connection to the prober (its SYNs then arrive
        through `recv`); False if the stack sends no SYN at all."""
        ...

    def can_peer_connect(self) -> bool:
        """Whether `peer_connect` can work here (a real server only opens a connection to the
        prober inside a lab)."""
        return True

    def request(self, path: str = "/", byte_range: tuple[int, int] | None = None) -> bytes:
        host = getattr(self, "host_header", "tbit")
        lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "User-Agent: tcplab-tbit", "Accept: */*"]
        if byte_range is not None:
            lines.append(f"Range: bytes={byte_range[0]}-{byte_range[1]}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def close(self) -> None:
        """End the current connection (the real transport sends a RST)."""

    def shutdown(self) -> None:
        """Release everything the transport holds."""


@dataclass
class SimTransport(Transport):
    """A simulated web server of a TCP stack (`tcp`: a flow's `tcp` table, e.g.
    {"preset": "sack-iw"}), `delay` seconds away each way, serving `page_bytes` per plain GET."""

    tcp: dict
    delay: float = 0.005
    page_bytes: int = 100_000
    name: str = "sim"
    max_wait: float = 200.0
    #: Within a flight the simulated server's segments arrive in the same instant; flights are
    #: one round trip (2·delay) apart.
    round_gap: float = 0.004
    _srv: object = field(default=None, repr=False)

    def __post_init__(self):
        from .. import _core

        self._core = _core
        # Built once up front so that a bad stack description fails here, naming the key.
        self._srv = _core.TbitSim(json.dumps(self.tcp), self.delay, self.page_bytes)
        self.config = json.loads(self._srv.config())
        # For the test MSS (128) and ER's (1000): segment size, IW and timers as the core reads
        # the configuration; the server's own MSS is what its SYN-ACK's option says.
        self.facts = {m: json.loads(self._srv.facts(m)) for m in (128, 1000)}
        self.own_mss = json.loads(self._srv.facts(65535))["mss"]


    def open(self) -> None:
        self._srv = self._core.TbitSim(json.dumps(self.tcp), self.delay, self.page_bytes)

    def send(self, flags, seq, ack, wnd, payload=b"", sack=(), sack_permitted=False, mss=None) -> float:
        self._srv.send(flags, seq, ack, min(wnd, 2**32 - 1), bytes(payload) or None, list(sack), sack_permitted, mss)
        return self._srv.now()

    def recv(self, timeout: float) -> Seg | None:
        r = self._srv.recv(max(0.0, timeout))
        if r is None:
            return None
        t, flags, seq, ack, length, wnd, sp, sack, ecn = r
        # A SYN carries the server's MSS option: its own segment size.
        mss = self.own_mss if flags & SYN else None
        return Seg(t, flags, seq, ack, length, wnd, sp, tuple(sack), mss, tos=ecn)

    def now(self) -> float:
        return self._srv.now()

    def peer_connect(self) -> bool:
        self._srv.connect()
        return bool(self.config.get("handshake", True))
