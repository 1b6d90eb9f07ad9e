"""The README's extension examples run as written: `examples/tasks_server.py --demo`,
`examples/skills_server.py --demo` and `examples/extension_server.py --demo` (real subprocesses), and the
tasks example serves its tool as a task to the official SDK client over stdio."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from mcp import Client, StdioServerParameters

from tests.helpers import sdk_tasks as st
from tests.helpers.support import ROOT


def run(script: str) -> str:
    done = subprocess.run([sys.executable, f"examples/{script}", "--demo"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_tasks_example_creates_polls_cancels_and_fetches() -> None:
    lines = run("tasks_server.py").splitlines()
    assert lines[0].startswith("created ") and "status=working" in lines[0]
    assert lines[1].startswith("cancelled ") and lines[1].endswith("status=cancelled")
    assert any(line.startswith("polled ") and "item " in line for line in lines)
    assert lines[-1].endswith("result: Report over 25 items: all fine.")


def test_the_user_written_extension_example_negotiates_serves_and_hides() -> None:
    lines = run("extension_server.py").splitlines()
    assert lines[0] == "plain client tools: ['forecast']"  # without the extension: the server as before
    assert lines[1] == "server declares: {'com.example/flags': {'flags': ['beta-forecast']}}"
    assert "('forecast_v2', {'com.example/flags': {'flag': 'beta-forecast'}})" in lines[2]
    assert lines[3] == "flags/list: [{'name': 'beta-forecast', 'tool': 'forecast_v2', 'on': True}]"
    assert lines[4] == "call: Oslo: sunny from 9 to 17" and lines[5] == "seen: ['beta-forecast']"


def test_the_skills_example_lists_fetches_browses_and_reads() -> None:
    out = run("skills_server.py")
    assert "skill skill://release-notes/SKILL.md: Write release notes" in out
    assert "skill://release-notes/templates/notes.md 86 bytes sha256:" in out
    assert "skill://release-notes/templates (inode/directory)" in out
    assert out.rstrip().endswith("template: # {version} ({date})")


@pytest.mark.anyio
async def test_the_tasks_example_serves_a_task_to_the_sdk_over_stdio() -> None:
    target = StdioServerParameters(command=sys.executable, args=["examples/tasks_server.py"], cwd=str(ROOT),
                                   env=dict(os.environ))
    async with Client(target, mode="auto", extensions=[st.TasksExtension()]) as client:
        handle = await client.session.call_tool("build_report", {"items": 3}, allow_claimed=True)
        assert isinstance(handle, st.TaskHandle)
        done = await st.poll(client.session, handle.task_id)
        assert done.result is not None and done.result["content"][0]["text"] == "Report over 3 items: all fine."
