"""bin/test: before anything runs, it names every tool that is missing with its install command; its set-up
installs the Python packages only when what they come from changed."""

from __future__ import annotations

import re
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


def test_the_python_packages_install_again_only_when_pyproject_or_uv_changed(tmp_path: Path) -> None:
    """`bin/test --setup` then `bin/test`, as .ci/run does: the second finds the install done and skips it."""
    uv_version = re.search(r"^UV_VERSION=(\S+)$", (ROOT / "bin" / "test").read_text(), re.M)
    assert uv_version
    tree = tmp_path / "tree"
    (tree / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "bin" / "test", tree / "bin" / "test")
    (tree / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for npm_tree in ("conformance", "tests/oauth_server", "tests/npm_servers"):  # installed as their lockfiles say
        (tree / npm_tree / "node_modules").mkdir(parents=True)
        (tree / npm_tree / "package-lock.json").write_text("{}")
        (tree / npm_tree / "node_modules" / ".installed-lock").write_text("{}")
    log = tmp_path / "calls"
    fakes = {".venv/bin/python": f'echo "python $*" >> {log}',
             ".venv/bin/uv": f'[ "$1" = --version ] && echo "uv {uv_version[1]}" && exit 0; echo "uv $*" >> {log}',
             "tools/node": "exit 0", "tools/npm": "exit 0"}
    for name, script in fakes.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(f"#!/bin/sh\n{script}\n")
        (tree / name).chmod(0o755)
    env = {"PATH": f"{tree / 'tools'}:/usr/bin:/bin"}

    def installs(*args: str) -> int:
        log.write_text("")
        done = subprocess.run([BASH, str(tree / "bin" / "test"), *args], env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done
        calls = log.read_text().splitlines()
        assert any("compileall" in call for call in calls), calls  # bytecode is compiled every time
        return sum(call.startswith("uv pip install") for call in calls)

    assert installs("--setup") == 1
    assert installs("--setup") == 0
    (tree / "pyproject.toml").write_text("[project]\nname = 'x'\ndependencies = ['anyio']\n")
    assert installs("--setup") == 1
    (tree / ".venv" / ".mcp-kit-installed").write_text("uv 0.0.1, pyproject.toml ...")  # another uv installed
    assert installs("--setup") == 1
