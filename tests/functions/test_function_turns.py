"""Model turns from recorded responses (OpenAI Chat Completions and Responses, Anthropic, Gemini) run against
the real stock, weather and filesystem servers as subprocesses: every call of a turn concurrently, results
in the vendor's shape with the right ids and in call order, every failure returned as data."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

# The vendors' packages (openai, anthropic, google-genai) are imported by the tests that use them: importing
# them takes seconds, and every pytest process imports every test file.
from mcp_kit import MCPError, MCPServer
from mcp_kit.functions import ConfirmationRequest, ToolBridge
from mcp_kit.testing import connect as connect_in_memory
from tests.helpers.reference_servers import ROOT, STOCK, servers
from tests.helpers.vendor_types import check_typed

FIXTURES = ROOT / "tests" / "fixtures" / "functions"


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def with_notes(directory: Path) -> Path:
    (directory / "notes.txt").write_text("first line\nsecond line\n", encoding="utf-8")
    return directory


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    return with_notes(tmp_path)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that the bridge below is too."""
    return "asyncio"


@pytest.fixture(scope="module")
async def bridge(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ToolBridge]:
    """One bridge to the three servers for the recorded turns, which only read (the tests that write, or stop a
    server, connect bridges of their own)."""
    sandbox = with_notes(tmp_path_factory.mktemp("turns"))
    with anyio.fail_after(90):
        async with ToolBridge.connect(servers(sandbox), cwd=str(ROOT)) as connected:
            yield connected


def test_the_recorded_responses_are_valid_vendor_responses() -> None:
    from anthropic.types import Message
    from google.genai import types as genai
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response
    response_types = {"openai_chat": ChatCompletion, "openai_responses": Response, "anthropic": Message,
                      "gemini": genai.GenerateContentResponse}
    files = sorted(FIXTURES.glob("*.json"))
    assert len(files) >= 10
    for path in files:
        kind = next(k for k in response_types if path.name.startswith(k))
        response_types[kind].model_validate(recorded(path.name))


@pytest.mark.anyio
async def test_openai_chat_turn_with_parallel_calls_on_three_servers(bridge: ToolBridge) -> None:
    from openai.types.chat import ChatCompletionToolMessageParam
    response = recorded("openai_chat_parallel_calls.json")
    turn = await bridge.run_turn("openai", response)
    ids = [call["id"] for call in response["choices"][0]["message"]["tool_calls"]]
    assert [message["tool_call_id"] for message in turn.messages] == ids
    for message in turn.messages:
        check_typed(ChatCompletionToolMessageParam, message)
    apple, microsoft, forecast, notes = turn.outcomes
    assert not any(outcome.is_error for outcome in turn.outcomes), [o.text for o in turn.outcomes]
    assert (apple.server, json.loads(apple.text)["name"]) == ("stock", "Apple Inc.")
    assert json.loads(microsoft.text)["ticker"] == "MSFT"
    assert forecast.server == "weather" and forecast.arguments == {"city": "Paris", "days": 3}  # strict nulls dropped
    assert len(forecast.structured["daily"]) == 3
    assert notes.arguments == {"path": "notes.txt", "head": 1} and notes.text == "first line"
    assert turn.messages[3] == {"role": "tool", "tool_call_id": ids[3], "content": "first line"}


@pytest.mark.anyio
async def test_openai_chat_turn_with_bad_arguments_answers_each_call_with_an_error(bridge: ToolBridge) -> None:
    response = recorded("openai_chat_bad_arguments.json")
    turn = await bridge.run_turn("openai", response)
    kinds = [outcome.error_kind for outcome in turn.outcomes]
    assert kinds == ["bad_arguments", "bad_arguments", "bad_arguments", "unknown_tool", "tool_error"]
    truncated, wrong_type, outside_enum, unknown, unknown_ticker = turn.outcomes
    assert truncated.text.startswith("The arguments are not valid JSON (line 1, column 18")
    assert "- tickers: 'AAPL,MSFT' is not of type 'array'" in wrong_type.text
    assert "- unit: 'kelvin' is not one of ['celsius', 'fahrenheit']" in outside_enum.text
    assert unknown.text.startswith("Unknown tool 'get_stock_quote'. The tools that exist are: get_stock_price,")
    assert "Did you mean AAPL" in unknown_ticker.text and unknown_ticker.result is not None
    for outcome in (truncated, wrong_type, outside_enum, unknown):
        assert outcome.result is None  # refused before any server saw it
    ids = [call["id"] for call in response["choices"][0]["message"]["tool_calls"]]
    assert [message["tool_call_id"] for message in turn.messages] == ids
    assert all(message["content"].startswith("Error: ") or message["content"].startswith("Unknown tool")
               for message in turn.messages)
    assert turn.messages[1]["content"] == "Error: " + wrong_type.text


