"""UDP cross traffic and host groups from Python: the `udp` frame, the links' TCP and UDP shares,
the shipped study topologies, and the CLI's summary. (The statistical and packet-level checks are
in crates/tcplab-core/tests/traffic.rs.)"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import tcplab
from tcplab.cli import main
from conftest import REPO

TOPOLOGIES = sorted((REPO / "experiments" / "topologies").glob("*.toml"))
LADHA = REPO / "experiments" / "topologies" / "ladha04.toml"


def test_udp_frame_and_link_shares():
    r = tcplab.run(LADHA, seed=2, sets=['duration="30s"'])
    u = r.udp
    assert len(u) == 32 and set(u["kind"]) == {"onoff"}
    assert list(u["name"][:2]) == ["fwd1", "fwd2"] and u["name"].iloc[-1] == "rev16"
    assert (u["sent_pkts"] == u["delivered_pkts"] + u["dropped_pkts"] + u["in_flight_pkts"]).all()
    assert (u["target_mean_bps"] == 800_000 / 16).all()
    # Each direction's sources together send about the aggregate asked for (30 s of heavy-tailed
    # bursts: within 10 %).
    for prefix in ("fwd", "rev"):
        total = u[u["name"].str.startswith(prefix)]["mean_bps"].sum()
        assert abs(total - 800_000) / 800_000 < 0.10, (prefix, total)
    links = r.links.set_index("link")
    core = links.loc["core:R1->R2"]
    assert core["udp_bytes"] + core["tcp_bytes"] == core["sent_bytes"]
    assert 0.9 < core["udp_share"] < 1.0  # the 20 KB transfer is a small part of 30 s of load
    # Links no UDP crossed have zeros, and an idle direction no share.
    sender = links.loc["access_sender:sender->R1"]
    assert sender["udp_pkts"] == 0 and sender["udp_share"] == 0.0
    assert r.to_dict()["udp"][0]["name"] == "fwd1"


def test_tcp_only_results_have_the_share_columns_too():
    r = tcplab.run(REPO / "experiments" / "examples" / "demo.toml")
    assert (r.links["udp_pkts"] == 0).all() and (r.links["tcp_bytes"] == r.links["sent_bytes"]).all()
    assert r.udp.empty


@pytest.mark.parametrize("path", TOPOLOGIES, ids=[p.stem for p in TOPOLOGIES])
def test_study_topologies_validate_and_run(path):
    assert {p.stem for p in TOPOLOGIES} >= {"rfc2415", "ladha04", "seddigh01"}
    s = tcplab.validate(path)
    assert s["topology"]["groups"], "each study topology is built with host groups"
    r = tcplab.run(path, sets=['duration="12s"'])
    assert r.meta["packets_created"] == r.meta["packets_delivered"] + r.meta["packets_dropped"] + r.meta["packets_in_flight"]
    assert r.links["sent_pkts"].sum() > 0


def test_cli_prints_the_udp_sources():
    out = CliRunner().invoke(main, ["run", str(LADHA), "--set", 'duration="12s"'])
    assert out.exit_code == 0, out.output
    assert "UDP sources" in out.output and "fwd1" in out.output


def test_refusals_name_the_key():
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.validate(LADHA, sets=['apps.0.packet="20B"'])
    assert e.value.path == "apps[0].packet"
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.validate(LADHA, sets=['topology.groups.0.attach="R{i*2}"'])
    assert e.value.path == "topology.groups[0].attach"


def test_sweeps_store_udp_objects_and_pages(tmp_path):
    # The first point has no UDP on any link (aggregate 0), the second has: one store, one schema.
    r = tcplab.sweep(LADHA, {"axes": {"apps.0.aggregate_rate": ["0kbps", "500kbps"]}}, store=tmp_path / "x.duckdb", workers=0,
                     sets=['duration="12s"'])
    assert (r.runs["status"] == "ok").all()
    assert len(r.udp) == 64 and set(r.udp["apps.0.aggregate_rate"]) == {"0kbps", "500kbps"}
    core = r.links[r.links["link"] == "core:R1->R2"].set_index("apps.0.aggregate_rate")
    assert core.loc["0kbps", "udp_pkts"] == 0 and core.loc["500kbps", "udp_pkts"] > 0
    web = tcplab.sweep(REPO / "experiments" / "topologies" / "rfc2415.toml", {"axes": {"tcp.initial_window": [1, 4]}},
                       store=tmp_path / "w.duckdb", workers=0, sets=['duration="20s"'])
    assert set(web.pages["tcp.initial_window"]) == {1, 4} and web.pages["delay_s"].notna().any()
    assert len(web.objects) >= 4 * len(web.pages[web.pages["complete_s"].notna()])
    again = tcplab.load(tmp_path / "w.duckdb")
    assert len(again.pages) == len(web.pages)
