"""`ResultSizeLimit`: a tool result's text is cut to a number of characters, with a marker saying so.

Characters are counted as the client counts them once decoded (code points), and a cut never
splits a surrogate pair. Text content is cut block by block, the marker saying how much was left
out and how to get the rest. `structuredContent` is never cut (cut JSON is not JSON): a result
whose structured content alone is over the limit becomes an `isError` result saying so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._app.pipeline import Call, CallNext, Middleware
from .._primitives.content import error_result

DEFAULT_MAX_CHARS = 100_000


def _limit(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive number of characters or None, not {value!r}")
    return value


def cut_text(text: str, keep: int) -> str:
    """The first `keep` characters of `text`, one fewer when the cut would split a surrogate pair."""
    if keep <= 0:
        return ""
    if keep < len(text) and "\ud800" <= text[keep - 1] <= "\udbff" and "\udc00" <= text[keep] <= "\udfff":
        keep -= 1
    return text[:keep]


class ResultSizeLimit(Middleware):
    """Cuts tool results longer than `max_chars` characters (`per_tool[name]` for a tool; None: no limit)."""

    def __init__(
        self, max_chars: int | None = DEFAULT_MAX_CHARS, per_tool: Mapping[str, int | None] | None = None
    ) -> None:
        self.max_chars = _limit(max_chars, "max_chars")
        self.per_tool = {name: _limit(value, f"per_tool[{name!r}]") for name, value in (per_tool or {}).items()}

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        limit = self.per_tool[call.name] if call.name in self.per_tool else self.max_chars
        if limit is None or not isinstance(result, dict) or not isinstance(result.get("content"), list):
            return result
        structured = result.get("structuredContent")
        if structured is not None:
            size = len(json.dumps(structured, ensure_ascii=False, default=str))
            if size > limit:
                return error_result(
                    f"Tool '{call.name}' returned {size:,} characters of structured content, over this server's "
                    f"limit of {limit:,}; it cannot be cut without breaking it. Ask for less (narrower arguments, "
                    "fewer items, a page or an offset if the tool takes one).")
        blocks = result["content"]
        total = sum(len(b["text"]) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))
        if total <= limit:
            return result
        room = limit
        cut: list[Any] = []
        for block in blocks:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                text = block["text"]
                if len(text) > room:
                    block = {**block, "text": cut_text(text, room)}
                room -= len(block["text"])
            cut.append(block)
        shown = limit - room
        cut.append({"type": "text", "text": (
            f"[cut: this result had {total:,} characters of text; the first {shown:,} are shown and {total - shown:,} "
            f"were left out (the server's limit is {limit:,}). To get the rest, ask for less at a time: narrower "
            "arguments, or a page or an offset if the tool takes one.]")})
        return {**result, "content": cut}
