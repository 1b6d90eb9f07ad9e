"""What a model reads of an MCP tool result when mcp_kit hands it to a vendor's function calling:
text as it is, binary data described (never dumped), resources by their text or their URI.

Skipped where mcp_kit has no function-calling support.
"""

from __future__ import annotations

import base64

import pytest

calls = pytest.importorskip("mcp_kit.functions._calls")


def test_binary_blocks_are_described_by_type_and_size() -> None:
    png = base64.b64encode(b"\x89PNG" + b"\x00" * 96).decode()
    assert calls.block_text({"type": "image", "mimeType": "image/png", "data": png}) == "[image image/png, 100 bytes]"
    assert calls.block_text({"type": "audio", "data": "not base64!"}) == "[audio ?, 0 bytes]"


def test_resources_give_their_text_or_their_uri() -> None:
    assert calls.block_text({"type": "resource", "resource": {"uri": "note://a", "text": "hello"}}) == "hello"
    assert calls.block_text(
        {"type": "resource", "resource": {"uri": "data://b", "blob": "AAEC", "mimeType": "x/y"}}
    ) == ("[binary resource data://b (x/y)]")
    assert calls.block_text({"type": "resource", "resource": {"uri": "data://c", "blob": "AA"}}) == (
        "[binary resource data://c (unknown type)]")
    assert (
        calls.block_text({"type": "resource_link", "uri": "file:///r.txt", "name": "r"})
        == "[resource link] file:///r.txt - r"
    )
    assert calls.block_text({"type": "resource_link", "uri": "file:///s.txt"}) == "[resource link] file:///s.txt"


def test_a_result_reads_as_its_blocks_or_its_structured_content() -> None:
    result = {"content": [{"type": "text", "text": "one"}, {"type": "future", "x": 1}]}
    assert calls.result_text(result) == 'one\n{"type": "future", "x": 1}'
    assert calls.result_text({"content": [], "structuredContent": {"t": "é"}}) == '{"t": "é"}'
    assert calls.result_text({}) == ""


def test_errors_read_as_errors_once() -> None:
    assert calls.error_text("the tool failed") == "Error: the tool failed"
    assert calls.error_text("Error: already said") == "Error: already said"
    assert calls.error_text("error: lower case too") == "error: lower case too"
