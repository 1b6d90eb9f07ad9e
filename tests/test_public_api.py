"""The public API is what `mcp_kit` exports: every name in `__all__` resolves, and nothing else pretends to."""

from __future__ import annotations

import mcp_types
import pytest

import mcp_kit


def test_every_exported_name_resolves() -> None:
    assert len(mcp_kit.__all__) == len(set(mcp_kit.__all__))
    for name in mcp_kit.__all__:
        assert getattr(mcp_kit, name) is not None, name


def test_protocol_models_are_the_official_types_themselves() -> None:
    for name in ("TextContent", "TextResourceContents", "BlobResourceContents", "CallToolResult", "ToolAnnotations"):
        assert name in mcp_kit.__all__
        assert getattr(mcp_kit, name) is getattr(mcp_types, name)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="module 'mcp_kit' has no attribute 'TextContnet'"):
        _ = mcp_kit.TextContnet  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from mcp_kit import NoSuchThing")
