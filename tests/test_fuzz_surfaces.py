"""Generated inputs on the surfaces beside the scenario schema (tests/test_fuzz_scenarios.py covers
that one): sweep specifications, CDF files, stores received from elsewhere, `[[series]]` entries,
host-group name templates and random-variable tables. Each generated input either gets the
surface's own error (SweepError, ScenarioError, StoreError) naming where it went wrong, or works
and passes the surface's invariants. Never another exception, a crash, a hang or a silent default.

A few dozen examples per surface in the normal suite; `TCPLAB_FUZZ_EXAMPLES=N` for a campaign
(`TCPLAB_FUZZ_EXAMPLES=2000 python -m pytest tests/test_fuzz_surfaces.py` is 12,000 inputs)."""

from __future__ import annotations

import math
import os
import string

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tcplab  # noqa: E402
from tcplab.errors import SweepError  # noqa: E402
from tcplab.store import StoreError  # noqa: E402
from tcplab.sweep import check_axes, expand, parse_spec  # noqa: E402

EXAMPLES = int(os.environ.get("TCPLAB_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="TCPLAB_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])

BASE = {"duration": "200ms", "topology": {"kind": "single_link", "rate": "10Mbps", "delay": "5ms", "queue": 20},
        "flows": [{"name": "f", "bytes": "8KB"}]}

# Values of every type a hand-written file may hold, the broken and the extreme among them.
ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                st.text(max_size=6), st.sampled_from(["", "1e400", "nan", "-0", "10ms", "unlimited", "{i}", "1KB"]),
                st.lists(st.integers(-2, 5), max_size=3))


def _scenario_error(e: BaseException) -> bool:
    return isinstance(e, tcplab.ScenarioError) and bool(str(e).strip())


# ---- sweep specifications --------------------------------------------------------------------

AXES = ["topology.loss", "topology.rate", "topology.delay", "tcp.variant", "tcp.initial_window", "flows.0.bytes",
        "flows[0].bytes", "tcp.nonexistent", "topology.queue", "duration"]
GOOD_VALUES = {"topology.loss": [0, 0.01], "topology.rate": ["1Mbps", "10Mbps"], "topology.delay": ["1ms", "5ms"],
               "tcp.variant": ["reno", "newreno"], "tcp.initial_window": [1, 4], "flows.0.bytes": ["4KB", "8KB"],
               "flows[0].bytes": ["4KB"], "tcp.nonexistent": [1], "topology.queue": [5, "unlimited"], "duration": ["100ms"]}


@st.composite
def generators(draw):
    kind = draw(st.sampled_from(["linspace", "logspace", "range", "bogus"]))
    args = draw(st.one_of(st.lists(st.one_of(st.integers(-5, 400), st.floats(-1e308, 1e308), st.sampled_from([0, 1, 3, 10**7])),
                                   min_size=0, max_size=4), ODD))
    g = {kind: args}
    if draw(st.booleans()):
        g["unit"] = draw(st.sampled_from(["ms", "Mbps", 3, ""]))
    return g


@st.composite
def sweep_tables(draw):
    table: dict = {}
    axes = {}
    for k in draw(st.lists(st.sampled_from(AXES), max_size=3, unique=True)):
        axes[k] = draw(st.one_of(st.just(GOOD_VALUES[k]), generators(), ODD, st.lists(ODD, max_size=3)))
    if axes or draw(st.booleans()):
        table["axes"] = axes
    if draw(st.booleans()):
        table["replicates"] = draw(st.one_of(st.integers(0, 3), ODD, st.just(10**7)))
    if draw(st.booleans()):
        table["seeds"] = draw(st.one_of(st.lists(st.integers(-1, 2**64), max_size=3), ODD))
    if draw(st.booleans()):
        table["zip"] = draw(st.one_of(st.just([{"topology.loss": [0, 0.01], "tcp.variant": ["reno"]}]),
                                      st.just({"topology.delay": ["1ms", "2ms"]}), ODD))
    if draw(st.integers(0, 9)) == 0:
        table[draw(st.sampled_from(["axis", "name", "seed"]))] = draw(ODD)
    return table


@FUZZ
@given(sweep_tables())
def test_generated_sweep_specs_are_refused_by_key_or_expand_to_their_grid(table):
    import json

    try:
        spec = parse_spec(dict(BASE), sweep=table)
        base_json = json.dumps(spec.base)
        check_axes(spec, base_json)
        points = math.prod(len(a) for a in spec.axes) * len(spec.seeds)
        tasks = expand(spec, base_json) if points <= 2000 else None
    except SweepError as e:
        assert str(e).strip() and str(e).split(":")[0].startswith(("sweep", "no sweep")), str(e)
        return
    except tcplab.ScenarioError as e:
        assert _scenario_error(e)
        return
    assert 1 <= points <= 10**6
    if tasks is not None:
        assert len(tasks) == points
        assert len({t.key for t in tasks}) == len(tasks), "every run of a grid has its own key"


# ---- CDF files -------------------------------------------------------------------------------

@FUZZ
@given(st.one_of(st.binary(max_size=300),
                 st.lists(st.tuples(st.one_of(st.integers(-5, 10**6), st.floats(allow_nan=True), st.text(max_size=4)),
                                    st.one_of(st.floats(-0.5, 1.5), st.floats(allow_nan=True), st.text(max_size=3))),
                          max_size=8).map(lambda rows: "\n".join(f"{x},{f}" for x, f in rows).encode())))
