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
