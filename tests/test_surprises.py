"""Silent surprises (issue 17, item 4): a SACK variant with SACK off is refused by key, the run
table's abbreviations have a legend, `run --json` carries the resolved TCP settings, `validate`
writes every TCP default, and a result shows a summary in a notebook."""

from __future__ import annotations

import json

import pytest

import tcplab


@pytest.mark.parametrize("variant", ["sack", "sack1", "fack-rh"])
def test_a_sack_variant_with_sack_off_is_refused_by_key(small_toml, variant):
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(small_toml, sets=[f"tcp.variant={variant}"])
    assert e.value.path == "tcp.variant"
    assert "sack is off" in str(e.value) and "sack = true" in str(e.value)
    # On a flow of its own, the flow's key is named.
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(small_toml, sets=[f"flows.0.tcp.variant={variant}"])
    assert e.value.path == "flows[0].tcp.variant"
    # With SACK on, or by the preset, it runs as that variant.
    assert tcplab.run(small_toml, sets=[f"tcp.variant={variant}", "tcp.sack=true"]).tcp[0]["variant"] == variant
    assert tcplab.run(small_toml, sets=[f'tcp.preset="{variant}"']).tcp[0]["sack"] is True


def test_the_cli_refuses_it_naming_the_key(cli, small_file):
    out = cli("run", small_file, "--set", "tcp.variant=sack")
    assert out.returncode == 2 and "tcp.variant" in out.stderr and "sack is off" in out.stderr


def test_run_prints_a_legend_of_its_abbreviations(cli, small_file):
    out = cli("run", small_file)
    assert out.returncode == 0, out.stderr
    header = [l for l in out.stdout.splitlines() if l.startswith("flow ")][0].split()
    for abbr in ("FR", "RTO", "CA", "nonCA", "other", "rexmit"):
        assert abbr in header
        assert f"{abbr}:" in out.stdout  # explained below the table
    assert "Three loss counts" in out.stdout


def test_run_json_has_the_resolved_tcp_settings(cli, small_file):
    out = cli("run", small_file, "--json", "--set", 'tcp.preset="sack-iw"')
    d = json.loads(out.stdout)
    t = d["tcp"][0]
    assert t == tcplab.variants()["sack-iw"]["config"]
    assert t["sack"] is True and t["initial_window"] == "rfc3390" and t["rto_initial"] == "1s"


def test_validate_writes_every_tcp_default_and_runs_the_same(cli, small_file, tmp_path):
    out = cli("validate", small_file, "--set", "tcp.profile=ns2")
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    assert s["flows"][0]["tcp"] == tcplab.profiles()["ns2"]  # every knob, not {}
    # The output is a scenario: it validates to itself and runs as the original.
    p = tmp_path / "full.json"
    p.write_text(out.stdout)
    assert tcplab.validate(p, tcp=True) == s
    assert tcplab.run(p).to_dict()["connections"] == tcplab.run(small_file, sets=["tcp.profile=ns2"]).to_dict()["connections"]


def test_a_result_shows_a_summary_in_a_notebook(small_toml):
    r = tcplab.run(small_toml, seed=2)
    h = r._repr_html_()
    assert h.startswith("<div>") and "<table>" in h and "</table>" in h
    assert "small" in h and "seed 2" in h
    c = r.connections.iloc[0]
    assert f"{c.goodput_bps * 1e-6:.4g}" in h and "newreno" in h
    assert "sender-&gt;receiver" in h or "sender->receiver" in h.replace("&gt;", ">")
    assert "small" in repr(r) and "seed 2" in repr(r)
