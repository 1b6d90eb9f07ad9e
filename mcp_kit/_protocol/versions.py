"""Protocol versions and what each one may carry: every version fact of mcp_kit lives here.

Definitions are written once in the newest shape; `shape_*` removes what an older negotiated
version does not know (titles, annotations, icons, output schemas, audio, resource links,
elicitation modes, server-info fields, capabilities).

The two eras: the handshake era (2024-11-05 ... 2025-11-25) negotiates a version once per
connection with `initialize`; the stateless era (2026-07-28) carries it in every request's
`params._meta` envelope (`carries_envelope`). Which era a request belongs to is decided once, where
it enters the session (`_eras/session.py`); the HTTP transport uses the same facts to choose the HTTP
shape of an exchange.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STATELESS_VERSIONS = ("2026-07-28",)
ALL_VERSIONS = HANDSHAKE_VERSIONS + STATELESS_VERSIONS
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
LATEST_STATELESS = STATELESS_VERSIONS[-1]
BATCH_VERSIONS = frozenset({"2025-03-26"})

# The 2026-07-28 per-request envelope: keys of a request's `params._meta` (and of results' `_meta`).
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

DISCOVER_METHOD = "server/discover"  # the stateless era's entry point; it needs no envelope to be recognised
# Methods of the handshake era that 2026-07-28 removed (answered -32601 there).
HANDSHAKE_ONLY_METHODS = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe",
                                    "resources/unsubscribe"})


def at_least(version: str, minimum: str) -> bool:
    """True when `version` is a known version no older than `minimum`."""
    return version in ALL_VERSIONS and ALL_VERSIONS.index(version) >= ALL_VERSIONS.index(minimum)


def negotiate(requested: Any) -> str:
    """The handshake answer: the client's version when we speak it, else our newest handshake one."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE


def is_known(version: str | None) -> bool:
    """Whether `version` (e.g. an `MCP-Protocol-Version` header) is one mcp_kit speaks."""
    return version in ALL_VERSIONS


def is_stateless(version: str | None) -> bool:
    """Whether `version` is a version of the stateless (2026-07-28) era."""
    return version in STATELESS_VERSIONS


def carries_envelope(params: dict[str, Any] | None) -> bool:
    """Whether a request's params carry the stateless era's envelope: a `_meta` naming a protocol version.

    Such a request belongs to the stateless era whatever the version it names; an unknown one is
    that era's -32022, given by whoever serves it.
    """
    meta = params.get("_meta") if params else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


PRIMING_VERSIONS = frozenset(ALL_VERSIONS[ALL_VERSIONS.index("2025-11-25"):])


def primes_event_streams(version: str | None) -> bool:
    """Whether an SSE response opens with a priming event (an id to resume from), as 2025-11-25 defines."""
    return version in PRIMING_VERSIONS


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
    if version != "2025-11-25":
        out.pop("execution", None)  # per-tool task support exists in 2025-11-25 only (2026-07-28: the tasks extension)
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
        return {
            "type": "text",
            "text": f"[audio content ({block.get('mimeType', 'unknown type')}) not supported by protocol {version}]",
        }
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


def shape_capabilities(capabilities: dict[str, Any], version: str) -> dict[str, Any]:
    """Server capabilities the version defines (`completions` from 2025-03-26)."""
    if "completions" in capabilities and not at_least(version, "2025-03-26"):
        return {key: value for key, value in capabilities.items() if key != "completions"}
    return capabilities


def shape_server_info(info: dict[str, Any], version: str) -> dict[str, Any]:
    """`serverInfo` with the fields the version defines (title from 2025-06-18; websiteUrl, icons from 2025-11-25)."""
    out = {"name": info["name"], "version": info["version"]}
    if at_least(version, "2025-06-18") and info.get("title"):
        out["title"] = info["title"]
    if at_least(version, "2025-11-25"):
        for key in ("websiteUrl", "icons"):
            if info.get(key):
                out[key] = info[key]
    return out


def shape_client_request(method: str, params: dict[str, Any], version: str) -> dict[str, Any]:
    """A server-to-client request's params as `version` defines them (elicitation `mode` from 2025-11-25)."""
    if method == "elicitation/create" and not at_least(version, "2025-11-25"):
        return {key: value for key, value in params.items() if key != "mode"}
    return params
