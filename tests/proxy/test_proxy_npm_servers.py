"""`mcp-kit proxy` in front of independent stdio servers (npm server-everything, server-filesystem), driven by the
official SDK client in both modes (legacy: the handshake era; auto: 2026-07-28) over stdio and Streamable HTTP.

server-everything speaks the handshake era only, so the 2026-07-28 legs also prove the era bridge: its
sampling and elicitation requests reach the SDK client as input-required rounds.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.helpers.support import ROOT, http_server
from tests.proxy.npm_servers import everything, filesystem

pytestmark = pytest.mark.anyio
MODERN = "2026-07-28"
MODES = ["legacy", "auto"]
TRANSPORTS = ["stdio", "http"]


def proxy_args(upstream: list[str]) -> list[str]:
    return ["-m", "mcp_kit", "proxy", *upstream]


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    with http_server(proxy_args(everything())) as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("proxied-files").resolve()


@pytest.fixture(scope="module")
def filesystem_url(files: Path) -> Iterator[str]:
    with http_server(proxy_args(filesystem(files))) as base:
        yield f"{base}/mcp"


def stdio_target(upstream: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "mcp_kit", "proxy", "--", *upstream],
                                 cwd=str(ROOT), env={"PYTHONPATH": str(ROOT), "MCP_LOG_LEVEL": "warning"})


class Answers:
    """The SDK client's side of sampling and elicitation; records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append("sampling")
        return types.CreateMessageResult(role="assistant", model="test-model",
                                         content=types.TextContent(type="text", text="a sampled answer"))

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append("elicitation")
        return types.ElicitResult(action="accept", content={"color": "teal"})


@contextlib.asynccontextmanager
async def client_for(target: Any, mode: str, answers: Answers) -> AsyncIterator[Client]:
    with anyio.fail_after(90):
        async with Client(target, mode=mode, sampling_callback=answers.sample,
                          elicitation_callback=answers.elicit) as client:
            assert (client.protocol_version == MODERN) is (mode == "auto")
            yield client


def texts(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
async def test_everything_through_the_proxy(transport: str, mode: str, request: pytest.FixtureRequest) -> None:
    target = stdio_target(everything()) if transport == "stdio" else request.getfixturevalue("everything_url")
    answers = Answers()
    async with client_for(target, mode, answers) as client:
        caps = client.server_capabilities
        assert caps.tools is not None and caps.prompts is not None and caps.resources is not None
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"echo", "get-sum", "trigger-sampling-request", "trigger-elicitation-request"} <= names
        assert texts(await client.call_tool("echo", {"message": "through"})) == "Echo: through"
        assert "5" in texts(await client.call_tool("get-sum", {"a": 2, "b": 3}))

        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        done = await client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                      progress_callback=on_progress)
        assert "completed" in texts(done)
        assert progress == [1, 2, 3]

        sampled = await client.call_tool("trigger-sampling-request", {"prompt": "say something"})
        assert "a sampled answer" in texts(sampled)
        elicited = await client.call_tool("trigger-elicitation-request", {})
        assert "teal" in texts(elicited)
        assert {"sampling", "elicitation"} <= set(answers.asked)

        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        assert {"simple-prompt", "args-prompt"} <= prompts
        got = await client.get_prompt("args-prompt", {"city": "Lyon"})
        assert "Lyon" in got.messages[0].content.text  # type: ignore[union-attr]

        resources = (await client.list_resources()).resources
        assert resources
        read = await client.read_resource(str(resources[0].uri))
        assert read.contents and str(read.contents[0].uri) == str(resources[0].uri)
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert "demo://resource/dynamic/text/{resourceId}" in templates
        dynamic = await client.read_resource("demo://resource/dynamic/text/2")
        assert "Resource 2" in dynamic.contents[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
async def test_filesystem_through_the_proxy(transport: str, mode: str, files: Path,
                                            request: pytest.FixtureRequest) -> None:
    target = stdio_target(filesystem(files)) if transport == "stdio" else request.getfixturevalue("filesystem_url")
    path = files / f"{transport}-{mode}.txt"
    async with client_for(target, mode, Answers()) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"read_text_file", "write_file", "list_directory"} <= names
        wrote = await client.call_tool("write_file", {"path": str(path), "content": "proxied"})
        assert not wrote.is_error, texts(wrote)
        assert path.read_text() == "proxied"
        read = await client.call_tool("read_text_file", {"path": str(path)})
        assert texts(read) == "proxied"
        outside = await client.call_tool("read_text_file", {"path": "/etc/hostname"})
        assert outside.is_error  # the upstream's own refusal reaches the model as a tool error
