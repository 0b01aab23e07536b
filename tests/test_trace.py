"""Traces both ways from Python: `tcplab.run(..., pcap=)`, `tcplab.trace.analyze`, the CLI's
`run --pcap` and `trace`, bad captures, and agreement with tshark and tcptrace on a lossy run."""

from __future__ import annotations

import contextlib

import json
import shutil
import struct
import subprocess

import pytest

import tcplab

LOSSY = """\
name = "lossy-trace"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "20ms"
queue = 30
loss = 0.02
[tcp]
variant = "{variant}"
[[flows]]
bytes = "500KB"
"""


def _both(tmp_path, variant="newreno", seed=3):
    """Run with captures at the sender and the receiver; return the result and two analyses."""
    tx, rx = tmp_path / f"{variant}-tx.pcap", tmp_path / f"{variant}-rx.pcap"
    text = LOSSY.format(variant=variant)
    text += f'[[capture]]\npath = "{tx.name}"\nnode = "sender"\n[[capture]]\npath = "{rx.name}"\nnode = "receiver"\n'
    with contextlib.chdir(tmp_path):  # a scenario's captures are written in the working directory
        r = tcplab.run(text, seed=seed)
    return r, tcplab.trace.analyze(tx), tcplab.trace.analyze(rx)


@pytest.mark.parametrize("variant", ["tahoe", "reno", "newreno"])
def test_analyser_equals_the_simulators_instruments(tmp_path, variant):
    r, tx, rx = _both(tmp_path, variant)
    c, t = r.connections.iloc[0], r.transfers.iloc[0]
    a, b = tx.iloc[0], rx.iloc[0]
    assert c.retransmits > 0
    assert a.rexmt_segs == c.retransmits
    assert a.rexmt_bytes == c.retransmitted_bytes
    assert b.unique_bytes == c.bytes_delivered == 500 * 1024
    assert a.iw_segs == 3
    assert a.first_s == pytest.approx(t.start_s, abs=1e-9)
    assert b.a2b_data_complete_s - a.first_s == pytest.approx(t.transfer_time_s, abs=1e-9)
    assert a.transfer_time_s == pytest.approx(t.acked_s - t.start_s, abs=1e-9)
    assert b.a2b_above_hole_segs == c.ooo_segments


def test_run_pcap_argument_and_reader_counters(tmp_path):
    p = tmp_path / "run.pcap"
    r = tcplab.run(LOSSY.format(variant="reno"), seed=1, pcap=p)
    df = tcplab.trace.analyze(p)
    assert len(df) == 1
    assert df.attrs["reader"]["format"] == "pcap"
    assert df.attrs["reader"]["packets"] == df.attrs["reader"]["tcp_packets"] > 0
    assert df.iloc[0].rexmt_segs == r.connections.iloc[0].retransmits
    assert df.iloc[0].a == "10.0.0.1:10000" and df.iloc[0].b == "10.0.0.2:5001"
    # The capture is recorded in the scenario as run; capturing does not change the result.
    assert r.scenario["capture"] == [{"path": str(p), "payload": False, "format": "pcap"}]
    r0 = tcplab.run(LOSSY.format(variant="reno"), seed=1)
    assert r0.connections.equals(r.connections)


def test_bad_captures_raise_trace_error_with_the_offset(tmp_path):
    p = tmp_path / "x.pcap"
    p.write_bytes(b"not a capture at all")
    with pytest.raises(tcplab.TraceError) as e:
        tcplab.trace.analyze(p)
    assert e.value.offset == 0 and "byte 0" in str(e.value)
    good = tmp_path / "good.pcap"
    tcplab.run(LOSSY.format(variant="reno"), seed=1, pcap=good)
    data = good.read_bytes()
    p.write_bytes(data[: 24 + 16 + 10])  # the first record cut short
    with pytest.raises(tcplab.TraceError) as e:
        tcplab.trace.analyze(p, strict=True)
    assert e.value.offset == 24 and "truncated" in str(e.value)
    bad = bytearray(data)
    bad[24 + 8 : 24 + 12] = struct.pack("<I", 0x10000000)
    p.write_bytes(bytes(bad))
    with pytest.raises(tcplab.TraceError, match="byte 32: corrupted"):
        tcplab.trace.analyze(p, strict=True)
    with pytest.warns(tcplab.trace.TraceWarning, match="byte 32: corrupted"):
        assert len(tcplab.trace.analyze(p)) == 0
    with pytest.raises(FileNotFoundError):
        tcplab.trace.analyze(tmp_path / "missing.pcap")


