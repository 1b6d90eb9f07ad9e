"""A hostile 2026-07-28 upstream for the proxy tests: JSON-RPC lines on stdio, answering as a server that
misbehaves in one chosen way. Everything it sends the proxy must survive.

`python -m tests.helpers.rogue_upstream MODE`, where MODE is
- `bad-ack:JSON`: acknowledges every `subscriptions/listen` with `{"notifications": JSON}` (a string, a list, a
  number...) and holds the listen open without answering;
- `silent`: never acknowledges nor answers a `subscriptions/listen`;
- `subset`: acknowledges a resource listen for its first URI only;
- `tasks:N`: declares tasks; `tasks/list` has N pages of one task each (`t0`, `t1`, ...), and repeats its last
  cursor when N is negative (a cursor loop);
- `stubborn`: ignores SIGTERM and the end of its input (it must be killed);
- `noisy`: before answering a `tools/call`, logs at level "loud" from logger [1] and reports progress "x" of
  {} for its progress token;
- `pages`: lists `echo` and malformed tools (not objects, no string name) on every page of `tools/list`, each
  pointing at the same next page;
- `caps:JSON`: declares JSON as its capabilities (a list, `{"tools": "yes"}`...) and `instructions` 7.

Every mode answers `server/discover`, `tools/list` (one tool, `echo`) and `tools/call` (echoes `text`; `pid`
is answered with this process's id).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "silent"
TASKS = MODE.startswith("tasks:")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def capabilities() -> Any:
    if MODE.startswith("caps:"):
        return json.loads(MODE.split(":", 1)[1])
    caps: dict[str, Any] = {"tools": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True}}
    if TASKS:
        caps["extensions"] = {"io.modelcontextprotocol/tasks": {}}
    return caps


def tasks_page(cursor: Any) -> dict[str, Any]:
    pages = int(MODE.split(":", 1)[1])
    count = abs(pages)
    index = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
    page: dict[str, Any] = {"tasks": [{"taskId": f"t{index}", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                                       "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": None}]}
    if pages < 0:
        page["nextCursor"] = str(min(index + 1, count - 1))  # the last page points at itself
    elif index + 1 < count:
        page["nextCursor"] = str(index + 1)
    return page


def answer(message: dict[str, Any]) -> None:
    method, params, rid = message.get("method"), message.get("params") or {}, message.get("id")
    if rid is None:
        return
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "supportedVersions": ["2026-07-28"], "capabilities": capabilities(),
            "serverInfo": {"name": "rogue", "version": "1"},
            **({"instructions": 7} if MODE.startswith("caps:") else {})}})
    elif method == "tools/list" and MODE == "pages":
        send({"jsonrpc": "2.0", "id": rid, "result": {"nextCursor": "same", "tools": [
            "x", 3, {"name": 5, "inputSchema": {"type": "object"}}, {"inputSchema": {"type": "object"}},
            {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{
            "name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}})
    elif method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        text = str(os.getpid()) if text == "pid" else text
        if MODE == "noisy":
            token = (params.get("_meta") or {}).get("progressToken")
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "loud", "logger": [1], "data": {"x": 1}}})
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": "x", "total": {}, "message": 5}})
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    elif method == "tasks/list" and TASKS:
        send({"jsonrpc": "2.0", "id": rid, "result": tasks_page(params.get("cursor"))})
    elif method == "subscriptions/listen":
        wanted = params.get("notifications") or {}
        if MODE.startswith("bad-ack:"):
            send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                  "params": {"notifications": json.loads(MODE.split(":", 1)[1])}})
        elif MODE == "subset" and wanted.get("resourceSubscriptions"):
            send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                  "params": {"notifications": {"resourceSubscriptions": wanted["resourceSubscriptions"][:1]}}})
        # held open: never answered
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main() -> None:
    if MODE == "stubborn":
        signal.signal(signal.SIGTERM, lambda *_: None)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            answer(message)
    if MODE == "stubborn":
        threading.Event().wait()  # outlives its input and SIGTERM


if __name__ == "__main__":
    main()
