"""An agent that answers "Compare the P/E ratios of Apple and Microsoft" with any OpenAI-compatible endpoint,
using the stock server's tools over stdio (through mcp_kit.functions).

    OPENAI_MODEL=gpt-4.1 OPENAI_API_KEY=sk-... .venv/bin/python examples/stock_agent.py
    OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=qwen3 .venv/bin/python examples/stock_agent.py "Is NVDA
    pricier than AMD?"

Environment:
    OPENAI_BASE_URL   the API's base URL (default https://api.openai.com/v1; Ollama, vLLM, LM Studio ... work too)
    OPENAI_API_KEY    sent as a bearer token when set
    OPENAI_MODEL      the model to ask (required)
    OPENAI_STRICT     1 (default): tools in strict mode; 0: plain JSON Schema, for servers without strict mode
    STOCK_PROVIDER    live (default: Yahoo Finance and SEC EDGAR) or sample (offline data)

The model's tool calls of one turn run concurrently; their results (or errors, as data) go back with their
ids until the model answers in words. Tool calls are logged on stderr; the answer is printed on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx

from mcp_kit.functions import ToolBridge

QUESTION = "Compare the P/E ratios of Apple and Microsoft"
SYSTEM = ("You answer questions about stocks with the tools you are given. Use the numbers the tools return, "
          "say where they come from, and keep the answer short.")
REPO = Path(__file__).resolve().parents[1]
MAX_TURNS = 8


async def ask(question: str, *, model: str, base_url: str = "https://api.openai.com/v1", api_key: str | None = None,
              provider: str = "live", strict: bool = True, transport: httpx.AsyncBaseTransport | None = None) -> str:
    """Run the conversation until the model answers; returns its answer."""
    stock = [sys.executable, "-m", "servers.stock", "--provider", provider]
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with ToolBridge.connect({"stock": stock}, cwd=str(REPO)) as bridge, \
            httpx.AsyncClient(base_url=base_url, headers=headers, timeout=120, transport=transport) as http:
        options = bridge.request_options("openai", strict=strict, tool_choice="auto", parallel_tool_calls=True)
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]
        for _ in range(MAX_TURNS):
            reply = await http.post("/chat/completions", json={"model": model, "messages": messages, **options})
            reply.raise_for_status()
            message = reply.json()["choices"][0]["message"]
            messages.append({key: message[key] for key in ("role", "content", "tool_calls") if key in message})
            turn = await bridge.run_turn("openai", message)
            if not turn.has_calls:
                return str(message.get("content") or "")
            for outcome in turn.outcomes:
                status = f"error ({outcome.error_kind})" if outcome.is_error else "ok"
                print(f"[tool] {outcome.call.name} {json.dumps(outcome.arguments)} -> {status}", file=sys.stderr)
            messages.extend(turn.messages)
    raise RuntimeError(f"the model did not answer within {MAX_TURNS} turns")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    model = os.environ.get("OPENAI_MODEL")
    if not model:
        print("stock_agent: set OPENAI_MODEL (and OPENAI_API_KEY, OPENAI_BASE_URL for your endpoint)", file=sys.stderr)
        return 2
    answer = anyio.run(lambda: ask(" ".join(args) or QUESTION, model=model,
                                   base_url=os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1",
                                   api_key=os.environ.get("OPENAI_API_KEY") or None,
                                   provider=os.environ.get("STOCK_PROVIDER") or "live",
                                   strict=os.environ.get("OPENAI_STRICT", "1") != "0"))
    print(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
