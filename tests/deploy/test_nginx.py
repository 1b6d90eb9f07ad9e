"""The shipped nginx configuration (deploy/nginx/mcp-kit.conf), run by Debian's nginx on loopback in front of
one server with `--workers 3` on a real Redis, driven by the official SDK client through the proxy.

What it proves: a tool call goes through and the server sees the client's address (X-Forwarded-For, trusted
from the proxy) and the public name (Host, accepted with --allowed-host); an SSE response streams (a log
line and progress reach the client while the call still waits for the test: with buffering on, they
would arrive only with the result, and the call would never end); legacy HTTP+SSE works through it;
a stream whose worker is killed resumes with Last-Event-ID on another worker, nothing lost or repeated;
and the header and body limits uvicorn lacks are nginx's.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession, types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.nginx_support import Nginx, nginx_proxy, require_nginx
from tests.helpers.redis_support import RedisProcess
from tests.helpers.support import ROOT, ServerURL, http_server

pytestmark = pytest.mark.anyio

SERVER = str(ROOT / "tests" / "fixtures" / "deploy_server.py")
PUBLIC = "mcp.example.test"  # the name clients use; the proxy forwards it in Host
CLIENT_ADDRESS = "127.0.0.2"  # the client connects from here, so that it differs from the proxy's 127.0.0.1


@pytest.fixture(scope="module")
def workers(redis: RedisProcess) -> Iterator[ServerURL]:
    require_nginx()
    with http_server([SERVER, "--workers", "3", "--allowed-host", PUBLIC], env={"MCP_BACKEND": redis.url}) as base:
        yield base


@pytest.fixture(scope="module")
def proxy(workers: ServerURL) -> Iterator[Nginx]:
    with nginx_proxy(workers.removeprefix("http://")) as nginx:
        yield nginx


def worker_pids(supervisor: int) -> set[int]:
    children = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
    return {int(pid) for pid in children}


def established(port: int, pids: set[int]) -> dict[int, int]:
    """Socket inode -> PID, for each established TCP connection on local `port` that one of `pids` holds."""
    inodes: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(int(fields[9]))
    owners: dict[int, int] = {}
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:[") and int(target[8:-1]) in inodes:
                    owners[int(target[8:-1])] = pid
        except OSError:
            continue  # a worker that just exited
    return owners


def client(**options: Any) -> httpx2.AsyncClient:
    """An SDK HTTP client that connects from CLIENT_ADDRESS and names the public host."""
    transport = httpx2.AsyncHTTPTransport(local_address=CLIENT_ADDRESS)
    return httpx2.AsyncClient(transport=transport, headers={"Host": PUBLIC, **options.pop("headers", {})},
                              timeout=options.pop("timeout", 30), **options)


async def test_a_tool_call_through_nginx_reaches_a_worker_that_sees_the_client_and_the_public_name(
        workers: ServerURL, proxy: Nginx) -> None:
    with anyio.fail_after(60):
        async with client() as http, streamable_http_client(f"{proxy.base}/mcp", http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            added = await session.call_tool("add", {"a": 2, "b": 3})
            seen = [(await session.call_tool("whoami", {})).content[0].text for _ in range(6)]  # type: ignore[union-attr]
    assert added.content[0].text == "5"  # type: ignore[union-attr]
    pids = {int(text.split()[0]) for text in seen}
    assert pids <= worker_pids(workers.process.pid)  # answered by the workers behind the one upstream port
    assert {text.split()[1] for text in seen} == {CLIENT_ADDRESS}  # not the proxy's 127.0.0.1


def test_the_server_refuses_a_host_it_was_not_given_even_through_the_proxy(proxy: Nginx) -> None:
    response = httpx.post(f"{proxy.base}/mcp", headers={"Host": "evil.example", "Content-Type": "application/json",
                                                        "Accept": "application/json, text/event-stream"},
                          json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 403 and "Host header not allowed" in response.text


async def test_a_log_line_and_progress_reach_the_client_before_the_result(proxy: Nginx, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    order: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        order.append(f"log {params.data}".split(" on ")[0])

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        order.append(f"progress {progress:g}/{total:g}")
        gate.touch()  # only a notification that arrived while the call runs lets it finish

    with anyio.fail_after(60):
        async with client() as http, streamable_http_client(f"{proxy.base}/mcp", http_client=http) as (read, write), \
                ClientSession(read, write, logging_callback=on_log) as session:
            await session.initialize()
            await session.set_logging_level("info")
            result = await session.call_tool("stream", {"gate": str(gate)}, progress_callback=on_progress)
            order.append(f"result {result.content[0].text}")  # type: ignore[union-attr]
    assert order == ["log started", "progress 1/2", "progress 2/2", "result streamed"]


async def test_a_legacy_sse_client_works_through_nginx(proxy: Nginx) -> None:
    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
        return client(headers=headers or {}, timeout=timeout, auth=auth)

    with anyio.fail_after(60):
        async with sse_client(f"{proxy.base}/sse", httpx_client_factory=factory) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            added = await session.call_tool("add", {"a": 20, "b": 22})
            listed = await session.list_tools()
    assert added.content[0].text == "42"  # type: ignore[union-attr]
    assert {"add", "whoami", "stream", "relay"} <= {tool.name for tool in listed.tools}


async def test_a_stream_resumes_with_last_event_id_after_the_worker_serving_it_is_killed(
        workers: ServerURL, proxy: Nginx, tmp_path: Path) -> None:
    """`relay` ends its POST response after progress 1; the SDK resumes with GET + Last-Event-ID, on a worker
    the kernel picks. When that is another worker than the one running the call, it is killed (SIGKILL):
    the client resumes again, from the last event it got, on a worker still alive, and the progress and
    the answer written while it was cut off are replayed from Redis. When the resumption lands on the
    worker running the call, killing it would kill the call too: the call is let finish and tried again."""
    upstream = int(workers.rsplit(":", 1)[1])
    supervisor = workers.process.pid
    killed: int | None = None
    with anyio.fail_after(90):
        async with client() as http, streamable_http_client(f"{proxy.base}/mcp", http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            for attempt in range(8):
                gate = tmp_path / f"gate-{attempt}"
                progress: list[tuple[float, str | None]] = []
                started = anyio.Event()
                answers: list[str] = []

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    progress.append((value, message))  # noqa: B023  # this attempt's list, while it runs
                    started.set()  # noqa: B023

                async def call() -> None:
                    result = await session.call_tool("relay", {"gate": str(gate)},  # noqa: B023
                                                     progress_callback=on_progress)
                    answers.append(result.content[0].text)  # type: ignore[union-attr]  # noqa: B023

                async with anyio.create_task_group() as tg:
                    before = set(established(upstream, worker_pids(supervisor)))
                    tg.start_soon(call)
                    await started.wait()
                    runner = int(progress[0][1] or 0)
                    during = set(established(upstream, worker_pids(supervisor)))
                    resumed_on = None
                    with anyio.move_on_after(10):  # the SDK waits the server's `retry` (1 s), then resumes
                        while resumed_on is None:
                            fresh = {inode: pid for inode, pid in established(upstream, worker_pids(supervisor)).items()
                                     if inode not in before | during}
                            resumed_on = next(iter(fresh.values()), None)
                            await anyio.sleep(0.05)
                    if resumed_on is not None and resumed_on != runner:
                        os.kill(resumed_on, signal.SIGKILL)  # a worker our server forked: its supervisor restarts it
                        killed = resumed_on
                    gate.touch()
                if killed is not None:
                    break
                assert answers == [f"relayed by {runner}"]
            assert killed is not None, "every resumption landed on the worker running the call"
            assert answers == [f"relayed by {runner}"]
            assert progress == [(1, str(runner)), (2, "after the gate")]  # nothing lost, nothing twice
            assert (await session.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"  # type: ignore[union-attr]
    resumptions = [line for line in proxy.access_log() if line.startswith("GET /mcp ") and '"-"' not in line]
    assert len(resumptions) >= 2, proxy.access_log()  # the first resumption, and the one after the kill
    assert killed not in worker_pids(supervisor)


def test_header_and_body_limits_are_the_proxys(proxy: Nginx) -> None:
    huge_header = httpx.post(f"{proxy.base}/mcp", headers={"X-Padding": "x" * 20000}, content=b"{}")
    assert huge_header.status_code == 400 and "nginx" in huge_header.text
    huge_body = httpx.post(f"{proxy.base}/mcp", headers={"Content-Type": "application/json"},
                           content=b" " * (17 << 20))
    assert huge_body.status_code == 413 and "nginx" in huge_body.text
    assert httpx.get(f"{proxy.base}/metrics").status_code == 403
    assert httpx.get(f"{proxy.base}/readyz").status_code == 200
