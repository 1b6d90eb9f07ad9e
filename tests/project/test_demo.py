"""The quickstart demo runs to completion, shows each step, and leaves no server process behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.support import ROOT

EXPECTED = [
    "1. Tools the model discovers",
    "get_stock_price", "get_weather", "read_text_file",  # tools of the three servers
    "-> stock.get_stock_price",
    "lowest to highest P/E: ",
    "London, United Kingdom:", "Tokyo, Japan:", "New York, United States:",
    "- Pack an umbrella for London.",  # the file read
    "<- notifications/resources/updated file://",
    "'book a table for Friday'",  # the re-read after the update
    "isError: true, the model reads: No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?",
    "Done: all 3 server processes stopped",
]


def run_demo(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=90,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def check_output(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    for expected in EXPECTED:
        assert expected in done.stdout, f"missing {expected!r} in:\n{done.stdout}"
    pids = [int(pid) for pid in re.findall(r"pid (\d+)", done.stdout)]
    assert len(pids) == 3
    if Path("/proc").is_dir():
        assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()], "a server process outlived the demo"
    temp = re.search(r"(/\S*mcp-kit-demo-[^/\s]+)", done.stdout)
    assert temp is not None and not Path(temp.group(1)).exists(), "the demo's scratch directory was left behind"


def test_demo_script_runs_to_completion() -> None:
    check_output(run_demo([sys.executable, "demo/run.py"]))


def test_bin_demo_runs_to_completion() -> None:
    venv_python = ROOT / ".venv" / "bin" / "python"
    if not venv_python.exists() or Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip("bin/demo uses the project's .venv; these tests run elsewhere")
    check_output(run_demo(["bash", str(ROOT / "bin" / "demo")]))
