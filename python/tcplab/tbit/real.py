"""The real transport of TBIT: raw TCP through an AF_PACKET socket, and a lab of network
namespaces in which it meets the real Linux stack.

`RawTransport` speaks for an address that the local kernel does not own (the "alias"): it
builds Ethernet, IPv4 and TCP frames with the core's codec (`tcplab._core.wire`, the
crate's trace/wire.rs, which also writes the simulator's captures), answers ARP for the alias, and reads the server's
frames with their kernel receive timestamps. As no local socket owns the alias, the kernel never
answers the server with a RST. (TBIT proper used the host's own address and a firewall rule
against the kernel's RSTs; KERNEL_LAB-style alias addressing needs no rule.)

`Lab` builds three namespaces, client — router — server, over veth pairs with offloads off, runs
the project's small HTTP server (`server.py`) in the server namespace, and sets the kernel knobs
under test there (`ip route ... initcwnd N congctl C`, per-namespace sysctls). It deletes all of it
on exit, on an exception, and on SIGTERM/SIGINT; every wait is bounded.

Needs Linux and root (CAP_NET_ADMIN and CAP_NET_RAW).
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import random
import re
import select
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from .. import _core, netns
from .transport import ACK, RST, SYN, Seg, Transport

ETH_P_IP, ETH_P_ARP, ETH_P_ALL = 0x0800, 0x0806, 0x0003
SO_TIMESTAMPNS = 35  # asm-generic/socket.h (SO_TIMESTAMPNS_OLD); also its SCM_ type
CLONE_NEWNET = 0x40000000
PACKET_OUTGOING = 4
_ETH_ARP = struct.pack("!H", ETH_P_ARP)


def _mac(s: str) -> bytes:
    return bytes(int(x, 16) for x in s.split(":"))


def in_netns(ns: str | None, fn):
    """Call `fn` with this thread in network namespace `ns` (a socket made there stays there)."""
    if ns is None:
        return fn()
    libc = ctypes.CDLL(None, use_errno=True)
    here = os.open("/proc/self/ns/net", os.O_RDONLY)
    there = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {ns}")
        try:
            return fn()
        finally:
            if libc.setns(here, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(here)
        os.close(there)


class RawTransport(Transport):
    """TBIT's segments as raw frames on `iface` (in namespace `netns`), from `src` (an address
    the kernel there does not own) to `dst:port`, through the next hop `hop_mac`."""

    name = "real"

    def __init__(self, iface: str, src: str, dst: str, port: int = 80, hop_mac: str | None = None, netns: str | None = None,
                 max_wait: float = 5.0, on_peer_connect=None, peer_port: int = 80):  # fmt: skip
        self.iface, self.src, self.dst, self.port, self.netns = iface, src, dst, port, netns
        self.max_wait = max_wait
        self.host_header = dst
        self._on_peer_connect = on_peer_connect
        self.peer_port = peer_port

        def make():
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            s.bind((iface, 0))
            s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            s.setblocking(False)
            return s

        self.sock = in_netns(netns, make)
        self.my_mac = Path(f"/sys/class/net/{iface}/address").read_text().strip() if netns is None else self._ns_mac(iface)
        self.hop_mac = hop_mac
        self.sport = random.randint(20000, 60000)
        self.peer_mode = False
        self.t0 = time.time()
        self.isn = 0
        self.snd_nxt = 0
        self.server_isn = None
        self.id = random.randint(0, 65535)
        self.malformed = 0

    def _ns_mac(self, iface: str) -> str:
        r = subprocess.run(["ip", "-n", self.netns, "-j", "link", "show", iface], capture_output=True, text=True, timeout=10, check=True)
        return json.loads(r.stdout)[0]["address"]

    @classmethod
    def for_host(cls, host: str, src: str | None = None, iface: str | None = None, netns: str | None = None, **kw) -> RawTransport:
        """A transport to `host` ("ADDR[:PORT]", default port 80) from the current (or `netns`)
        namespace: the route gives the interface and next hop, the neighbour table its MAC;
        `src` must be an unused address of that interface's subnet (the prober answers ARP for
        it)."""
        addr, _, port = host.partition(":")
        try:
            socket.inet_aton(addr)
        except OSError:
            raise ValueError(f"--host {host!r}: expected an IPv4 address, optionally with :PORT") from None
        port_n = int(port) if port else 80
        if not 0 < port_n < 65536:
            raise ValueError(f"--host {host!r}: port out of range")
        if src is None:
            raise ValueError("a real probe needs --src: an unused address on the outgoing interface's subnet, which the prober answers ARP for (the kernel must not own it)")
        ns = ["-n", netns] if netns else []
        r = subprocess.run(["ip", *ns, "-j", "route", "get", addr], capture_output=True, text=True, timeout=10)
        if r.returncode != 0:
            raise ValueError(f"no route to {addr}: {r.stderr.strip()}")
        route = json.loads(r.stdout)[0]
        dev = iface or route["dev"]
        hop = route.get("gateway", addr)
        n = subprocess.run(["ip", *ns, "-j", "neigh", "show", "to", hop, "dev", dev], capture_output=True, text=True, timeout=10)
        mac = next((e.get("lladdr") for e in json.loads(n.stdout or "[]") if e.get("lladdr")), None)
        tr = cls(dev, src, addr, port_n, mac, netns, **kw)
        if mac is None:
            try:
                tr.hop_mac = tr.arp_resolve(hop)
            except BaseException:
                tr.shutdown()
                raise
        return tr

    def arp_resolve(self, ip: str, tries: int = 3) -> str:
        """The MAC address of `ip` on our link, asked by ARP (RFC 826) from the alias."""
        req = struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, 1) + _mac(self.my_mac) + socket.inet_aton(self.src) + b"\0" * 6 + socket.inet_aton(ip)
        frame = b"\xff" * 6 + _mac(self.my_mac) + struct.pack("!H", ETH_P_ARP) + req
        for _ in range(tries):
            self.sock.send(frame)
            deadline = time.monotonic() + 1.0
            while (left := deadline - time.monotonic()) > 0:
                if not select.select([self.sock], [], [], left)[0]:
                    break
                try:
                    data = self.sock.recv(65535)
                except BlockingIOError:
                    continue
                if len(data) >= 42 and data[12:14] == struct.pack("!H", ETH_P_ARP) and data[20:22] == b"\0\2" and data[28:32] == socket.inet_aton(ip):
                    return ":".join(f"{b:02x}" for b in data[22:28])
        raise ValueError(f"{ip} does not answer ARP on {self.iface}")

    # -- frames ------------------------------------------------------------------------------

    def _frame(self, flags: int, seq: int, ack: int, wnd: int, payload: bytes, dst: str, sport: int, dport: int, mss: int | None = None,
               sack_permitted: bool = False, sack=(), options: list | None = None) -> bytes:  # fmt: skip
        """A frame from the alias with the next IP identification (absolute sequence numbers);
        options by keyword, or `options` in wire order (`_core.wire.tcp_frame`)."""
        self.id = (self.id + 1) & 0xFFFF
        kw = {"options": options} if options is not None else {"mss": mss, "sack_permitted": sack_permitted, "sack": list(sack)}
        return _core.wire.tcp_frame(self.my_mac, self.hop_mac, self.src, dst, sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, flags, min(wnd, 65535),
                                    bytes(payload), ip_id=self.id, **kw)  # fmt: skip

    def _arp_reply(self, frame: bytes) -> None:
        # RFC 826: answer a request for the alias with our MAC.
        if len(frame) < 42:
            return
        htype, ptype, hlen, plen, op = struct.unpack("!HHBBH", frame[14:22])
        if op != 1 or ptype != ETH_P_IP:
            return
        sha, spa, tpa = frame[22:28], frame[28:32], frame[38:42]
        if tpa != socket.inet_aton(self.src):
            return
        body = struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, 2) + _mac(self.my_mac) + tpa + sha + spa
        self.sock.send(sha + _mac(self.my_mac) + struct.pack("!H", ETH_P_ARP) + body)

    #: Frames dropped as malformed (a truncated or inconsistent IPv4/TCP header or TCP option),
    #: counted as smoltcp counts them; a probe reports the count (`RawTransport.malformed`).
    malformed = 0

    def _drop(self) -> None:
        self.malformed += 1

    def _parse(self, frame: bytes, t: float) -> Seg | None:
        """The server's segment in `frame`, or None: frames not for this connection are ignored,
        malformed ones (any length, offset or TCP option that does not fit; the codec names the
        byte) are dropped and counted, whichever connection they claim to be of."""
        if len(frame) >= 14 and frame[12:14] == _ETH_ARP:
            self._arp_reply(frame)
            return None
        try:
            p = _core.wire.parse_tcp(frame)
        except ValueError:
            return self._drop()
        if p is None or p["src_ip"] != self.dst or p["dst_ip"] != self.src:
            return None
        sport, dport, seq, ack, flags = p["sport"], p["dport"], p["seq"], p["ack"], p["flags"]
        if self.peer_mode:
            if dport != self.peer_port:
                return None
        elif sport != self.port or dport != self.sport:
            return None
        wire, mss, sack_ok, blocks = p["options"], None, False, ()
        for o in wire:
            if o[0] == "mss":
                mss = o[1]
            elif o[0] == "sackOK":
                sack_ok = True
            elif o[0] == "sack":
                blocks = o[1]
        if flags & SYN and not self.peer_mode:
            self.server_isn = seq
        base = seq if self.peer_mode and flags & SYN else self.server_isn
        if base is None:
            return None
        rel = (seq - base) & 0xFFFFFFFF
        rack = (ack - self.isn) & 0xFFFFFFFF if flags & ACK else 0
        # RFC 2018 §3: the server's SACK blocks name the prober's data: relative to our ISN.
        rblocks = tuple(((a - self.isn) & 0xFFFFFFFF, (b - self.isn) & 0xFFFFFFFF) for a, b in blocks)
        wire = tuple(("sack", rblocks) if o[0] == "sack" else o for o in wire)
        return Seg(t, flags, rel, rack, len(p["payload"]), p["window"], sack_ok, rblocks, mss, wire, p["tos"])

    # -- the Transport interface -------------------------------------------------------------

    def open(self) -> None:
        self.sport = 20000 + (self.sport - 20000 + 1 + random.randint(0, 97)) % 40000
        self.isn = random.randint(0, 2**32 - 1)
        self.snd_nxt = 0
        self.server_isn = None
        self.peer_mode = False
        self._drain()
        self.t0 = time.time()

    def _drain(self) -> None:
        for _ in range(10000):
            try:
                self.sock.recv(65535)
            except BlockingIOError:
                return

    def now(self) -> float:
        return time.time() - self.t0

    def send(self, flags, seq, ack, wnd, payload=b"", sack=(), sack_permitted=False, mss=None) -> float:
        blocks = []
        if sack and self.server_isn is not None:
            blocks = [((self.server_isn + a) & 0xFFFFFFFF, (self.server_isn + b) & 0xFFFFFFFF) for a, b in list(sack)[:3]]
        self.snd_nxt = max(self.snd_nxt, seq + len(payload) + (1 if flags & SYN else 0))
        abs_ack = 0 if self.server_isn is None else (self.server_isn + ack)
        frame = self._frame(flags, self.isn + seq, abs_ack, wnd, bytes(payload), self.dst, self.sport, self.port, mss=mss, sack_permitted=sack_permitted, sack=blocks)
        t = self.now()
        self.sock.send(frame)
        return t

    def recv(self, timeout: float) -> Seg | None:
        deadline = time.monotonic() + max(0.0, timeout)
        for _ in range(100000):
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return None
            while True:
                try:
                    data, anc, _, addr = self.sock.recvmsg(65535, 64)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue
                t = time.time()
                for lvl, typ, val in anc:
                    if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS and len(val) >= 16:
                        sec, nsec = struct.unpack("qq", val[:16])
                        t = sec + nsec / 1e9
                s = self._parse(data, t - self.t0)
                if s is not None:
                    return s
        return None

    def close(self) -> None:
        # End the server's side: a RST at exactly the sequence number it expects next (RFC 5961
        # §3.2: any other in-window RST only draws a challenge ACK).
        if self.server_isn is not None and not self.peer_mode:
            self.sock.send(self._frame(RST, self.isn + self.snd_nxt, 0, 0, b"", self.dst, self.sport, self.port))
        self.server_isn = None

    def can_peer_connect(self) -> bool:
        return self._on_peer_connect is not None

    def peer_connect(self) -> bool:
        if self._on_peer_connect is None:
            raise OSError("this transport cannot make the server open a connection (only inside a Lab)")
        self.peer_mode = True
        self._drain()
        self.t0 = time.time()
        self._on_peer_connect()
        return True

    def shutdown(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


# -------------------------------------------------------------------------------------------
# The lab.


def missing() -> str | None:
    """Why the real-kernel lab cannot run here, or None."""
    return netns.missing(("ip", "ethtool"), "iproute2 ethtool", f"tbq{os.getpid() % 100000}")


#: The lab's namespace names: tcplabtbit<pid>n<k><c|r|s> (the pid of the process that made them).
NS_PREFIX = "tcplabtbit"
_NS_NAME = re.compile(NS_PREFIX + r"(\d+)n\d+[crs]")


def namespaces() -> list:
    """The namespaces of TBIT labs (by their names), whatever process made them."""
    return netns.namespaces(_NS_NAME)


def cleanup_stale() -> list:
    """Remove the namespaces of TBIT labs whose process is gone, killing what runs in them (the
    HTTP server); `tcplab testbed cleanup` calls it with the testbed's own cleanup."""
    return netns.cleanup_stale(_NS_NAME)


