"""JSON encode/decode for the client side: orjson when importable (lower client overhead), else stdlib json."""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the interpreter running the harness
    _orjson = None

CODEC_NAME = "orjson" if _orjson is not None else "json"


def dumps(obj: Any) -> bytes:
    """Serialise `obj` to compact JSON bytes."""
    if _orjson is not None:
        return _orjson.dumps(obj)
    return json.dumps(obj, separators=(",", ":")).encode()


def loads(data: bytes | bytearray | str) -> Any:
    """Parse JSON bytes or text."""
    if _orjson is not None:
        return _orjson.loads(data)
    return json.loads(data)
