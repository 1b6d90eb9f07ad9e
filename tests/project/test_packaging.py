"""The source distribution: an SPDX license with its file, and everything its own test suite needs."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

from tests.helpers.support import ROOT

BUILD = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"


def tracked(*folders: str) -> set[str]:
    """Files git tracks under `folders` (empty when this is not a git checkout, e.g. an unpacked sdist)."""
    done = subprocess.run(["git", "ls-files", "--", *folders], cwd=ROOT, capture_output=True, text=True, timeout=60)
    return set(done.stdout.split()) if done.returncode == 0 else set()


def test_the_sdist_carries_the_license_and_what_its_tests_need(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", BUILD, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    archive_path = tmp_path / done.stdout.strip().splitlines()[-1]
    with tarfile.open(archive_path) as archive:
        top = archive.getnames()[0].split("/")[0]
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
        pkg_info = archive.extractfile(f"{top}/PKG-INFO").read().decode()  # type: ignore[union-attr]
    assert "License-Expression: MIT" in pkg_info and "License-File: LICENSE" in pkg_info
    assert "\nName: mcp-kit-framework\n" in pkg_info and top.startswith("mcp_kit_framework-")
    assert "Copyright (c) 2026 the mcp_kit developers" in (ROOT / "LICENSE").read_text()
    assert {"LICENSE", "README.md", "claude_desktop_config.example.json", "examples/demo_server.py"} <= names
    assert {
        "tests/fixtures/stock",
        "tests/fixtures/weather",
        "tests/servers/stock",
        "tests/servers/weather",
        "tests/servers/filesystem",
        "tests/ts_sdk",
        "bench/harness",
    } <= {name.rsplit("/", 1)[0] for name in names}
    missing = sorted(tracked("tests", "examples", "demo", "bench", "bin", "conformance", "deploy", "Dockerfile",
                             ".dockerignore") - names)
    assert missing == []  # every file the tests may open is shipped
    assert not [name for name in names if "node_modules" in name or "__pycache__" in name or ".venv" in name]


def test_the_distribution_name_is_ours_and_the_import_names_stay() -> None:
    """`mcp-kit` on PyPI is somebody else's project: ours is `mcp-kit-framework`; it installs `mcp_kit`,
    `servers` and the `mcp-kit` command, and the README says what to avoid."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "mcp-kit-framework"
    assert project["scripts"] == {"mcp-kit": "mcp_kit._cli.main:main"}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    assert "pip install mcp-kit" in install and "unrelated" in install  # the warning
    assert "git+https://" in install and ".whl" in install and "pip install -e" in install
    stale = [line for line in readme.splitlines() if "pip install 'mcp-kit[" in line]
    assert stale == []  # extras are named through our distribution, never the other project's
