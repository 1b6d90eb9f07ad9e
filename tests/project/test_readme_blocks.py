"""Every shell block of the README is run by a test or names the test that proves it, and none needs an
activated venv (bare `python`, `pip` or `mcp-kit` fail on a fresh clone)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.helpers.support import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
SHELL_BLOCKS = re.findall(r"```(?:bash|sh|shell)\n(.*?)```", README, re.S)

# Blocks run here, as written (the venv's interpreter for `.venv/bin/python`): each finishes by itself.
RUN_HERE = (".venv/bin/python examples/tasks_server.py --demo", ".venv/bin/python examples/skills_server.py --demo",
            ".venv/bin/python examples/extension_server.py --demo")
# Blocks that need what a unit test cannot have (a Redis, an identity provider, an hour of benchmarks), each
# with the test that proves what it shows; a block in neither list fails `test_every_block_is_accounted_for`.
PROVEN_BY = {
    "bin/demo": "tests/project/test_demo.py",
    'git clone "$REPO_URL"': "tests/project/test_packaging.py",
    ".venv/bin/pip install -e '.[redis]'": "tests/integration/test_scaleout.py",
    "for port in 8001 8002 8003": "tests/integration/test_scaleout.py",
    ".venv/bin/python server.py --transport http --backend redis://": "tests/middleware",
    ".venv/bin/pip install -e '.[otel]'": "tests/telemetry",
    ".venv/bin/python -m servers.weather --transport http --host 0.0.0.0": "tests/auth/test_run_options.py",
    "MCP_OAUTH_CLIENT_SECRET_FILE=": "tests/auth",
    ".venv/bin/mcp-kit config claude": "tests/project/test_readme.py",
    ".venv/bin/mcp-kit list": "tests/project/test_readme.py",
    ".venv/bin/mcp-kit tools": "tests/project/test_readme.py",
    ".venv/bin/python bench/": "tests/project/test_bench_chart.py",
    "bin/test ": "tests/project/test_style.py",
    ".venv/bin/mcp-kit install": "tests/cli/test_install.py",
    "docker build": "tests/deploy/test_container.py",
    ".venv/bin/mcp-kit proxy": "tests/proxy/test_proxy_npm_servers.py",
}
BARE = re.compile(r"""(^|[\s"'(;&|])(python3?|pip3?|mcp-kit|pytest)\s""")


def command_lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_there_are_shell_blocks() -> None:
    assert len(SHELL_BLOCKS) >= 15


def test_no_command_needs_an_activated_venv() -> None:
    allowed = ("python3 -m venv",)  # the one command that runs before .venv exists
    bare = [line for block in SHELL_BLOCKS for line in command_lines(block)
            if BARE.search(line.split("#")[0]) and not any(a in line for a in allowed)]
    assert bare == []


def test_every_block_is_accounted_for() -> None:
    unaccounted = [block.splitlines()[0] for block in SHELL_BLOCKS
                   if block.strip() not in RUN_HERE and not any(block.lstrip().startswith(p) for p in PROVEN_BY)]
    assert unaccounted == []
    assert all(block in [b.strip() for b in SHELL_BLOCKS] for block in RUN_HERE)  # none went stale
    missing = [path for path in PROVEN_BY.values() if not (ROOT / path).exists()]
    assert missing == []


@pytest.mark.parametrize("block", RUN_HERE)
def test_the_runnable_blocks_run_as_written(block: str) -> None:
    command = block.replace(".venv/bin/python", sys.executable, 1).split()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()
