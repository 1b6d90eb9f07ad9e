"""The OAuth facade (`FacadeConfig`): the MCP server as its clients' authorization server, signing users in at
an identity provider without dynamic client registration (oidc-provider in its `upstream` mode, a real
authorization server run by node).

What is checked here: the metadata (RFC 8414 naming the server itself, RFC 9728 pointing at it),
dynamic registration (RFC 7591) and its refusals, client ID metadata documents (fetched from loopback
only under the test option; never from a loopback or private address otherwise), and the whole flow
over plain HTTP: consent, the upstream sign-in, the code, PKCE, a scoped tool, `ctx.upstream_token()`,
refresh-token rotation, revocation, the audit trail, and no upstream secret or token in any answer or log.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from mcp_kit import Context, MCPServer
from mcp_kit.auth import FacadeConfig, UpstreamProvider
from tests.helpers.authorization_server import AuthorizationServer, start_authorization_server
from tests.helpers.facade_browser import Browser
from tests.helpers.uvicorn_thread import bound_socket, serve

pytestmark = pytest.mark.anyio
UPSTREAM_SECRET = "facade-upstream-secret"
REDIRECT_URI = "http://127.0.0.1:33418/callback"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}


@pytest.fixture(scope="module")
def upstream() -> Iterator[AuthorizationServer]:
    """oidc-provider without dynamic registration: the facade's static client `mcp-facade` is all there is."""
    with start_authorization_server(mode="upstream") as server:
        yield server


def build_app(written: list[str]) -> MCPServer:
    app = MCPServer("notes")

    @app.tool(read_only=True)
    def whoami(ctx: Context) -> dict[str, Any]:
        """Who is calling."""
        assert ctx.principal is not None
        return {"subject": ctx.principal.subject, "client_id": ctx.principal.client_id,
                "scopes": sorted(ctx.principal.scopes), "username": ctx.principal.claims.get("preferred_username")}

    @app.tool(scopes=["notes:write"])
    def write_note(name: str) -> str:
        """Write a note (needs notes:write)."""
        written.append(name)
        return f"wrote {name}"

    @app.tool(read_only=True)
    async def upstream_profile(ctx: Context) -> dict[str, Any]:
        """Call the identity provider's API on the caller's behalf."""
        token = await ctx.upstream_token()
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.get(UPSTREAM_USERINFO[0], headers={"Authorization": token.authorization})
        return {"status": answer.status_code, "provider": token.provider, "user": answer.json().get("sub")}

    return app


UPSTREAM_USERINFO: list[str] = []  # the provider's user endpoint, for the tool above


@dataclass
class Facade:
    url: str
    config: FacadeConfig
    upstream: AuthorizationServer
    audit: list[dict[str, Any]]
    written: list[str] = field(default_factory=list)

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"

    def browser(self, user: str = "alice", **options: Any) -> Browser:
        return Browser(user=user, upstream=f"{self.upstream.issuer}/auth", **options)


def facade_config(upstream: AuthorizationServer, resource: str, audit: list[dict[str, Any]],
                  **options: Any) -> FacadeConfig:
    provider = UpstreamProvider.oidc(upstream.issuer, scopes=("openid", "profile", "offline_access"),
                                     authorize_params={"prompt": "consent"})
    return FacadeConfig(resource=resource, upstream=provider, client_id="mcp-facade", client_secret=UPSTREAM_SECRET,
                        required_scopes=("notes:read",), audit=audit.append, **options)


@contextlib.contextmanager
def running_facade(upstream: AuthorizationServer, **options: Any) -> Iterator[Facade]:
    sock, port = bound_socket()
    audit: list[dict[str, Any]] = []
    config = facade_config(upstream, f"http://127.0.0.1:{port}/mcp", audit, **options)
    written: list[str] = []
    UPSTREAM_USERINFO[:] = [f"{upstream.issuer}/me"]
    with serve(build_app(written).asgi(host="127.0.0.1", port=port, auth=config), sock) as url:
        yield Facade(url, config, upstream, audit, written)


@pytest.fixture
def facade(upstream: AuthorizationServer) -> Iterator[Facade]:
    with running_facade(upstream) as running:
        yield running


