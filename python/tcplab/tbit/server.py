"""A small HTTP/1.1 server for TBIT against the real kernel (run by `real.Lab` in the server
namespace): any path returns `--size` bytes; `Range: bytes=A-B` returns that range (206). The
header and body leave in one corked write, as nginx's `sendfile on; tcp_nopush on` sends them,
so every data segment is full-sized (Python's http.server sends the header as a segment of its
own, which would shift TBIT's packet numbering). A path `/paced/N` also caps the connection's
pacing rate at N bytes/s (SO_MAX_PACING_RATE, socket(7); without the fq qdisc Linux then paces
in TCP itself): the application's own pacing knob, for the `pacing` test. Standard library only;
it runs until killed.

    python3 server.py --port 8080 --size 200000
"""

from __future__ import annotations

import argparse
import re
import socket
import threading

RANGE = re.compile(rb"range:\s*bytes=(\d+)-(\d*)", re.I)
PACED = re.compile(rb"^GET /paced/(\d{1,12})[ /?]")
SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)  # asm-generic/socket.h


def serve(c: socket.socket, body: bytes) -> None:
    c.settimeout(30)
    buf = b""
    for _ in range(1000):  # requests on one keep-alive connection, bounded
        while b"\r\n\r\n" not in buf:
            d = c.recv(4096)
            if not d:
                return
            buf += d
            if len(buf) > 65536:
                return
        req, buf = buf.split(b"\r\n\r\n", 1)
        p = PACED.match(req)
        if p:
            c.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, min(int(p.group(1)), 2**32 - 1))
        m = RANGE.search(req)
        if m:
            a = int(m.group(1))
            b = int(m.group(2)) if m.group(2) else len(body) - 1
            b = min(b, len(body) - 1)
            part = body[a : b + 1]
            head = f"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{len(body)}\r\nContent-Length: {len(part)}\r\n\r\n"
        else:
            part = body
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(part)}\r\n\r\n"
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
        try:  # the whole response in the send buffer at once (root may exceed wmem_max)
            c.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_SNDBUFFORCE", 32), 8 << 20)
        except OSError:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
        c.sendall(head.encode() + part)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--size", type=int, default=200_000)
    a = ap.parse_args()
    body = bytes(b"0123456789abcdef"[i % 16] for i in range(a.size))
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", a.port))
    s.listen(64)
    print("listening", flush=True)

    def run(c):
        try:
            serve(c, body)
        except OSError:
            pass
        finally:
            c.close()

    while True:
        c, _ = s.accept()
        threading.Thread(target=run, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