def test_generated_cdf_files_are_refused_by_key_or_read(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cdf") / "sizes.cdf"
    path.write_bytes(data)
    scen = dict(BASE, flows=[{"name": "f", "bytes": {"empirical": {"csv": str(path)}}}])
    try:
        tcplab.validate(scen)
    except tcplab.ScenarioError as e:
        msg = str(e)
        assert "flows[0].bytes" in msg, msg
        # Never the file's bytes beyond a short printable excerpt (docs/scenarios.md, CDF files).
        assert all(c in string.printable for c in msg), msg
        assert len(msg) < 2000
        return
    r = tcplab.run(scen)
    assert len(r.transfers) >= 1


# ---- stores received from elsewhere ----------------------------------------------------------

class _Bytes(bytes):
    """A store's bytes, shown short in Hypothesis's reports."""

    def __repr__(self) -> str:
        return f"<{len(self)} bytes of a store>"


@pytest.fixture(scope="module")
def a_store(tmp_path_factory):
    d = tmp_path_factory.mktemp("store")
    tcplab.sweep(dict(BASE), sweep={"axes": {"tcp.initial_window": [1, 2]}}, store=d / "s.duckdb", workers=1, progress=False)
    return _Bytes((d / "s.duckdb").read_bytes())


@FUZZ
@given(st.one_of(st.binary(max_size=2000), st.tuples(st.integers(0, 10**6), st.integers(1, 64), st.binary(min_size=1, max_size=64))))
def test_damaged_or_foreign_store_files_are_refused_as_stores(tmp_path_factory, a_store, damage):
    if isinstance(damage, tuple):  # a valid store with bytes overwritten somewhere, or cut short
        at, cut, junk = damage
        at %= len(a_store)
        data = a_store[:at] + junk + a_store[at + len(junk):] if cut % 2 else a_store[:at]
    else:
        data = damage
    path = tmp_path_factory.mktemp("recv") / "got.duckdb"
    path.write_bytes(data)
    try:
        res = tcplab.load(path)
    except StoreError as e:
        assert str(e).strip()
        return
    # Damage that missed every table's pages still loads what the store holds.
    assert len(res.runs) >= 0 and len(res.connections) <= 2


# ---- series entries ---------------------------------------------------------------------------

@st.composite
def series_entries(draw):
    e = {"kind": draw(st.one_of(st.sampled_from(["tcp", "segments", "queue", "drops"]), ODD))}
    for k, good in (("interval", st.sampled_from(["1ms", "10ms", "0s"])), ("max_rows", st.integers(0, 10**5)),
                    ("flows", st.just(["f"])), ("links", st.just(["link:a->b", "nope"])), ("bogus", ODD)):
        if draw(st.integers(0, 3)) == 0:
            e[k] = draw(st.one_of(good, ODD))
    return e


@FUZZ
@given(st.lists(series_entries(), max_size=3))
def test_generated_series_entries_are_refused_by_key_or_recorded(entries):
    scen = dict(BASE, series=entries)
    try:
        r = tcplab.run(scen)
    except tcplab.ScenarioError as e:
        assert _scenario_error(e) and str(e).startswith("series"), str(e)
        return
    for name in r.series:
        t = r.series[name]
        cap = min((e.get("max_rows") for e in entries if e.get("kind") == name and isinstance(e.get("max_rows"), int)), default=None)
        if cap is not None:
            assert len(t) <= cap


# ---- host-group name templates and random variables ------------------------------------------

TEMPLATE_PARTS = ["x", "{i}", "{i%4}", "{i/2}", "{i+1}", "{i-1}", "{i%0}", "{i/0}", "{j}", "{", "}", "{i%-3}", "{i*2}", "-", ""]
ATTACH_PARTS = ["left", "right", "{i}", "{i%2}", "x"]
RV = st.one_of(
    st.sampled_from(["1ms", "0s", "10ms"]),
    st.fixed_dictionaries({"exponential": st.one_of(st.sampled_from(["5ms", "0s", "-1ms"]), ODD)}),
    st.fixed_dictionaries({"uniform": st.one_of(st.lists(st.sampled_from(["1ms", "5ms", "0s", "2ms"]), max_size=3), ODD)}),
    st.fixed_dictionaries({"pareto": st.one_of(st.fixed_dictionaries({"mean": st.sampled_from(["2ms", "0s"]),
                                                                      "shape": st.one_of(st.floats(-1, 3), ODD)}), ODD)}),
    st.fixed_dictionaries({"constant": ODD}),
    ODD,
)


@FUZZ
@given(st.lists(st.sampled_from(TEMPLATE_PARTS), min_size=1, max_size=4).map("".join), st.integers(-1, 6),
       st.lists(st.sampled_from(ATTACH_PARTS), min_size=1, max_size=2).map("".join), RV)
def test_generated_groups_templates_and_random_delays_are_refused_by_key_or_built(name, count, attach, delay):
    scen = {"duration": "100ms",
            "topology": {"kind": "dumbbell", "pairs": 1, "access_rate": "10Mbps", "access_delay": "1ms",
                         "bottleneck_rate": "5Mbps", "bottleneck_delay": "5ms",
                         "groups": [{"name": name, "count": count, "attach": attach, "rate": "10Mbps", "delay": delay}]},
            "flows": [{"name": "f", "bytes": "4KB", "from": "s1", "to": "r1"}]}
    try:
        r = tcplab.run(scen)
    except tcplab.ScenarioError as e:
        assert _scenario_error(e) and str(e).startswith("topology.groups[0]"), str(e)
        return
    assert len(r.links) == 2 * (3 + max(count, 0)), "the dumbbell's three links and one access link per member"
