"""Readable text for what a server returns: listings, tool results, resource contents, prompts."""

from __future__ import annotations

import base64
import json
from typing import Any

DESCRIPTION_WIDTH = 100


def first_line(text: str | None, width: int = DESCRIPTION_WIDTH) -> str:
    """The first sentence of a description's first paragraph, cut to `width` characters."""
    paragraph: list[str] = []
    for line in (text or "").strip().splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    summary = " ".join(paragraph)
    end = summary.find(". ")
    if 0 < end < width:
        summary = summary[: end + 1]
    return summary if len(summary) <= width else summary[: width - 1] + "…"


def signature(properties: dict[str, Any], required: list[str]) -> str:
    """`(ticker, [period])`: required parameters bare, optional ones in brackets."""
    names = [name if name in required else f"[{name}]" for name in properties]
    return f"({', '.join(names)})"


def tool_line(tool: dict[str, Any]) -> str:
    schema = tool.get("inputSchema") or {}
    head = tool["name"] + signature(schema.get("properties") or {}, schema.get("required") or [])
    return _entry(head, tool.get("description") or tool.get("title"))


def prompt_line(prompt: dict[str, Any]) -> str:
    arguments = prompt.get("arguments") or []
    names = {a["name"]: None for a in arguments}
    head = prompt["name"] + signature(names, [a["name"] for a in arguments if a.get("required")])
    return _entry(head, prompt.get("description") or prompt.get("title"))


def _entry(head: str, description: str | None) -> str:
    summary = first_line(description)
    return f"  {head}\n      {summary}" if summary else f"  {head}"


def server_line(initialize_result: dict[str, Any]) -> str:
    info = initialize_result.get("serverInfo") or {}
    title = info.get("title")
    name = f"{info.get('name', '?')} {info.get('version', '')}".strip()
    return f"{name}{' - ' + title if title else ''}  (protocol {initialize_result.get('protocolVersion', '?')})"


def listing(initialize_result: dict[str, Any], sections: dict[str, list[dict[str, Any]]]) -> str:
    """The whole `mcp-kit list` text."""
    lines = [server_line(initialize_result)]
    formats = {
        "tools": ("Tools", tool_line),
        "resources": ("Resources", lambda r: _entry(r["uri"], r.get("title") or r.get("name"))),
        "resourceTemplates": (
            "Resource templates",
            lambda r: _entry(r["uriTemplate"], r.get("title") or r.get("name")),
        ),
        "prompts": ("Prompts", prompt_line),
    }
    for key, items in sections.items():
        if not items and key != "tools":
            continue
        heading, line = formats[key]
        lines += ["", f"{heading} ({len(items)})", *(line(item) for item in items)]
    return "\n".join(lines)


def content_text(item: dict[str, Any]) -> str:
    """One content block as text; binary data is described, not dumped."""
    kind = item.get("type")
    if kind == "text":
        return str(item.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {item.get('mimeType', '?')}, {_decoded_size(item.get('data', ''))} bytes]"
    if kind == "resource":
        return resource_text(item.get("resource") or {})
    if kind == "resource_link":
        return f"[resource link] {item.get('uri')}{' - ' + item['name'] if item.get('name') else ''}"
    return json.dumps(item, ensure_ascii=False)


def resource_text(contents: dict[str, Any]) -> str:
    if "text" in contents:
        return str(contents["text"])
    size = _decoded_size(contents.get("blob", ""))
    return (
        f"[binary {contents.get('mimeType', 'data')}, {size} bytes from {contents.get('uri')}; use --json for base64]"
    )


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except ValueError:
        return 0


def tool_result(result: dict[str, Any]) -> str:
    """What the model sees of a tool result: its content blocks (structured content when there are none)."""
    blocks = result.get("content") or []
    if blocks:
        return "\n".join(content_text(block) for block in blocks)
    if "structuredContent" in result:
        return json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)
    return ""


def resource_contents(contents: list[dict[str, Any]]) -> str:
    if len(contents) == 1:
        return resource_text(contents[0])
    parts = [f"--- {c.get('uri')} ({c.get('mimeType', '?')})\n{resource_text(c)}" for c in contents]
    return "\n".join(parts)


def prompt_result(result: dict[str, Any]) -> str:
    lines = [f"# {result['description']}"] if result.get("description") else []
    for message in result.get("messages") or []:
        lines += [f"[{message.get('role', '?')}]", content_text(message.get("content") or {})]
    return "\n".join(lines)


def log_line(params: dict[str, Any]) -> str:
    """A notifications/message as one stderr line."""
    data = params.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    source = f"{params['logger']}: " if params.get("logger") else ""
    return f"[{params.get('level', 'info')}] {source}{text}"
