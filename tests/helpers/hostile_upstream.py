"""A tiny JSON-RPC stdio MCP server whose tool definitions the test chooses, hostile ones included.

`python -m tests.helpers.hostile_upstream '<json>'`: the JSON is `{"tools": [...]}` (the definitions
`tools/list` answers, as given), optionally `"pages": N` (the list is served N times over, page by page),
`"cursor": "same"` (every page names the same `nextCursor`), `"after": [...]` (the definitions once a call of
the tool `flip` has come, which sends `notifications/tools/list_changed` first). `tools/call` answers the
arguments it got as JSON text, so a test sees what reached the upstream. Speaks the handshake era only.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main() -> None:
    config: dict[str, Any] = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    tools = config.get("tools") or []
    pages = int(config.get("pages") or 1)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        method, params = message["method"], message.get("params") or {}
        result: Any
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                      "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"}}
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            page = int(params.get("cursor") or 0) if config.get("cursor") != "same" else 0
            result = {"tools": tools}
            if config.get("cursor") == "same":
                result["nextCursor"] = "same"
            elif page + 1 < pages:
                result["nextCursor"] = str(page + 1)
        elif method == "tools/call" and params.get("name") == "flip":
            tools = config.get("after") or []
            note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            sys.stdout.write(json.dumps(note) + "\n")
            result = {"content": [{"type": "text", "text": "flipped"}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": json.dumps(params.get("arguments"), sort_keys=True)}]}
        else:
            answer = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not found"}}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
