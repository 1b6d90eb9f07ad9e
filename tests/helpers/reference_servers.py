"""The three reference servers as the tests start them: real subprocesses over stdio, offline data."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STOCK = [sys.executable, "-m", "servers.stock", "--provider", "sample", "--log-level", "warning"]
WEATHER = [sys.executable, "-m", "servers.weather", "--provider", "sample", "--log-level", "warning"]


def filesystem(root: Path) -> list[str]:
    return [sys.executable, "-m", "servers.filesystem", "--root", str(root), "--log-level", "warning"]


def servers(root: Path) -> dict[str, list[str]]:
    """All three, by the name the bridge knows them by."""
    return {"stock": STOCK, "weather": WEATHER, "filesystem": filesystem(root)}
