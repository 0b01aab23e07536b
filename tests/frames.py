"""Ethernet/IPv4/TCP frames written out by hand with `struct`, field by field, as the oracle the
core's codec (`tcplab._core.wire`) is tested against: it shares no code with the codec."""

from __future__ import annotations

import socket
import struct


def internet_checksum(data: bytes) -> int:
    """RFC 1071 §4.1's algorithm, spelled out: 16-bit one's-complement sum, folded, inverted."""
    if len(data) % 2:
        data += b"\0"
    total = 0
    for (word,) in struct.iter_unpack("!H", data):
        total += word
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def mac(s: str) -> bytes:
    return bytes.fromhex(s.replace(":", ""))


def hand_frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int, seq: int, ack: int, flags: int,
               window: int, payload: bytes = b"", opts: bytes = b"", ip_id: int = 0, tos: int = 0) -> bytes:  # fmt: skip
    """A frame with raw option bytes `opts` (padded with NOPs to a multiple of 4)."""
    while len(opts) % 4:
        opts += b"\x01"
    s, d = socket.inet_aton(src_ip), socket.inet_aton(dst_ip)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (20 + len(opts)) // 4 << 4, flags, window, 0, 0) + opts + payload
    pseudo = s + d + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", internet_checksum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(tcp), ip_id, 0x4000, 64, 6, 0, s, d)
    ip = ip[:10] + struct.pack("!H", internet_checksum(ip)) + ip[12:]
    return mac(dst_mac) + mac(src_mac) + b"\x08\x00" + ip + tcp
