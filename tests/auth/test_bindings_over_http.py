"""Identity bindings through a real uvicorn: sessions, step-up challenges and 2026-07-28 request state.

The server trusts an issuer whose keys are made in the test (`Issuer` of test_auth_units, its
metadata and JWKS served to the validator through an httpx.MockTransport), so tokens can carry
subjects no real authorization server would hand out on request: a user whose `sub` is
`client:svc` beside the client-credentials client `svc`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from mcp_kit import Context, MCPServer
from mcp_kit.auth import AuthConfig
from mcp_kit.auth._challenge import parse_bearer_challenge
from mcp_kit.auth._validator import TokenValidator
from tests.auth.test_auth_units import ISSUER, Issuer
from tests.auth.test_scopes import INITIALIZE, MCP_HEADERS, answer
from tests.helpers.uvicorn_thread import bound_socket, serve

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


def build_app(deleted: list[str]) -> MCPServer:
    app = MCPServer("bound")

    @app.tool(read_only=True)
    def whoami(ctx: Context) -> str:
        """Who is calling."""
        return str(ctx.principal.subject if ctx.principal is not None else None)

    @app.resource("fx://secret/{name}", scopes=["secret:read"])
    def secret(name: str) -> str:
        return f"secret {name}"

    @app.tool(destructive=True)
    async def confirm_delete(path: str, ctx: Context) -> str:
        """Delete `path` once the user confirms."""
        confirmed = await ctx.elicit(f"Delete {path}?", CONFIRM, key="confirm")
        if confirmed.action != "accept":
            return "kept"
        deleted.append(path)
        return f"deleted {path}"

    return app


@dataclass
class Bound:
    url: str
    resource: str
    issuer: Issuer
    deleted: list[str] = field(default_factory=list)

    def token(self, **claims: Any) -> str:
        return self.issuer.token(aud=self.resource, **claims)

    def post(self, token: str, body: dict[str, Any], **headers: str) -> httpx.Response:
        sent = {**MCP_HEADERS, "Authorization": f"Bearer {token}", **headers}
        return httpx.post(f"{self.url}/mcp", json=body, headers=sent, timeout=30)

    def session(self, token: str) -> str:
        opened = self.post(token, INITIALIZE)
        assert opened.status_code == 200, opened.text
        session_id = opened.headers["mcp-session-id"]
        self.post(token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **{"Mcp-Session-Id": session_id})
        return session_id

    def call(self, token: str, session_id: str, method: str, params: dict[str, Any]) -> httpx.Response:
        return self.post(token, {"jsonrpc": "2.0", "id": 2, "method": method, "params": params},
                         **{"Mcp-Session-Id": session_id})

    def modern_call(self, token: str, tool: str, **params: Any) -> tuple[int, dict[str, Any]]:
        """A 2026-07-28 tools/call: the HTTP status and the JSON-RPC message."""
        body = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"_meta": MODERN_META, "name": tool, **params},
        }
        sent = self.post(token, body, **{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                                         "Mcp-Name": tool})
        return sent.status_code, answer(sent)


@pytest.fixture
def bound() -> Iterator[Bound]:
    issuer = Issuer()
    sock, port = bound_socket()
    resource = f"http://127.0.0.1:{port}/mcp"
    validator = TokenValidator(AuthConfig(issuer=ISSUER, resource=resource),
                               http=httpx.AsyncClient(transport=httpx.MockTransport(issuer.handler)))
    deleted: list[str] = []
    with serve(build_app(deleted).asgi(host="127.0.0.1", port=port, auth=validator), sock) as url:
        yield Bound(url, resource, issuer, deleted)


def test_a_subject_spelled_like_a_client_cannot_use_that_clients_session(bound: Bound) -> None:
    service = bound.token(sub=None, client_id="svc")
    impostor = bound.token(sub="client:svc", client_id="app")
    session = bound.session(service)
    refused = bound.call(impostor, session, "tools/call", {"name": "whoami", "arguments": {}})
    assert refused.status_code == 404, refused.text
    mine = answer(bound.call(service, session, "tools/call", {"name": "whoami", "arguments": {}}))
    assert mine["result"]["content"][0]["text"] == "None"  # the service itself: no subject, its session


def test_a_token_naming_no_one_opens_no_session(bound: Bound) -> None:
    refused = bound.post(bound.token(sub=None, client_id=None), INITIALIZE)
    assert refused.status_code == 401 and "mcp-session-id" not in refused.headers
    challenge = parse_bearer_challenge(refused.headers["www-authenticate"])
    assert challenge is not None and challenge["error"] == "invalid_token"


def test_a_step_up_challenge_for_a_non_ascii_uri_is_sent_not_a_500(bound: Bound) -> None:
    reader = bound.token(scope="mcp:read")
    session = bound.session(reader)
    refused = bound.call(reader, session, "resources/read", {"uri": "fx://secret/😀"})
    assert refused.status_code == 403, refused.text
    header = refused.headers["www-authenticate"]
    header.encode("ascii")
    challenge = parse_bearer_challenge(header)
    assert challenge is not None and challenge["error"] == "insufficient_scope" and challenge["scope"] == "secret:read"
    assert "fx://secret/%F0%9F%98%80" in challenge["error_description"]
    assert refused.json()["error"]["data"]["missing"] == ["secret:read"]
    allowed = bound.token(scope="mcp:read secret:read")
    read = answer(bound.call(allowed, session, "resources/read", {"uri": "fx://secret/😀"}))
    assert read["result"]["contents"][0]["text"] == "secret 😀"


def test_a_request_state_minted_for_alice_does_not_work_for_bob(bound: Bound) -> None:
    alice, bob = bound.token(sub="alice"), bound.token(sub="bob")
    status, first = bound.modern_call(alice, "confirm_delete", arguments={"path": "a.txt"})
    asked = first["result"]
    assert status == 200 and asked["resultType"] == "input_required" and list(asked["inputRequests"]) == ["confirm"]
    status, replayed = bound.modern_call(bob, "confirm_delete", arguments={"path": "a.txt"},
                                         requestState=asked["requestState"], inputResponses=YES)
    assert "result" not in replayed and bound.deleted == []
    assert replayed["error"]["code"] == -32602 and "another caller" in replayed["error"]["message"]
    status, done = bound.modern_call(alice, "confirm_delete", arguments={"path": "a.txt"},
                                     requestState=asked["requestState"], inputResponses=YES)
    assert status == 200 and done["result"]["content"][0]["text"] == "deleted a.txt" and bound.deleted == ["a.txt"]
