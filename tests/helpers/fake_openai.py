"""A tiny OpenAI-compatible HTTP server on 127.0.0.1 that replays recorded chat completions in order and
records every request it gets (for tests of agents that must never reach a live model)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Replay:
    """What the fake server will answer, and what it was asked."""

    responses: list[dict[str, Any]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""


@contextlib.contextmanager
def fake_openai(responses: list[dict[str, Any]]) -> Iterator[Replay]:
    """Serve POST /v1/chat/completions on a free loopback port; yields the Replay with its base_url."""
    replay = Replay(list(responses))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                if self.path != "/v1/chat/completions" or not replay.responses:
                    self._answer(404 if replay.responses else 500, {"error": {"message": f"unexpected {self.path}"}})
                    return
                replay.requests.append(json.loads(body))
                replay.headers.append(dict(self.headers))
                answer = replay.responses.pop(0)
            self._answer(200, answer)

        def _answer(self, status: int, data: dict[str, Any]) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    replay.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield replay
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
