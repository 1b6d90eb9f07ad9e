"""The code keeps the style it configures: ruff's checks (pyproject.toml [tool.ruff]), the 120-character
line limit among them, over every Python file of the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff() -> list[str]:
    beside = Path(sys.executable).with_name("ruff")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: pip install -e '.[test]' installs it")
    return [found]


def test_ruff_finds_nothing() -> None:
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_line_limit_is_enforced() -> None:
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "line-length = 120" in config
    ignored = config.split("[tool.ruff.lint]", 1)[1].split("\n\n", 1)[0]
    assert "E501" not in ignored and '"E"' in ignored  # E501 is selected through "E" and not ignored
