"""Per-request identity and per-primitive scopes, against a real authorization server (oidc-provider).

An mcp_kit server on a real uvicorn requires `files:read` of every caller; `write_note` also needs
`files:write`, the admin resource, template and prompt `notes:admin`. Tokens come from the AS for
named users (`login_hint`). What is checked: the 403 `insufficient_scope` challenge before dispatch
(Streamable HTTP and 2026-07-28 requests), the method table's refusal where no challenge can be sent
(a batch, legacy SSE), `ctx.principal`, the audit subject, sessions bound to their subject, step-up
with the official SDK's OAuth client and with mcp_kit's, and that the token is in no log or record.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull

from mcp_kit import AuditRecord, Context, MCPServer
from mcp_kit.auth import AuthConfig
from mcp_kit.auth._challenge import parse_bearer_challenge
from mcp_kit.client import connect
from mcp_kit.client.oauth import HeadlessRedirect, MemoryTokenStore, OAuth, OAuthClientConfig
from tests.auth.test_clients import SDKStorage, claims, sdk_auth
from tests.helpers.authorization_server import AuthorizationServer, start_authorization_server
from tests.helpers.uvicorn_thread import bound_socket, serve

pytestmark = pytest.mark.anyio
SCOPES = "files:read files:write notes:admin"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture(scope="module")
def files_as() -> Iterator[AuthorizationServer]:
    """An authorization server that knows the scopes of this module's server."""
    previous = os.environ.get("OAUTH_TEST_SCOPES")
    os.environ["OAUTH_TEST_SCOPES"] = SCOPES
    try:
        with start_authorization_server() as server:
            yield server
    finally:
        if previous is None:
            os.environ.pop("OAUTH_TEST_SCOPES", None)
        else:
            os.environ["OAUTH_TEST_SCOPES"] = previous


