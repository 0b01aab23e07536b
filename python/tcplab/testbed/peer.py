"""The testbed's real endpoints: a server and a client, run by `ip netns exec` in the hosts'
namespaces. Standalone (the standard library only, no tcplab import) so they start fast.

    python peer.py server PORT...        # 5001: a sink; 80: request/response
    python peer.py client PLAN.json OUT.json

Server, port 5001 (bulk [[flows]]): reads until the sender's FIN, then closes. Port 80
(reqresp, http10): reads a request "GET <request bytes> <response bytes>\\n" padded to its length,
answers with the response in one corked write, closes, and reads until the client's FIN.

Client: runs the plan's jobs, each from its start time (seconds after the plan's `t0`, an epoch
time shared by every host), binding the source ports the plan gives. `bulk`: connect, send the
bytes, shut down the write side, wait for the sink to close. `reqresp`: one exchange per port,
`think` apart. `http10`: pages of a primary object, then the embedded objects on parallel
connections. Each connection's times (epoch seconds) go to OUT.json.
"""

import json
import socket
import sys
import threading
import time

#: SO_SNDBUFFORCE (asm-generic/socket.h): SO_SNDBUF past net.core.wmem_max, for CAP_NET_ADMIN.
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
#: Largest transfer whose bytes are all handed to the kernel in one buffer.
WHOLE_MAX = 64 << 20


def _sndbuf(c, n):
    """A send buffer that holds all `n` bytes: twice the bytes plus 1 MB, forced past `wmem_max`
    when allowed (the kernel doubles it again, and `sk_sndbuf` counts truesize, about 1.5 times
    the payload at 1448 B)."""
    if 0 < n <= WHOLE_MAX:
        want = 2 * n + (1 << 20)
        try:
            c.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, want)
        except OSError:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, want)


def _send(c, n, data=None):
    """Hand the kernel all `n` bytes in one write, with a send buffer that holds them all.

    Linux ends a segment at the end of each write when it may send (`tcp_push` at the end of
    `tcp_sendmsg_locked`), so writing in chunks would let the writer shape the segments; the
    simulated application hands its connection the whole transfer. With the buffer of `_sndbuf`
    the one `sendmsg` never waits for space, and every skb it builds is a full `size_goal` (the
    MSS with TSO off) except the last."""
    if n <= 0:
        return
    _sndbuf(c, n)
    c.sendall(data if data is not None else b"x" * n)


def _drain(c):
    n = 0
    while True:
        d = c.recv(65536)
        if not d:
            return n
        n += len(d)


def tcp_info_hex(c):
    """The socket's `struct tcp_info` (getsockopt TCP_INFO) as hex, for the host to decode
    (tcplab.script.kernel.parse_tcp_info)."""
    try:
        return c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256).hex()
    except OSError:
        return None


def serve_sink(c):
    _drain(c)
    c.close()


def serve_app(c):
    buf = b""
    while b"\n" not in buf:
        d = c.recv(4096)
        if not d:
            c.close()
            return
        buf += d
    head, rest = buf.split(b"\n", 1)
    _, req, resp = head.split()
    left = int(req) - len(head) - 1 - len(rest)
    while left > 0:
        d = c.recv(min(left, 65536))
        if not d:
            break
        left -= len(d)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    _send(c, int(resp))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 0)
    c.shutdown(socket.SHUT_WR)
    _drain(c)
    c.close()


def server(ports):
    for p in ports:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", p))
        s.listen(128)
        fn = serve_sink if p == 5001 else serve_app

        def loop(s=s, fn=fn):
            while True:
                c, _ = s.accept()
                c.settimeout(300)
                threading.Thread(target=lambda: _guard(fn, c), daemon=True).start()

        threading.Thread(target=loop, daemon=True).start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def _guard(fn, c):
    try:
        fn(c)
    except OSError:
        c.close()


def _connect(dst, dport, sport, timeout, sndbuf=0):
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    _sndbuf(c, sndbuf)
    c.bind(("0.0.0.0", sport))
    c.settimeout(timeout)
    rec = {"sport": sport, "t_start": time.time()}
    c.connect((dst, dport))
    rec["t_connected"] = time.time()
    return c, rec


def bulk(job, timeout, out):
    # Made before the connection, so the write follows the handshake as soon as it can (the
    # simulated application's data is there when the connection opens).
    data = b"x" * job["bytes"]
    for i, sport in enumerate(job["sports"]):
        c, rec = _connect(job["dst"], job["dport"], sport, timeout, sndbuf=len(data))
        _send(c, len(data), data)
        c.shutdown(socket.SHUT_WR)
        rec["t_sent"] = time.time()
        _drain(c)
        rec["t_done"] = time.time()
        # The sender's state at the end (every byte and the FIN acknowledged): tcpi_rto and the
        # RTT estimate it came from.
        rec["tcp_info"] = tcp_info_hex(c)
        rec["bytes"] = job["bytes"]
        c.close()
        out.append(rec)
        if i + 1 < len(job["sports"]) and job["think"] > 0:
            time.sleep(job["think"])


def exchange(job, sport, timeout, out):
    c, rec = _connect(job["dst"], job["dport"], sport, timeout)
    head = b"GET %d %d\n" % (job["request"], job["response"])
    c.sendall(head + b"x" * max(0, job["request"] - len(head)))
    rec["t_request"] = time.time()
    first, n = None, 0
    while True:
        d = c.recv(65536)
        if not d:
            break
        if first is None:
            first = time.time()
        n += len(d)
    rec.update(t_first_byte=first, t_done=time.time(), bytes=n)
    c.close()
    out.append(rec)


def app(job, timeout, out):
    ports = job["sports"]
    per = job["per_page"]
    for pg in range(job["pages"]):
        page = ports[pg * per:(pg + 1) * per]
        exchange(job, page[0], timeout, out)
        if per > 1:
            ts = [threading.Thread(target=exchange, args=(job, p, timeout, out)) for p in page[1:]]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        if pg + 1 < job["pages"] and job["think"] > 0:
            time.sleep(job["think"])


def client(plan_path, out_path):
    with open(plan_path) as f:
        plan = json.load(f)
    t0, timeout = plan["t0"], plan["timeout"]
    results, errors = [], []

    def run(job):
        time.sleep(max(0.0, t0 + job["start"] - time.time()))
        try:
            (bulk if job["kind"] == "bulk" else app)(job, timeout, results)
        except OSError as e:
            errors.append(f"{job['label']}: {e}")

    ts = [threading.Thread(target=run, args=(j,)) for j in plan["jobs"]]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    with open(out_path, "w") as f:
        json.dump({"conns": results, "errors": errors}, f)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server([int(p) for p in sys.argv[2:]])
    else:
        client(sys.argv[2], sys.argv[3])
