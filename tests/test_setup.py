"""README's two set-up commands start with scripts/setup.sh, and CI (.ci/run) runs README's test
command verbatim: a newcomer's run is CI's run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list:
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S).group(1)
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_readme_commands_set_up_first_and_ci_runs_the_test_command():
    main, tests = readme_commands()
    assert main.startswith("scripts/setup.sh && ") and "tcplab reproduce mathis97" in main
    assert tests.startswith("scripts/setup.sh --tools && ") and tests.endswith("python3 -m pytest -q")
    assert f"\n{tests} || status=$?\n" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_setup_passes_here_and_refuses_an_unknown_option():
    ok = subprocess.run([str(ROOT / "scripts" / "setup.sh")], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr  # this machine built tcplab: Python and Rust are there
    bad = subprocess.run([str(ROOT / "scripts" / "setup.sh"), "--tool"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "usage: scripts/setup.sh [--tools]" in bad.stderr
