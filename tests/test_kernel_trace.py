"""Real captures, made by the test: the Linux kernel's TCP between network namespaces that the test
creates (client - delay box - server over veth pairs with offloads off, a small HTTP server, curl,
tcpdump with --immediate-mode -U), analysed by tcplab and checked against what the kernel was told:

- `ip route ... initcwnd 4` on the server: the analyser's initial window is 4 segments;
- the client's first SYN dropped by an nftables rule at the server: one SYN retransmission, about
  1 s after the first SYN (the kernel's initial RTO).

The middle namespace is a user-space delay box (10 ms each way; netem is not available): with the
near-zero RTT of bare veth pairs the first ACK returns while the server is still emitting its first
flight, and no capture can tell the initial window from ACK-clocked growth.

Needs root, `ip netns`, tcpdump, curl and nft; skips with the reason otherwise. Everything created
is deleted afterwards; every wait is bounded.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time

import pytest

import tcplab

TAG = f"tlt{os.getpid() % 100000}"
CLI, RTR, SRV = f"{TAG}c", f"{TAG}r", f"{TAG}s"
CLI_IP, SRV_IP = "10.201.1.2", "10.201.1.3"
ONE_WAY_S = 0.010
PORT = 8080
BODY = 100_000

# A minimal HTTP/1.0 server: reads a request, answers with BODY bytes in one corked write (as
# nginx's tcp_nopush does, so the first flight leaves in one go, full-sized), closes.
SERVER = f"""
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", {PORT})); s.listen(8)
body = b"x" * {BODY}
def serve(c):
    c.settimeout(10)
    req = b""
    while b"\\r\\n\\r\\n" not in req:
        d = c.recv(4096)
        if not d: return
        req += d
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    c.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 0)
while True:
    c, _ = s.accept()
    try:
        serve(c)
    except OSError:
        pass
    c.close()
"""


# The delay box: frames read on one veth with AF_PACKET are written to the other after a delay.
BOX = """
import heapq, select, socket, sys, time
def op(dev):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((dev, 0))
    s.setblocking(False)
    return s
a, b = op("r0"), op("r1")
peer = {a: b, b: a}
delay = float(sys.argv[1])
q, n = [], 0
while True:
    wait = max(0.0, q[0][0] - time.monotonic()) if q else 1.0
    ready, _, _ = select.select([a, b], [], [], wait)
    now = time.monotonic()
    for s in ready:
        while True:
            try:
                data, addr = s.recvfrom(65535)
            except BlockingIOError:
                break
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            n += 1
            heapq.heappush(q, (now + delay, n, peer[s], data))
    now = time.monotonic()
    while q and q[0][0] <= now:
        _, _, s, data = heapq.heappop(q)
        s.send(data)
