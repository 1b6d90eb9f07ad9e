"""Curve: tools registered (stdio). Spawn -> first `tools/list` page, one page, RSS per tool.

For each count N (and 0, the reference), a fresh server registers N generated tools besides `echo`
and `add` (`BENCH_EXTRA_TOOLS=N`, see servers/_workload.py). Measured from `Popen`: the `initialize`
result, then `notifications/initialized` + `tools/list` (no cursor) -> the first page. Then the same
first page `page_calls` times, sequentially (p50), and RSS; RSS per tool is (RSS with N - RSS with 0) / N
from the same repetition. mcp_kit, FastMCP (set to 100 per page) and the floor answer 100 tools per
page; the SDK's MCPServer has no pagination and answers every tool at once, so its page is larger
(tools and bytes per page are in the table).
"""

from __future__ import annotations

import time
from typing import IO, Any

from . import procstat
from .curves import Curve, Figure, at_most, key
from .implementations import REPO_DIR, Implementation
from .stats import percentile
from .stdio_client import ServerError, StdioPeer
from .stdio_suite import sequential

LIST_LINE = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}\n'


def _one(impl: Implementation, count: int, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    timeout = settings["timeout_s"]
    peer = StdioPeer(impl.argv("stdio"), impl.env(BENCH_EXTRA_TOOLS=str(count)), REPO_DIR, stderr)
    try:
        peer.initialize(timeout)
        init_ms = (time.perf_counter() - peer.spawned_at) * 1000
        mark = peer.wire_mark()
        page = peer.request("tools/list", {}, timeout)
        first_page_ms = (time.perf_counter() - peer.spawned_at) * 1000
        first_bytes = peer.bytes_per_reply(mark)
        listed = len(page.get("tools", []))
        registered = count + 2
        if listed != registered and not (listed >= min(registered, 100) and page.get("nextCursor")):
            raise ServerError(f"tools/list listed {listed} of {registered} tools and gave no nextCursor")
        procstat.check_native(peer.pid, impl.expected_native("stdio"))
        deadline = time.monotonic() + timeout
        latencies = sequential(peer, lambda request_id: LIST_LINE % request_id, settings["page_calls"], deadline)
        page_ms = percentile(latencies, 0.5) / 1000
        return {
            "init_ms": init_ms,
            "first_page_ms": first_page_ms,
            "page_ms": page_ms,
            "page_us_per_tool": page_ms * 1000 / listed,
            "page_tools": float(listed),
            "page_bytes": first_bytes,
            "rss_mib": procstat.rss_mib(peer.pid),
        }
    finally:
        peer.stop()


def measure(impl: Implementation, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    """One repetition: the reference server (no extra tools), then one server per count."""
    reference = _one(impl, 0, settings, stderr)
    out: dict[str, float] = {}
    for count in settings["counts"]:
        figures = _one(impl, count, settings, stderr)
        figures["rss_per_tool_kib"] = (figures["rss_mib"] - reference["rss_mib"]) * 1024 / count
        for name, value in figures.items():
            out[key(name, count)] = value
    return out


CURVE = Curve(
    name="tools",
    title="Tools registered (stdio)",
    x_label="tools registered",
    xs=lambda settings: list(settings["counts"]),
    figures=[
        Figure("first_page_ms", "spawn -> first tools/list page", "ms", True, "page_bytes", exact=False, log_y=True),
        Figure("init_ms", "spawn -> initialize result", "ms", True, chart=False),
        Figure("page_ms", "one tools/list page (first page, p50)", "ms", True, "page_bytes", exact=False, log_y=True),
        Figure("page_us_per_tool", "tools/list page time per tool listed", "us", True, chart=False),
        Figure("page_tools", "tools in the first page", "tools", False, chart=False),
        Figure("rss_per_tool_kib", "RSS per registered tool", "KiB", True),
        Figure("rss_mib", "RSS after the pages", "MiB", True, chart=False),
    ],
    settings={
        "quick": {"counts": (100, 1000, 5000), "page_calls": 10, "timeout_s": 180},
        "full": {"counts": (100, 1000, 5000), "page_calls": 50, "timeout_s": 300},
    },
    measure=measure,
    command="bench/scaling.py --curve tools",
    targets=[
        at_most("first_page_ms", 5000, 1000, "ms"),
        at_most("page_ms", 5000, 2, "ms"),
        at_most("rss_per_tool_kib", 5000, 5, "KiB"),
    ],
    notes=[
        "The SDK's MCPServer does not paginate: its page is every tool (see 'tools in the first page').",
        "tools/list bytes differ by framework (each writes its own schemas); they are shown, not compared.",
    ],
)
