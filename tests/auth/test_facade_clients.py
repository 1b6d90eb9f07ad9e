"""Independent MCP clients through the OAuth facade: the official Python SDK's `OAuthClientProvider` and
mcp_kit's own client complete registration, consent, the upstream sign-in and the token request
headlessly (`tests.helpers.facade_browser.Browser` plays the person), call a scoped tool, step up
when a tool needs more (403 insufficient_scope leads them through the facade again), and refresh.

Two upstreams: oidc-provider without dynamic registration, and a GitHub-shaped provider (plain
OAuth 2.0, no ID token, the user from `GET /user`) whose API a tool calls with `ctx.upstream_token()`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import jwt
import pytest
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from mcp_kit import Context, MCPServer
from mcp_kit.auth import FacadeConfig, UpstreamProvider
from mcp_kit.client import connect
from mcp_kit.client.oauth import MemoryTokenStore, OAuth, OAuthClientConfig
from tests.auth.test_clients import SDKStorage
from tests.auth.test_facade import (  # noqa: F401  (fixture)
    Facade,
    running_facade,
    server_logs,
    upstream,
)
from tests.helpers.authorization_server import AuthorizationServer
from tests.helpers.facade_browser import Browser
from tests.helpers.github_like import CLIENT_ID, CLIENT_SECRET, GitHubLike
from tests.helpers.uvicorn_thread import bound_socket, serve

pytestmark = pytest.mark.anyio


def claims(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


def sdk_provider(server_url: str, storage: SDKStorage, browser: Browser) -> OAuthClientProvider:
    landed: list[str] = []

    async def redirect_handler(authorization_url: str) -> None:
        landed.append(await browser.authorize(authorization_url))

    async def callback_handler() -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlsplit(landed.pop()).query).items()}
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    metadata = OAuthClientMetadata(client_name="sdk-client", redirect_uris=[browser.redirect_uri],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none")
    return OAuthClientProvider(server_url, metadata, storage, redirect_handler, callback_handler)


# ---------------------------------------------------------------------------------------------- the official SDK


async def test_the_sdk_client_signs_in_through_the_facade_steps_up_and_refreshes(
        upstream: AuthorizationServer) -> None:  # noqa: F811
    with running_facade(upstream) as facade:
        storage = SDKStorage()
        browser = Browser(redirect_uri="http://127.0.0.1:33419/callback", user="sdk-user",
                          upstream=f"{upstream.issuer}/auth")
        async with httpx2.AsyncClient(auth=sdk_provider(facade.mcp, storage, browser), timeout=30) as http, \
                streamable_http_client(facade.mcp, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            me = json.loads((await session.call_tool("whoami", {})).content[0].text)
            assert me["subject"] == "sdk-user" and me["scopes"] == ["notes:read"]
            assert storage.client is not None and me["client_id"] == storage.client.client_id
            written = await session.call_tool("write_note", {"name": "n1"})  # needs notes:write: 403, then step-up
            assert not written.is_error and written.content[0].text == "wrote n1"
            assert storage.tokens is not None
            assert set(claims(storage.tokens.access_token)["scope"].split()) == {"notes:read", "notes:write"}
            first = storage.tokens
            http.auth.context.token_expiry_time = time.time() - 1  # type: ignore[attr-defined]  # expired: refresh
            again = json.loads((await session.call_tool("whoami", {})).content[0].text)
            assert again["subject"] == "sdk-user"
        assert facade.written == ["n1"]
        assert len(browser.pages) == 2  # consent for notes:read, then again for the stepped-up notes:write
        assert storage.tokens.refresh_token and storage.tokens.refresh_token != first.refresh_token
        assert any(r["event"] == "oauth.refresh" for r in facade.audit)


# ---------------------------------------------------------------------------------------------- mcp_kit's client


async def test_mcp_kits_client_signs_in_through_the_facade_steps_up_and_refreshes(
        upstream: AuthorizationServer) -> None:  # noqa: F811
    with running_facade(upstream) as facade:
        store = MemoryTokenStore()
        browser = Browser(user="kit-user", upstream=f"{upstream.issuer}/auth")
        auth = OAuth(facade.mcp, OAuthClientConfig(redirect=browser.redirect(), store=store))
        async with connect(facade.mcp, auth=auth) as session:
            me = json.loads((await session.call_tool("whoami", {}))["content"][0]["text"])
            assert me["subject"] == "kit-user" and me["username"] == "kit-user"
            assert (await session.call_tool("write_note", {"name": "k1"}))["content"][0]["text"] == "wrote k1"
            record = store.tokens(facade.config.resource)
            assert record is not None and set(record["scope"].split()) == {"notes:read", "notes:write"}
            store.save_tokens(facade.config.resource, {**record, "expires_at": time.time() - 1})  # refresh first
            await session.list_tools()
            refreshed = store.tokens(facade.config.resource)
            assert refreshed is not None and refreshed["refresh_token"] != record["refresh_token"]
        await auth.aclose()
        assert auth.flow.authorizations == 2 and facade.written == ["k1"]


# ------------------------------------------------------------------------------------ a GitHub-shaped upstream


@dataclass
class GitHubFacade:
    facade: Facade
    github: GitHubLike
    github_url: str


def github_app(written: list[str], github: GitHubLike, api: str) -> MCPServer:
    app = MCPServer("repos")

    @app.tool(read_only=True)
    async def github_login(ctx: Context) -> dict[str, Any]:
        """Ask the provider's API who the caller is, with the caller's own upstream token."""
        token = await ctx.upstream_token()
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.get(f"{api}/user", headers={"Authorization": token.authorization})
        return {"login": answer.json()["login"], "subject": ctx.principal.subject if ctx.principal else None}

    @app.tool(scopes=["repo:write"])
    def push(branch: str) -> str:
        """Needs repo:write, which maps to GitHub's `repo` scope."""
        written.append(branch)
        return f"pushed {branch}"

    return app


