"""docs/tutorial.md runs as written: every `tcplab` command of its bash blocks and every python
block, in order, in a scratch copy of the repository's experiments (issue 17, item 7)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"


def blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"```(bash|python)\n(.*?)```", text, flags=re.S)


def test_the_tutorial_runs_as_written(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "experiments", tmp_path / "experiments")
    monkeypatch.chdir(tmp_path)
    found = blocks(TUTORIAL.read_text())
    assert [k for k, _ in found].count("python") >= 4 and [k for k, _ in found].count("bash") >= 3
    env: dict = {"__name__": "tutorial"}
    for kind, code in found:
        if kind == "bash":
            for line in code.splitlines():
                if not line.startswith("tcplab "):
                    continue
                args = shlex.split(line.split("#")[0])[1:]
                out = subprocess.run([sys.executable, "-m", "tcplab.cli", *args], capture_output=True, text=True, timeout=300)
                assert out.returncode == 0, f"{line}\n{out.stderr}"
        else:
            exec(compile(code, str(TUTORIAL), "exec"), env)
    # What the blocks promise, checked.
    assert env["r"].connections.loc[0, "bytes_delivered"] == 1 << 20
    # The override is shown, and the SACK run recovers with SACK.
    assert env["mixed"].notes == ['tcp.variant = "newreno" overrides preset "sack", which sets variant = "sack" (flows[0])']
    assert env["mixed"].tcp[0]["variant"] == "newreno"
    assert env["sack"].tcp[0]["variant"] == "sack" and env["sack"].connections.loc[0, "sack_retransmits"] > 0
    assert env["sack"].notes == []
    # The sweep shows what the text says: NewReno well ahead of Reno at the lowest loss rate.
    low = env["summary"][env["summary"]["topology.loss"] == env["summary"]["topology.loss"].min()].set_index("tcp.variant")
    assert low.loc["newreno", "goodput_bps_mean"] > 1.3 * low.loc["reno", "goodput_bps_mean"]
    assert env["res"].stats["skipped"] == 30  # the command-line sweep stored them all
    assert len(env["summary"]) == 10 and set(env["summary"]["n"]) == {3}
    for f in ("demo.pcap", "demo-tsg.png", "demo-tsg.svg", "tutorial.duckdb", "goodput-vs-loss.png"):
        assert (tmp_path / f).stat().st_size > 0, f


def test_the_docs_link_only_to_files_that_exist():
    for page in [TUTORIAL, ROOT / "docs" / "coming-from.md"]:
        for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in link:
                continue
            assert (page.parent / link).exists(), f"{page.name}: {link}"


def test_the_tutorial_error_message_is_the_one_shown(small_toml):
    import tcplab

    try:
        tcplab.run(small_toml, sets=["tcp.variant=sack"])
    except tcplab.ScenarioError as e:
        assert e.path == "tcp.variant" and "sack is off" in e.reason
    else:
        raise AssertionError("a SACK variant with SACK off ran")
