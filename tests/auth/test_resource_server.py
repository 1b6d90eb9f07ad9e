"""The OAuth guard in front of a real uvicorn, with tokens from a real authorization server (oidc-provider).

Each test builds an mcp_kit app protected by `AuthConfig(issuer=<the test AS>, resource=<its own URL>)`
and talks to it over HTTP with tokens the AS issued for it, for another resource, or not at all.
Time is moved by giving the validator its own clock, never by sleeping.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from mcp_kit import MCPServer
from mcp_kit.auth import AccessToken, AuthConfig
from mcp_kit.auth._challenge import parse_bearer_challenge
from mcp_kit.auth._validator import TokenValidator
from tests.helpers.authorization_server import AuthorizationServer, start_authorization_server
from tests.helpers.uvicorn_thread import bound_socket, serve

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def build_app() -> MCPServer:
    app = MCPServer("protected")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return app


@dataclass
class Clock:
    """Wall clock and monotonic clock the test can move forward."""

    offset: float = 0.0
    base: dict[str, float] = field(default_factory=dict)

    def wall(self) -> float:
        import time

        return time.time() + self.offset

    def monotonic(self) -> float:
        import time

        return time.monotonic() + self.offset


@dataclass
class Protected:
    url: str
    resource: str
    validator: TokenValidator
    clock: Clock

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"

    def post(self, token: str | None = None, *, headers: dict[str, str] | None = None,
             body: dict[str, Any] | None = None, path: str = "/mcp") -> httpx.Response:
        sent = {**MCP_HEADERS, **(headers or {})}
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        return httpx.post(f"{self.url}{path}", json=body or INITIALIZE, headers=sent, timeout=30)


@pytest.fixture
def protected(authorization_server: AuthorizationServer, request: pytest.FixtureRequest) -> Iterator[Protected]:
    marker = request.node.get_closest_marker("auth")
    options: dict[str, Any] = dict(marker.kwargs) if marker else {}
    sock, port = bound_socket()
    resource = f"http://127.0.0.1:{port}/mcp"
    clock = Clock()
    config = AuthConfig(issuer=authorization_server.issuer, resource=resource,
                        required_scopes=options.pop("required_scopes", ("mcp:read",)), **options)
    validator = TokenValidator(config, clock=clock.wall, monotonic=clock.monotonic)
    asgi = build_app().asgi(host="127.0.0.1", port=port, auth=validator)
    with serve(asgi, sock) as url:
        yield Protected(url, resource, validator, clock)


def challenge(response: httpx.Response) -> dict[str, str]:
    parsed = parse_bearer_challenge(response.headers.get("www-authenticate"))
    assert parsed is not None, response.headers
    return parsed


# ---------------------------------------------------------------------------------------------- metadata


def test_protected_resource_metadata_at_both_well_known_paths(protected: Protected,
                                                              authorization_server: AuthorizationServer) -> None:
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        response = httpx.get(protected.url + path)
        assert response.status_code == 200, path
        assert response.json() == {"resource": protected.resource,
                                   "authorization_servers": [authorization_server.issuer],
                                   "bearer_methods_supported": ["header"], "scopes_supported": ["mcp:read"]}
        assert response.headers["access-control-allow-origin"] == "*"
    assert httpx.get(f"{protected.url}/healthz").status_code == 200  # open without a token


# ---------------------------------------------------------------------------------------------- 401s


def test_no_token_gets_401_naming_the_metadata_and_scopes_on_every_mcp_endpoint(protected: Protected) -> None:
    for response in (protected.post(), httpx.get(f"{protected.url}/sse", headers={"Accept": "text/event-stream"}),
                     protected.post(path="/messages/?session_id=x"), protected.post(path="/messages")):
        assert response.status_code == 401
        assert challenge(response) == {
            "resource_metadata": f"{protected.url}/.well-known/oauth-protected-resource/mcp", "scope": "mcp:read"}
        assert "Authorization: Bearer" in response.json()["error"]["message"]


def test_a_basic_credential_is_no_bearer_token(protected: Protected) -> None:
    response = protected.post(headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert response.status_code == 401 and "error" not in challenge(response)


@pytest.mark.parametrize("token", ["not a token", "abc.def.ghi", "eyJhbGciOiJub25lIn0.e30.", "x" * 40])
def test_malformed_tokens_get_401_invalid_token(protected: Protected, token: str) -> None:
    response = protected.post(headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 401
    assert challenge(response)["error"] == "invalid_token"


def test_tokens_in_the_url_or_twice_are_bad_requests(protected: Protected,
                                                     authorization_server: AuthorizationServer) -> None:
    token = authorization_server.access_token(protected.resource, ["mcp:read"])
    in_query = httpx.post(f"{protected.mcp}?access_token={token}", json=INITIALIZE, headers=MCP_HEADERS)
    assert in_query.status_code == 400 and challenge(in_query)["error"] == "invalid_request"
    twice = httpx.post(
        protected.mcp,
        json=INITIALIZE,
        headers=[*MCP_HEADERS.items(), ("Authorization", f"Bearer {token}"), ("Authorization", f"Bearer {token}")],
    )
    assert twice.status_code == 400


# ---------------------------------------------------------------------------------------------- valid tokens


def test_a_token_for_this_resource_reaches_the_tools(protected: Protected,
                                                     authorization_server: AuthorizationServer) -> None:
    token = authorization_server.access_token(protected.resource, ["mcp:read"])
    with httpx.Client(headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"}, timeout=30) as http:
        opened = http.post(protected.mcp, json=INITIALIZE)
        assert opened.status_code == 200, opened.text
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        http.post(protected.mcp, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        called = http.post(
            protected.mcp,
            headers=session,
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
            },
        )
        assert called.status_code == 200
        assert '"text":"5"' in called.text.replace(" ", "")


def test_expired_token_gets_401(protected: Protected, authorization_server: AuthorizationServer) -> None:
    token = authorization_server.access_token(protected.resource, ["mcp:read"])
    assert protected.post(token).status_code == 200
    protected.clock.offset = 600 + 31  # the AS issues 600 s tokens; 30 s of leeway
    response = protected.post(token)
    assert response.status_code == 401
    assert challenge(response)["error"] == "invalid_token"
    assert "expired" in challenge(response)["error_description"]


def test_token_for_another_resource_gets_401(protected: Protected, authorization_server: AuthorizationServer) -> None:
    token = authorization_server.access_token("http://127.0.0.1:1/other-mcp", ["mcp:read"])
    response = protected.post(token)
    assert response.status_code == 401
    assert "another resource" in challenge(response)["error_description"]


def test_trailing_slash_and_case_spellings_of_the_resource_are_accepted(
        protected: Protected, authorization_server: AuthorizationServer) -> None:
    spelled = protected.resource.replace("http://127.0.0.1", "HTTP://127.0.0.1") + "/"
    token = authorization_server.access_token(spelled, ["mcp:read"])
    assert protected.post(token).status_code == 200


def test_token_from_another_issuer_gets_401(protected: Protected) -> None:
    with start_authorization_server() as other:
        token = other.access_token(protected.resource, ["mcp:read"])
    response = protected.post(token)
    assert response.status_code == 401 and challenge(response)["error"] == "invalid_token"


# ---------------------------------------------------------------------------------------------- keys


def test_unknown_kid_refreshes_the_keys_once_and_follows_rotation(protected: Protected,
                                                                  authorization_server: AuthorizationServer) -> None:
    before = authorization_server.request_count("/jwks")
    first = authorization_server.access_token(protected.resource, ["mcp:read"])
    assert protected.post(first).status_code == 200
    assert authorization_server.request_count("/jwks") == before + 1

    authorization_server.rotate_keys(keep_previous=True)
    second = authorization_server.access_token(protected.resource, ["mcp:read"])
    # Within the refresh interval an unknown kid does not reach the AS again: refused, no new fetch.
    assert protected.post(second).status_code == 401
    assert authorization_server.request_count("/jwks") == before + 1
    protected.clock.offset = 31  # past jwks_refresh_interval (and within the tokens' lifetime)
    assert protected.post(second).status_code == 200
    assert protected.post(first).status_code == 200  # the previous key is still published
    assert authorization_server.request_count("/jwks") == before + 2

    authorization_server.rotate_keys(keep_previous=False)  # the first key is withdrawn
    third = authorization_server.access_token(protected.resource, ["mcp:read"])
    protected.clock.offset = 62
    assert protected.post(third).status_code == 200
    refused = protected.post(first)
    assert refused.status_code == 401
    assert "key the issuer does not publish" in challenge(refused)["error_description"]


# ---------------------------------------------------------------------------------------------- scopes


@pytest.mark.auth(required_scopes=("mcp:read", "mcp:write"))
def test_missing_scope_gets_403_naming_the_scopes_and_a_stepped_up_token_passes(
        protected: Protected, authorization_server: AuthorizationServer) -> None:
    narrow = authorization_server.access_token(protected.resource, ["mcp:read"])
    response = protected.post(narrow)
    assert response.status_code == 403
    assert challenge(response) == {
        "error": "insufficient_scope", "scope": "mcp:read mcp:write",
        "error_description": "this server requires the scope(s) mcp:write",
        "resource_metadata": f"{protected.url}/.well-known/oauth-protected-resource/mcp"}
    wide = authorization_server.access_token(protected.resource, challenge(response)["scope"].split())
    assert protected.post(wide).status_code == 200


@pytest.mark.auth(required_scopes=("mcp:read",), scope_implies={"mcp:admin": ("mcp:read", "mcp:write")})
def test_a_broader_scope_implies_the_narrower_ones(protected: Protected,
                                                   authorization_server: AuthorizationServer) -> None:
    assert protected.post(authorization_server.access_token(protected.resource, ["mcp:admin"])).status_code == 200


# ---------------------------------------------------------------------------------------------- introspection


@pytest.mark.auth(introspection_client_id="mcp-resource-server", introspection_client_secret="resource-server-secret")
def test_opaque_token_through_introspection_cached_briefly(protected: Protected,
                                                           authorization_server: AuthorizationServer) -> None:
    authorization_server.configure_resource(protected.resource, format="opaque")
    client_id = authorization_server.register_client()
    token = authorization_server.access_token(protected.resource, ["mcp:read"], client_id=client_id)
    assert token.count(".") == 0
    before = authorization_server.request_count("/token/introspection")
    for _ in range(3):
        assert protected.post(token).status_code == 200
    assert authorization_server.request_count("/token/introspection") == before + 1  # cached
    httpx.post(f"{authorization_server.issuer}/token/revocation",
               data={"token": token, "client_id": client_id}).raise_for_status()
    protected.clock.offset = 31  # past introspection_cache_ttl: asked again, and now it is inactive
    response = protected.post(token)
    assert response.status_code == 401
    assert "not active" in challenge(response)["error_description"]

    authorization_server.configure_resource("http://127.0.0.1:1/elsewhere", format="opaque")
    elsewhere = authorization_server.access_token("http://127.0.0.1:1/elsewhere", ["mcp:read"])
    assert "another resource" in challenge(protected.post(elsewhere))["error_description"]


def test_opaque_token_without_introspection_is_refused(protected: Protected) -> None:
    response = protected.post("opaque-token-value-1234")
    assert response.status_code == 401
    assert "introspection" in challenge(response)["error_description"]


# ---------------------------------------------------------------------------------------------- what leaks


def test_tokens_never_appear_in_logs(protected: Protected, authorization_server: AuthorizationServer,
                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    good = authorization_server.access_token(protected.resource, ["mcp:read"])
    other = authorization_server.access_token("http://127.0.0.1:1/other-mcp", ["mcp:read"])
    assert protected.post(good).status_code == 200
    assert protected.post(other).status_code == 401
    protected.clock.offset = 10_000
    assert protected.post(good).status_code == 401
    assert "refused a token" in caplog.text  # the refusals were logged...
    for token in (good, other):
        for secret in (token, token.split(".")[2]):  # ...and neither token nor its signature is in the log
            assert secret not in caplog.text


@pytest.mark.anyio
async def test_the_app_behind_the_guard_sees_the_principal_and_never_the_token(
        authorization_server: AuthorizationServer) -> None:
    seen: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(scope)
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    from mcp_kit.auth._middleware import OAuthGuard

    resource = "http://testserver/mcp"
    guard = OAuthGuard(app, AuthConfig(issuer=authorization_server.issuer, resource=resource))
    token = authorization_server.access_token(resource, ["mcp:read"])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=guard), base_url="http://testserver") as http:
        assert (await http.post("/mcp", headers={"Authorization": f"Bearer {token}"})).status_code == 204
    await guard.validator.aclose()
    (scope,) = seen
    principal = scope["state"]["access_token"]
    assert isinstance(principal, AccessToken)
    assert principal.subject == "test-user" and principal.scopes == {"mcp:read"} and principal.source == "jwt"
    assert all(name != b"authorization" for name, _ in scope["headers"])
    assert token not in repr(principal) and token not in repr(scope)