@dataclass
class Files:
    url: str
    resource: str
    issuer: AuthorizationServer
    audit: list[AuditRecord]
    written: list[str] = field(default_factory=list)
    tokens: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"

    def token(self, user: str, *scopes: str) -> str:
        key = (user, " ".join(scopes))
        if key not in self.tokens:
            self.tokens[key] = self.issuer.access_token(self.resource, list(scopes), login_hint=user)
        return self.tokens[key]

    def post(self, token: str | None, body: dict[str, Any], **headers: str) -> httpx.Response:
        sent = {**MCP_HEADERS, **headers}
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        return httpx.post(self.mcp, json=body, headers=sent, timeout=30)

    def session(self, token: str, version: str = "2025-11-25") -> str:
        opened = self.post(token, {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}})
        assert opened.status_code == 200, opened.text
        session_id = opened.headers["mcp-session-id"]
        self.post(token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **{"Mcp-Session-Id": session_id})
        return session_id

    def call(self, token: str, session_id: str, method: str, params: dict[str, Any], request_id: int = 2,
             **headers: str) -> httpx.Response:
        return self.post(token, {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                         **{"Mcp-Session-Id": session_id, **headers})


def build_app(audit: list[AuditRecord], written: list[str]) -> MCPServer:
    app = MCPServer("files")
    app.add_audit_hook(audit.append)

    @app.tool(read_only=True)
    def read_note(name: str) -> str:
        """Read a note (needs only the server-wide files:read)."""
        return f"note {name}"

    @app.tool(read_only=True)
    def whoami(ctx: Context) -> dict[str, Any]:
        """Who is calling, as the server sees it."""
        principal = ctx.principal
        if principal is None:
            return {"anonymous": True}
        return {"subject": principal.subject, "client_id": principal.client_id, "scopes": sorted(principal.scopes),
                "expires_at": principal.expires_at, "aud": principal.claims.get("aud"),
                "can_write": principal.allows("files:write")}

    @app.tool(scopes=["files:write"], destructive=True)
    def write_note(name: str, text: str) -> str:
        """Write a note (needs files:write)."""
        written.append(name)
        return f"wrote {name}"

    @app.resource("notes://admin/audit", scopes=["notes:admin"])
    def admin_audit() -> str:
        return "the admin audit"

    @app.resource("notes://private/{name}", scopes=["notes:admin"])
    def private_note(name: str) -> str:
        return f"private {name}"

    @app.resource("notes://public")
    def public_note() -> str:
        return "public"

    @app.prompt(scopes=["notes:admin"])
    def admin_review(topic: str) -> str:
        """Review as an admin."""
        return f"review {topic}"

    @app.completion("admin_review", "topic")
    def topics(value: str, context: Any) -> list[str]:
        return [t for t in ("secrets", "salaries") if t.startswith(value)]

    @app.completion("notes://private/{name}", "name")
    def private_names(value: str, context: Any) -> list[str]:
        return ["payroll"]

    return app


@pytest.fixture
def files(files_as: AuthorizationServer) -> Iterator[Files]:
    sock, port = bound_socket()
    resource = f"http://127.0.0.1:{port}/mcp"
    audit: list[AuditRecord] = []
    written: list[str] = []
    config = AuthConfig(issuer=files_as.issuer, resource=resource, required_scopes=("files:read",))
    with serve(build_app(audit, written).asgi(host="127.0.0.1", port=port, auth=config), sock) as url:
        yield Files(url, resource, files_as, audit, written)


def challenge(response: httpx.Response) -> dict[str, str]:
    parsed = parse_bearer_challenge(response.headers.get("www-authenticate"))
    assert parsed is not None, response.headers
    return parsed


def answer(response: httpx.Response) -> Any:
    """The JSON-RPC message of a response (JSON or a one-event SSE stream)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [
            line[5:].strip() for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()
        ]
        return json.loads(data[-1])
    return response.json()


# ---------------------------------------------------------------------------------------------- metadata, lists


def test_metadata_names_the_server_wide_and_every_primitives_scopes(files: Files) -> None:
    document = httpx.get(f"{files.url}/.well-known/oauth-protected-resource/mcp").json()
    assert document["scopes_supported"] == ["files:read", "files:write", "notes:admin"]


def test_lists_show_every_primitive_whatever_the_callers_scopes(files: Files) -> None:
    reader = files.token("alice", "files:read")
    session = files.session(reader)
    tools = answer(files.call(reader, session, "tools/list", {}))["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["read_note", "whoami", "write_note"]  # write_note: a step-up away
    templates = answer(files.call(reader, session, "resources/templates/list", {}))["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["notes://private/{name}"]
    prompts = answer(files.call(reader, session, "prompts/list", {}))["result"]["prompts"]
    assert [p["name"] for p in prompts] == ["admin_review"]


# ---------------------------------------------------------------------------------------------- identity, audit


def test_the_caller_is_ctx_principal_and_the_audit_subject(files: Files) -> None:
    token = files.token("alice", "files:read", "files:write")
    session = files.session(token)
    result = answer(files.call(token, session, "tools/call", {"name": "whoami", "arguments": {}}))["result"]
    who = result["structuredContent"]
    assert who["subject"] == "alice" and who["scopes"] == ["files:read", "files:write"] and who["can_write"] is True
    assert who["client_id"] == claims(token)["client_id"] and who["aud"] == files.resource
    assert who["expires_at"] == claims(token)["exp"]
    read = answer(files.call(token, session, "resources/read", {"uri": "notes://public"}, request_id=3))
    assert read["result"]["contents"][0]["text"] == "public"
    assert [(r.primitive, r.tool or r.uri, r.subject) for r in files.audit] == [
        ("tool", "whoami", "alice"), ("resource", "notes://public", "alice")]


# ---------------------------------------------------------------------------------------------- 403 before dispatch


def test_a_tool_needing_a_scope_the_token_lacks_gets_a_403_step_up_challenge(files: Files) -> None:
    reader = files.token("alice", "files:read")
    session = files.session(reader)
    ok = answer(files.call(reader, session, "tools/call", {"name": "read_note", "arguments": {"name": "a"}}))
    assert ok["result"]["content"][0]["text"] == "note a"
    refused = files.call(reader, session, "tools/call", {"name": "write_note", "arguments": {"name": "b", "text": "x"}},
                         request_id=7)
    assert refused.status_code == 403
    params = challenge(refused)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "files:read files:write"  # what the operation needs (SEP-2350), server-wide included
    assert params["resource_metadata"] == f"{files.url}/.well-known/oauth-protected-resource/mcp"
    body = refused.json()
    assert body["id"] == 7 and body["error"]["code"] == -31002
    assert body["error"]["data"] == {"error": "insufficient_scope", "scope": "files:read files:write",
                                     "missing": ["files:write"]}
    assert "files:write" in body["error"]["message"]
    assert files.written == []  # it never ran
    writer = files.token("alice", "files:read", "files:write")
    done = answer(
        files.call(writer, session, "tools/call", {"name": "write_note", "arguments": {"name": "b", "text": "x"}})
    )
    assert done["result"]["content"][0]["text"] == "wrote b" and files.written == ["b"]


def test_resources_templates_and_prompts_with_scopes_get_the_same_challenge(files: Files) -> None:
    reader = files.token("alice", "files:read")
    session = files.session(reader)
    for method, params in (("resources/read", {"uri": "notes://admin/audit"}),
                           ("resources/read", {"uri": "notes://private/x"}),
                           ("prompts/get", {"name": "admin_review", "arguments": {"topic": "t"}})):
        refused = files.call(reader, session, method, params)
        assert refused.status_code == 403, (method, params)
        assert challenge(refused)["scope"] == "files:read notes:admin"
        assert refused.json()["error"]["data"]["missing"] == ["notes:admin"]
    admin = files.token("alice", "files:read", "notes:admin")
    assert answer(files.call(admin, session, "resources/read", {"uri": "notes://admin/audit"}))[
        "result"]["contents"][0]["text"] == "the admin audit"
    assert answer(files.call(admin, session, "resources/read", {"uri": "notes://private/x"}))[
        "result"]["contents"][0]["text"] == "private x"
    prompt = answer(files.call(admin, session, "prompts/get", {"name": "admin_review", "arguments": {"topic": "t"}}))
    assert prompt["result"]["messages"][0]["content"]["text"] == "review t"
    refused_read = [r for r in files.audit if r.uri == "notes://admin/audit"]
    assert [(r.outcome, r.subject) for r in refused_read] == [("ok", "alice")]  # the 403 never reached the route


def test_a_2026_request_gets_the_403_challenge_too(files: Files) -> None:
    reader = files.token("bob", "files:read")
    body = {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"_meta": MODERN_META, "name": "write_note", "arguments": {"name": "n", "text": "t"}}}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "write_note"}
    refused = files.post(reader, body, **headers)
    assert refused.status_code == 403 and challenge(refused)["error"] == "insufficient_scope"
    assert files.written == []
    who = files.post(reader, {**body, "params": {**body["params"], "name": "whoami", "arguments": {}}},
                     **{**headers, "Mcp-Name": "whoami"})
    assert answer(who)["result"]["structuredContent"]["subject"] == "bob"


def test_subscribing_and_completing_need_the_primitives_scopes_too(files: Files) -> None:
    reader = files.token("alice", "files:read")
    session = files.session(reader)
    prompt_ref = {"ref": {"type": "ref/prompt", "name": "admin_review"}, "argument": {"name": "topic", "value": "s"}}
    template_ref = {"ref": {"type": "ref/resource", "uri": "notes://private/{name}"},
                    "argument": {"name": "name", "value": ""}}
    for method, params in (("resources/subscribe", {"uri": "notes://private/x"}),
                           ("completion/complete", prompt_ref), ("completion/complete", template_ref)):
        refused = files.call(reader, session, method, params)
        assert refused.status_code == 403, (method, params)
        assert challenge(refused)["scope"] == "files:read notes:admin"
    admin = files.token("alice", "files:read", "notes:admin")
    assert "result" in answer(files.call(admin, session, "resources/subscribe", {"uri": "notes://private/x"}))
    completed = answer(files.call(admin, session, "completion/complete", prompt_ref))["result"]["completion"]
    assert completed["values"] == ["secrets", "salaries"]
    # where no challenge can be sent, the method table refuses them the same way
    batch = [{"jsonrpc": "2.0", "id": 20, "method": "resources/subscribe", "params": {"uri": "notes://admin/audit"}},
             {"jsonrpc": "2.0", "id": 21, "method": "completion/complete", "params": template_ref}]
    old = files.session(reader, version="2025-03-26")
    response = httpx.post(files.mcp, json=batch, timeout=30, headers={
        **MCP_HEADERS, "Accept": "application/json", "Authorization": f"Bearer {reader}", "Mcp-Session-Id": old})
    errors = {item["id"]: item["error"] for item in response.json()}
    assert errors[20]["code"] == errors[21]["code"] == -31002
    assert errors[20]["data"]["missing"] == errors[21]["data"]["missing"] == ["notes:admin"]


# ---------------------------------------------------------------------------------------------- no challenge possible


def test_in_a_batch_the_method_table_refuses_naming_the_missing_scopes(files: Files) -> None:
    reader = files.token("alice", "files:read")
    session = files.session(reader, version="2025-03-26")  # the version with batches
    batch = [
        {
            "jsonrpc": "2.0",
            "id": 10,
            "method": "tools/call",
            "params": {"name": "write_note", "arguments": {"name": "n", "text": "t"}},
        },
        {"jsonrpc": "2.0", "id": 11, "method": "resources/read", "params": {"uri": "notes://private/x"}},
        {
            "jsonrpc": "2.0",
            "id": 12,
            "method": "prompts/get",
            "params": {"name": "admin_review", "arguments": {"topic": "t"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 13,
            "method": "tools/call",
            "params": {"name": "read_note", "arguments": {"name": "a"}},
        },
    ]
    response = httpx.post(files.mcp, json=batch, timeout=30, headers={
        **MCP_HEADERS, "Accept": "application/json", "Authorization": f"Bearer {reader}", "Mcp-Session-Id": session})
    assert response.status_code == 200
    answers = {item["id"]: item for item in response.json()}
    tool = answers[10]["result"]
    assert tool["isError"] is True and "files:write" in tool["content"][0]["text"]
    for request_id in (11, 12):
        error = answers[request_id]["error"]
        assert error["code"] == -31002 and error["data"]["missing"] == ["notes:admin"]
    assert answers[13]["result"]["content"][0]["text"] == "note a"
    assert files.written == []
    assert [(r.tool or r.uri, r.outcome, r.subject) for r in files.audit] == [
        ("write_note", "error", "alice"), ("notes://private/x", "error", "alice"), ("read_note", "ok", "alice")]


async def test_over_legacy_sse_the_refusal_comes_as_a_tool_error(files: Files) -> None:
    reader = files.token("carol", "files:read")
    async with sse_client(f"{files.url}/sse", headers={"Authorization": f"Bearer {reader}"}) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        who = await session.call_tool("whoami", {})
        assert who.structured_content is not None and who.structured_content["subject"] == "carol"
        refused = await session.call_tool("write_note", {"name": "n", "text": "t"})
        assert refused.is_error and "files:write" in refused.content[0].text
    assert files.written == []


# ---------------------------------------------------------------------------------------------- sessions


def test_a_session_answers_only_the_subject_that_opened_it(files: Files) -> None:
    alice = files.token("alice", "files:read", "files:write")
    mallory = files.token("mallory", "files:read", "files:write")
    session = files.session(alice)
    hijack = files.call(mallory, session, "tools/call", {"name": "write_note", "arguments": {"name": "m", "text": "x"}})
    assert hijack.status_code == 404 and files.written == []
    stream = httpx.get(
        files.mcp,
        timeout=30,
        headers={"Accept": "text/event-stream", "Authorization": f"Bearer {mallory}", "Mcp-Session-Id": session},
    )
    assert stream.status_code == 404
    deleted = httpx.delete(
        files.mcp, timeout=30, headers={"Authorization": f"Bearer {mallory}", "Mcp-Session-Id": session}
    )
    assert deleted.status_code == 404
    mine = answer(
        files.call(alice, session, "tools/call", {"name": "write_note", "arguments": {"name": "a", "text": "x"}})
    )
    assert mine["result"]["content"][0]["text"] == "wrote a" and files.written == ["a"]  # still alive, still hers
    narrower = files.token("alice", "files:read")  # another token of the same subject: the same owner
    assert (
        files.call(narrower, session, "tools/call", {"name": "read_note", "arguments": {"name": "z"}}).status_code
        == 200
    )


def test_a_legacy_sse_session_answers_only_the_subject_that_opened_it(files: Files) -> None:
    alice = files.token("alice", "files:read", "files:write")
    mallory = files.token("mallory", "files:read", "files:write")
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "GET", f"{files.url}/sse", headers={"Accept": "text/event-stream", "Authorization": f"Bearer {alice}"}
        ) as sse,
    ):
        lines = sse.iter_lines()
        endpoint = next(line[5:].strip() for line in lines if line.startswith("data:"))
        url = f"{files.url}{endpoint}"
        hijack = httpx.post(
            url, json=INITIALIZE, timeout=30, headers={**MCP_HEADERS, "Authorization": f"Bearer {mallory}"}
        )
        assert hijack.status_code == 404
        mine = httpx.post(url, json=INITIALIZE, timeout=30, headers={**MCP_HEADERS, "Authorization": f"Bearer {alice}"})
        assert mine.status_code == 202
        message = next(json.loads(line[5:]) for line in lines if line.startswith("data:"))
        assert message["id"] == 1 and message["result"]["serverInfo"]["name"] == "files"


# ---------------------------------------------------------------------------------------------- step-up


async def test_step_up_with_the_official_sdk_client(files: Files) -> None:
    storage = SDKStorage()
    # Pre-registered: oidc-provider holds a dynamically registered client to the scopes it registered with
    # (the SDK registers with the first challenge's), which would refuse the step-up at the AS, not here.
    storage.client = OAuthClientInformationFull(
        client_id="pre-registered-client", redirect_uris=["http://127.0.0.1:33419/callback"],
        token_endpoint_auth_method="none", grant_types=["authorization_code", "refresh_token"], response_types=["code"])
    authorizations = files.issuer.request_count("/auth")
    async with httpx2.AsyncClient(auth=sdk_auth(files.mcp, storage), timeout=30) as http, \
            streamable_http_client(files.mcp, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        assert (await session.call_tool("read_note", {"name": "a"})).content[0].text == "note a"
        assert storage.tokens is not None and set(claims(storage.tokens.access_token)["scope"].split()) == {
            "files:read"
        }
        stepped = await session.call_tool("write_note", {"name": "b", "text": "x"})  # 403, re-authorized, retried
        assert not stepped.is_error and stepped.content[0].text == "wrote b"
    assert files.written == ["b"]
    assert set(claims(storage.tokens.access_token)["scope"].split()) == {"files:read", "files:write"}
    assert files.issuer.request_count("/auth") > authorizations  # went back to the authorization endpoint


async def test_step_up_with_the_mcp_kit_client(files: Files) -> None:
    store = MemoryTokenStore()
    auth = OAuth(files.mcp, OAuthClientConfig(redirect=HeadlessRedirect(), store=store))
    async with connect(files.mcp, auth=auth) as session:
        assert (await session.call_tool("read_note", {"name": "a"}))["content"][0]["text"] == "note a"
        assert (await session.call_tool("write_note", {"name": "c", "text": "x"}))["content"][0]["text"] == "wrote c"
    await auth.aclose()
    record = store.tokens(files.resource)
    assert record is not None and {"files:read", "files:write"} <= set(claims(record["access_token"])["scope"].split())
    assert auth.flow.authorizations == 2 and files.written == ["c"]


# ---------------------------------------------------------------------------------------------- the token stays secret


def test_the_token_is_in_no_log_line_and_no_audit_record(files: Files, caplog: pytest.LogCaptureFixture,
                                                         tmp_path: Any) -> None:
    reader = files.token("alice", "files:read")
    other = files.token("mallory", "files:read")
    with caplog.at_level(logging.DEBUG):
        session = files.session(reader)
        files.call(reader, session, "tools/call", {"name": "read_note", "arguments": {"name": "a"}})
        assert files.call(reader, session, "tools/call", {"name": "write_note", "arguments": {"name": "n", "text": "t"}}
                          ).status_code == 403
        assert files.call(other, session, "tools/call", {"name": "whoami", "arguments": {}}).status_code == 404
        files.call(reader, session, "resources/read", {"uri": "notes://public"})
        assert files.post(reader + "x", INITIALIZE).status_code == 401
    served = [
        r for r in caplog.records if r.name.startswith(("mcp_kit", "uvicorn", "starlette"))
    ]  # not the test's httpx
    assert len(served) > 3  # the server did log (the refusals among them)
    lines = "\n".join(f"{r.getMessage()} {r.args}" for r in served)
    assert "write_note refused" in lines
    for token in (reader, other):
        assert token not in lines and token[-40:] not in lines
        assert token not in json.dumps([dataclasses.asdict(r) for r in files.audit], default=str)
    assert files.audit and all(r.subject == "alice" for r in files.audit)


# ---------------------------------------------------------------------------------------------- without OAuth


async def test_without_oauth_scopes_are_not_checked_and_there_is_no_principal() -> None:
    from mcp_kit.testing import connect as connect_in_memory

    audit: list[AuditRecord] = []
    written: list[str] = []
    async with connect_in_memory(build_app(audit, written)) as client:  # the stdio path: no principal
        assert (await client.call_tool("write_note", {"name": "s", "text": "t"}))["content"][0]["text"] == "wrote s"
        assert (await client.call_tool("whoami", {}))["structuredContent"] == {"anonymous": True}
        assert (await client.read_resource("notes://private/p"))[0]["text"] == "private p"
    assert written == ["s"] and [r.subject for r in audit] == [None, None, None]


@pytest.mark.parametrize("bad", ["", "two words", 'quo"te', "back\\slash", 7])
def test_a_scope_that_is_not_a_scope_token_is_refused_at_registration(bad: Any) -> None:
    app = MCPServer("bad")
    with pytest.raises(ValueError, match="is not an OAuth scope"):
        app.tool(scopes=[bad])(lambda: None)
    with pytest.raises(ValueError, match="resource 'r://x'"):
        app.resource("r://x", scopes=[bad])(lambda: "x")
    with pytest.raises(ValueError, match="prompt 'p'"):
        app.prompt(name="p", scopes=[bad])(lambda: "x")


def test_a_single_string_is_one_scope_and_duplicates_collapse() -> None:
    app = MCPServer("one")
    app.tool(name="t", scopes="files:write")(lambda: None)
    app.tool(name="u", scopes=["a:b", "a:b", "c"])(lambda: None)
    assert app.tools.get("t").scopes == ("files:write",)  # type: ignore[union-attr]
    assert app.required_scopes("tools/call", {"name": "u"}) == ("a:b", "c")
    assert app.required_scopes("tools/call", {"name": ["not", "a", "name"]}) == ()
    assert app.declared_scopes() == ("files:write", "a:b", "c")


# ---------------------------------------------------------------------------------------------- the filesystem server


def test_the_filesystem_servers_write_tools_need_files_write(files_as: AuthorizationServer, tmp_path: Any) -> None:
    from tests.helpers.support import http_server

    (tmp_path / "a.txt").write_text("hello")
    sock, port = bound_socket()
    resource = f"http://127.0.0.1:{port}/mcp"
    command = [
        "-m",
        "servers.filesystem",
        str(tmp_path),
        "--oauth-issuer",
        files_as.issuer,
        "--oauth-resource",
        resource,
    ]
    with sock, http_server(command, listen_on=sock, env={"MCP_OAUTH_SCOPES": ""}) as url:
        server = Files(str(url), resource, files_as, [])
        document = httpx.get(f"{url}/.well-known/oauth-protected-resource/mcp").json()
        assert document["scopes_supported"] == ["files:read", "files:write"]
        assert challenge(server.post(None, INITIALIZE))["scope"] == "files:read"  # --oauth-scopes' default here
        reader = server.token("dana", "files:read")
        session = server.session(reader)
        tools = answer(server.call(reader, session, "tools/list", {}))["result"]["tools"]
        assert {"read_text_file", "write_file", "edit_file", "move_file", "create_directory"} <= {
            t["name"] for t in tools
        }
        read = answer(server.call(reader, session, "tools/call", {"name": "read_text_file",
                                                                 "arguments": {"path": str(tmp_path / "a.txt")}}))
        assert read["result"]["content"][0]["text"] == "hello"
        for name, arguments in (("write_file", {"path": str(tmp_path / "a.txt"), "content": "bye"}),
                                ("create_directory", {"path": str(tmp_path / "d")}),
                                ("move_file", {"source": str(tmp_path / "a.txt"), "destination": str(tmp_path / "b")})):
            refused = server.call(reader, session, "tools/call", {"name": name, "arguments": arguments})
            assert refused.status_code == 403, name
            assert challenge(refused)["scope"] == "files:read files:write"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"] and (tmp_path / "a.txt").read_text() == "hello"
        writer = server.token("dana", "files:read", "files:write")
        wrote = answer(server.call(writer, session, "tools/call", {"name": "write_file", "arguments": {
            "path": str(tmp_path / "a.txt"), "content": "bye"}}))
        assert not wrote["result"].get("isError") and (tmp_path / "a.txt").read_text() == "bye"
        logged = url.log.text
        assert "tools/call" in logged and reader not in logged and writer not in logged