@pytest.mark.anyio
async def test_openai_responses_turns(bridge: ToolBridge) -> None:
    from openai.types.responses.response_input_item_param import FunctionCallOutput
    turn = await bridge.run_turn("openai-responses", recorded("openai_responses_parallel_calls.json"))
    assert [item["call_id"] for item in turn.messages] == ["call_Lm3pQ7rS1tUv5wXy9zAb2CdE",
                                                           "call_Mn4qR8sT2uVw6xYz0aBc3DeF",
                                                           "call_No5rS9tU3vWx7yZa1bCd4EfG"]
    for item in turn.messages:
        check_typed(FunctionCallOutput, item)
    tokyo, berlin, search = turn.outcomes
    assert not tokyo.is_error and "Tokyo" in tokyo.text
    assert berlin.arguments == {"city": "Berlin"} and "Berlin" in berlin.text
    assert "MSFT" in search.text
    bad = await bridge.run_turn("openai-responses", recorded("openai_responses_bad_arguments.json"))
    too_many_days, not_an_object = bad.outcomes
    assert "- days: 40 is greater than the maximum of 16" in too_many_days.text
    assert not_an_object.text == "The arguments must be a JSON object (named parameters), not array."
    assert bad.messages[1] == {"type": "function_call_output", "call_id": "call_Pq7tU1vW5xYz9aBc3dEf6GhI",
                               "output": "Error: " + not_an_object.text}


@pytest.mark.anyio
async def test_anthropic_turns(bridge: ToolBridge) -> None:
    from anthropic.types import MessageParam
    turn = await bridge.run_turn("anthropic", recorded("anthropic_parallel_calls.json"))
    (message,) = turn.messages
    check_typed(MessageParam, message)
    assert message["role"] == "user"
    assert [block["tool_use_id"] for block in message["content"]] == ["toolu_01A09q90qw90lq917835lq9a",
                                                                       "toolu_01B18r81rx81mr826724mr8b",
                                                                       "toolu_01C27s72sy72ns715613ns7c"]
    assert [block["is_error"] for block in message["content"]] == [False, False, False]
    valuation, weather, listing = turn.outcomes
    assert [row["ticker"] for row in valuation.structured["results"]] == ["AAPL", "MSFT"]
    assert weather.structured["units"]["temperature"] == "°F"
    assert "notes.txt" in listing.text
    bad = await bridge.run_turn("anthropic", recorded("anthropic_bad_arguments.json"))
    blocks = bad.messages[0]["content"]
    assert [block["is_error"] for block in blocks] == [True, True, False]
    statement = blocks[0]["content"][0]["text"]
    assert "- limit: 20 is greater than the maximum of 12" in statement
    assert "- statement_type: 'profit_and_loss' is not one of" in statement
    assert "- arguments: 'city' is a required property" in blocks[1]["content"][0]["text"]
    assert json.loads(blocks[2]["content"][0]["text"])["ticker"] == "MSFT"


@pytest.mark.anyio
async def test_gemini_turns(bridge: ToolBridge) -> None:
    from google.genai import types as genai
    turn = await bridge.run_turn("gemini", recorded("gemini_parallel_calls.json"))
    (content,) = turn.messages
    genai.Content.model_validate(content)
    answers = [part["functionResponse"] for part in content["parts"]]
    assert [answer["name"] for answer in answers] == ["get_stock_price", "get_forecast", "search_location"]
    assert all("id" not in answer for answer in answers)  # the calls had none
    assert answers[0]["response"]["output"]["ticker"] == "NVDA"
    assert len(answers[1]["response"]["output"]["daily"]) == 2
    bad = await bridge.run_turn("gemini", recorded("gemini_bad_arguments.json"))
    answers = [part["functionResponse"] for part in bad.messages[0]["parts"]]
    assert [answer["id"] for answer in answers] == ["fc-7f3a1c2e", "fc-9b4d2e6f", "fc-1c5e3f7a"]
    assert "- period: '2w' is not one of" in answers[0]["response"]["error"]
    assert "- query: '' should be non-empty" in answers[1]["response"]["error"]
    assert "output" in answers[2]["response"]


