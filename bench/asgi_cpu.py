"""CPU per `tools/call` through mcp_kit's ASGI app in process: no sockets, no uvicorn, no client.

    .venv/bin/python bench/asgi_cpu.py                                   # this tree
    .venv/bin/python bench/asgi_cpu.py --tree before=/path/to/main       # + another checkout, alternating

What is left of a call once the network and the HTTP server are taken away: the guard, the `/mcp`
endpoint, the session, dispatch, the tool and the reply, with the bench server's `echo` tool. Each
tree runs in its own process (`PYTHONPATH`), the trees alternate `--runs` times, and each figure is the
least of its rounds (`time.process_time`, `--calls` calls per round), so other people's load inflates
it least. `bare` is an ASGI app that reads the body and sends a pre-encoded reply: the ASGI floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'
INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}).encode()


def _scope(headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000), "state": {}}


async def _exchange(app: Any, headers: list[tuple[bytes, bytes]], body: bytes) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    delivered = False
    done = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    await app(_scope(headers + [(b"content-length", str(len(body)).encode())]), receive, send)
    return sent


async def _bare(scope: Any, receive: Any, send: Any) -> None:
    message = await receive()
    request = json.loads(message["body"])
    body = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hello"}]}}' % request["id"]
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _measure(bare: bool, json_response: bool, calls: int, rounds: int) -> float:
    base = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream")]
    if bare:
        app: Any = _bare
        headers = base
        running: Any = None
    else:
        sys.path.insert(0, str(BENCH_DIR / "servers"))
        from mcp_kit_server import build_app

        app = build_app().asgi(host="127.0.0.1", port=8000, json_response=json_response)
        lifespan_in: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        lifespan_out: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        running = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                                          lifespan_in.get, lifespan_out.put))
        await lifespan_in.put({"type": "lifespan.startup"})
        await lifespan_out.get()
        opened = await _exchange(app, base, INIT)
        session = dict(opened[0]["headers"])[b"mcp-session-id"]
        headers = base + [(b"mcp-session-id", session), (b"mcp-protocol-version", b"2025-11-25")]
        await _exchange(app, headers, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    best = float("inf")
    request_id = 1
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(calls):
            request_id += 1
            sent = await _exchange(app, headers, CALL % request_id)
            assert sent[0]["status"] == 200, sent
        best = min(best, (time.process_time() - started) / calls * 1e6)
    if running is not None:
        await lifespan_in.put({"type": "lifespan.shutdown"})
        await lifespan_out.get()
        await running
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR: also mcp_kit from DIR")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import uvloop

        kind, body = args.child.split(":")
        print(uvloop.run(_measure(kind == "bare", body == "json", args.calls, args.rounds)))
        return 0
    trees = {"mcp_kit": BENCH_DIR.parent, **{t.split("=", 1)[0]: Path(t.split("=", 1)[1]) for t in args.tree}}
    results: dict[str, list[float]] = {}
    for _ in range(args.runs):
        for body in ("json", "sse"):
            for name, tree in [("bare", BENCH_DIR.parent), *trees.items()]:
                env = {**os.environ, "PYTHONPATH": str(tree.resolve()), "BENCH_LOOP": "uvloop"}
                kind = "bare" if name == "bare" else "app"
                out = subprocess.run([sys.executable, __file__, "--child", f"{kind}:{body}", "--calls",
                                      str(args.calls), "--rounds", str(args.rounds)], env=env, capture_output=True,
                                     text=True, check=True, timeout=600)
                results.setdefault(f"{body} {name}", []).append(float(out.stdout.strip().splitlines()[-1]))
    for label, values in results.items():
        print(f"{label:20s} {min(values):7.1f} us per call (least of {len(values)} runs: "
              f"{', '.join(f'{v:.1f}' for v in values)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
