"""Start the delay box in the middle namespace: `python -m tcplab.testbed.boxmain SPEC.json`.

Opens one AF_PACKET socket per port (`p0`, `p1`, ...), ignoring the frames the box itself
writes (PACKET_IGNORE_OUTGOING), prints "ready" and hands the sockets to the compiled box
(`tcplab._core.delay_box`, crates/tcplab-py/src/delaybox.rs), which runs until it is killed.
"""

import json
import socket
import sys

PACKET_IGNORE_OUTGOING = 23  # linux/if_packet.h (Linux 4.20)
SOL_PACKET = 263  # linux/socket.h
ETH_P_ALL = 3
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33  # asm-generic/socket.h: beyond wmem_max / rmem_max (root)


def main() -> None:
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    socks = []
    for dev in spec.pop("devices"):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        # Room for what waits in a tbf on the port (the frames written stay charged to the socket
        # until sent): with a small send buffer a write would block the box.
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 32 << 20)
        s.bind((dev, 0))
        socks.append(s)
    spec["ports"] = [s.detach() for s in socks]
    from tcplab import _core

    print("ready", flush=True)
    _core.delay_box(json.dumps(spec))


if __name__ == "__main__":
    main()
