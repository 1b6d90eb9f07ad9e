"""Rate limits, the response cache and ctx.state across three server processes sharing one real Redis,
through the official SDK client (round-robin over the three, as behind a load balancer without sticky
sessions) and raw 2026-07-28 HTTP requests.

One Redis and one set of three servers for the whole module (`tests/fixtures/limits_server.py` with
`--rate-limit limited=10/m --rate-limit prompts/list=2/m --cache`). Limits are per minute, so the few
seconds a test takes refill at most one token: the counts below cannot flake on timing.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession

from tests.helpers.redis_support import RedisProcess
from tests.helpers.scaleout_client import HEAD, META, MODERN, RoundRobin, port_of
from tests.helpers.support import ROOT, ServerURL, http_server

pytestmark = pytest.mark.anyio

SERVER = [str(ROOT / "tests" / "fixtures" / "limits_server.py")]
LIMITS = {"MCP_RATE_LIMIT": "limited=10/m,prompts/list=2/m", "MCP_CACHE": "1"}


@pytest.fixture(scope="module")
def three(redis: RedisProcess) -> Iterator[list[ServerURL]]:
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(http_server(SERVER, env={"MCP_BACKEND": redis.url, **LIMITS})) for _ in range(3)]


@contextlib.asynccontextmanager
async def sdk_session(bases: list[ServerURL]) -> AsyncIterator[ClientSession]:
    from mcp.client.streamable_http import streamable_http_client

    transport = RoundRobin([port_of(base) for base in bases], transport=httpx2.AsyncHTTPTransport())
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http, \
            streamable_http_client(f"{bases[0]}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text_of(result: object) -> str:
    return str(result.content[0].text)  # type: ignore[attr-defined]


async def test_a_limit_of_10_per_minute_is_10_across_three_processes(three: list[ServerURL]) -> None:
    async with sdk_session(three) as session:
        results = [await session.call_tool("limited", {}) for _ in range(30)]
    allowed = [text_of(r) for r in results if not r.is_error]
    refused = [text_of(r) for r in results if r.is_error]
    assert 10 <= len(allowed) <= 11  # 10, plus at most the one token a minute's rate refills in these seconds
    assert len(set(allowed)) == 3  # every process served some, and together they counted to the one limit
    assert refused and all(t.startswith("Rate limit reached: tool 'limited' allows 10/m per caller. Try again in ")
                           for t in refused)


async def test_ctx_state_is_the_same_on_every_process(three: list[ServerURL]) -> None:
    async with sdk_session(three) as session:
        answers = [text_of(await session.call_tool("count", {})) for _ in range(6)]
    assert [answer.split(" on ")[0] for answer in answers] == ["1", "2", "3", "4", "5", "6"]
    assert len({answer.split(" on ")[1] for answer in answers}) == 3


async def test_a_read_cached_by_one_process_is_served_by_all_until_it_changes(three: list[ServerURL]) -> None:
    async with sdk_session(three) as session:
        first = [await read_page(session) for _ in range(3)]
        assert first[0].startswith("read ") and first == [first[0]] * 3  # one real read, on one process
        await session.call_tool("bump", {"uri": "demo://page"})
        with anyio.fail_after(10):  # dropped at once (entries live 60 s): a few requests at most
            while (again := await read_page(session)) == first[0]:
                await anyio.sleep(0.05)
        assert again.startswith("read ")


async def read_page(session: ClientSession) -> str:
    result = await session.read_resource("demo://page")  # type: ignore[arg-type]
    return str(result.contents[0].text)  # type: ignore[union-attr]


def test_a_lone_2026_request_over_its_limit_is_429_with_retry_after_on_any_process(three: list[ServerURL]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": META}}
    headers = {**HEAD, "MCP-Protocol-Version": MODERN, "Mcp-Method": "prompts/list"}
    with httpx.Client(timeout=20) as client:
        answers = [client.post(f"{base}/mcp", headers=headers, json=body) for base in three]
    assert [a.status_code for a in answers] == [200, 200, 429]  # 2 per minute per client address, counted once
    refused = answers[2]
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    error = refused.json()["error"]
    assert error["code"] == -31003 and 0 < error["data"]["retryAfter"] <= 60 and error["data"]["limit"] == "2/m"
    assert "prompts/list allows 2/m per caller" in error["message"]
