"""The reference servers' MCP Apps views: one self-contained HTML document per view, its bridge inlined.

`view_html(path)` reads a view's HTML beside its server and puts `view_bridge.js` (the view's side of
the Apps protocol: JSON-RPC over postMessage) where the document says `/*BRIDGE*/`, so what a host
loads references nothing outside itself. `SIZE_BUDGET` is the most one view may weigh.
"""

from __future__ import annotations

import functools
from pathlib import Path

SIZE_BUDGET = 16 * 1024  # bytes of UTF-8 per view document, script and styles included
BRIDGE = Path(__file__).resolve().parent / "view_bridge.js"


@functools.cache
def view_html(path: Path) -> str:
    """The view at `path` with the bridge inlined (read once)."""
    page = path.read_text(encoding="utf-8")
    if "/*BRIDGE*/" not in page:
        raise ValueError(f"{path} has no /*BRIDGE*/ placeholder for the Apps bridge")
    return page.replace("/*BRIDGE*/", BRIDGE.read_text(encoding="utf-8"), 1)