def test_cli_run_pcap_and_trace(cli, tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(LOSSY.format(variant="newreno"))
    p = tmp_path / "cli.pcap"
    out = cli("run", sc, "--pcap", p, "--json")
    assert out.returncode == 0, out.stderr
    rexmit = json.loads(out.stdout)["connections"][0]["retransmits"]
    out = cli("trace", p)
    assert out.returncode == 0, out.stderr
    assert "10.0.0.1:10000" in out.stdout and "rexmt" in out.stdout
    out = cli("trace", p, "--json")
    rep = json.loads(out.stdout)
    assert rep["connections"][0]["rexmt_segs"] == rexmit
    out = cli("trace", p, "--flows")
    assert "retransmitted segments" in out.stdout and "a->b" in out.stdout
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"\x00" * 40)
    out = cli("trace", bad)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "byte 0" in out.stderr
    out = cli("trace", tmp_path / "missing.pcap")
    assert out.returncode == 2 and "not found" in out.stderr


def _count(tool_out: str) -> tuple[int, int]:
    lens = [int(x) for x in tool_out.split()]
    return len(lens), sum(lens)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_reads_our_pcaps_and_agrees(tmp_path):
    r, tx, _ = _both(tmp_path, "newreno", seed=5)
    p = tmp_path / "newreno-tx.pcap"
    res = subprocess.run(["tshark", "-r", str(p), "-c", "1000000"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0
    complaints = [l for l in res.stderr.splitlines() if l.strip() and "Running as user" not in l]
    assert complaints == []
    assert "Malformed" not in res.stdout and "Bad checksum" not in res.stdout
    # Checksums verified by tshark itself.
    res = subprocess.run(
        ["tshark", "-r", str(p), "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE", "-Y", "tcp.checksum.status == 0 || ip.checksum.status == 0"],
        capture_output=True, text=True, timeout=120,
    )
    assert res.stdout.strip() == "", "frames with bad checksums"
    # Retransmitted data: tshark marks each as a retransmission or, by its reordering guess, an
    # out-of-order segment; at the sender both are retransmissions.
    flt = "(tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.out_of_order) && tcp.len > 0"
    res = subprocess.run(["tshark", "-r", str(p), "-Y", flt, "-T", "fields", "-e", "tcp.len"], capture_output=True, text=True, timeout=120)
    n, b = _count(res.stdout)
    a = tx.iloc[0]
    assert (n, b) == (a.rexmt_segs, a.rexmt_bytes) == (r.connections.iloc[0].retransmits, r.connections.iloc[0].retransmitted_bytes)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_decodes_the_timestamps_option(tmp_path):
    """RFC 7323 in a capture of a `linux6` transfer: tshark finds the option on every segment,
    TSecr 0 on the SYN, 1448-byte payloads in 1500-byte packets, nothing malformed."""
    text = LOSSY.format(variant="sack").replace("loss = 0.02", "loss = 0").replace('[tcp]\n', '[tcp]\nprofile = "linux6"\n')
    p = tmp_path / "ts.pcap"
    tcplab.run(text.replace('"500KB"', '"100KB"'), seed=1, pcap=p)
    res = subprocess.run(["tshark", "-r", str(p), "-T", "fields", "-e", "tcp.flags.syn", "-e", "tcp.flags.ack", "-e", "tcp.len",
                          "-e", "ip.len", "-e", "tcp.options.timestamp.tsval", "-e", "tcp.options.timestamp.tsecr", "-e", "_ws.expert.message"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = [l.split("\t") for l in res.stdout.splitlines()]
    assert rows
    data = 0
    for syn, ack, tcp_len, ip_len, tsval, tsecr, expert in rows:
        assert tsval != "" and tsecr != "", "every segment carries TSval and TSecr"
        assert "Malformed" not in expert
        if syn in ("1", "True") and ack in ("0", "False"):
            assert tsecr == "0"
        if tcp_len == "1448":
            data += 1
            assert ip_len == "1500"
    assert data >= 60


@pytest.mark.skipif(shutil.which("tcptrace") is None, reason="tcptrace is not installed (apt-get install tcptrace)")
def test_tcptrace_reads_our_pcaps_and_agrees(tmp_path):
    r, tx, _ = _both(tmp_path, "reno", seed=5)
    p = tmp_path / "reno-tx.pcap"
    res = subprocess.run(["tcptrace", "-l", "-r", "-n", str(p)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "1 TCP connection traced" in res.stdout
    fig = {}
    for line in res.stdout.splitlines():
        for key in ("rexmt data pkts", "rexmt data bytes", "unique bytes sent", "actual data pkts", "initial window"):
            if line.strip().startswith(key + ":") and key not in fig:
                fig[key] = int(line.split(":")[1].split()[0])
    a = tx.iloc[0]
    assert fig["rexmt data pkts"] == a.rexmt_segs == r.connections.iloc[0].retransmits
    assert fig["rexmt data bytes"] == a.rexmt_bytes
    assert fig["unique bytes sent"] == a.unique_bytes
    assert fig["actual data pkts"] == a.a2b_data_segs


# -- an application's object records against its pcap analysed by `tcplab trace` --------------------

APP_TRACE = """\
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
queue = 20
loss = {loss}
[[capture]]
path = "{client}"
node = "receiver"
[[capture]]
path = "{server}"
node = "sender"
[[apps]]
kind = "{kind}"
mode = "{mode}"
response = {{ exponential = "20KB" }}
{count}
think = "1s"
tcp = {{ fin = {fin} }}
"""

APP_PORT_BASE = 40000  # crates/tcplab-core/src/trace/capture.rs: application k's object n has port 40000 + 131 k + n


def _object_conns(df, client_ip):
    """{object: {"request": row, "response": row}} from an analysis: ports give the object, the
    side that opened each connection tells the request's (from the client) from a one-way
    response's (from the server); a two-way connection carries both."""
    out = {}
    for _, row in df.iterrows():
        ip, port = row["a"].rsplit(":", 1)
        obj = int(port) - APP_PORT_BASE
        conns = out.setdefault(obj, {})
        if ip == client_ip:
            conns["request"] = row
            conns.setdefault("response", row)
        else:
            conns["response"] = row
    return out


@pytest.mark.parametrize(
    "kind, mode, fin, count",
    [("reqresp", "twoway", "true", "count = 6"), ("reqresp", "twoway", "false", "count = 6"),
     ("reqresp", "oneway", "false", "count = 6"), ("http10", "oneway", "false", "objects = 3\npages = 3")],
)
def test_object_records_agree_with_the_trace_of_the_same_run(tmp_path, kind, mode, fin, count):
    client, server = tmp_path / "client.pcap", tmp_path / "server.pcap"
    text = APP_TRACE.format(loss=0.08, client=client.name, server=server.name, kind=kind, mode=mode, fin=fin, count=count)
    if mode == "oneway":
        text = text.replace("tcp = { fin = false }\n", "")
    with contextlib.chdir(tmp_path):  # a scenario's captures are written in the working directory
        r = tcplab.run(text, seed=2)
    at_client, at_server = tcplab.trace.analyze(client), tcplab.trace.analyze(server)
    client_ip = at_client.loc[0, "a"].rsplit(":", 1)[0]  # the first connection is the first object's request
    c, s = _object_conns(at_client, client_ip), _object_conns(at_server, client_ip)
    assert len(r.objects) >= 4 and set(c) == set(r.objects["object"])
    assert r.objects["retransmits"].sum() > 0, "the loss touches some objects"
    for _, o in r.objects.iterrows():
        req, resp = c[o.object]["request"], c[o.object]["response"]
        # The client's capture: the connection opens at start_s (SYN, or the one-way GET), the GET
        # leaves at request_s, the response's first byte and its last in-order byte arrive at
        # first_byte_s and delivered_s.
        assert req["first_s"] == pytest.approx(o.start_s, abs=1e-9)
        assert req["a2b_first_data_s"] == pytest.approx(o.request_s, abs=1e-9)
        assert req["a2b_unique_bytes"] == o.request_bytes
        data = "b2a" if resp is req else "a2b"
        assert resp[f"{data}_first_data_s"] == pytest.approx(o.first_byte_s, abs=1e-9)
        assert resp[f"{data}_data_complete_s"] == pytest.approx(o.delivered_s, abs=1e-9)
        assert resp[f"{data}_unique_bytes"] == o.bytes_delivered == o.response_bytes
        # The server's capture: T_LAST_ACK, when the ACK of the response's last byte arrives
        # (with FINs the trace waits for the FIN's ACK too, which comes no earlier).
        sresp = s[o.object]["response"]
        t_last_ack = sresp[f"{data}_acked_s"]
        if fin == "true":
            assert t_last_ack >= o.acked_s - 1e-9
        else:
            assert t_last_ack == pytest.approx(o.acked_s, abs=1e-9)
            assert t_last_ack - req["a2b_first_data_s"] == pytest.approx(o.transfer_time_s, abs=1e-9)
        # Retransmissions seen at the senders' captures: the request's at the client, the
        # response's at the server.
        rexmt = req["a2b_rexmt_segs"] + sresp[f"{data}_rexmt_segs"]
        assert rexmt == o.retransmits
