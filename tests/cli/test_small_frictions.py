"""Progress off a terminal is throttled, and `config --write` keeps the config file's mode."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from mcp_kit._cli.client_config import write_config
from mcp_kit._cli.progress import StderrReporter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_off_a_terminal_prints_the_first_update_one_a_second_and_the_last() -> None:
    stream, clock = io.StringIO(), Clock()
    reporter = StderrReporter(stream, clock=clock)
    for step in range(1, 101):  # a tool reporting 100 items within 2.5 seconds
        clock.now = step * 0.025
        reporter.progress(step, 100, f"item {step}")
    reporter.end_bar()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4, lines  # item 1, item 41 (1 s later), item 81 (2 s), item 100 (the last)
    assert lines[0].endswith("item 1") and lines[-1].endswith("100% item 100")


def test_progress_without_a_total_still_shows_its_latest_state_when_the_call_ends() -> None:
    stream, clock = io.StringIO(), Clock()
    reporter = StderrReporter(stream, clock=clock)
    for step in range(5):
        reporter.progress(step, None, None)
    reporter.end_bar()
    assert stream.getvalue().splitlines() == ["progress 0", "progress 4"]


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
@pytest.mark.parametrize("mode", [0o644, 0o600, 0o640])
def test_writing_a_config_keeps_its_mode(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text("{}")
    path.chmod(mode)
    write_config(path, {"mcpServers": {}})
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert json.loads(path.read_text()) == {"mcpServers": {}}


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_a_new_config_gets_the_umask_mode_not_0600(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_config(tmp_path / "new" / "mcp.json", {})
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new" / "mcp.json").stat().st_mode) == 0o644