@contextlib.contextmanager
def github_facade(**provider_options: Any) -> Iterator[GitHubFacade]:
    github = GitHubLike(**provider_options)
    github_sock, github_port = bound_socket()
    sock, port = bound_socket()
    github.callback = f"http://127.0.0.1:{port}/oauth/callback"
    github_url = f"http://127.0.0.1:{github_port}"
    audit: list[dict[str, Any]] = []
    provider = UpstreamProvider.github(base_url=github_url, api_url=github_url)
    config = FacadeConfig(resource=f"http://127.0.0.1:{port}/mcp", upstream=provider, client_id=CLIENT_ID,
                          client_secret=CLIENT_SECRET, required_scopes=("repo:read",),
                          scope_map={"repo:write": ("repo",)}, audit=audit.append)
    written: list[str] = []
    with serve(github.app(), github_sock), \
            serve(github_app(written, github, github_url).asgi(host="127.0.0.1", port=port, auth=config), sock) as url:
        yield GitHubFacade(Facade(url, config, None, audit, written), github, github_url)  # type: ignore[arg-type]


async def test_a_github_shaped_upstream_signs_in_by_its_user_api(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with github_facade() as gh:
        facade = gh.facade
        store = MemoryTokenStore()
        browser = Browser(user="octocat", upstream=f"{gh.github_url}/login/oauth/authorize", hint_param="login")
        seen: list[str] = []
        auth = OAuth(facade.mcp, OAuthClientConfig(redirect=browser.redirect(), store=store))
        async with connect(facade.mcp, auth=auth) as session:
            result = json.loads((await session.call_tool("github_login", {}))["content"][0]["text"])
            assert result == {"login": "octocat", "subject": str(gh.github.users["octocat"])}
            assert (await session.call_tool("push", {"branch": "main"}))["content"][0]["text"] == "pushed main"
            record = store.tokens(facade.config.resource)
            assert record is not None
            seen.append(json.dumps(record))
        await auth.aclose()
        assert facade.written == ["main"]
        asked = [request for request in gh.github.token_requests if request.get("grant_type") != "refresh_token"]
        assert len(asked) == 2 and all(r["client_secret"] == CLIENT_SECRET for r in asked)  # only the token endpoint
        assert "scope=read%3Auser+repo" in " ".join(browser.steps)  # repo:write asked GitHub for `repo`
        upstream_tokens = list(gh.github.tokens)
        assert len(upstream_tokens) == 2
        everything = server_logs(caplog) + json.dumps(facade.audit) + "".join(seen) + " ".join(browser.steps)
        for secret in [CLIENT_SECRET, *upstream_tokens]:
            assert secret not in everything


async def test_the_upstream_token_is_refreshed_for_a_tool_when_it_expires() -> None:
    with github_facade(expires_in=1) as gh:  # GitHub's expiring user tokens: one second
        facade = gh.facade
        browser = Browser(user="hubot", upstream=f"{gh.github_url}/login/oauth/authorize", hint_param="login")
        auth = OAuth(facade.mcp, OAuthClientConfig(redirect=browser.redirect()))
        async with connect(facade.mcp, auth=auth) as session:
            first = json.loads((await session.call_tool("github_login", {}))["content"][0]["text"])
            assert first["login"] == "hubot"
        await auth.aclose()
        assert any(r.get("grant_type") == "refresh_token" for r in gh.github.token_requests)  # refreshed (1 s < margin)
        assert any(r["event"] == "oauth.upstream_refresh" for r in facade.audit)


async def test_a_tool_without_a_facade_sign_in_gets_a_clear_error() -> None:
    app = MCPServer("plain")

    @app.tool
    async def needs_upstream(ctx: Context) -> str:
        """Asks for an upstream token on a server without a facade."""
        return (await ctx.upstream_token()).provider

    from mcp_kit.testing import connect as local_connect

    async with local_connect(app) as client:
        result = await client.call_tool("needs_upstream", {})
    assert result["isError"] is True and "not authorized through an identity provider" in json.dumps(result)
