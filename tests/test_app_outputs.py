"""A scenario of applications only (`[[apps]]`, no `[[flows]]`) shows its applications wherever a
run's results are shown: `tcplab run`'s tables, the notebook summary, `tcplab results` over a
sweep's store, a capture asked for with --pcap / pcap=. And a sweep's result has a short repr."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import tcplab
from tcplab import _core

APPS = """\
name = "apps_only"
duration = "20s"

[topology]
kind = "dumbbell"
pairs = 2
access_rate = "10Mbps"
access_delay = "1ms"
bottleneck_rate = "1.5Mbps"
bottleneck_delay = "50ms"
queue = 25

[[apps]]
kind = "http10"
name = "web1"
client = "r1"
server = "s1"
response = { exponential = "2920B" }
embedded = 3
pages = "unlimited"
think = { uniform = ["1s", "5s"] }

[[apps]]
kind = "cbr"
name = "voice"
from = "s2"
to = "r2"
rate = "64kbps"
packet = "200B"
"""


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tcplab.cli", *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.fixture
def apps_file(tmp_path: Path) -> Path:
    p = tmp_path / "apps.toml"
    p.write_text(APPS, encoding="utf-8")
    return p


def test_objects_and_pages_name_the_application_and_its_client_node():
    r = tcplab.run(APPS)
    assert len(r.objects) > 10 and len(r.pages) > 2
    for df in (r.objects, r.pages):
        assert set(df["app_name"]) == {"web1"} and set(df["client_node"]) == {"r1"}
        assert (df["client"] == df["app_name"]).all()  # the older column, kept for existing readers


def test_run_prints_the_applications_and_udp_sources_not_an_empty_connections_table(apps_file):
    p = cli("run", apps_file)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "\nconnections\n" not in out
    summary = re.search(r"^web1\s+r1\s+(\d+)\s+(\d+)\s+(\d+)", out, re.M)
    assert summary, out
    r = tcplab.run(APPS)
    assert int(summary.group(1)) == len(r.objects)
    assert int(summary.group(2)) == int(r.objects["delivered_s"].notna().sum())
    assert int(summary.group(3)) == int(r.objects["bytes_delivered"].sum())
    assert f"objects (first 8 of {len(r.objects)})" in out
    assert re.search(r"^voice\s+cbr\s+64\s", out, re.M), out
    assert "(duration 20s reached" in out and "time limit" not in out


def test_notebook_summary_shows_applications_and_udp():
    r = tcplab.run(APPS)
    html = r._repr_html_()
    assert "<td>web1</td><td>r1</td>" in html
    assert "<td>voice</td><td>cbr</td>" in html
    assert "<code>.objects</code>" in html and "<code>.udp</code>" in html
    assert "<th>flow</th>" not in html  # no empty connections table
    assert f"{len(r.objects)} objects" in repr(r) and "1 UDP sources" in repr(r)


def test_pcap_of_an_apps_only_scenario_is_taken_at_the_first_applications_client(apps_file, tmp_path):
    cap = tmp_path / "apps.pcap"
    p = cli("run", apps_file, "--pcap", cap)
    assert p.returncode == 0, p.stderr
    from tcplab import trace

    rep = trace.report(str(cap))
    assert len(rep["connections"]) > 0  # the web client's connections, seen at r1
    # In Python too; the capture is at r1, the web client's node: its requests leave from there.
    r = tcplab.run(APPS, pcap=tmp_path / "py.pcap")
    pk = trace.packets(str(tmp_path / "py.pcap"))
    assert len(pk) > 0 and len(r.objects) > 0


def test_results_of_an_apps_only_store(tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text(APPS.replace('duration = "20s"', 'duration = "10s"')
                     + '\n[sweep]\nreplicates = 2\n[sweep.axes]\n"topology.queue" = [10, 25]\n', encoding="utf-8")
    store = tmp_path / "s.duckdb"
    p = cli("sweep", sweep, "--workers", "0", "--store", store, "-q")
    assert p.returncode == 0, p.stderr
    default = cli("results", store)
    assert default.returncode == 0, default.stderr
    assert "per point (objects)" in default.stdout and "transfer_time_s" in default.stdout
    for table, col in (("objects", "transfer_time_s"), ("pages", "delay_s"), ("udp", "mean_bps")):
        out = cli("results", store, "--table", table)
        assert out.returncode == 0, out.stderr
        assert f"per point ({table})" in out.stdout and col in out.stdout
    empty = cli("results", store, "--table", "connections")
    assert empty.returncode == 2
    assert "no connections rows; tables with rows: links, objects, pages, udp" in empty.stderr


def test_sweep_result_repr_is_short_and_has_an_html_summary(tmp_path):
    res = tcplab.sweep(APPS.replace('duration = "20s"', 'duration = "5s"')
                       + '\n[sweep]\nreplicates = 2\n[sweep.axes]\n"topology.queue" = [10, 25]\n', workers=0, progress=False)
    text = repr(res)
    assert len(text) < 300, text
    assert text.startswith("<tcplab.SweepResult 4 runs (4 ok); axes: topology.queue; rows: links ")
    assert "objects" in text and "udp" in text
    html = res._repr_html_()
    assert "<code>topology.queue</code></td><td>10, 25</td>" in html and "4 runs (4 ok)" in html


def test_identical_replicates_are_said_so(tmp_path):
    sweep = tmp_path / "d.toml"
    sweep.write_text('name = "det"\n[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "10ms"\n'
                     '[[flows]]\nbytes = "16KB"\n[sweep]\nreplicates = 3\n[sweep.axes]\n"tcp.variant" = ["reno", "newreno"]\n',
                     encoding="utf-8")
    store = tmp_path / "d.duckdb"
    assert cli("sweep", sweep, "--workers", "0", "--store", store, "-q").returncode == 0
    out = cli("results", store)
    assert out.returncode == 0, out.stderr
    assert "every seed gave the same values" in out.stdout and "±" not in out.stdout


def test_a_sweep_with_failed_runs_exits_1(tmp_path):
    sweep = tmp_path / "f.toml"
    # rwnd 100B is below the MSS: refused by the scenario checks, recorded as failed.
    sweep.write_text('name = "fails"\n[topology]\nkind = "single_link"\nrate = "10Mbps"\ndelay = "10ms"\n'
                     '[[flows]]\nbytes = "16KB"\n[sweep]\n[sweep.axes]\n"tcp.rwnd" = ["100B", "64KB"]\n', encoding="utf-8")
    p = cli("sweep", sweep, "--workers", "0", "--store", tmp_path / "f.duckdb", "-q")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "1 ok, 1 failed" in p.stdout and "recorded as failed" in p.stderr


@pytest.mark.parametrize("sets, words", [
    ('tcp.variant="cubic"', ['`cc = "cubic"`']),
    ('tcp.variant="bbr"', ['`cc = "bbr"`']),
    ('tcp.variant="bbr3"', ["BBR3 is not modelled", "tcplab testbed"]),
    ('tcp.ecn="maybe"', ['"on"', '"accept"']),
    ("tcp.pace=true", ["pacing is the knob `pacing = true`"]),
    ('tcp.congctl="cubic"', ["controller is `cc`"]),
    ('tcp.cc="vegas"', ['"reno"', '"cubic"', '"bbr"', "VEGAS is not modelled"]),
    ('tcp.varient="reno"', ["did you mean `variant`?"]),
    ('topology.kind="dumbel"', ["did you mean `dumbbell`?"]),
    ('tcp.preset="newrenno"', ['did you mean "newreno"?']),
])
def test_unknown_names_say_what_was_meant_or_what_is_not_modelled(sets, words):
    base = 'duration = "1s"\n[topology]\nkind = "single_link"\nrate = "1Mbps"\ndelay = "1ms"\n[[flows]]\nbytes = "1KB"\n'
    with pytest.raises(_core.ScenarioError) as e:
        tcplab.validate(base, sets=[sets])
    for w in words:
        assert w in str(e.value), str(e.value)
    assert str(e.value).startswith(sets.split("=")[0]), str(e.value)
