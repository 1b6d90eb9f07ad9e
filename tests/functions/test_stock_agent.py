"""examples/stock_agent.py against recorded chat completions: replayed by a fake OpenAI-compatible server on
127.0.0.1 (the script run as a user would) or by an injected HTTP transport. Never a live model."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.helpers.fake_openai import fake_openai
from tests.helpers.reference_servers import ROOT
from tests.helpers.strict_rules import strict_violations

FIXTURES = ROOT / "tests" / "fixtures" / "functions"
AGENT = ROOT / "examples" / "stock_agent.py"


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def agent_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("stock_agent", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_agent_script_answers_through_a_fake_openai_server() -> None:
    first, answer = recorded("openai_chat_stock_agent_turn1.json"), recorded("openai_chat_stock_agent_turn2.json")
    with fake_openai([first, answer]) as replay:
        env = {**os.environ, "OPENAI_BASE_URL": replay.base_url, "OPENAI_API_KEY": "test-key",
               "OPENAI_MODEL": "gpt-4.1", "STOCK_PROVIDER": "sample"}
        done = subprocess.run([sys.executable, str(AGENT)], capture_output=True, text=True, timeout=120, env=env,
                              cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == answer["choices"][0]["message"]["content"]
    assert (
        done.stderr.count("[tool] ") == 3
        and '[tool] compare_valuation {"tickers": ["AAPL", "MSFT"]} -> ok' in done.stderr
    )
    assert len(replay.requests) == 2
    assert replay.headers[0]["Authorization"] == "Bearer test-key"
    request = replay.requests[0]
    assert request["model"] == "gpt-4.1" and request["tool_choice"] == "auto" and request["parallel_tool_calls"] is True
    assert request["messages"][1] == {"role": "user", "content": "Compare the P/E ratios of Apple and Microsoft"}
    assert {tool["function"]["name"] for tool in request["tools"]} >= {"compare_valuation", "get_stock_price"}
    for tool in request["tools"]:
        assert tool["function"]["strict"] is True and strict_violations(tool["function"]["parameters"]) == []
    followup = replay.requests[1]["messages"]
    calls = first["choices"][0]["message"]["tool_calls"]
    assert followup[2] == {"role": "assistant", "content": None, "tool_calls": calls}
    assert [message["tool_call_id"] for message in followup[3:]] == [call["id"] for call in calls]
    valuation = json.loads(followup[3]["content"])
    assert [(row["ticker"], row["pe_ratio"] > 0) for row in valuation["results"]] == [("AAPL", True), ("MSFT", True)]
    assert json.loads(followup[4]["content"])["name"] == "Apple Inc."


@pytest.mark.anyio
async def test_the_agent_carries_on_after_a_turn_of_bad_calls_with_an_injected_transport() -> None:
    replies = [recorded("openai_chat_bad_arguments.json"), recorded("openai_chat_stock_agent_turn1.json"),
               recorded("openai_chat_stock_agent_turn2.json")]
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url == "http://model.invalid/v1/chat/completions"
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=replies.pop(0))

    agent = agent_module()
    answer = await agent.ask(agent.QUESTION, model="m", base_url="http://model.invalid/v1", provider="sample",
                             strict=False, transport=httpx.MockTransport(handler))
    assert answer.startswith("Apple (AAPL) trades at a trailing P/E of about 32")
    assert len(seen) == 3 and not replies
    assert all("strict" not in tool["function"] for tool in seen[0]["tools"])
    errors = seen[1]["messages"][3:]
    assert [m["tool_call_id"] for m in errors] == [c["id"] for c in seen[1]["messages"][2]["tool_calls"]]
    assert all(m["content"].startswith("Error: ") for m in errors)
    assert errors[2]["content"].startswith(
        "Error: Unknown tool 'get_weather'. The tools that exist are: get_stock_price"
    )
    assert errors[4]["content"].startswith("Error: No ticker 'AAPLE'")


def test_the_agent_needs_a_model() -> None:
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_MODEL"}
    done = subprocess.run([sys.executable, str(AGENT)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and "set OPENAI_MODEL" in done.stderr and done.stdout == ""
