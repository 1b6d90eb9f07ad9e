"""`RateLimit`: how rates are written, token buckets per caller and per tool or method, the refusals (an
isError result a model can act on for tools, -31003 with retryAfter otherwise), and the command line."""

from __future__ import annotations

import argparse

import pytest

from mcp_kit import MCPError, MCPServer
from mcp_kit._backends import MemoryBackend
from mcp_kit._serving.serve import add_run_arguments, apply_limit_arguments
from mcp_kit.middleware import Rate, RateLimit, RateLimited, parse_rate
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_rates_are_count_per_window_with_an_optional_burst() -> None:
    assert parse_rate("10/s") == Rate(10, 1, 10)
    assert parse_rate("5/m") == Rate(5, 60, 5)
    assert parse_rate("100/15m") == Rate(100, 900, 100)
    assert parse_rate("10/s:20") == Rate(10, 1, 20) and str(parse_rate("10/s:20")) == "10/s:20"
    assert parse_rate("10/s", burst=3) == Rate(10, 1, 3)
    assert str(parse_rate("100/15m")) == "100/15m" and parse_rate("5/m").per_second == pytest.approx(5 / 60)
    for bad in ("10", "ten/s", "10/w", "10/s:", "-1/s"):
        with pytest.raises(ValueError, match="invalid rate"):
            parse_rate(bad)


def limited_app(clock: Clock, **options: object) -> MCPServer:
    backend = MemoryBackend()
    backend.clock = clock
    app = MCPServer("limited", middleware=[RateLimit(backend=backend, **options)])  # type: ignore[arg-type]

    @app.tool
    def search() -> str:
        return "found"

    @app.tool
    def other() -> str:
        return "other"

    @app.prompt
    def hello() -> str:
        return "hi"

    return app


async def test_a_tool_over_its_limit_answers_is_error_saying_when_to_try_again() -> None:
    clock = Clock()
    app = limited_app(clock, limits={"search": "2/m"})
    async with connect(app) as client:
        assert [(await client.call_tool("search"))["isError"] for _ in range(2)] == [False, False]
        refused = await client.call_tool("search")
        assert refused["isError"] is True
        assert refused["content"][0]["text"] == ("Rate limit reached: tool 'search' allows 2/m per caller. "
                                                 "Try again in 30 s; nothing was run.")
        assert refused["_meta"]["io.github.mcp-kit/retryAfter"] == pytest.approx(30)
        assert (await client.call_tool("other"))["isError"] is False  # no default limit: other tools run
        clock.now += 30  # one token back
        assert (await client.call_tool("search"))["isError"] is False
        assert (await client.call_tool("search"))["isError"] is True


async def test_another_method_over_its_limit_is_31003_with_retry_after() -> None:
    app = limited_app(Clock(), limits={"prompts/list": "1/s"})
    async with connect(app) as client:
        await client.list_prompts()
        with pytest.raises(MCPError) as refused:
            await client.list_prompts()
        assert refused.value.code == -31003
        assert refused.value.data == {"retryAfter": pytest.approx(1.0), "limit": "1/s"}
        assert "prompts/list allows 1/s per caller" in refused.value.message
        assert await client.list_tools()  # not limited


async def test_the_default_limit_counts_every_request_of_a_caller_and_callers_apart() -> None:
    app = limited_app(Clock(), default="3/m:2")
    async with connect(app) as first, connect(app) as second:
        assert [(await first.call_tool(name))["isError"] for name in ("search", "other", "search")] == [
            False, False, True]  # a burst of 2: the third request of the caller waits
        with pytest.raises(MCPError, match="prompts/list allows 3/m:2 per caller") as refused:
            await first.list_prompts()
        assert refused.value.code == RateLimited(".", retry_after=1, limit="1/s").code
        assert (await second.call_tool("search"))["isError"] is False  # another session: another caller


def parse(*argv: str) -> argparse.Namespace:
    return add_run_arguments(argparse.ArgumentParser()).parse_args(list(argv))


def test_the_command_line_installs_rate_limits() -> None:
    app = MCPServer("cli")
    apply_limit_arguments(app, parse("--rate-limit", "10/s", "--rate-limit", "search=5/m,tools/list=1/s",
                                     "--rate-limit-burst", "20"))
    limit = app.builtin_middleware["rate_limit"]
    assert isinstance(limit, RateLimit)
    assert limit.default == Rate(10, 1, 20)
    assert limit.limits == {"search": Rate(5, 60, 20), "tools/list": Rate(1, 1, 20)}
    assert limit.rule_for("tools/call", {"name": "search"}) == ("tool:search", Rate(5, 60, 20))
    assert limit.rule_for("tools/call", {"name": "other"}) == ("*", Rate(10, 1, 20))
    assert limit.rule_for("initialize", {}) is None
    with pytest.raises(ValueError, match="--rate-limit: invalid rate 'often'"):
        apply_limit_arguments(MCPServer("bad"), parse("--rate-limit", "search=often"))
