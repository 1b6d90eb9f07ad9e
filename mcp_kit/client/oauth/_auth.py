"""`OAuth`: an `httpx.Auth` that gives every request to an MCP server a bearer token, obtaining one as needed.

    auth = OAuth("https://mcp.example.com/mcp", OAuthClientConfig(redirect=HeadlessRedirect()))
    async with connect("https://mcp.example.com/mcp", auth=auth) as session: ...

Sends the current token; on a 401, or a 403 with `error="insufficient_scope"`, runs the flow
(`flow.py`) and retries the same request, at most `max_authorizations_per_request` times. Works for
every request the client transports make (POST, the GET stream, DELETE, legacy SSE).
Imports nothing from mcp_kit but `auth.challenge` and `client.oauth.*`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator

import httpx

from ...auth._challenge import parse_bearer_challenge
from ._flow import OAuthClientConfig, OAuthFlow


class OAuth(httpx.Auth):
    """Bearer tokens for one MCP server URL, from its authorization server."""

    requires_request_body = True  # a refused POST is sent again with the new token

    def __init__(self, server_url: str, config: OAuthClientConfig | None = None) -> None:
        self.flow = OAuthFlow(server_url, config)

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await self.flow.token()
        if token is not None:
            request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        for _ in range(self.flow.config.max_authorizations_per_request):
            if not _asks_for_authorization(response):
                break
            token = await self.flow.reauthorize(response.status_code, response.headers.get("www-authenticate"), token)
            request.headers["Authorization"] = f"Bearer {token}"
            response = yield request
        if not _asks_for_authorization(response):
            self.flow.succeeded()

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("mcp_kit's OAuth works with httpx.AsyncClient only")
        yield request  # pragma: no cover

    async def aclose(self) -> None:
        await self.flow.aclose()


def _asks_for_authorization(response: httpx.Response) -> bool:
    if response.status_code == 401:
        return True
    if response.status_code == 403:
        return (parse_bearer_challenge(response.headers.get("www-authenticate")) or {}).get(
            "error"
        ) == "insufficient_scope"
    return False
