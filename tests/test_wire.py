"""The frame codec of the core (`tcplab._core.wire`, crates/tcplab-core/src/trace/wire.rs), as
TBIT's raw transport uses it: frames it builds equal frames written by hand (tests/frames.py) and
known bytes, frames parse back to their fields, and malformed frames raise ValueError naming the
byte offset, never anything else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frames import hand_frame, internet_checksum
from tcplab._core import wire

A, B = "02:00:00:00:00:01", "02:00:00:00:00:02"
SYN, ACK, PSH = 0x02, 0x10, 0x08

# A SYN from 10.0.0.1:1 to 10.0.0.2:80, seq 5, MSS 1460, SACK-permitted, one SACK block (1, 2),
# "hi" as data, IP identification 7: every byte written out.
KNOWN_SYN = bytes.fromhex(
    "020000000002" "020000000001" "0800"  # Ethernet: destination, source, IPv4
    "4500" "003e" "0007" "4000" "4006" "26b1" "0a000001" "0a000002"  # IPv4: len 62, id 7, DF, TTL 64, TCP
    "0001" "0050" "00000005" "00000000" "a002" "ffff" "d041" "0000"  # TCP: ports, seq, ack, 40-byte header, SYN
    "020405b4" "01010402" "0101050a" "00000001" "00000002"  # MSS 1460, NOP NOP SACK-permitted, NOP NOP SACK
    "6869"  # "hi"
)


def test_a_frame_equals_the_known_bytes_and_the_hand_written_frame():
    f = wire.tcp_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, SYN, 65535, b"hi", mss=1460, sack_permitted=True, sack=[(1, 2)], ip_id=7)
    assert f == KNOWN_SYN
    opts = bytes.fromhex("020405b4" "01010402" "0101050a" "00000001" "00000002")
    assert f == hand_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, SYN, 65535, b"hi", opts, ip_id=7)


@settings(max_examples=200, deadline=None)
@given(seq=st.integers(0, 2**32 - 1), ack=st.integers(0, 2**32 - 1), flags=st.integers(0, 255), window=st.integers(0, 65535),
       payload=st.binary(max_size=300), mss=st.none() | st.integers(0, 65535), sack_ok=st.booleans(),
       ts=st.none() | st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
       blocks=st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)), max_size=2), ip_id=st.integers(0, 65535))  # fmt: skip
def test_frames_equal_hand_written_ones_and_parse_back(seq, ack, flags, window, payload, mss, sack_ok, ts, blocks, ip_id):
    f = wire.tcp_frame(A, B, "192.168.1.9", "10.1.2.3", 40000, 8080, seq, ack, flags, window, payload, mss=mss, sack_permitted=sack_ok,
                       timestamps=ts, sack=blocks, ip_id=ip_id)  # fmt: skip
    opts = b""
    if mss is not None:
        opts += bytes([2, 4]) + mss.to_bytes(2, "big")
    if sack_ok:
        opts += bytes([1, 1, 4, 2])
    if ts is not None:
        opts += bytes([1, 1, 8, 10]) + ts[0].to_bytes(4, "big") + ts[1].to_bytes(4, "big")
    if blocks:
        opts += bytes([1, 1, 5, 2 + 8 * len(blocks)]) + b"".join(a.to_bytes(4, "big") + b.to_bytes(4, "big") for a, b in blocks)
    assert f == hand_frame(A, B, "192.168.1.9", "10.1.2.3", 40000, 8080, seq, ack, flags, window, payload, opts, ip_id=ip_id)
    # A receiver's check (RFC 1071): the IPv4 header sums to zero.
    assert internet_checksum(f[14:34]) == 0
    p = wire.parse_tcp(f)
    assert (p["src_mac"], p["dst_mac"], p["src_ip"], p["dst_ip"], p["sport"], p["dport"]) == (A, B, "192.168.1.9", "10.1.2.3", 40000, 8080)
    assert (p["seq"], p["ack"], p["flags"], p["window"], p["ip_id"], p["ttl"], p["tos"], p["payload"]) == (seq, ack, flags, window, ip_id, 64, 0, payload)
    named = [o for o in p["options"] if o[0] != "nop"]
    want = ([("mss", mss)] if mss is not None else []) + ([("sackOK",)] if sack_ok else []) + ([("TS", *ts)] if ts else [])
    want += [("sack", tuple(blocks))] if blocks else []
    assert named == want


def test_parse_of_a_hand_written_server_frame():
    opts = bytes.fromhex("020405b4" "0402" "080a0000000100000002" "01" "030307")  # MSS, SACK-perm, TS, NOP, wscale 7
    f = hand_frame(B, A, "10.0.0.2", "10.0.0.1", 80, 1, 1000, 6, SYN | ACK, 29200, opts=opts, ip_id=0, tos=0x02)
    p = wire.parse_tcp(f)
    assert p["options"] == (("mss", 1460), ("sackOK",), ("TS", 1, 2), ("nop",), ("wscale", 7))
    assert (p["seq"], p["ack"], p["flags"], p["tos"]) == (1000, 6, SYN | ACK, 2)
    # An unknown kind is named by its number; EOL ends the list.
    f = hand_frame(B, A, "10.0.0.2", "10.0.0.1", 80, 1, 1, 1, ACK, 100, opts=bytes.fromhex("1e04abcd" "00") + b"\0\0\0")
    assert wire.parse_tcp(f)["options"] == (("kind", 30), ("eol",))


def test_frames_of_something_else_are_none():
    arp = b"\xff" * 6 + bytes(6) + b"\x08\x06" + bytes(28)
    assert wire.parse_tcp(arp) is None
    udp = bytearray(KNOWN_SYN)
    udp[14 + 9] = 17
    assert wire.parse_tcp(bytes(udp)) is None


@pytest.mark.parametrize(
    "edit, offset",
    [
        (lambda f: f[:10], 10),  # inside the Ethernet header
        (lambda f: f[:30], 30),  # inside the IPv4 header
        (lambda f: f[:50], 16),  # cut inside the TCP header: the total length no longer fits
        (lambda f: f[:14] + b"\x65" + f[15:], 14),  # IP version 6 under an IPv4 EtherType
        (lambda f: f[:14] + b"\x44" + f[15:], 14),  # IHL of 16 bytes
        (lambda f: f[:16] + b"\x00\x13" + f[18:], 16),  # total length 19 < IHL
        (lambda f: f[:46] + b"\x40" + f[47:], 46),  # TCP data offset 16 bytes
        (lambda f: f[:46] + b"\xf0" + f[47:], 46),  # TCP data offset 60 bytes, beyond the datagram
        (lambda f: f[:55] + b"\x03" + f[56:], 55),  # the MSS option's length 3
        (lambda f: f[:65] + b"\x0b" + f[66:], 65),  # the SACK option's length 11, not 2 + 8n
        (lambda f: f[:65] + b"\x01" + f[66:], 65),  # an option length below 2
    ],
)
def test_malformed_frames_raise_value_error_naming_the_byte(edit, offset):
    with pytest.raises(ValueError, match=f"^byte {offset}: "):
        wire.parse_tcp(edit(KNOWN_SYN))


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=120), st.integers(0, 100))
def test_random_bytes_parse_or_raise_value_error(data, cut):
    for f in (data, KNOWN_SYN[:34] + data, KNOWN_SYN[:cut] + data):
        try:
            p = wire.parse_tcp(f)
        except ValueError as e:
            assert str(e).startswith("byte ")
        else:
            assert p is None or isinstance(p, dict)


def test_bad_arguments_name_the_argument():
    ok = (A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, SYN, 65535)
    with pytest.raises(ValueError, match="src_mac"):
        wire.tcp_frame("02:00", *ok[1:])
    with pytest.raises(ValueError, match="dst_ip"):
        wire.tcp_frame(*ok[:3], "10.0.0", *ok[4:])
    with pytest.raises(ValueError, match="ecn"):
        wire.tcp_frame(*ok, ecn=4)
    with pytest.raises(ValueError, match="65535"):
        wire.tcp_frame(*ok, b"x" * 65500)
    with pytest.raises(OverflowError):
        wire.tcp_frame(*ok[:9], 65536)


def test_an_option_list_is_written_in_its_order_and_padded_with_nops():
    # A scripted test's <mss 1000,sackOK,nop,nop,nop,wscale 7>: its layout exactly, as packetdrill
    # writes it (12 bytes).
    opts = [("mss", 1000), ("sackOK",), ("nop",), ("nop",), ("nop",), ("wscale", 7)]
    f = wire.tcp_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, SYN, 65535, options=opts)
    assert f == hand_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, SYN, 65535, opts=bytes.fromhex("020403e8" "0402" "010101" "030307"))
    assert wire.parse_tcp(f)["options"] == tuple(opts)
    # <mss 1000,wscale 7> is 7 bytes: one NOP ends the word.
    f = wire.tcp_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, SYN, 65535, options=[("mss", 1000), ("wscale", 7)])
    assert f[54:62] == bytes.fromhex("020403e8" "03030701")
    # The structure parse_tcp returns goes back in unchanged.
    ts = [("nop",), ("nop",), ("TS", 7, 9), ("nop",), ("nop",), ("sack", ((1, 2), (3, 4))), ("eol",)]
    g = wire.tcp_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, ACK, 100, options=ts)
    assert wire.parse_tcp(g)["options"] == tuple(ts)
    # 40 bytes fit; 42 do not, and the error names the option.
    wire.tcp_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, ACK, 100, options=[("TS", 1, 2)] * 4)
    with pytest.raises(ValueError, match=r"options\[4\].*more than 40 bytes"):
        wire.tcp_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, ACK, 100, options=[("TS", 1, 2)] * 5)


@pytest.mark.parametrize("bad, words", [
    ([("kind", 30)], r"options\[0\]: known options"),
    ([("nop",), ("mss", 70000)], r"options\[1\]: an MSS is 0 to 65535"),
    ([("mss",)], r"options\[0\]: mss takes 1 value"),
    (["mss"], r"options\[0\]: expected a tuple"),
    ([("sack", "x")], r"options\[0\]: sack takes"),
])
def test_a_bad_option_list_names_the_entry(bad, words):
    with pytest.raises(ValueError, match=words):
        wire.tcp_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, ACK, 100, options=bad)
    with pytest.raises(ValueError, match="not both"):
        wire.tcp_frame(A, B, "10.0.0.1", "10.0.0.2", 1, 80, 5, 0, ACK, 100, mss=536, options=[])
