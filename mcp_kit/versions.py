"""Protocol versions and what each one may carry.

Definitions are written once in the newest shape; `shape_*` removes what an older negotiated
version does not know (titles, annotations, icons, output schemas, audio, resource links).
"""

from __future__ import annotations

from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
ALL_VERSIONS = HANDSHAKE_VERSIONS + MODERN_VERSIONS
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
LATEST = ALL_VERSIONS[-1]
BATCH_VERSIONS = frozenset({"2025-03-26"})
DEFAULT_HTTP_VERSION = "2025-03-26"


def at_least(version: str, minimum: str) -> bool:
    """True when `version` is a known version no older than `minimum`."""
    return version in ALL_VERSIONS and ALL_VERSIONS.index(version) >= ALL_VERSIONS.index(minimum)


def negotiate(requested: Any) -> str:
    """The handshake answer: the client's version when we speak it, else our newest handshake one."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE


def shape_tool(tool: dict[str, Any], version: str) -> dict[str, Any]:
    """A tool definition with only the fields `version` defines."""
    out = dict(tool)
    if not at_least(version, "2025-03-26"):
        out.pop("annotations", None)
    if not at_least(version, "2025-06-18"):
        for key in ("title", "outputSchema", "_meta"):
            out.pop(key, None)
        if "annotations" in out:
            out["annotations"] = {k: v for k, v in out["annotations"].items() if k != "title"} or None
            if out["annotations"] is None:
                out.pop("annotations")
    if not at_least(version, "2025-11-25"):
        out.pop("icons", None)
    return out


def shape_metadata(item: dict[str, Any], version: str) -> dict[str, Any]:
    """A resource, template or prompt definition with only the fields `version` defines."""
    if at_least(version, "2025-11-25"):
        return item
    out = dict(item)
    out.pop("icons", None)
    if not at_least(version, "2025-06-18"):
        out.pop("title", None)
        out.pop("_meta", None)
        if "arguments" in out:
            out["arguments"] = [{k: v for k, v in a.items() if k != "title"} for a in out["arguments"]]
    return out


def shape_content(block: dict[str, Any], version: str) -> dict[str, Any]:
    """A content block the version can carry: unknown kinds become a text description."""
    kind = block.get("type")
    if kind == "audio" and not at_least(version, "2025-03-26"):
        return {"type": "text", "text": f"[audio content ({block.get('mimeType', 'unknown type')}) not supported by protocol {version}]"}
    if kind == "resource_link" and not at_least(version, "2025-06-18"):
        return {"type": "text", "text": f"Resource: {block.get('uri')} ({block.get('name', '')})"}
    return block


def shape_tool_result(result: dict[str, Any], version: str) -> dict[str, Any]:
    """A tool result the version can carry (structuredContent from 2025-06-18)."""
    if at_least(version, "2025-06-18"):
        return result
    out = dict(result)
    out.pop("structuredContent", None)
    out["content"] = [shape_content(b, version) for b in result.get("content", [])]
    return out