# ---------------------------------------------------------------------------------------------- a raw client


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass
class RawClient:
    """An MCP client written out by hand: registration, the authorization URL, the token requests."""

    facade: Facade
    client_id: str = ""
    redirect_uri: str = REDIRECT_URI
    client_secret: str | None = None

    async def register(self, **metadata: Any) -> dict[str, Any]:
        body = {"redirect_uris": [self.redirect_uri], "client_name": "raw client", "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], **metadata}
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.post(f"{self.facade.url}/register", json=body)
        assert answer.status_code == 201, answer.text
        self.client_id = answer.json()["client_id"]
        self.client_secret = answer.json().get("client_secret")
        return dict(answer.json())

    def authorization_url(self, challenge: str, *, scope: str = "notes:read", state: str = "st-1",
                          **overrides: str) -> str:
        params = {"response_type": "code", "client_id": self.client_id, "redirect_uri": self.redirect_uri,
                  "scope": scope, "state": state, "code_challenge": challenge, "code_challenge_method": "S256",
                  "resource": self.facade.config.resource, **overrides}
        return f"{self.facade.url}/authorize?{urlencode({k: v for k, v in params.items() if v is not None})}"

    async def code(self, browser: Browser, **options: Any) -> tuple[str, str]:
        """(code, verifier) through the whole browser leg."""
        verifier, challenge = pkce()
        landed = await browser.authorize(self.authorization_url(challenge, **options))
        query = {k: v[0] for k, v in parse_qs(urlsplit(landed).query).items()}
        assert "code" in query, query
        assert query["iss"] == self.facade.config.issuer and query["state"] == options.get("state", "st-1")
        return query["code"], verifier

    async def token(self, **form: str) -> httpx.Response:
        data = {"client_id": self.client_id, **form}
        async with httpx.AsyncClient(timeout=30) as http:
            return await http.post(f"{self.facade.url}/token", data=data)

    async def redeem(self, code: str, verifier: str) -> dict[str, Any]:
        answer = await self.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                                  redirect_uri=self.redirect_uri, resource=self.facade.config.resource)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())


@pytest.fixture
async def raw(facade: Facade) -> AsyncIterator[RawClient]:
    client = RawClient(facade)
    await client.register()
    yield client


async def call_tool(facade: Facade, token: str, name: str, arguments: dict[str, Any] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        auth = {"Authorization": f"Bearer {token}"}
        opened = await http.post(facade.mcp, json=INITIALIZE, headers={**MCP_HEADERS, **auth})
        assert opened.status_code == 200, opened.text
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
        await http.post(facade.mcp, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers={**MCP_HEADERS, **auth, **session})
        return await http.post(facade.mcp, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                 "params": {"name": name, "arguments": arguments or {}}},
                               headers={**MCP_HEADERS, **auth, **session})


def result_of(response: httpx.Response) -> dict[str, Any]:
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip())
    return dict(json.loads(text))


def tool_json(response: httpx.Response) -> Any:
    result = result_of(response)["result"]
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


