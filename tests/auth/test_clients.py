"""OAuth clients against an mcp_kit server (real uvicorn) protected by a real authorization server (oidc-provider).

Two independent clients complete the authorization-code flow headlessly and then list and call
tools: the official Python SDK's `OAuthClientProvider` (with an in-test redirect/callback
handler) and mcp_kit's own client (`mcp_kit.client.oauth`), in the library and as `mcp-kit`.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import httpx2
import jwt
import pytest
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from mcp_kit import MCPServer
from mcp_kit.auth import AuthConfig
from mcp_kit.client import connect
from mcp_kit.client.oauth import (
    FileTokenStore,
    HeadlessRedirect,
    LoopbackRedirect,
    MemoryTokenStore,
    OAuth,
    OAuthClientConfig,
    OAuthError,
)
from tests.helpers.authorization_server import AuthorizationServer
from tests.helpers.uvicorn_thread import bound_socket, serve

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


def build_app() -> MCPServer:
    app = MCPServer("protected")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return app


@dataclass
class Protected:
    url: str
    resource: str

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"


@pytest.fixture
def protected(authorization_server: AuthorizationServer, request: pytest.FixtureRequest) -> Iterator[Protected]:
    marker = request.node.get_closest_marker("auth")
    options: dict[str, Any] = dict(marker.kwargs) if marker else {}
    sock, port = bound_socket()
    resource = options.pop("resource", f"http://127.0.0.1:{port}/mcp")
    config = AuthConfig(issuer=authorization_server.issuer, resource=resource,
                        required_scopes=options.pop("required_scopes", ("mcp:read",)), **options)
    with serve(build_app().asgi(host="127.0.0.1", port=port, auth=config), sock) as url:
        yield Protected(url, resource)


def headless(store: MemoryTokenStore | None = None, **options: Any) -> OAuthClientConfig:
    return OAuthClientConfig(redirect=HeadlessRedirect(), store=store or MemoryTokenStore(), **options)


def claims(token: str) -> dict[str, Any]:
    return jwt.decode(token, options={"verify_signature": False})


# ---------------------------------------------------------------------------------------------- the SDK


class SDKStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def sdk_auth(server_url: str, storage: SDKStorage) -> OAuthClientProvider:
    """The SDK's provider; its redirect handler plays a browser that signs in without a person."""
    redirect_uri = "http://127.0.0.1:33419/callback"
    landed: list[str] = []

    async def redirect_handler(authorization_url: str) -> None:
        landed.append(await HeadlessRedirect(redirect_uri).authorize(authorization_url))

    async def callback_handler() -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlsplit(landed.pop()).query).items()}
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    metadata = OAuthClientMetadata(client_name="sdk-test", redirect_uris=[redirect_uri],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none")
    return OAuthClientProvider(server_url, metadata, storage, redirect_handler, callback_handler)


async def test_the_sdk_oauth_client_authorizes_then_lists_and_calls(protected: Protected) -> None:
    storage = SDKStorage()
    async with httpx2.AsyncClient(auth=sdk_auth(protected.mcp, storage), timeout=30) as http, \
            streamable_http_client(protected.mcp, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        assert [tool.name for tool in (await session.list_tools()).tools] == ["add"]
        result = await session.call_tool("add", {"a": 2, "b": 3})
        assert result.content[0].text == "5"
    assert storage.tokens is not None
    assert claims(storage.tokens.access_token)["aud"] == protected.resource  # RFC 8707: bound to this server


async def test_the_sdk_client_over_legacy_sse(protected: Protected) -> None:
    storage = SDKStorage()
    async with httpx2.AsyncClient(auth=sdk_auth(protected.mcp, storage), timeout=30) as http:  # authorize once
        await http.post(protected.mcp, json={}, headers={"Accept": "application/json, text/event-stream"})
    assert storage.tokens is not None
    headers = {"Authorization": f"Bearer {storage.tokens.access_token}"}
    async with sse_client(f"{protected.url}/sse", headers=headers) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        assert (await session.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"


# ---------------------------------------------------------------------------------------------- mcp_kit's client


async def test_mcp_kit_client_registers_authorizes_then_lists_and_calls(
        protected: Protected, authorization_server: AuthorizationServer) -> None:
    auth = OAuth(protected.mcp, headless())
    async with connect(protected.mcp, auth=auth) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["add"]
        assert (await session.call_tool("add", {"a": 2, "b": 3}))["content"][0]["text"] == "5"
    await auth.aclose()
    assert auth.flow.authorizations == 1
    record = auth.flow.config.store.tokens(protected.resource)
    assert record is not None and claims(record["access_token"])["aud"] == protected.resource
    registered = authorization_server.registered_client(record["client"]["client_id"])
    assert registered["application_type"] == "native"
    assert registered["redirect_uris"] == ["http://127.0.0.1:33418/callback"]
    assert registered["token_endpoint_auth_method"] == "none"
    assert "refresh_token" in registered["grant_types"] and record["refresh_token"]
    assert record["requested_scope"] == "mcp:read offline_access"  # the challenge's scope, plus a refresh token


async def test_mcp_kit_client_over_legacy_sse(protected: Protected) -> None:
    auth = OAuth(f"{protected.url}/sse", headless())
    async with connect(f"{protected.url}/sse", auth=auth) as session:
        assert (await session.call_tool("add", {"a": 1, "b": 1}))["content"][0]["text"] == "2"
    await auth.aclose()


async def test_refresh_before_expiry_and_after_a_refused_token(protected: Protected,
                                                               authorization_server: AuthorizationServer) -> None:
    store = MemoryTokenStore()
    auth = OAuth(protected.mcp, headless(store))
    async with connect(protected.mcp, auth=auth) as session:
        first = store.tokens(protected.resource)
        assert first is not None
        tokens_before = authorization_server.request_count("/token")
        store.save_tokens(protected.resource, {**first, "expires_at": time.time() - 1})  # expired: refresh first
        await session.list_tools()
        second = store.tokens(protected.resource)
        assert second is not None and second["access_token"] != first["access_token"]
        assert second["refresh_token"] != first["refresh_token"]  # rotated for a public client
        store.save_tokens(protected.resource, {**second, "access_token": "revoked-or-garbage"})  # the server says 401
        await session.list_tools()
        third = store.tokens(protected.resource)
        assert third is not None and third["access_token"] != second["access_token"]
    await auth.aclose()
    assert authorization_server.request_count("/token") == tokens_before + 2
    assert auth.flow.authorizations == 1  # refreshed twice, never sent back to the authorization endpoint


@pytest.mark.auth(required_scopes=("mcp:read", "mcp:write"))
async def test_step_up_on_insufficient_scope(protected: Protected, authorization_server: AuthorizationServer) -> None:
    store = MemoryTokenStore()
    narrow = authorization_server.access_token(protected.resource, ["mcp:read"])  # e.g. cached from earlier
    store.save_tokens(protected.resource, {"access_token": narrow, "requested_scope": "mcp:read", "expires_at": None})
    async with httpx.AsyncClient(timeout=30) as raw:
        refused = await raw.post(protected.mcp, headers={"Authorization": f"Bearer {narrow}"}, json={})
    assert refused.status_code == 403
    auth = OAuth(protected.mcp, headless(store))
    async with connect(protected.mcp, auth=auth) as session:
        assert (await session.call_tool("add", {"a": 1, "b": 2}))["content"][0]["text"] == "3"
    await auth.aclose()
    record = store.tokens(protected.resource)
    assert record is not None and record["requested_scope"] == "mcp:read mcp:write offline_access"
    assert set(claims(record["access_token"])["scope"].split()) == {"mcp:read", "mcp:write"}
    assert auth.flow.authorizations == 1


async def test_pre_registered_client(protected: Protected, authorization_server: AuthorizationServer) -> None:
    registrations = authorization_server.request_count("/reg")
    auth = OAuth(protected.mcp, headless(client_id="pre-registered-client"))
    async with connect(protected.mcp, auth=auth) as session:
        await session.list_tools()
    await auth.aclose()
    assert authorization_server.request_count("/reg") == registrations
    record = auth.flow.config.store.tokens(protected.resource)
    assert record is not None and claims(record["access_token"])["client_id"] == "pre-registered-client"


async def test_interactive_mode_prints_the_url_and_catches_the_loopback_redirect(protected: Protected) -> None:
    shown: list[str] = []
    announced = anyio.Event()

    def announce(text: str) -> None:
        shown.append(text)
        announced.set()

    redirect = LoopbackRedirect(open_browser=False, announce=announce)
    auth = OAuth(protected.mcp, OAuthClientConfig(redirect=redirect))

    async def person_with_a_browser() -> None:
        await announced.wait()
        url = next(line.strip() for line in shown[0].splitlines() if line.strip().startswith("http"))
        async with httpx.AsyncClient(follow_redirects=True, timeout=30) as browser:
            landed = await browser.get(url)  # the AS signs in, consents, and sends the browser to 127.0.0.1
        assert landed.status_code == 200 and "you can close this window" in landed.text

    async with anyio.create_task_group() as tg:
        tg.start_soon(person_with_a_browser)
        async with connect(protected.mcp, auth=auth) as session:
            assert (await session.call_tool("add", {"a": 4, "b": 4}))["content"][0]["text"] == "8"
    await auth.aclose()
    assert "Open this URL in a browser" in shown[0]


async def test_file_token_cache_is_private_and_spares_the_next_run_a_login(protected: Protected,
                                                                          tmp_path: Path) -> None:
    path = tmp_path / "cache" / "tokens.json"
    first = OAuth(protected.mcp, headless(FileTokenStore(path)))
    async with connect(protected.mcp, auth=first) as session:
        await session.list_tools()
    await first.aclose()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    second = OAuth(protected.mcp, headless(FileTokenStore(path)))
    async with connect(protected.mcp, auth=second) as session:
        await session.list_tools()
    await second.aclose()
    assert first.flow.authorizations == 1 and second.flow.authorizations == 0


@pytest.mark.auth(resource="http://127.0.0.1:1/somewhere-else")
async def test_metadata_for_another_resource_stops_the_flow(protected: Protected,
                                                            authorization_server: AuthorizationServer) -> None:
    before = authorization_server.request_count("/auth")
    auth = OAuth(protected.mcp, headless())
    with pytest.raises(OAuthError, match="refusing to obtain a token for another resource"):
        async with connect(protected.mcp, auth=auth):
            pass
    await auth.aclose()
    assert authorization_server.request_count("/auth") == before


async def test_a_refusing_user_ends_the_flow_with_the_servers_words(protected: Protected,
                                                                   authorization_server: AuthorizationServer) -> None:
    class Refusing(HeadlessRedirect):
        async def authorize(self, authorization_url: str) -> str:
            return await super().authorize(authorization_url + "&login_hint=deny")

    auth = OAuth(protected.mcp, OAuthClientConfig(redirect=Refusing()))
    with pytest.raises(OAuthError, match="access_denied"):
        async with connect(protected.mcp, auth=auth):
            pass
    await auth.aclose()


def test_the_mcp_kit_command_authorizes_headlessly(protected: Protected, tmp_path: Path) -> None:
    cache = tmp_path / "tokens.json"
    command = [sys.executable, "-m", "mcp_kit", "call", protected.mcp, "add", "a=20", "b=22", "--oauth-headless",
               "--oauth-token-cache", str(cache)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "42"
    token = FileTokenStore(cache).tokens(protected.resource)
    assert token is not None and token["access_token"] not in done.stdout + done.stderr
    refused = subprocess.run(
        [*command[:4], protected.mcp, "add", "--no-oauth"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 4 and "401" in refused.stderr


async def test_a_refused_registration_leaves_the_loopback_redirect_listening_nowhere() -> None:
    """The loopback redirect listens before registering (its port is in the redirect URI). A server that refuses
    everything refuses the registration too: the flow fails in words, and the port is closed again (it stayed open,
    a socket for each failed sign-in, until the process ended)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def refuse(request: Request) -> Response:
        return Response(status_code=401, headers={"WWW-Authenticate": 'Bearer realm="mcp"'})

    app = Starlette(routes=[Route("/healthz", healthz),
                            Route("/{path:path}", refuse, methods=["GET", "POST", "DELETE"])])
    sock, _ = bound_socket()
    redirect = LoopbackRedirect(open_browser=False, announce=lambda text: None)
    with serve(app, sock) as base:
        auth = OAuth(f"{base}/mcp", OAuthClientConfig(redirect=redirect))
        with pytest.raises(OAuthError, match=r"client registration at .* answered HTTP 401"):
            async with connect(f"{base}/mcp", auth=auth):
                pass
        await auth.aclose()
    assert redirect.port != 0  # it listened
    with pytest.raises(OSError):  # and listens no more
        await anyio.connect_tcp("127.0.0.1", redirect.port)