"""


def sh(*args: str, check: bool = True, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, check=check)


def nsx(ns: str, *args: str, **kw) -> subprocess.CompletedProcess:
    return sh("ip", "netns", "exec", ns, *args, **kw)


def _missing() -> str | None:
    if sys.platform != "linux":
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    for tool in ("ip", "tcpdump", "curl", "nft", "ethtool"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install -y iproute2 tcpdump curl nftables ethtool)"
    probe = f"{TAG}probe"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _cleanup() -> None:
    for ns in (CLI, RTR, SRV):
        subprocess.run(["ip", "netns", "pids", ns], capture_output=True)
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for p in pids:
            try:
                os.kill(int(p), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture(scope="module")
def lab():
    why = _missing()
    if why:
        pytest.skip(why)
    _cleanup()
    server = box = None
    try:
        for ns in (CLI, RTR, SRV):
            sh("ip", "netns", "add", ns)
            nsx(ns, "ip", "link", "set", "lo", "up")
        sh("ip", "link", "add", "c0", "netns", CLI, "type", "veth", "peer", "name", "r0", "netns", RTR)
        sh("ip", "link", "add", "s0", "netns", SRV, "type", "veth", "peer", "name", "r1", "netns", RTR)
        nsx(RTR, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
        for ns, dev, addr in ((CLI, "c0", f"{CLI_IP}/24"), (RTR, "r0", None), (RTR, "r1", None), (SRV, "s0", f"{SRV_IP}/24")):
            if addr:
                nsx(ns, "ip", "addr", "add", addr, "dev", dev)
            nsx(ns, "ip", "link", "set", dev, "up")
            # Offloads off, or the capture shows super-segments and unfinished checksums.
            nsx(ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", "tx", "off", "rx", "off", check=False)
        nsx(SRV, "ip", "route", "add", f"{CLI_IP}/32", "dev", "s0", "initcwnd", "4")
        for ns in (CLI, SRV):
            nsx(ns, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1")
            # No tail-loss probe: the first flight is exactly the initial window.
            nsx(ns, "sysctl", "-qw", "net.ipv4.tcp_early_retrans=0")
        box = subprocess.Popen(["ip", "netns", "exec", RTR, sys.executable, "-c", BOX, str(ONE_WAY_S)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server = subprocess.Popen(["ip", "netns", "exec", SRV, sys.executable, "-c", SERVER], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            up = f":{PORT}" in nsx(SRV, "ss", "-ltn", check=False).stdout
            if up and nsx(CLI, "curl", "-s", "-o", "/dev/null", "--max-time", "2", f"http://{SRV_IP}:{PORT}/", check=False).returncode == 0:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the HTTP server or the delay box did not come up within 10 s")
        yield
    finally:
        for p in (server, box):
            if p is not None:
                p.kill()
                p.wait(timeout=5)
        _cleanup()


class Capture:
    """tcpdump in a namespace, started and stopped around a fetch."""

    def __init__(self, ns: str, dev: str, path) -> None:
        self.p = subprocess.Popen(
            ["ip", "netns", "exec", ns, "tcpdump", "-i", dev, "-w", str(path), "--immediate-mode", "-U", "-s", "200", "tcp"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 10
        buf = b""
        while b"listening on" not in buf:
            left = deadline - time.monotonic()
            if left <= 0 or self.p.poll() is not None:
                self.stop()
                pytest.fail(f"tcpdump did not start: {buf.decode(errors='replace')}")
            r, _, _ = select.select([self.p.stderr], [], [], left)
            if r:
                buf += os.read(self.p.stderr.fileno(), 4096)

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=5)


def fetch() -> None:
    for ns in (CLI, SRV):
        nsx(ns, "ip", "tcp_metrics", "flush", "all", check=False)
    r = nsx(CLI, "curl", "-s", "-o", "/dev/null", "-w", "%{size_download}", "--max-time", "15", f"http://{SRV_IP}:{PORT}/", check=False, timeout=30)
    assert r.returncode == 0, f"curl failed: {r.returncode} {r.stderr}"
    assert int(r.stdout) == BODY


def test_initcwnd_4_is_an_initial_window_of_4(lab, tmp_path):
    p = tmp_path / "server.pcap"
    cap = Capture(SRV, "s0", p)
    try:
        fetch()
        time.sleep(0.3)
    finally:
        cap.stop()
    df = tcplab.trace.analyze(p)
    assert len(df) == 1, df
    c = df.iloc[0]
    assert c.a == f"{CLI_IP}:{c.a.split(':')[1]}" and c.b == f"{SRV_IP}:{PORT}"
    assert c.data_dir == "b2a"
    assert c.unique_bytes > BODY
    assert c.b2a_mss in (1448, 1460)
    assert c.iw_segs == 4, f"first flight of {c.iw_segs} segments"
    assert c.rexmt_segs == 0 and c.syn_retransmits == 0
    assert 2 * ONE_WAY_S <= c.rtt_avg_s < 2 * ONE_WAY_S + 0.05, c.rtt_avg_s
    assert 2 * ONE_WAY_S <= c.handshake_rtt_s < 2 * ONE_WAY_S + 0.05
    assert c.transfer_time_s > 0 and c.throughput_bps > 0


def test_a_dropped_syn_is_retransmitted_after_about_one_second(lab, tmp_path):
    # Drop the first SYN of each flow as it reaches the server: a per-flow set remembers the flows
    # whose SYN was dropped once (conntrack alone sees the retransmitted SYN as the same packet).
    rules = f"""
table inet tcplabtest {{
  set seen {{ type ipv4_addr . inet_service; flags dynamic, timeout; timeout 60s; }}
  chain in_filter {{
    type filter hook input priority 0; policy accept;
    tcp dport {PORT} tcp flags & (syn | ack) == syn ip saddr . tcp sport @seen accept
    tcp dport {PORT} tcp flags & (syn | ack) == syn add @seen {{ ip saddr . tcp sport }} drop
  }}
}}
"""
    r = subprocess.run(["ip", "netns", "exec", SRV, "nft", "-f", "-"], input=rules, capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        pytest.skip(f"nftables rules cannot be loaded here: {r.stderr.strip()}")
    p = tmp_path / "client.pcap"
    try:
        cap = Capture(CLI, "c0", p)
        try:
            fetch()
            time.sleep(0.3)
        finally:
            cap.stop()
    finally:
        nsx(SRV, "nft", "delete", "table", "inet", "tcplabtest", check=False)
    df = tcplab.trace.analyze(p)
    assert len(df) == 1, df
    c = df.iloc[0]
    assert c.syn_retransmits == 1
    assert 0.95 <= c.syn_rto_s <= 1.3, c.syn_rto_s
    assert c.loss_events == 1
    assert c.synack_retransmits == 0
    assert c.unique_bytes > BODY