def claims(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


# ---------------------------------------------------------------------------------------------- metadata


async def test_the_metadata_names_the_server_as_its_own_authorization_server(facade: Facade) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        prm = (await http.get(f"{facade.url}/.well-known/oauth-protected-resource/mcp")).json()
        answer = await http.get(f"{facade.url}/.well-known/oauth-authorization-server")
        challenge = await http.post(facade.mcp, json=INITIALIZE, headers=MCP_HEADERS)
    issuer = facade.config.issuer
    assert prm["resource"] == facade.config.resource and prm["authorization_servers"] == [issuer]
    assert set(prm["scopes_supported"]) == {"notes:read", "notes:write"}  # the server-wide scope and the tools'
    metadata = answer.json()
    assert answer.headers["access-control-allow-origin"] == "*"
    assert metadata["issuer"] == issuer == facade.url
    assert metadata["authorization_endpoint"] == f"{issuer}/authorize"
    assert metadata["token_endpoint"] == f"{issuer}/token"
    assert metadata["registration_endpoint"] == f"{issuer}/register"
    assert metadata["revocation_endpoint"] == f"{issuer}/revoke"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["response_types_supported"] == ["code"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert challenge.status_code == 401 and "resource_metadata=" in challenge.headers["www-authenticate"]
    assert UPSTREAM_SECRET not in answer.text + json.dumps(prm)


# ---------------------------------------------------------------------------------------------- registration


async def test_dynamic_registration_of_a_public_and_a_confidential_client(facade: Facade) -> None:
    public = await RawClient(facade).register()
    assert public["client_id"].startswith("mcp-") and "client_secret" not in public
    assert public["redirect_uris"] == [REDIRECT_URI] and public["token_endpoint_auth_method"] == "none"
    confidential = await RawClient(facade).register(token_endpoint_auth_method="client_secret_basic",
                                                    redirect_uris=["https://app.example.com/cb"])
    assert len(confidential["client_secret"]) >= 40 and confidential["client_secret_expires_at"] == 0
    assert [r for r in facade.audit if r["event"] == "oauth.register"][-1]["client_id"] == confidential["client_id"]
    assert confidential["client_secret"] not in json.dumps(facade.audit)


@pytest.mark.parametrize(("metadata", "error"), [
    ({"redirect_uris": ["http://evil.example.com/cb"]}, "invalid_redirect_uri"),  # http only on loopback
    ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://app.example.com/cb#frag"]}, "invalid_redirect_uri"),
    ({"redirect_uris": []}, "invalid_redirect_uri"),
    ({"redirect_uris": [REDIRECT_URI], "grant_types": ["implicit"]}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "grant_types": ["client_credentials"]}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "response_types": ["token"]}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
    ({"redirect_uris": [REDIRECT_URI], "client_name": "x" * 500}, "invalid_client_metadata"),
])
async def test_registration_refuses_what_it_cannot_honour(facade: Facade, metadata: dict[str, Any], error: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.post(f"{facade.url}/register", json=metadata)
    assert answer.status_code == 400 and answer.json()["error"] == error, answer.text


async def test_registration_accepts_a_private_use_scheme_and_refuses_a_huge_body(facade: Facade) -> None:
    native = await RawClient(facade).register(redirect_uris=["com.example.app:/oauth/cb"])
    assert native["redirect_uris"] == ["com.example.app:/oauth/cb"]
    async with httpx.AsyncClient(timeout=30) as http:
        huge = await http.post(f"{facade.url}/register", content=b"{" + b" " * 40000 + b"}",
                               headers={"Content-Type": "application/json"})
    assert huge.status_code == 413


# ---------------------------------------------------------------------------------------------- the flow


async def test_the_whole_flow_by_hand(facade: Facade, raw: RawClient) -> None:
    browser = facade.browser("alice")
    code, verifier = await raw.code(browser)
    assert len(browser.pages) == 1  # the consent page came first
    page = browser.pages[0]
    assert "raw client" in page and "not verified" in page and REDIRECT_URI in page and "notes:read" in page
    tokens = await raw.redeem(code, verifier)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 600 and tokens["refresh_token"]
    access = claims(tokens["access_token"])
    assert access["iss"] == facade.config.issuer and access["aud"] == facade.config.resource
    assert access["sub"] == "alice" and access["client_id"] == raw.client_id and access["scope"] == "notes:read"
    assert jwt.get_unverified_header(tokens["access_token"])["typ"] == "at+jwt"
    me = tool_json(await call_tool(facade, tokens["access_token"], "whoami"))
    assert me == {"subject": "alice", "client_id": raw.client_id, "scopes": ["notes:read"], "username": "alice"}
    steps = [r["event"] for r in facade.audit]
    for step in ("oauth.register", "oauth.authorize", "oauth.consent_shown", "oauth.consent", "oauth.upstream_redirect",
                 "oauth.callback", "oauth.code_issued", "oauth.token"):
        assert step in steps, steps


async def test_a_tool_reaches_the_callers_upstream_token_which_never_leaves_the_server(
        facade: Facade, raw: RawClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    code, verifier = await raw.code(facade.browser("bob"))
    tokens = await raw.redeem(code, verifier)
    profile = tool_json(await call_tool(facade, tokens["access_token"], "upstream_profile"))
    assert profile == {"status": 200, "provider": "oidc", "user": "bob"}  # the provider's API, as bob
    grants = [r for r in facade.audit if r["event"] == "oauth.upstream_token"]
    assert grants and grants[-1]["user"] == "bob"
    # The upstream token is not the facade's: sent to the MCP endpoint it is refused (no token passthrough).
    upstream_token = facade.upstream.access_token(facade.config.resource, ["mcp:read"],
                                                client_id="pre-registered-client")  # aud: this server
    refused = await call_tool_status(facade, upstream_token)
    assert refused.status_code == 401 and "invalid_token" in refused.headers["www-authenticate"]
    assert UPSTREAM_SECRET not in caplog.text + json.dumps(facade.audit)  # every logger, the HTTP clients' too
    server_log = server_logs(caplog)  # the test's own HTTP clients log the URLs they visit; the server logs none
    assert "oauth.token" in server_log and "oauth.callback" in server_log
    for secret in (tokens["access_token"], tokens["refresh_token"], code, upstream_token):
        assert secret not in server_log and secret not in json.dumps(facade.audit)


def server_logs(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records if r.name.startswith(("mcp_kit", "uvicorn")))


async def call_tool_status(facade: Facade, token: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(facade.mcp, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})


async def test_refresh_tokens_rotate_and_revocation_ends_the_grant(facade: Facade, raw: RawClient) -> None:
    code, verifier = await raw.code(facade.browser("carol"))
    first = await raw.redeem(code, verifier)
    refreshed = await raw.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    second = refreshed.json()
    assert second["refresh_token"] != first["refresh_token"] and second["access_token"] != first["access_token"]
    assert claims(second["access_token"])["sub"] == "carol"
    narrowed = await raw.token(grant_type="refresh_token", refresh_token=second["refresh_token"], scope="notes:write")
    assert narrowed.status_code == 400 and narrowed.json()["error"] == "invalid_scope"
    third = await raw.token(grant_type="refresh_token", refresh_token=second["refresh_token"])
    assert third.status_code == 400 and third.json()["error"] == "invalid_grant"  # taken once, by the narrowing try
    fresh_code, fresh_verifier = await raw.code(facade.browser("carol"))
    live = await raw.redeem(fresh_code, fresh_verifier)
    assert (await call_tool_status(facade, live["access_token"])).status_code == 200
    async with httpx.AsyncClient(timeout=30) as http:
        revoked = await http.post(f"{facade.url}/revoke", data={"token": live["refresh_token"],
                                                                "client_id": raw.client_id})
    assert revoked.status_code == 200
    assert (await call_tool_status(facade, live["access_token"])).status_code == 401  # at once, before it expires
    again = await raw.token(grant_type="refresh_token", refresh_token=live["refresh_token"])
    assert again.json()["error"] == "invalid_grant"
    assert any(r["event"] == "oauth.grant_revoked" and r["reason"] == "revocation_request" for r in facade.audit)


async def test_consent_is_remembered_per_client_and_user_only_after_approval(facade: Facade, raw: RawClient) -> None:
    browser = facade.browser("dave")
    await raw.code(browser)
    await raw.code(browser)  # the same browser, user and client: no second consent page
    assert len(browser.pages) == 1
    other = RawClient(facade)
    await other.register(client_name="another client")
    await other.code(browser)  # another client: asked again
    assert len(browser.pages) == 2 and "another client" in browser.pages[1]
    await raw.code(browser, scope="notes:read notes:write")  # more scopes than approved: asked again
    assert len(browser.pages) == 3 and "notes:write" in browser.pages[2]
    refusing = facade.browser("erin", decision="deny")
    verifier, challenge = pkce()
    landed = await refusing.authorize(raw.authorization_url(challenge))
    query = parse_qs(urlsplit(landed).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["st-1"]
    await refusing.authorize(raw.authorization_url(challenge))  # a denial is not remembered: the page again
    assert len(refusing.pages) == 2


# ------------------------------------------------------------------------------------ client metadata documents


@contextlib.contextmanager
def metadata_host(**document: Any) -> Iterator[str]:
    sock, port = bound_socket()
    url = f"http://127.0.0.1:{port}/client.json"

    async def describe(request: Request) -> JSONResponse:
        return JSONResponse({"client_id": url, "client_name": "Documented Client", "redirect_uris": [REDIRECT_URI],
                             "token_endpoint_auth_method": "none", **document})

    app = Starlette(routes=[Route("/healthz", lambda r: PlainTextResponse("ok")), Route("/client.json", describe)])
    with serve(app, sock):
        yield url


async def test_a_client_metadata_document_client_under_the_test_option(upstream: AuthorizationServer) -> None:
    with running_facade(upstream, allow_loopback_client_metadata=True) as facade, metadata_host() as url:
        client = RawClient(facade, client_id=url)
        browser = facade.browser("frank")
        code, verifier = await client.code(browser)
        assert "Documented Client" in browser.pages[0] and url in browser.pages[0]
        tokens = await client.redeem(code, verifier)
        assert claims(tokens["access_token"])["client_id"] == url


async def test_client_metadata_documents_are_not_fetched_from_loopback_in_production(facade: Facade) -> None:
    with metadata_host() as url:
        for client_id in (url, url.replace("http://127.0.0.1", "https://127.0.0.1"),
                          url.replace("http://127.0.0.1", "https://localhost")):
            verifier, challenge = pkce()
            async with httpx.AsyncClient(timeout=30) as http:
                page = await http.get(RawClient(facade, client_id=client_id).authorization_url(challenge))
            assert page.status_code == 400 and "location" not in page.headers
            assert "invalid_client" in page.text
    refusals = [r for r in facade.audit if r["event"] == "oauth.authorize" and r["outcome"] == "refused"]
    assert "https URL" in refusals[0]["reason"] and "non-public address" in refusals[1]["reason"]


async def test_a_client_metadata_document_must_name_itself_and_hold_no_secret(upstream: AuthorizationServer) -> None:
    with running_facade(upstream, allow_loopback_client_metadata=True) as facade:
        for document, expected in (({"client_id": "https://elsewhere.example/c.json"}, "does not name its own URL"),
                                   ({"client_secret": "s3cret"}, "no shared secret"),
                                   ({"redirect_uris": ["http://evil.example/cb"]}, "not https")):
            with metadata_host(**document) as url:
                verifier, challenge = pkce()
                async with httpx.AsyncClient(timeout=30) as http:
                    page = await http.get(RawClient(facade, client_id=url).authorization_url(challenge))
                assert page.status_code == 400 and expected in page.text, page.text
