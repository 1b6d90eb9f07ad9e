"""One endpoint on three processes sharing one Redis: a client may land on any process for
any request, as behind a round-robin load balancer without sticky sessions.

Three real server processes (`tests/fixtures/scaleout_server.py`) on three ports, a real
redis-server on a free loopback port (`redis_support`), the official SDK client (with a
round-robin transport) and raw HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession, types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.redis_support import RedisProcess
from tests.helpers.scaleout_client import META, MODERN, RoundRobin, Session, answer_of, port_of, servers, sse_lines
from tests.helpers.support import ServerURL

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def three(redis: RedisProcess) -> Iterator[list[ServerURL]]:
    with servers(redis.url) as bases:
        yield bases


def pids(session: Session, bases: list[ServerURL]) -> list[str]:
    return [session.tool(base, "whoami") for base in bases]


def test_a_raw_session_opened_on_process_1_continues_on_2_and_3_request_by_request(three: list[ServerURL]) -> None:
    p1, p2, p3 = three
    with httpx.Client(timeout=20) as client:
        session = Session(client)
        assert session.open(p1)["result"]["protocolVersion"] == "2025-11-25"
        assert session.notify(p2, "notifications/initialized").status_code == 202
        assert session.call(p3, "logging/setLevel", {"level": "warning"}) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        tools = session.call(p1, "tools/list")["result"]["tools"]
        assert {"whoami", "bump", "ask", "chatty"} <= {tool["name"] for tool in tools}
        assert len(set(pids(session, [p1, p2, p3, p1, p2, p3]))) == 3  # three processes served it, in turn
        assert session.client.delete(f"{p2}/mcp", headers=session.headers()).status_code == 200
        gone = session.post(p3, "tools/list")
        assert gone.status_code == 404  # deleted through process 2, unknown on process 3 too


def test_an_unknown_session_is_404_on_every_process(three: list[ServerURL]) -> None:
    for base in three:
        response = httpx.post(f"{base}/mcp", headers={"Content-Type": "application/json", "Accept": "application/json",
                                                      "Mcp-Session-Id": "nope", "MCP-Protocol-Version": "2025-11-25"},
                              json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert response.status_code == 404 and "Session not found" in response.text


async def test_the_sdk_client_round_robin_over_three_processes(three: list[ServerURL]) -> None:
    ports = [port_of(base) for base in three]
    transport = RoundRobin(ports, transport=httpx2.AsyncHTTPTransport())
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http, \
            streamable_http_client(f"{three[0]}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        answered = [(await session.call_tool("whoami", {})).content[0].text for _ in range(6)]  # type: ignore[union-attr]
        listed = await session.list_tools()
    assert len(set(answered)) == 3
    assert {tool.name for tool in listed.tools} >= {"whoami", "bump"}
    assert {port for method, _, port in transport.sent if method == "POST"} == set(ports)


async def test_an_update_triggered_on_process_3_reaches_subscribers_on_other_processes(three: list[ServerURL]) -> None:
    p1, p2, p3 = three
    updates: list[str] = []
    got_update = anyio.Event()
    listen_events: list[dict[str, Any]] = []
    listen_update = anyio.Event()
    listening = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            got_update.set()

    async def listen_on_process_2() -> None:
        body = {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
                "params": {"_meta": META, "notifications": {"resourceSubscriptions": ["demo://counter"]}}}
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"}
        async with httpx.AsyncClient(timeout=30) as client, \
                client.stream("POST", f"{p2}/mcp", headers=headers, json=body) as response:
            assert response.status_code == 200
            async for _, message in sse_lines(response):
                listen_events.append(message)
                if message.get("method") == "notifications/subscriptions/acknowledged":
                    listening.set()
                if message.get("method") == "notifications/resources/updated":
                    listen_update.set()
                    return

    transport = RoundRobin([port_of(p1), port_of(p2)], transport=httpx2.AsyncHTTPTransport())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(listen_on_process_2)
            async with httpx2.AsyncClient(transport=transport, timeout=30) as http, \
                    streamable_http_client(f"{p1}/mcp", http_client=http) as (read, write), \
                    ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                await session.subscribe_resource("demo://counter")  # type: ignore[arg-type]
                await listening.wait()
                await anyio.sleep(0.5)  # the SDK's GET stream is open by now (on whichever process it landed)
                with httpx.Client(timeout=20) as raw:
                    other = Session(raw)
                    other.open(p3)
                    other.notify(p3, "notifications/initialized")
                    assert other.tool(p3, "bump").startswith("bumped demo://counter")
                await got_update.wait()
                await listen_update.wait()
    assert updates == ["demo://counter"]  # once, not once per process
    assert [m["params"]["uri"] for m in listen_events if m.get("method") == "notifications/resources/updated"] == \
        ["demo://counter"]


async def test_a_stream_dropped_on_process_2_resumes_on_process_1_with_nothing_lost_or_repeated(
        three: list[ServerURL]) -> None:
    p1, p2, _ = three
    with httpx.Client(timeout=20) as raw:
        session = Session(raw)
        session.open(p1)
        session.notify(p1, "notifications/initialized")
        headers = session.headers()
    body = {"jsonrpc": "2.0", "id": 42, "method": "tools/call",
            "params": {"name": "chatty", "arguments": {"steps": 4, "drop_after": 1}, "_meta": {"progressToken": "p"}}}
    first: list[tuple[str | None, dict[str, Any]]] = []
    last_seen: str | None = None
    async with httpx.AsyncClient(timeout=30) as client:
        async with client.stream("POST", f"{p2}/mcp", headers=headers, json=body) as response:
            assert response.status_code == 200
            async for event_id, message in sse_lines(response):
                first.append((event_id, message))
                last_seen = event_id
        assert [m["params"]["progress"] for _, m in first] == [1]  # the server ended the response after step 1
        assert last_seen is not None
        rest: list[dict[str, Any]] = []
        async with client.stream("GET", f"{p1}/mcp", headers={**headers, "Accept": "text/event-stream",
                                                               "Last-Event-ID": last_seen}) as resumed:
            assert resumed.status_code == 200
            async for _, message in sse_lines(resumed):
                rest.append(message)
    progress = [m["params"]["progress"] for m in rest if m.get("method") == "notifications/progress"]
    assert progress == [2, 3, 4]  # nothing lost, nothing repeated
    final = [m for m in rest if m.get("id") == 42]
    assert len(final) == 1 and final[0]["result"]["content"][0]["text"].startswith("done 4 on ")


async def test_an_elicitation_asked_on_process_1_is_answered_through_process_2(three: list[ServerURL]) -> None:
    p1, p2, _ = three
    with httpx.Client(timeout=20) as raw:
        session = Session(raw, capabilities={"elicitation": {}})
        session.open(p1)
        session.notify(p2, "notifications/initialized")
        headers = session.headers()
        pid1 = session.tool(p1, "whoami")
    body = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}
    result: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=30) as client:
        with anyio.fail_after(30):
            async with client.stream("POST", f"{p1}/mcp", headers=headers, json=body) as response:
                async for _, message in sse_lines(response):
                    if message.get("method") == "elicitation/create":
                        answered = await client.post(f"{p2}/mcp", headers=headers, json={
                            "jsonrpc": "2.0", "id": message["id"],
                            "result": {"action": "accept", "content": {"name": "Ada"}}})
                        assert answered.status_code == 202
                    elif message.get("id") == 9:
                        result = message
                        break
    assert result["result"]["content"][0]["text"] == f"hello Ada from {pid1}"


def test_a_2026_input_round_started_on_one_process_completes_on_another(three: list[ServerURL]) -> None:
    p1, p2, _ = three
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": MODERN}
    first = answer_of(httpx.post(f"{p1}/mcp", headers={**headers, "Mcp-Method": "tools/call", "Mcp-Name": "ask"},
                                 json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                       "params": {"name": "ask", "arguments": {}, "_meta": META}}, timeout=20))
    assert first["result"]["resultType"] == "input_required", first
    second = answer_of(httpx.post(f"{p2}/mcp", headers={**headers, "Mcp-Method": "tools/call", "Mcp-Name": "ask"},
                                  json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                        "params": {"name": "ask", "arguments": {}, "_meta": META,
                                                   "requestState": first["result"]["requestState"],
                                                   "inputResponses": {"name": {"action": "accept",
                                                                               "content": {"name": "Bo"}}}}},
                                  timeout=20))
    assert second["result"]["content"][0]["text"].startswith("hello Bo from "), second
    assert not second["result"]["content"][0]["text"].endswith(first.get("pid", "-"))


async def test_a_legacy_sse_client_held_by_process_1_posts_to_2_and_3_and_gets_every_answer(
        three: list[ServerURL]) -> None:
    p1, p2, p3 = three
    transport = RoundRobin([port_of(p2), port_of(p3)], pin={"/sse": port_of(p1)}, transport=httpx2.AsyncHTTPTransport())

    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=transport, headers=headers, timeout=timeout, auth=auth)

    with anyio.fail_after(60):
        async with sse_client(f"{p1}/sse", httpx_client_factory=factory) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            answered = [(await session.call_tool("whoami", {})).content[0].text for _ in range(4)]  # type: ignore[union-attr]
            listed = await session.list_tools()
    assert len(set(answered)) == 1  # every call ran on process 1, which holds the stream ...
    assert {tool.name for tool in listed.tools} >= {"whoami"}
    posted = {port for method, path, port in transport.sent if method == "POST"}
    assert posted == {port_of(p2), port_of(p3)}  # ... though every POST landed on process 2 or 3


def test_a_legacy_post_for_an_unknown_session_is_404_on_any_process(three: list[ServerURL]) -> None:
    response = httpx.post(f"{three[1]}/messages/?session_id=nope", json={"jsonrpc": "2.0", "method": "ping", "id": 1})
    assert response.status_code == 404


def test_a_watcher_runs_once_per_deployment_while_subscribers_on_every_process_hear_it(
        three: list[ServerURL]) -> None:
    with httpx.Client(timeout=20) as client:
        for base in three:  # a subscriber through each process: each process's hub wants the watcher
            session = Session(client)
            session.open(base)
            session.notify(base, "notifications/initialized")
            assert session.call(base, "resources/subscribe", {"uri": "demo://watched"})["result"] == {}
        with client.stream("GET", f"{three[2]}/mcp", headers={**session.headers(), "Accept": "text/event-stream"},
                           timeout=20) as stream:  # the last session hears the updates, wherever the watcher runs
            for line in stream.iter_lines():
                if "notifications/resources/updated" in line and "demo://watched" in line:
                    break
    running = [base for base in three if "watcher for demo://watched running" in base.log.text]
    assert len(running) == 1, [base.log.text[-500:] for base in three]


def test_a_task_started_on_process_1_is_polled_on_2_and_fetched_on_3(three: list[ServerURL], tmp_path: Any) -> None:
    p1, p2, p3 = three
    gate = tmp_path / "release"
    with httpx.Client(timeout=20) as client:
        session = Session(client)
        session.open(p1)
        session.notify(p2, "notifications/initialized")
        created = session.call(p1, "tools/call", {"name": "slow_report", "arguments": {"gate": str(gate)},
                                                  "task": {"ttl": 60_000}})
        task_id = created["result"]["task"]["taskId"]
        first = session.call(p2, "tasks/get", {"taskId": task_id})["result"]
        assert first["taskId"] == task_id and first["status"] == "working"  # process 2 sees process 1's task
        assert [t["taskId"] for t in session.call(p3, "tasks/list")["result"]["tasks"]] == [task_id]
        gate.write_text("go")
        result = session.call(p3, "tasks/result", {"taskId": task_id})["result"]  # waits for the outcome, on 3
        ran_on = result["content"][0]["text"].removeprefix("report from ")
        assert ran_on == session.tool(p1, "whoami")  # the work ran where it started
        assert session.call(p2, "tasks/get", {"taskId": task_id})["result"]["status"] == "completed"
