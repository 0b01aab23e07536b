"""The analyser's rough edges (issue 17, item 5) and its per-packet table: truncated captures,
the receiver-side hint, relative times in `--flows`, empty captures, `trace.packets()`, the
time-sequence graph drawn from it, and the command's own start-up cost."""

from __future__ import annotations

import contextlib

import json
import subprocess
import sys

import pytest

import tcplab

LOSSY = """\
name = "lossy-sack"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "20ms"
queue = 30
loss = 0.02
[tcp]
preset = "sack"
[[flows]]
bytes = "300KB"
"""


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    d = tmp_path_factory.mktemp("caps")
    tx, rx = d / "tx.pcap", d / "rx.pcap"
    text = LOSSY + f'[[capture]]\npath = "{tx.name}"\nnode = "sender"\n[[capture]]\npath = "{rx.name}"\nnode = "receiver"\n'
    with contextlib.chdir(d):  # a scenario's captures are written in the working directory
        r = tcplab.run(text, seed=3)
    return r, tx, rx


def test_a_truncated_capture_is_analysed_up_to_the_cut(captures, tmp_path, cli):
    _, tx, _ = captures
    data = tx.read_bytes()
    whole = tcplab.trace.report(tx)
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) - 20])  # the last record cut short
    with pytest.warns(tcplab.trace.TraceWarning, match=r"byte \d+: truncated record") as w:
        rep = tcplab.trace.report(cut)
    st = rep["reader"]["stopped"]
    assert rep["reader"]["packets"] == whole["reader"]["packets"] - 1
    assert st["offset"] < len(data) - 20 and f"byte {st['offset']}" in str(w[0].message)
    assert rep["connections"][0]["unique_bytes"] > 0
    with pytest.raises(tcplab.TraceError) as e:
        tcplab.trace.report(cut, strict=True)
    assert e.value.offset == st["offset"]
    # The command: the table, a warning naming the offset, exit 0; --strict: exit 2.
    out = cli("trace", cut)
    assert out.returncode == 0 and "10.0.0.1:10000" in out.stdout
    assert f"byte {st['offset']}" in out.stderr and out.stderr.startswith("warning: ")
    out = cli("trace", cut, "--strict")
    assert out.returncode == 2 and out.stderr.startswith("error: ") and f"byte {st['offset']}" in out.stderr


def test_a_receiver_side_capture_is_flagged(captures, cli):
    _, tx, rx = captures
    a, b = tcplab.trace.analyze(tx).iloc[0], tcplab.trace.analyze(rx).iloc[0]
    assert a.vantage == "sender" and b.vantage == "receiver"
    # At the receiver the data direction's "RTT" is its ACK delay, far below the handshake's.
    assert b.rtt_avg_s < b.handshake_rtt_s / 2
    out = cli("trace", rx)
    assert "captured at the data receiver" in out.stdout and "*" in out.stdout
    out = cli("trace", tx)
    assert "captured at the data receiver" not in out.stdout


def test_flows_prints_times_from_the_first_packet(captures, tmp_path, cli):
    _, tx, _ = captures
    # Shift every timestamp by a real date, as a tcpdump capture has.
    import struct

    data = bytearray(tx.read_bytes())
    off, epoch = 24, 1_700_000_000
    while off < len(data):
        sec, _, caplen, _ = struct.unpack_from("<IIII", data, off)
        struct.pack_into("<I", data, off, sec + epoch)
        off += 16 + caplen
    p = tmp_path / "dated.pcap"
    p.write_bytes(bytes(data))
    out = cli("trace", p, "--flows")
    assert out.returncode == 0, out.stderr
    assert "2023-11-14" in out.stdout  # the date, once
    assert str(epoch) not in out.stdout
    first = [l for l in out.stdout.splitlines() if l.strip().startswith("first ")][0]
    assert first.split()[1] == "0"


def test_an_empty_capture_has_the_usual_columns(tmp_path):
    p = tmp_path / "empty.pcap"
    tcplab.run(LOSSY, seed=1, pcap=p)
    p.write_bytes(p.read_bytes()[:24])  # the file header alone
    df = tcplab.trace.analyze(p)
    assert len(df) == 0
    assert {"conn", "a", "b", "loss_events", "rexmt_segs", "rtt_avg_s", "vantage"} <= set(df.columns)
    assert df.attrs["reader"]["packets"] == 0
    assert len(tcplab.trace.packets(p)) == 0


