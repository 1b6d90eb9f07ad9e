"""The audit trail records resource reads, allowed and refused, in the tool-call shape.

Before, only tool calls were recorded; a read through `resources/read` left no trace. Every record now has
the same fields, and `primitive` says whether it was a tool call or a resource read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_kit import AuditRecord, MCPError
from mcp_kit._app.audit import JsonLinesAuditLog
from mcp_kit.testing import connect
from tests.helpers.fault_server import build


@pytest.mark.anyio
async def test_resource_reads_are_audited_like_tool_calls(tmp_path: Path) -> None:
    app = build()
    log = tmp_path / "audit.jsonl"
    app.enable_audit_log(str(log))
    hooked: list[AuditRecord] = []
    app.add_audit_hook(hooked.append)  # a hook sees reads too
    async with connect(app) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.read_resource("fault://item/abc")
        for refused in ("fault://item/%2E%2E", "nothing://here"):
            with pytest.raises(MCPError):
                await client.read_resource(refused)
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(r["primitive"], r["tool"], r["uri"], r["outcome"]) for r in records] == [
        ("tool", "add", None, "ok"),
        ("resource", None, "fault://item/abc", "ok"),
        ("resource", None, "fault://item/%2E%2E", "error"),
        ("resource", None, "nothing://here", "error"),
    ]
    assert len({tuple(r) for r in records}) == 1  # one record shape for every primitive
    assert "'code'" in records[2]["error"] and "Resource not found" in records[3]["error"]
    assert all(r["session"] and r["time"] and r["duration_ms"] >= 0 for r in records)
    assert [(r.primitive, r.uri) for r in hooked] == [(r["primitive"], r["uri"]) for r in records]


def test_an_audit_record_that_is_not_valid_unicode_is_still_written(tmp_path: Path) -> None:
    """A file name that is not UTF-8 reaches the log as the JSON escape of its surrogate: nothing lost, nothing
    raised."""
    log = JsonLinesAuditLog(str(tmp_path / "audit.jsonl"))
    log(AuditRecord.of_read("s", "file:///bad\udcff.txt", None, 0.001))
    log(AuditRecord.of_read("s", "file:///fine.txt", "Access denied", 0.001))
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["uri"] for r in records] == ["file:///bad\udcff.txt", "file:///fine.txt"]
