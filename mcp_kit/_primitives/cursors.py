"""Opaque pagination cursors that point *after* a position in a sorted listing.

A cursor names the last item a page returned (a skill URI, a task's creation time and id), not
an index, so a page boundary stays correct when items are added or removed between pages. The
cursor is base64url of a small JSON document tagged with the listing it belongs to; a cursor
that is malformed, was forged, or belongs to another listing is -32602, as the spec's pagination
chapter asks.

Must not import: session, server, dispatcher, transports (a leaf: only `errors`).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from .._protocol.errors import MCPError, invalid_params

MAX_CURSOR_LENGTH = 2048


def encode_cursor(listing: str, after: Any) -> str:
    """A cursor for the page that starts right after `after` (JSON-serialisable) in `listing`."""
    payload = json.dumps({"l": listing, "a": after}, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(listing: str, cursor: Any) -> Any:
    """The position `cursor` points after; -32602 when it is not a cursor of `listing`."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_LENGTH:
        raise invalid_cursor(cursor)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        document = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise invalid_cursor(cursor) from None
    if not isinstance(document, dict) or document.get("l") != listing or "a" not in document:
        raise invalid_cursor(cursor)
    return document["a"]


def invalid_cursor(cursor: Any) -> MCPError:
    """-32602 for a cursor that is not one this listing handed out."""
    shown = cursor if not isinstance(cursor, str) or len(cursor) <= 80 else cursor[:80] + "..."
    return invalid_params(f"Invalid cursor {shown!r}: pass back the nextCursor of a previous page unchanged, "
                          "or leave it out to start from the first page")


# Index cursors: `base64url(str(index))` of the position where the next page starts. The tool registry's
# pages use them (the format every listing had before position cursors; clients keep passing them back).


def encode_index_cursor(index: int) -> str:
    """The cursor of the page that starts at `index`."""
    return base64.urlsafe_b64encode(str(index).encode()).decode()


def decode_index_cursor(cursor: Any, length: int) -> int:
    """Where the page of `cursor` starts in a listing of `length` items (None: 0); -32602 for anything else."""
    if cursor is None:
        return 0
    try:
        start = int(base64.urlsafe_b64decode(str(cursor).encode()).decode())
    except (ValueError, UnicodeDecodeError):
        raise invalid_params(f"Invalid cursor {cursor!r}: pass back a nextCursor from a previous page") from None
    if start < 0 or start > length:
        raise invalid_params(f"Invalid cursor {cursor!r}: it points outside the list")
    return start
