"""The public API: what `mcp_kit` and its public modules export, pinned here so that a change is deliberate.

The reference servers import only `mcp_kit`'s names; every other module of mcp_kit is private by name.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import typing
from pathlib import Path

import mcp_types
import pytest

import mcp_kit

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = [
    "AccessToken",
    "Arg",
    "Apps",
    "AssistantMessage",
    "AuditRecord",
    "Audio",
    "AudioContent",
    "BlobResourceContents",
    "Call",
    "CallNext",
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
    "MCPKitError",
    "MCPServer",
    "Middleware",
    "MountCollision",
    "PromptMessage",
    "Resource",
    "ResourceLink",
    "ResourceNotFound",
    "StateTooLarge",
    "StateUnavailable",
    "Root",
    "TextContent",
    "TextResourceContents",
    "ToolAnnotations",
    "ToolCallRecord",
    "ToolCrashed",
    "ToolError",
    "UpstreamUnavailable",
    "UserMessage",
    "add_run_arguments",
    "current_trace_headers",
    "poll_for_changes",
    "proxy",
    "__version__",
]


PUBLIC_MODULES = {
    "mcp_kit.testing": ["Client", "connect"],
    "mcp_kit.telemetry": ["JsonLogFormatter", "MissingTelemetryExtra", "Telemetry", "current_trace_headers"],
    "mcp_kit.auth": [
        "AccessToken",
        "AuthConfig",
        "AuthError",
        "AuthServerUnavailable",
        "FacadeConfig",
        "InvalidRequest",
        "InvalidToken",
        "STATE_KEY",
        "StepUpRequired",
        "UpstreamProvider",
        "UpstreamToken",
        "UpstreamTokenUnavailable",
        "access_token_of",
    ],
    "mcp_kit.client": [
        "BaseClient",
        "ClientError",
        "ClientSession",
        "ConnectionClosed",
        "LegacySSETransport",
        "ProgressCallback",
        "ServerNotFound",
        "StdioTransport",
        "StreamableHTTPTransport",
        "Transport",
        "connect",
        "is_url",
        "open_transport",
    ],
    "mcp_kit.client.oauth": [
        "CallbackRedirect",
        "FileTokenStore",
        "HeadlessRedirect",
        "LoopbackRedirect",
        "MemoryTokenStore",
        "OAuth",
        "OAuthClientConfig",
        "OAuthError",
        "OAuthFlow",
        "RedirectHandler",
        "TokenStore",
    ],
    "mcp_kit.functions": [
        "ANTHROPIC_NAMES",
        "ArgumentChecker",
        "ArgumentError",
        "ConfirmationRequest",
        "FORMATS",
        "Export",
        "ExportNote",
        "MalformedResponseError",
        "Renamed",
        "GEMINI_NAMES",
        "GeminiSchemaError",
        "NameMap",
        "NameRules",
        "OPENAI_NAMES",
        "RemoteTool",
        "SchemaConversionError",
        "StrictSchemaError",
        "ToolBridge",
        "ToolCall",
        "ToolOutcome",
        "ToolSession",
        "Turn",
        "check_strict_limits",
        "parse_arguments",
        "to_gemini_schema",
        "to_strict_schema",
    ],
    "mcp_kit.middleware": [
        "MaskErrors",
        "Rate",
        "RateLimit",
        "RateLimited",
        "RequestLog",
        "ResponseCache",
        "ResultSizeLimit",
        "Timeouts",
        "parse_rate",
    ],
    "mcp_kit.apps": [
        "EXTENSION_ID",
        "MIME_TYPE",
        "PERMISSIONS",
        "SPEC_VERSION",
        "Apps",
        "View",
        "ui_meta",
    ],
    "mcp_kit.extensions": [
        "CORE_METHODS",
        "Extension",
        "method",
        "notification",
    ],
    "mcp_kit.tasks": [
        "InMemoryTaskStore",
        "STATUSES",
        "TERMINAL",
        "TRANSITIONS",
        "TaskLimitReached",
        "TaskRecord",
        "TaskSettings",
        "TaskStatus",
        "TaskStore",
        "TaskStoreError",
        "can_transition",
        "new_task_id",
    ],
    "mcp_kit.skills": [
        "DIRECTORY_MIME_TYPE",
        "EXTENSION_ID",
        "FrontmatterError",
        "MAX_BYTES_PER_SKILL",
        "MAX_FILES_PER_SKILL",
        "ScanError",
        "Skill",
        "SkillCatalog",
        "SkillError",
        "SkillFile",
        "SkillLimits",
        "SkillNotFound",
    ],
}


@pytest.mark.parametrize("module", sorted(PUBLIC_MODULES))
def test_each_public_modules_all_is_pinned(module: str) -> None:
    exported = importlib.import_module(module).__all__
    assert sorted(exported) == sorted(PUBLIC_MODULES[module])
    for name in exported:
        assert getattr(importlib.import_module(module), name) is not None, name


def test_every_other_module_is_private_by_name() -> None:
    public = {"mcp_kit", "mcp_kit.__main__", *PUBLIC_MODULES}
    unmarked = []
    for path in sorted((ROOT / "mcp_kit").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if name not in public and not any(part.startswith("_") for part in parts[1:]):
            unmarked.append(name)
    assert unmarked == []


def test_every_exception_mcp_kit_raises_has_one_root() -> None:
    import mcp_kit._errors

    roots = set()
    for path in sorted((ROOT / "mcp_kit").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] == "__main__":
            continue
        module = importlib.import_module(".".join(parts))
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.__name__):
                roots.add(value.__name__ if issubclass(value, mcp_kit.MCPKitError) else f"{value.__name__} (no root)")
    # private helpers that never leave their module (e.g. a YAML composer error) may keep a foreign base
    assert [name for name in sorted(roots) if name.endswith("(no root)") and not name.startswith("_")] == []
    assert mcp_kit.MCPKitError is mcp_kit._errors.MCPKitError
    drawn = mcp_kit._errors.__doc__ or ""
    assert [name for name in sorted(roots) if name not in drawn and not name.startswith("_")] == []  # all drawn
    twins = [name for name in roots if name.endswith("Error") and name.removesuffix("Error") in roots]
    assert twins == []  # no two exceptions whose names differ only by a suffix


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