@pytest.mark.anyio
async def test_destructive_tools_ask_the_confirmation_hook_first(sandbox: Path) -> None:
    asked: list[ConfirmationRequest] = []

    async def confirm(request: ConfirmationRequest) -> bool:
        asked.append(request)
        return request.arguments.get("path") == "allowed.txt"

    def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}

    message = {"role": "assistant", "tool_calls": [
        call("c1", "write_file", {"path": "refused.txt", "content": "no"}),
        call("c2", "write_file", {"path": "allowed.txt", "content": "yes"}),
        call("c3", "create_directory", {"path": "made"}),  # destructiveHint: false
        call("c4", "read_text_file", {"path": "notes.txt"}),  # read-only
    ]}
    with anyio.fail_after(60):
        async with ToolBridge.connect({"filesystem": servers(sandbox)["filesystem"]}, cwd=str(ROOT),
                                      confirm=confirm) as bridge:
            turn = await bridge.run_turn("openai", message)
    refused, allowed, made, read = turn.outcomes
    assert [request.tool for request in asked] == ["write_file", "write_file"]
    assert asked[0].annotations["destructiveHint"] is True and asked[0].call_id in ("c1", "c2")
    assert refused.error_kind == "declined" and "declined to run write_file" in refused.text
    assert not (sandbox / "refused.txt").exists()
    assert not allowed.is_error and (sandbox / "allowed.txt").read_text() == "yes"
    assert not made.is_error and (sandbox / "made").is_dir()
    assert read.text.startswith("first line")


@pytest.mark.anyio
async def test_a_failing_confirmation_hook_declines(sandbox: Path) -> None:
    def broken(request: ConfirmationRequest) -> bool:
        raise RuntimeError("no terminal")

    message = {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "write_file",
                                                      "arguments": '{"path": "x.txt", "content": "x"}'}}]}
    with anyio.fail_after(60):
        async with ToolBridge.connect({"fs": servers(sandbox)["filesystem"]}, cwd=str(ROOT), confirm=broken) as bridge:
            turn = await bridge.run_turn("openai", message)
    assert turn.outcomes[0].error_kind == "declined" and not (sandbox / "x.txt").exists()


