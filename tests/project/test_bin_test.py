"""bin/test's preflight: before anything runs, it names every tool that is missing with its install command."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import ROOT

BASH = shutil.which("bash") or "/bin/bash"


def preflight(tmp_path: Path, fakes: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """bin/test with a PATH holding only python3, dirname and the `fakes` (name -> shell script)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("python3", "dirname"):
        (tools / name).symlink_to(shutil.which(name) or f"/usr/bin/{name}")
    for name, script in fakes.items():
        (tools / name).write_text(f"#!/bin/sh\n{script}\n")
        (tools / name).chmod(0o755)
    return subprocess.run([BASH, str(ROOT / "bin" / "test")], env={"PATH": str(tools)}, capture_output=True,
                          text=True, timeout=60)


def test_without_node_and_npm_it_says_so_with_the_install_command_and_runs_nothing(tmp_path: Path) -> None:
    done = preflight(tmp_path, {})
    assert done.returncode == 2, done
    assert "bin/test: missing:" in done.stderr
    assert "Node.js 18 or newer and npm: apt-get install -y nodejs npm" in done.stderr
    assert done.stdout == ""  # nothing was installed or run


def test_an_old_node_is_named_with_its_version(tmp_path: Path) -> None:
    old_node = 'if [ "$1" = "--version" ]; then echo v16.20.0; else exit 1; fi'
    done = preflight(tmp_path, {"node": old_node, "npm": "exit 0"})
    assert done.returncode == 2, done
    assert "Node.js 18 or newer (this is v16.20.0)" in done.stderr


def test_the_files_run_first_exist_and_run_first(request: pytest.FixtureRequest) -> None:
    """tests/conftest.py's LONGEST_FIRST names files that exist (a renamed one would silently lose its place)."""
    from tests.conftest import LONGEST_FIRST

    assert [path for path in LONGEST_FIRST if not (ROOT / path).is_file()] == []
    collected = [item.nodeid.split("::", 1)[0] for item in request.session.items]
    if set(LONGEST_FIRST) <= set(collected):  # a full run: they lead, in that order
        assert list(dict.fromkeys(collected))[:len(LONGEST_FIRST)] == list(LONGEST_FIRST)
