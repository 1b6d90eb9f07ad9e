"""The public API is what `mcp_kit/__init__.py` exports: pinned here, so that a change to it is deliberate.

The reference servers import only these names; everything else in mcp_kit is internal.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import mcp_types
import pytest

import mcp_kit

ROOT = Path(__file__).resolve().parents[1]

PUBLIC = [
    "AccessToken",
    "AssistantMessage",
    "AuditRecord",
    "Audio",
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "Completion",
    "Context",
    "CreateMessageResult",
    "ElicitResult",
    "EmbeddedResource",
    "GetPromptResult",
    "Image",
    "ImageContent",
    "InsufficientScopeError",
    "MCPError",
    "MCPServer",
    "PromptMessage",
    "Resource",
    "ResourceLink",
    "ResourceNotFound",
    "Root",
    "TextContent",
    "TextResourceContents",
    "ToolAnnotations",
    "ToolCallRecord",
    "ToolError",
    "UpstreamUnavailable",
    "UserMessage",
    "add_run_arguments",
    "poll_for_changes",
    "__version__",
]


def test_all_is_pinned() -> None:
    assert sorted(mcp_kit.__all__) == sorted(PUBLIC)
    assert len(mcp_kit.__all__) == len(set(mcp_kit.__all__))


def test_every_exported_name_resolves() -> None:
    for name in mcp_kit.__all__:
        assert getattr(mcp_kit, name) is not None, name


def test_reference_servers_import_only_public_names() -> None:
    offending: list[str] = []
    for path in sorted((ROOT / "servers").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mcp_kit":
                if node.module != "mcp_kit":
                    offending.append(f"{path.relative_to(ROOT)}: from {node.module} import ...")
                offending += [f"{path.relative_to(ROOT)}: {a.name}" for a in node.names if a.name not in PUBLIC]
            elif isinstance(node, ast.Import):
                offending += [f"{path.relative_to(ROOT)}: import {a.name}" for a in node.names
                              if a.name.split(".")[0] == "mcp_kit" and a.name != "mcp_kit"]
    assert offending == []


def test_protocol_models_are_the_official_types_themselves() -> None:
    for name in ("TextContent", "TextResourceContents", "BlobResourceContents", "CallToolResult", "ToolAnnotations"):
        assert name in mcp_kit.__all__
        assert getattr(mcp_kit, name) is getattr(mcp_types, name)


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="module 'mcp_kit' has no attribute 'TextContnet'"):
        _ = mcp_kit.TextContnet  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from mcp_kit import NoSuchThing")


def test_the_callers_identity_is_the_auth_packages_access_token() -> None:
    from mcp_kit.auth import AccessToken

    assert mcp_kit.AccessToken is AccessToken
    fields = {f.name for f in dataclasses.fields(AccessToken)}
    assert {"subject", "client_id", "scopes", "claims", "expires_at"} <= fields
    assert "token" not in fields  # it never holds the token string
    hints = typing.get_type_hints(mcp_kit.Context, localns={"AccessToken": AccessToken})
    assert hints["principal"] == AccessToken | None