@pytest.mark.anyio
async def test_a_server_that_died_is_an_outcome_and_the_other_calls_still_run(sandbox: Path,
                                                                              caplog: pytest.LogCaptureFixture) -> None:
    message = {"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "get_stock_price", "arguments": '{"ticker": "AAPL"}'}},
        {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
    with anyio.fail_after(60):
        async with ToolBridge.connect(
            {"stock": STOCK, "weather": servers(sandbox)["weather"]}, cwd=str(ROOT)
        ) as bridge:
            first = await bridge.run_turn("openai", message)
            assert not any(outcome.is_error for outcome in first.outcomes)
            stock = bridge.sessions["stock"]
            process = stock.transport.process  # type: ignore[attr-defined]
            os.kill(process.pid, signal.SIGKILL)  # our own subprocess, by its PID
            await process.wait()
            second = await bridge.run_turn("openai", message)
    gone, weather = second.outcomes
    assert gone.error_kind == "server_gone" and gone.text.startswith("The server 'stock' cannot be reached any more")
    assert "signal 9" not in gone.text and "signal 9" in caplog.text  # details in the host's log only
    assert not weather.is_error and [m["tool_call_id"] for m in second.messages] == ["a", "b"]


# ---------------------------------------------------------------------------- in memory


def two_step_app() -> MCPServer:
    """`first` finishes only after `second` has run: a turn that ran them one by one would hang."""
    app = MCPServer("steps")
    second_ran = anyio.Event()

    @app.tool(read_only=True)
    async def first() -> str:
        """Wait for second."""
        await second_ran.wait()
        return "first done"

    @app.tool(read_only=True)
    async def second() -> str:
        """Let first finish."""
        second_ran.set()
        return "second done"

    @app.tool(read_only=True)
    async def stuck() -> str:
        """Never answers."""
        await anyio.sleep_forever()
        return "never"

    @app.tool(read_only=True)
    async def refused() -> str:
        """Answers with a JSON-RPC error."""
        raise MCPError(-32001, "quota exceeded")

    return app


@pytest.mark.anyio
async def test_the_calls_of_one_turn_run_concurrently_and_come_back_in_call_order() -> None:
    calls = [{"type": "tool_use", "id": "t1", "name": "first", "input": {}},
             {"type": "tool_use", "id": "t2", "name": "second", "input": {}}]
    with anyio.fail_after(10):
        async with connect_in_memory(two_step_app()) as client:
            bridge = await ToolBridge.from_sessions({"steps": client})
            turn = await bridge.run_turn("anthropic", {"content": calls})
    assert [outcome.text for outcome in turn.outcomes] == ["first done", "second done"]
    assert [block["tool_use_id"] for block in turn.messages[0]["content"]] == ["t1", "t2"]


@pytest.mark.anyio
async def test_timeouts_and_json_rpc_errors_are_outcomes() -> None:
    calls = [{"functionCall": {"name": "stuck", "args": {}}}, {"functionCall": {"name": "refused", "args": {}}},
             {"functionCall": {"name": "second", "args": {}}}]
    with anyio.fail_after(20):
        async with connect_in_memory(two_step_app()) as client:
            bridge = await ToolBridge.from_sessions({"steps": client}, call_timeout=0.5)
            turn = await bridge.run_turn("gemini", {"candidates": [{"content": {"parts": calls}}]})
    stuck, refused, fine = turn.outcomes
    assert stuck.error_kind == "timeout" and stuck.text.startswith("stuck gave no answer within 0.5 s")
    assert refused.error_kind == "protocol_error" and "quota exceeded (JSON-RPC error -32001)" in refused.text
    assert fine.text == "second done"


@pytest.mark.anyio
async def test_same_tool_name_on_two_servers_gets_prefixed_and_routed_to_its_server() -> None:
    def app(name: str) -> MCPServer:
        server = MCPServer(name)

        @server.tool(read_only=True)
        def search(query: str) -> str:
            """Search."""
            return f"{name}: {query}"

        @server.tool(read_only=True, name=f"only_{name}")
        def only() -> str:
            """Unique."""
            return name

        return server

    with anyio.fail_after(10):
        async with connect_in_memory(app("books")) as books, connect_in_memory(app("films")) as films:
            bridge = await ToolBridge.from_sessions({"books": books, "films": films})
            names = [tool["function"]["name"] for tool in bridge.openai_tools()]
            assert names == ["books__search", "only_books", "films__search", "only_films"]
            message = {"tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "films__search", "arguments": '{"query": "x"}'}},
                {"id": "2", "type": "function", "function": {"name": "books__search", "arguments": '{"query": "y"}'}},
                {"id": "3", "type": "function", "function": {"name": "search", "arguments": '{"query": "z"}'}}]}
            turn = await bridge.run_turn("openai", message)
            assert [outcome.text for outcome in turn.outcomes[:2]] == ["films: x", "books: y"]
            assert turn.outcomes[2].error_kind == "unknown_tool" and "books__search" in turn.outcomes[2].text
            always = await ToolBridge.from_sessions({"books": books, "films": films}, prefix="always")
            assert [t["name"] for t in always.anthropic_tools()][:2] == ["books__search", "books__only_books"]


@pytest.mark.anyio
async def test_refresh_picks_up_new_tools() -> None:
    app = MCPServer("grow")

    @app.tool(read_only=True)
    def one() -> str:
        """One."""
        return "1"

    async with connect_in_memory(app) as client:
        bridge = await ToolBridge.from_sessions({"grow": client})
        assert [tool.name for tool in bridge.tools] == ["one"]

        def two() -> str:
            """Two."""
            return "2"

        app.add_tool(two, read_only=True)
        await bridge.refresh()
        assert [tool.name for tool in bridge.tools] == ["one", "two"]
        turn = await bridge.run_turn("openai", {"tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "two", "arguments": ""}}]})
        assert turn.outcomes[0].text == "2"
