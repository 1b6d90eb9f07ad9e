"""Through the filesystem server: `resources/read file:///...` is audited, allowed or denied.

The filesystem server enables the framework's audit log (`--audit-log`); before, reads of its files as
resources were not recorded at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.filesystem.server import build_server
from servers.filesystem.uris import file_uri
from tests.helpers.fs_layout import Layout


@pytest.mark.anyio
async def test_resource_reads_of_files_are_audited_allowed_and_denied(layout: Layout, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with connect(build_server([layout.root], audit_log=str(log))) as client:
        allowed = await client.read_resource(file_uri(layout.root / "ok.txt"))
        for denied in (layout.outside / "secret.txt", layout.root / "link_out"):
            with pytest.raises(MCPError):
                await client.read_resource(file_uri(denied))
        await client.call_tool("read_text_file", {"path": "ok.txt"})
    assert allowed[0]["text"] == "hello\nworld\n"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["primitive"], r["uri"], r["outcome"]) for r in records] == [
        ("resource", file_uri(layout.root / "ok.txt"), "ok"),
        ("resource", file_uri(layout.outside / "secret.txt"), "error"),
        ("resource", file_uri(layout.root / "link_out"), "error"),
        ("tool", None, "ok"),
    ]
    assert records[3]["tool"] == "read_text_file"
    assert len({tuple(r) for r in records}) == 1  # reads and calls share one record shape
    assert all("TOP SECRET" not in json.dumps(r) for r in records)
    assert records[1]["error"] and records[1]["duration_ms"] >= 0
