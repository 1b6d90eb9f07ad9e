"""The OAuth facade across three processes on one Redis, each step of a flow landing on another process.

Three server processes (started with the --oauth-upstream options, as a deployment would run them)
share one real redis-server and sign users in at oidc-provider (no dynamic registration). The test's
browser and client send every request to the next process in turn: registration on A, the
authorization request on B, the consent form on C, the callback on A, the token request on B, tool
calls on C and A, the refresh on B, a reused refresh token on C. Everything a step leaves for the
next (clients, pending authorizations, state, codes, grants, refresh tokens, the signing key, the
cookie key) lives in Redis, so each process takes over where the last one stopped.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.auth.test_facade import INITIALIZE, MCP_HEADERS, UPSTREAM_SECRET, pkce, result_of, upstream  # noqa: F401
from tests.helpers.authorization_server import AuthorizationServer
from tests.helpers.facade_browser import Browser
from tests.helpers.redis_support import redis_server, require_redis
from tests.helpers.support import ServerURL, http_server, listening_socket

pytestmark = pytest.mark.anyio
REDIRECT_URI = "http://127.0.0.1:33420/callback"


@contextlib.contextmanager
def three_processes(upstream: AuthorizationServer, tmp: Path) -> Iterator[list[ServerURL]]:  # noqa: F811
    require_redis()
    secret_file = tmp / "upstream-secret"
    secret_file.write_text(UPSTREAM_SECRET + "\n")
    with redis_server() as redis, contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(listening_socket()) for _ in range(3)]
        public = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"  # one public URL, as behind a load balancer
        options = ["tests/helpers/facade_server.py", "--oauth-upstream", "oidc", "--oauth-discovery-url",
                   upstream.issuer, "--oauth-client-id", "mcp-facade", "--oauth-client-secret-file", str(secret_file),
                   "--oauth-resource", f"{public}/mcp", "--oauth-scopes", "notes:read", "--backend", redis.url]
        env = {"USERINFO_URL": f"{upstream.issuer}/me"}
        yield [stack.enter_context(http_server(options, env=env, listen_on=sock)) for sock in sockets]


class Rotating:
    """Sends each request to the next process: the public URL's origin is replaced, in turn, by A, B, C."""

    def __init__(self, servers: list[ServerURL]) -> None:
        self.public = str(servers[0])
        self.servers = [str(s) for s in servers]
        self._next = itertools.cycle(self.servers)
        self.visited: list[str] = []

    async def __call__(self, request: httpx.Request) -> None:
        url = str(request.url)
        if url.startswith(self.public):
            target = next(self._next)
            self.visited.append(target)
            request.url = httpx.URL(target + url[len(self.public):])
            request.headers["host"] = urlsplit(target).netloc


async def test_a_whole_flow_whose_every_step_lands_on_another_process(
        upstream: AuthorizationServer, tmp_path: Path) -> None:  # noqa: F811
    with three_processes(upstream, tmp_path) as servers:
        rotate = Rotating(servers)
        public = rotate.public
        hooks = {"request": [rotate]}

        def http() -> httpx.AsyncClient:
            return httpx.AsyncClient(timeout=30, event_hooks=hooks)  # type: ignore[dict-item]

        async with http() as client:
            registered = await client.post(f"{public}/register", json={
                "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none", "client_name": "spread"})
            assert registered.status_code == 201, registered.text
            client_id = registered.json()["client_id"]
        browser = Browser(redirect_uri=REDIRECT_URI, user="spread-user", upstream=f"{upstream.issuer}/auth")
        verifier, challenge = pkce()
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI, "state": "s",
                 "code_challenge": challenge, "code_challenge_method": "S256", "scope": "notes:read notes:write",
                 "resource": f"{public}/mcp"}
        original = httpx.AsyncClient.__init__

        def with_hooks(self: httpx.AsyncClient, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **{**kwargs, "event_hooks": hooks})

        with pytest.MonkeyPatch.context() as patch:  # the browser's own client goes through the rotation too
            patch.setattr(httpx.AsyncClient, "__init__", with_hooks)
            landed = await browser.authorize(str(httpx.URL(f"{public}/authorize", params=query)))
        code = parse_qs(urlsplit(landed).query)["code"][0]
        async with http() as client:
            answer = await client.post(f"{public}/token", data={
                "grant_type": "authorization_code", "code": code, "code_verifier": verifier,
                "redirect_uri": REDIRECT_URI, "client_id": client_id})
            assert answer.status_code == 200, answer.text
            tokens = answer.json()
            calls = []
            for name in ("whoami", "write_note", "upstream_user"):
                calls.append(await tool(client, public, tokens["access_token"], name))
                await client.get(f"{public}/.well-known/oauth-authorization-server")  # the next call, the next process
            refreshed = await client.post(f"{public}/token", data={
                "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id})
            assert refreshed.status_code == 200, refreshed.text
            reused = await client.post(f"{public}/token", data={
                "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id})
            assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
            revoked = await client.post(f"{public}/mcp", json=INITIALIZE, headers={
                **MCP_HEADERS, "Authorization": f"Bearer {refreshed.json()['access_token']}"})
            assert revoked.status_code == 401  # the reuse, seen on one process, revoked the grant on all
        assert calls[0]["subject"] == "spread-user" and calls[0]["scopes"] == ["notes:read", "notes:write"]
        assert calls[1]["wrote"] == "n" and calls[2]["sub"] == "spread-user"
        assert len({call["pid"] for call in calls}) == 3
        assert set(rotate.visited) == set(rotate.servers)
        logs = "\n".join(server.log.text for server in servers)
        steps = {json.loads(m)["event"] for m in re.findall(r"mcp_kit\.auth\.facade: (\{.*\})", logs)}
        assert {"oauth.register", "oauth.authorize", "oauth.consent", "oauth.callback", "oauth.code_issued",
                "oauth.token", "oauth.refresh", "oauth.grant_revoked"} <= steps
        for secret in (UPSTREAM_SECRET, code, tokens["access_token"], tokens["refresh_token"]):
            assert secret not in logs


async def tool(client: httpx.AsyncClient, public: str, token: str, name: str) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {token}"}
    opened = await client.post(f"{public}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **auth})
    assert opened.status_code == 200, opened.text
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
    await client.post(f"{public}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                      headers={**MCP_HEADERS, **auth, **session})
    arguments = {"name": "n"} if name == "write_note" else {}
    answer = await client.post(f"{public}/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                      "params": {"name": name, "arguments": arguments}},
                               headers={**MCP_HEADERS, **auth, **session})
    result = result_of(answer)["result"]
    assert not result.get("isError"), result
    return dict(json.loads(result["content"][0]["text"]))
