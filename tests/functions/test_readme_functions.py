"""The README's "Use mcp_kit servers from the OpenAI, Anthropic or Gemini APIs" example runs as written,
executed like tests/project/test_readme.py executes the others, against a fake OpenAI server replaying recorded
chat completions on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import pytest

from tests.helpers.fake_openai import fake_openai
from tests.helpers.reference_servers import ROOT

README = ROOT / "README.md"
FIXTURES = ROOT / "tests" / "fixtures" / "functions"
BLOCKS = [block for block in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
          if "mcp_kit.functions" in block]


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def test_the_section_has_its_example() -> None:
    assert len(BLOCKS) == 1
    assert "## Use mcp_kit servers from the OpenAI, Anthropic or Gemini APIs" in README.read_text(encoding="utf-8")


@pytest.mark.anyio
async def test_readme_function_calling_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = recorded("openai_chat_stock_agent_turn2.json")
    with fake_openai([recorded("openai_chat_stock_agent_turn1.json"), answer]) as replay:
        monkeypatch.chdir(ROOT)  # the example runs "python -m servers.stock" from the repository, venv active
        monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("OPENAI_BASE_URL", replay.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "readme-key")
        monkeypatch.setenv("OPENAI_MODEL", "gpt-4.1")
        namespace: dict[str, Any] = {"__name__": "readme_functions_example"}
        exec(compile(BLOCKS[0], "README.md[function calling example]", "exec"), namespace)
        result = await namespace["main"]()
    assert result == answer["choices"][0]["message"]["content"]
    first, second = replay.requests
    assert first["parallel_tool_calls"] is True and all(t["function"]["strict"] for t in first["tools"])
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool", "tool", "tool"]
    assert replay.headers[0]["Authorization"] == "Bearer readme-key"
