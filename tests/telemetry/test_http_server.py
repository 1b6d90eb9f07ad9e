"""One HTTP server process configured by the command line and OpenTelemetry's variables only: OTLP spans and
metrics reach a receiver, GET /metrics answers behind the guard, /readyz answers, JSON log lines carry the
trace and span of the request they were written in, and a tool's upstream fetch continues its trace."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.helpers.scaleout_client import Session
from tests.helpers.support import ROOT, ServerURL, http_server
from tests.telemetry.otlp_receiver import Receiver, otel_environment, otlp_receiver
from tests.telemetry.support import CLIENT_TRACE, TRACEPARENT

SERVER = [str(ROOT / "tests" / "telemetry" / "observed_server.py")]


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as found:
        yield found


@pytest.fixture(scope="module")
def server(receiver: Receiver) -> Iterator[ServerURL]:
    with http_server([*SERVER, "--metrics", "--log-format", "json", "--auth-token", "s3cret"],
                     env=otel_environment(receiver, "observed")) as base:
        yield base


AUTH = {"Authorization": "Bearer s3cret"}


class Upstream:
    """A loopback HTTP server recording the traceparent each request brought."""

    def __init__(self) -> None:
        self.seen: list[str | None] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                upstream.seen.append(self.headers.get("traceparent"))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Upstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def call(session: Session, base: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return session.call(base, "tools/call", {"name": name, "arguments": arguments,
                                             "_meta": {"traceparent": TRACEPARENT}})


def test_spans_reach_the_otlp_receiver_and_a_tools_upstream_call_continues_the_trace(
        server: ServerURL, receiver: Receiver) -> None:
    with httpx.Client(headers=AUTH) as client, Upstream() as upstream:
        session = Session(client)
        session.open(server)
        answer = call(session, server, "fetch", {"url": upstream.url})
        assert answer["result"]["content"][0]["text"] == "ok", answer
    span = receiver.wait_for(lambda spans: next((s for s in spans if s.name == "tools/call fetch"), None),
                             "tools/call fetch span")
    assert span.trace_id == CLIENT_TRACE and span.parent_span_id == TRACEPARENT[36:52]
    assert span.service == "observed" and span.kind == 2  # SPAN_KIND_SERVER
    assert span.attributes["network.transport"] == "tcp" and span.attributes["mcp.session.id"] == session.id
    assert upstream.seen == [f"00-{CLIENT_TRACE}-{span.span_id}-01"]
    names = receiver.wait_for(lambda spans: receiver.metric_names >= {"mcp.server.operation.duration"} and
                              receiver.metric_names, "OTLP metrics")
    assert "mcp.server.active_requests" in names


def test_metrics_are_served_behind_the_guard(server: ServerURL) -> None:
    with httpx.Client(headers=AUTH) as client:
        session = Session(client)
        session.open(server)
        session.tool(server, "whoami")
        text = client.get(f"{server}/metrics").text
    assert ('mcp_server_operation_duration_seconds_count{error_type="",gen_ai_prompt_name="",'
            'gen_ai_tool_name="whoami"') in text
    assert httpx.get(f"{server}/metrics").status_code == 401
    assert httpx.get(f"{server}/metrics", headers={**AUTH, "Host": "evil.example"}).status_code == 403
    assert httpx.get(f"{server}/metrics", headers={**AUTH, "Origin": "http://evil.example"}).status_code == 403


def test_readyz_and_healthz_answer_without_credentials(server: ServerURL) -> None:
    assert httpx.get(f"{server}/healthz").status_code == 200
    ready = httpx.get(f"{server}/readyz")
    assert ready.status_code == 200 and ready.json() == {"status": "ready"}


def test_json_log_lines_carry_the_trace_span_and_session_of_their_request(server: ServerURL,
                                                                          receiver: Receiver) -> None:
    with httpx.Client(headers=AUTH) as client:
        session = Session(client)
        session.open(server)
        call(session, server, "note", {"text": "hunter2"})
    span = receiver.wait_for(lambda spans: next((s for s in spans if s.name == "tools/call note"), None), "note span")
    line = server.log.wait_for(r'\{.*"message": "noting a call".*\}', 10).group(0)
    entry = json.loads(line)
    assert entry["trace_id"] == CLIENT_TRACE and entry["span_id"] == span.span_id
    assert entry["session_id"] == session.id and entry["level"] == "info" and entry["logger"] == "observed"
    assert all(json.loads(each) for each in server.log.lines if each.startswith("{"))
    assert "hunter2" not in server.log.text
