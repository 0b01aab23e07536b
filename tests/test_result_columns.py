"""A run's tables come from the core as columns (`_core.run_scenario(..., columns=True)`), not as
JSON records. Everything read from a Result must be what the JSON gave: the records of
`to_dict()` key for key (so `tcplab run --json` prints the same text), the DataFrames with the
same dtypes, the TCP settings of each flow. And the command line's `run`, `validate` and
`run --json` import neither pandas nor numpy."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import tcplab
from tcplab import _core, api

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "experiments" / "examples"

# Tables of every kind: UDP on some links and not others (a link row without its UDP counters),
# objects and pages, transfers of unlimited and limited bytes, no connections at all, SYN drops.
SCENARIOS = ["cross_traffic.toml", "http10.toml", "ftp.toml", "web_like.toml", "syn_drop.toml", "dumbbell.toml"]

# A flow that never gets an RTT sample (its path loses everything): columns of None only.
BLACKHOLE = """
duration = "3s"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
loss = 1.0
[[flows]]
name = "lost"
bytes = "10KB"
[[flows]]
name = "lost2"
bytes = "unlimited"
tcp = { variant = "reno" }
"""


def from_json(scenario, seed: int) -> api.Result:
    """The result as it was made before the columns: the core's JSON, parsed."""
    text, fmt = api.load_scenario(scenario)
    return api.Result.from_json(_core.run_scenario(text, fmt, seed, []))


@pytest.mark.parametrize("scenario", [EXAMPLES / s for s in SCENARIOS] + [BLACKHOLE], ids=SCENARIOS + ["blackhole"])
def test_columns_give_what_the_json_gave(scenario):
    old, new = from_json(scenario, 4), tcplab.run(scenario, seed=4, series=False)
    assert json.dumps(new.to_dict(), indent=2) == json.dumps(old.to_dict(), indent=2)
    for name in api._TABLES:
        pd.testing.assert_frame_equal(getattr(new, name), getattr(old, name), check_exact=True)
    assert new.tcp == old.tcp and new.meta == old.meta and new.scenario == old.scenario
    old.wall_time_s = new.wall_time_s  # the one figure measured, not simulated
    assert repr(new) == repr(old) and new._repr_html_() == old._repr_html_()
    assert pickle.loads(pickle.dumps(new)).to_dict() == old.to_dict()


def test_the_blackhole_scenario_really_has_columns_of_nothing():
    # The case the parity test above is for: every value of a column is None.
    r = tcplab.run(BLACKHOLE, seed=1)
    assert r.connections["rtt_avg_s"].isna().all() and len(r.connections) == 2
    assert [t["bytes"] for t in r.to_dict()["transfers"]] == [10240, None]


def test_a_link_row_without_udp_lacks_the_keys_as_in_the_json():
    r = tcplab.run(EXAMPLES / "cross_traffic.toml", seed=2)
    rows = r.to_dict()["links"]
    with_udp = [row for row in rows if "udp_pkts" in row]
    assert with_udp and len(with_udp) < len(rows)
    assert all(row["udp_pkts"] > 0 for row in with_udp)
    df = r.links.set_index("link")
    assert (df.loc[[row["link"] for row in rows if "udp_pkts" not in row], "udp_pkts"] == 0).all()


def test_each_flow_has_its_own_tcp_settings():
    # 8 flows of one configuration and one of another: the core sends 2 distinct configurations
    # and an index; each flow still gets a dict of its own.
    text = (
        '[topology]\nkind = "dumbbell"\npairs = 9\naccess_rate = "100Mbps"\naccess_delay = "1ms"\n'
        'bottleneck_rate = "10Mbps"\nbottleneck_delay = "10ms"\n'
        '[[flows]]\nname = "a{i}"\nfrom = "s{i}"\nto = "r{i}"\ncount = 8\nbytes = "5KB"\n'
        '[[flows]]\nname = "b"\nfrom = "s9"\nto = "r9"\nbytes = "5KB"\ntcp = { variant = "reno", mss = "536B" }\n'
    )
    out = _core.run_scenario(text, "toml", 1, [], columns=True)
    assert out["tcp_index"] == [0] * 8 + [1] and len(json.loads(out["tcp"])) == 2
    r = tcplab.run(text, seed=1)
    assert r.tcp == from_json(text, 1).tcp
    assert [t["variant"] for t in r.tcp] == ["newreno"] * 8 + ["reno"]
    r.tcp[0]["variant"] = "changed"
    assert r.tcp[1]["variant"] == "newreno"


TINY = """
name = "tiny"
duration = "1s"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "10ms"
[[flows]]
bytes = "10KB"
"""


@pytest.mark.parametrize("args", [["run"], ["run", "--json"], ["validate"]], ids=["run", "run-json", "validate"])
def test_the_run_and_validate_commands_import_no_pandas(tmp_path, args):
    """What a fresh `tcplab run` loads: the command line, the extension module, the result as
    columns; pandas and numpy only when a DataFrame is asked for."""
    f = tmp_path / "tiny.toml"
    f.write_text(TINY, encoding="utf-8")
    code = (
        "import sys, tcplab.cli\n"
        "try:\n    tcplab.cli.main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = sorted(m for m in ('pandas', 'numpy', 'pyarrow', 'duckdb', 'matplotlib', 'rich', 'dask', 'multiprocessing',\n"
        "                           'tcplab.store', 'tcplab.sweep', 'tcplab.trace', 'tcplab.testbed') if m in sys.modules)\n"
        "print('LOADED', ','.join(heavy), code, file=sys.stderr)\n"
    )
    p = subprocess.run([sys.executable, "-c", code, *args, str(f)], capture_output=True, text=True, timeout=60)
    last = p.stderr.strip().splitlines()[-1]
    assert last == "LOADED  0", p.stderr
    assert ("goodput" in p.stdout) if args == ["run"] else p.stdout.lstrip().startswith("{")
    # And asking for a DataFrame does import pandas (the check above is not vacuous).
    code = "import sys, tcplab\nr = tcplab.run(sys.argv[1])\nassert 'pandas' not in sys.modules\nr.connections\nprint('pandas' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, check=True).stdout.strip() == "True"


def test_the_package_names_load_when_first_used():
    # `import tcplab` imports almost nothing; every public name still resolves, to the same object.
    code = (
        "import sys, tcplab\n"
        "assert 'tcplab.api' not in sys.modules and 'tcplab.store' not in sys.modules and 'tcplab.trace' not in sys.modules\n"
        "from tcplab import api, store, trace\n"
        "assert tcplab.run is api.run and tcplab.Result is api.Result and tcplab.validate is api.validate\n"
        "assert tcplab.load is store.load and tcplab.StoreError is store.StoreError and tcplab.trace is trace\n"
        "assert set(tcplab.__all__) <= set(dir(tcplab))\n"
        "ns = {}\nexec('from tcplab import *', ns)\n"
        "assert all(name in ns for name in tcplab.__all__)\n"
        "print('ok')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.stdout.strip() == "ok", p.stderr
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        tcplab.nonesuch  # noqa: B018