class Lab:
    """client — router — server namespaces; the stack under test is the server's kernel. Built
    and taken down by the labs' one helper (`netns.Namespaces`)."""

    NET_C, NET_S = "10.203.1", "10.203.2"

    _made = 0  # labs made by this process: each gets names of its own

    def __init__(self, page_bytes: int = 200_000, port: int = 8080):
        Lab._made += 1
        tag = f"{NS_PREFIX}{os.getpid()}n{Lab._made}"
        self.C, self.R, self.S = f"{tag}c", f"{tag}r", f"{tag}s"
        self.client_ip, self.alias = f"{self.NET_C}.2", f"{self.NET_C}.50"
        self.server_ip, self.port, self.page_bytes = f"{self.NET_S}.2", port, page_bytes
        self.ns = netns.Namespaces()
        self._signals: netns.interrupts | None = None
        self._peer: subprocess.Popen | None = None
        self.tr: RawTransport | None = None

    @property
    def procs(self) -> list:
        """The processes started in the lab (the HTTP server first), ended by `close`."""
        return self.ns.procs

    def _sh(self, *args: str, ns: str | None = None, check: bool = True, timeout: float = 15) -> subprocess.CompletedProcess:
        return self.ns.sh(*args, ns=ns, check=check, timeout=timeout)

    def __enter__(self) -> Lab:
        self._signals = netns.interrupts().__enter__()
        atexit.register(self.close)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _build(self) -> None:
        C, R, S = self.C, self.R, self.S
        n = self.ns
        n.add(C, R, S)
        n.veth(C, "c0", R, "r0")
        n.veth(R, "r1", S, "s0")
        n.addr(C, "c0", f"{self.client_ip}/24")
        n.addr(R, "r0", f"{self.NET_C}.1/24")
        n.addr(R, "r1", f"{self.NET_S}.1/24")
        n.addr(S, "s0", f"{self.server_ip}/24")
        self._sh("ip", "-n", C, "route", "add", "default", "via", f"{self.NET_C}.1")
        n.sysctls(R, {"net.ipv4.ip_forward": 1})
        c_mac, r_mac = n.mac(C, "c0"), n.mac(R, "r0")
        # The alias lives on the client's wire: the router sends its frames to the client's MAC,
        # where the prober reads them and the client kernel, not owning it, drops them silently.
        self._sh("ip", "-n", R, "neigh", "replace", self.alias, "lladdr", c_mac, "dev", "r0", "nud", "permanent")
        self.configure()
        server = Path(__file__).with_name("server.py")
        p = n.spawn(["ip", "netns", "exec", S, sys.executable, str(server), "--port", str(self.port), "--size", str(self.page_bytes)],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, preexec_fn=netns.die_with_parent)  # fmt: skip
        ready, _, _ = select.select([p.stdout], [], [], 10)
        if not ready or "listening" not in p.stdout.readline():
            raise RuntimeError("the HTTP server in the server namespace did not start within 10 s")
        self.tr = RawTransport("c0", self.alias, self.server_ip, self.port, r_mac, netns=C, max_wait=5.0, on_peer_connect=self._server_connects)

    def configure(self, initcwnd: int | None = None, congctl: str | None = None, sysctls: dict | None = None) -> None:
        """The server kernel's knobs: the default route's initcwnd and congctl, and sysctls under
        net.ipv4 (e.g. {"tcp_sack": 0}). Cached metrics are flushed and not saved, so no run's
        RTT changes the next run's timers."""
        route = ["ip", "-n", self.S, "route", "replace", "default", "via", f"{self.NET_S}.1", "dev", "s0"]
        if initcwnd is not None:
            route += ["initcwnd", str(initcwnd)]
        if congctl is not None:
            route += ["congctl", congctl]
        self._sh(*route)
        # A 200 KB page at MSS 128 is 1600 buffers of about 1 KB each: with the default 16 KB
        # send buffer the server's writes would run dry between ACKs (application-limited, so
        # the window TBIT reads would not be the congestion window). 4 MB holds the whole page.
        base = {"tcp_no_metrics_save": 1, "tcp_syn_retries": 6, "tcp_wmem": "4096 4194304 16777216"}
        self.ns.sysctls(self.S, {**base, **(sysctls or {})}, prefix="net.ipv4.")
        self._sh("ip", "-n", self.S, "tcp_metrics", "flush", "all", check=False)

    def defaults(self) -> None:
        """Back to the kernel's defaults of what `configure` may have changed."""
        self.configure(sysctls={"tcp_sack": 1, "tcp_early_retrans": 3, "tcp_recovery": 1, "tcp_syn_linear_timeouts": 4, "tcp_ecn": 2})

    def _server_connects(self) -> None:
        # The server's kernel opens a connection to the prober's alias (Seddigh's SYN test: the
        # prober never answers); the process is killed when the lab closes or the next one starts.
        if self._peer is not None:
            netns.Namespaces.stop(self._peer, grace=5)
            self.ns.procs.remove(self._peer)
        code = f"import socket; s = socket.socket(); s.settimeout(60); s.connect(({self.alias!r}, {self.tr.peer_port}))"
        self._peer = self.ns.spawn(["ip", "netns", "exec", self.S, sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   preexec_fn=netns.die_with_parent)  # fmt: skip

    def close(self) -> None:
        if self.tr is not None:
            self.tr.shutdown()
            self.tr = None
        self._peer = None
        self.ns.close()
        if self._signals is not None:
            self._signals.__exit__(None, None, None)
            self._signals = None