def test_packets_agree_with_the_analysis(captures):
    r, tx, _ = captures
    pk = tcplab.trace.packets(tx)
    conn = tcplab.trace.analyze(tx).iloc[0]
    assert list(pk.columns) == list(tcplab.trace.PACKET_COLUMNS)
    assert len(pk) == tcplab.trace.report(tx)["reader"]["tcp_packets"]
    data = pk[pk.dir == "a2b"]
    assert int(data.retx.sum()) == conn.rexmt_segs == r.connections.iloc[0].retransmits
    assert int(pk[pk.dir == "b2a"].dup_ack.sum()) == conn.dup_acks
    assert int(data.len.sum()) == conn.a2b_data_bytes
    # Relative numbers: the SYN at 0, the first data byte 1; the highest end is every byte plus the FIN.
    assert pk.iloc[0].tcp_flags == "S" and pk.iloc[0].seq == 0 and pk.iloc[0].end == 1
    assert data[data.len > 0].seq.min() == 1
    assert data.end.max() == conn.unique_bytes + 2
    acks = pk[pk.dir == "b2a"].ack.dropna()
    assert acks.max() == conn.unique_bytes + 2
    # SACK blocks lie above the cumulative ACK of their segment and within the data sent.
    with_sack = pk[pk.sack.map(len) > 0]
    assert len(with_sack) == conn.b2a_sack_segs
    for ack, blocks in zip(with_sack.ack, with_sack.sack):
        for left, right in blocks:
            assert ack < left < right <= conn.unique_bytes + 1
    assert pk.time_s.is_monotonic_increasing


def test_tsg_is_drawn_from_the_packet_table(captures, tmp_path, cli):
    import matplotlib

    matplotlib.use("Agg")
    _, tx, _ = captures
    pk = tcplab.trace.packets(tx)
    ax = tcplab.plot.tsg(pk)
    labels = ax.get_legend_handles_labels()[1]
    assert {"segments", "retransmissions (R)", "ACK", "SACK blocks", "duplicate ACK"} <= set(labels)
    # The segments drawn are the table's: one bar (three lines) per segment that takes sequence
    # space (data, SYN, FIN), coloured by the analyser's verdict.
    sent = pk[(pk.dir == "a2b") & (pk.end > pk.seq)]
    assert sent.syn.sum() == 1 and sent.fin.sum() == 1
    cols = {c.get_label(): c for c in ax.collections}
    assert len(cols["retransmissions (R)"].get_segments()) == 3 * int(sent.retx.sum()) > 0
    assert len(cols["segments"].get_segments()) == 3 * int((~sent.retx).sum())
    ack_line = [l for l in ax.get_lines() if l.get_label() == "ACK"][0]
    assert ack_line.get_ydata().max() == pk[pk.dir == "b2a"].ack.max()
    # A table without the needed columns is refused by name; an unknown connection too.
    with pytest.raises(ValueError, match="lacks the column retx"):
        tcplab.plot.tsg(pk.drop(columns=["retx"]))
    with pytest.raises(ValueError, match="no connection 7"):
        tcplab.plot.tsg(pk, conn=7)
    # The command writes the figure.
    out = tmp_path / "g.svg"
    res = cli("plot", "tsg", tx, "-o", out)
    assert res.returncode == 0, res.stderr
    assert out.read_text().lstrip().startswith("<?xml") and "<svg" in out.read_text()
    res = cli("plot", "tsg", tx, "--conn", "3", "-o", out)
    assert res.returncode == 2 and "no connection 3" in res.stderr


def test_the_trace_command_imports_no_pandas():
    code = ("import sys, tcplab.cli; print('pandas' in sys.modules, 'numpy' in sys.modules, 'matplotlib' in sys.modules, "
            "'tcplab.sweep' in sys.modules, 'multiprocessing' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"] * 5
    # And the report needs none of them.
    code = "import sys, tcplab.cli\nfrom click.testing import CliRunner\n" \
           "CliRunner().invoke(tcplab.cli.main, ['trace', sys.argv[1]])\nprint('pandas' in sys.modules)"
    assert json.loads(subprocess.run([sys.executable, "-c", code, __file__], capture_output=True, text=True).stdout.strip().lower()) is False


def test_a_lost_synack_is_one_loss_event_at_either_end(tmp_path):
    # Both timers fire together at 1 s: the server resends its SYN-ACK as the client's SYN comes
    # again, and answers that SYN with one more. One SYN-ACK was lost.
    tx, rx = tmp_path / "tx.pcap", tmp_path / "rx.pcap"
    text = (
        '[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "20ms"\n'
        '[[flows]]\nbytes = "20KB"\ndrops = [{ kind = "synack" }]\n'
        f'[[capture]]\npath = "{tx.name}"\nnode = "sender"\n[[capture]]\npath = "{rx.name}"\nnode = "receiver"\n'
    )
    with contextlib.chdir(tmp_path):
        r = tcplab.run(text)
    assert r.connections.iloc[0].retransmits == 0
    at_rx = tcplab.trace.analyze(rx).iloc[0]
    assert (at_rx.syn_retransmits, at_rx.synack_retransmits) == (1, 2)
    assert at_rx.loss_events == 1
    assert tcplab.trace.analyze(tx).iloc[0].loss_events == 1
