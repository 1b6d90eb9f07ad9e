"""The OAuth issuer is looked at when the server starts: a wrong or unreachable one is logged then, not at
the first client's request; a good one's metadata is kept for the first request."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from mcp_kit.auth import AuthConfig
from mcp_kit.auth._middleware import OAuthGuard
from mcp_kit.auth._validator import TokenValidator

pytestmark = pytest.mark.anyio
ISSUER = "https://auth.example.com"


async def inner(scope: dict[str, Any], receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        await send({"type": message["type"] + ".complete"})
        if message["type"] == "lifespan.shutdown":
            return


async def start_and_stop(guard: OAuthGuard) -> None:
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        pass

    await guard({"type": "lifespan"}, receive, send)


def guard_with(handler: Any, asked: list[str]) -> OAuthGuard:
    def recording(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        return handler(request)

    config = AuthConfig(issuer=ISSUER, resource="https://mcp.example.com/mcp")
    http = httpx.AsyncClient(transport=httpx.MockTransport(recording))
    return OAuthGuard(inner, TokenValidator(config, http=http))


async def test_an_issuer_without_metadata_is_logged_at_startup(caplog: pytest.LogCaptureFixture) -> None:
    asked: list[str] = []
    with caplog.at_level(logging.ERROR, logger="mcp_kit.auth"):
        await start_and_stop(guard_with(lambda request: httpx.Response(404), asked))
    assert asked  # looked at before any request
    assert f"OAuth: the issuer {ISSUER} cannot be used" in caplog.text
    assert "check --oauth-issuer / MCP_OAUTH_ISSUER" in caplog.text


async def test_a_good_issuer_is_fetched_once_at_startup_and_kept(caplog: pytest.LogCaptureFixture) -> None:
    asked: list[str] = []
    document = {"issuer": ISSUER, "jwks_uri": f"{ISSUER}/jwks", "authorization_endpoint": f"{ISSUER}/authorize",
                "token_endpoint": f"{ISSUER}/token", "response_types_supported": ["code"]}
    guard = guard_with(lambda request: httpx.Response(200, json=document), asked)
    with caplog.at_level(logging.ERROR, logger="mcp_kit.auth"):
        await start_and_stop(guard)
    assert "cannot be used" not in caplog.text
    assert asked == [f"{ISSUER}/.well-known/oauth-authorization-server"]
    assert (await guard.validator.metadata())["jwks_uri"] == f"{ISSUER}/jwks"
    assert len(asked) == 1  # the first request uses what startup fetched
