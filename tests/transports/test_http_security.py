"""DNS-rebinding guards, near miss by near miss: the Host and Origin allow-lists accept exact names only.

Each case is checked twice: on the policy itself, and as raw bytes through a real uvicorn serving
examples/demo_server.py on 127.0.0.1, where the guard sits in front of `/mcp`, `/sse` and `/messages/`.
A refused request gets 403; an accepted one reaches the server, which answers a stateless
`server/discover` with 200. A browser on an attacker's page controls the name (`localhost.evil.example`,
`127.0.0.1.nip.io`), the scheme and the port, so each of those is varied around the allowed values.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_kit._transports.http_security import BodyTooLarge, SecurityMiddleware, SecurityPolicy
from tests.helpers.support import http_server

PORT = 8000
LOOPBACK = SecurityPolicy.for_bind("127.0.0.1", PORT)

ALLOWED_HOSTS = [
    "localhost", f"localhost:{PORT}", f"LOCALHOST:{PORT}", "127.0.0.1", f"127.0.0.1:{PORT}", "[::1]", f"[::1]:{PORT}",
    "localhost:",  # an empty port is still `host [ ":" port ]`
]
REFUSED_HOSTS = [
    "localhost.evil.example", f"localhost.evil.example:{PORT}",  # an allowed name as a prefix
    "evil-localhost", "evil.localhost", f"evil.localhost:{PORT}",  # ... and as a suffix
    "127.0.0.1.nip.io", f"127.0.0.1.nip.io:{PORT}", "127.0.0.1.evil.example",
    "127.0.0.1:1@evil.example", "localhost@evil.example", "evil.example@localhost",  # userinfo is not a Host
    "[::1].evil.example", "[::1]:1@evil.example", "[::1]evil", "[::2]", "::1",  # IPv6 forms
    "localhost.", "127.0.0.1.", f"localhost.:{PORT}",  # trailing dots: exact names only
    "localhost:abc", f"localhost:{PORT}:{PORT}", "localhost:-1", "localhost/x", "local host",  # not a port
    "127.0.0.2", "0.0.0.0", "evil.example", "",
]
ALLOWED_ORIGINS = [
    "http://localhost", f"http://localhost:{PORT}", "https://localhost:8443", f"http://127.0.0.1:{PORT}",
    f"http://[::1]:{PORT}", "https://[::1]", f"HTTP://LOCALHOST:{PORT}", "http://localhost/",
]
REFUSED_ORIGINS = [
    "http://localhost.evil.example",
    f"http://localhost.evil.example:{PORT}",  # prefix of an allowed origin
    "http://evil-localhost",
    "http://evil.localhost",  # suffix
    f"http://127.0.0.1.nip.io:{PORT}",
    "https://127.0.0.1.evil.example",
    "http://localhost@evil.example",
    f"http://localhost:{PORT}@evil.example",
    "http://evil.example@localhost",
    "http://[::1].evil.example",
    "http://[::1]@evil.example",
    "http://[::2]",
    "http://localhost.",
    f"http://127.0.0.1.:{PORT}",  # trailing dots
    "ws://localhost",
    "file://localhost",
    "ftp://127.0.0.1",
    "chrome-extension://localhost",
    "localhost",
    "//localhost",
    "http://",
    "http:///localhost",  # other schemes, no scheme, no host
    "http://localhost:abc",
    "http://localhost:99999",
    "http://localhost/evil",
    "http://localhost?x",
    "http://localhost#x",
    "null",
    "",
    "http://evil.example",
]


@pytest.mark.parametrize("host", ALLOWED_HOSTS)
def test_loopback_policy_accepts_the_loopback_names_on_any_port(host: str) -> None:
    assert LOOPBACK.host_allowed(host)


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_loopback_policy_refuses_near_miss_hosts(host: str) -> None:
    assert not LOOPBACK.host_allowed(host)


def test_a_missing_host_is_refused_when_hosts_are_checked() -> None:
    assert not LOOPBACK.host_allowed(None)
    assert SecurityPolicy.for_bind("0.0.0.0").host_allowed(None)  # no allow-list: nothing to check


@pytest.mark.parametrize("origin", [None, *ALLOWED_ORIGINS])
def test_loopback_policy_accepts_loopback_origins_and_no_origin(origin: str | None) -> None:
    assert LOOPBACK.origin_allowed(origin)


@pytest.mark.parametrize("origin", REFUSED_ORIGINS)
def test_loopback_policy_refuses_near_miss_origins(origin: str) -> None:
    assert not LOOPBACK.origin_allowed(origin)


def test_configured_names_are_matched_exactly_too() -> None:
    policy = SecurityPolicy.for_bind("0.0.0.0", allowed_hosts=["mcp.example.com"],
                                     allowed_origins=["https://app.example.com", "http://localhost:3000"])
    assert policy.host_allowed("mcp.example.com") and policy.host_allowed("MCP.example.com:443")
    for host in ("mcp.example.com.evil.example", "evil-mcp.example.com", "example.com", "localhost", "mcp.example.co"):
        assert not policy.host_allowed(host), host
    assert policy.origin_allowed("https://app.example.com") and policy.origin_allowed("https://app.example.com:8443")
    assert policy.origin_allowed("http://localhost:3000")  # an entry with a port allows that port...
    assert not policy.origin_allowed("http://localhost:3001")  # ... only
    for origin in ("https://app.example.com.evil.example", "https://evil-app.example.com", "http://app.example.com",
                   "https://app.example.co", "https://app.example.com@evil.example", "null"):
        assert not policy.origin_allowed(origin), origin


def test_a_public_bind_checks_no_host_and_allows_no_browser_origin_unless_configured() -> None:
    public = SecurityPolicy.for_bind("0.0.0.0")
    assert public.host_allowed("anything.example") and public.origin_allowed(None)
    assert not public.origin_allowed("http://localhost") and not public.origin_allowed("http://0.0.0.0")
    anyone = SecurityPolicy.for_bind("0.0.0.0", allowed_origins=["*"])
    assert anyone.origin_allowed("http://evil.example") and anyone.origin_allowed("null")


def test_configured_hosts_may_carry_a_port_and_any_case() -> None:
    policy = SecurityPolicy(allowed_hosts=["MCP.example.com:8443", "[::1]:9"])
    assert policy.host_allowed("mcp.example.com:8443") and policy.host_allowed("mcp.example.com")
    assert policy.host_allowed("[::1]") and not policy.host_allowed("example.com:8443")


def test_defaults_body_limit_16_mib_and_keyword_options() -> None:
    assert SecurityPolicy().max_body == SecurityPolicy.for_bind("127.0.0.1").max_body == 16 * 1024 * 1024
    policy = SecurityPolicy.for_bind(host="localhost", port=PORT, allowed_origins=["http://app.example"])
    assert policy.origin_allowed("http://app.example") and policy.host_allowed("localhost")
    with pytest.raises(TypeError):
        SecurityPolicy.for_bind("localhost", PORT, ["http://app.example"])  # type: ignore[misc]  # keyword-only


def test_a_host_read_from_the_command_line_is_recognised_as_loopback() -> None:
    from_argv = "".join(["local", "host"])  # a fresh string, as argparse hands over, not an interned literal
    assert SecurityPolicy.for_bind(from_argv).allowed_hosts


@pytest.mark.parametrize(("bind", "loopback"), [("127.0.0.1", True), ("127.9.9.9", True), ("localhost", True),
                                                ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("", False),
                                                ("localhost.evil.example", False), ("192.0.2.1", False)])
def test_the_loopback_defaults_apply_only_to_a_loopback_bind(bind: str, loopback: bool) -> None:
    policy = SecurityPolicy.for_bind(bind)
    assert bool(policy.allowed_hosts) is loopback
    assert policy.host_allowed("evil.example") is not loopback


# ---------------------------------------------------------------------------- the middleware, in process

TOKEN = "s3cret-token"


class Recorded:
    """What the guarded app saw, and what the client got."""

    def __init__(self) -> None:
        self.reached: list[dict[str, Any]] = []
        self.body = b""
        self.sent: list[dict[str, Any]] = []

    @property
    def status(self) -> int:
        return self.sent[0]["status"]

    @property
    def headers(self) -> dict[bytes, bytes]:
        return dict(self.sent[0]["headers"])

    @property
    def error(self) -> dict[str, Any]:
        reply = json.loads(self.sent[1]["body"])
        assert reply["jsonrpc"] == "2.0" and reply["id"] is None
        return reply["error"]


async def guard(policy: SecurityPolicy, headers: dict[str, str], *, path: str = "/mcp", scope_type: str = "http",
                chunks: tuple[bytes, ...] = (b"",)) -> Recorded:
    """Run one request through SecurityMiddleware in front of an app that reads the whole body and answers 200."""
    recorded = Recorded()
    pending = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1} for i, chunk in enumerate(chunks)
    ]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        recorded.reached.append(scope)
        if scope["type"] == "http":
            while True:
                message = await receive()
                recorded.body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            await send({"type": "http.response.start", "status": 200, "headers": []})

    async def receive() -> dict[str, Any]:
        return pending.pop(0)

    async def send(message: dict[str, Any]) -> None:
        recorded.sent.append(message)

    scope = {"type": scope_type, "path": path,
             "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]}
    await SecurityMiddleware(app, policy)(scope, receive, send)
    return recorded


LOCAL = {"Host": f"127.0.0.1:{PORT}"}
GUARDED = SecurityPolicy.for_bind("127.0.0.1", PORT, auth_token=TOKEN, max_body=10)
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.anyio
async def test_refusals_are_json_rpc_errors_with_their_status_and_length() -> None:
    for headers, status, text in (({"Host": "127.0.0.1.nip.io"}, 403, "Host header not allowed"),
                                  ({**LOCAL, "Origin": "http://localhost.evil.example"}, 403, "Origin not allowed"),
                                  (LOCAL, 401, "Unauthorized"),
                                  ({**LOCAL, **AUTH, "Content-Length": "11"}, 413, "the limit is 10 bytes")):
        recorded = await guard(GUARDED, headers)
        assert recorded.reached == [] and recorded.status == status, headers
        assert recorded.error["code"] == -32600 and text in recorded.error["message"]
        assert recorded.headers[b"content-type"] == b"application/json"
        assert int(recorded.headers[b"content-length"]) == len(recorded.sent[1]["body"])


@pytest.mark.anyio
async def test_the_checks_run_in_order_host_origin_token() -> None:
    assert (
        (await guard(GUARDED, {"Host": "evil.example", "Origin": "null"}))
        .error["message"]
        .startswith("Forbidden: Host")
    )
    assert (await guard(GUARDED, {**LOCAL, "Origin": "null"})).error["message"].startswith("Forbidden: Origin")
    assert (await guard(GUARDED, {**LOCAL, "Content-Length": "99"})).status == 401


@pytest.mark.anyio
@pytest.mark.parametrize(("authorization", "accepted"), [
    (f"Bearer {TOKEN}", True), (f"bearer {TOKEN}", True), (f"BEARER {TOKEN} ", True),
    (None, False), ("", False), ("Bearer", False), ("Bearer ", False), (TOKEN, False), (f"Basic {TOKEN}", False),
    (f"Bearer {TOKEN[:-1]}", False), (f"Bearer {TOKEN}x", False), (f"Bearer x{TOKEN}", False),
    (f"Bearer {TOKEN.upper()}", False), (f"Bearer{TOKEN}", False),
])
async def test_the_bearer_token_must_match_exactly(authorization: str | None, accepted: bool) -> None:
    headers = dict(LOCAL) if authorization is None else {**LOCAL, "Authorization": authorization}
    recorded = await guard(GUARDED, headers)
    assert bool(recorded.reached) is accepted
    if not accepted:
        challenge = recorded.headers[b"www-authenticate"].decode()
        assert recorded.status == 401 and challenge.startswith('Bearer realm="mcp", ')
        assert ('error="invalid_token"' in challenge) is bool(authorization)
    assert SecurityPolicy.for_bind("127.0.0.1").token_ok(authorization)  # no token configured: nothing to check


@pytest.mark.anyio
async def test_body_limit_by_content_length_and_by_what_actually_arrives() -> None:
    exact = await guard(GUARDED, {**LOCAL, **AUTH, "Content-Length": "10"}, chunks=(b"0123456789",))
    assert exact.status == 200 and exact.body == b"0123456789"
    assert (await guard(GUARDED, {**LOCAL, **AUTH, "Content-Length": "11"})).status == 413
    split = await guard(GUARDED, {**LOCAL, **AUTH}, chunks=(b"01234", b"56789", b""))
    assert split.status == 200 and split.body == b"0123456789"
    with pytest.raises(BodyTooLarge, match="the limit is 10 bytes"):  # chunked, no length: stopped on the way
        await guard(GUARDED, {**LOCAL, **AUTH, "Content-Length": "x"}, chunks=(b"012345", b"67890"))


@pytest.mark.anyio
async def test_open_paths_and_other_scope_types_pass_unchecked() -> None:
    health = await guard(GUARDED, {"Host": "evil.example"}, path="/healthz")
    assert health.status == 200 and len(health.reached) == 1
    lifespan = await guard(GUARDED, {}, scope_type="lifespan")
    assert lifespan.reached[0]["type"] == "lifespan" and lifespan.sent == []
    assert (await guard(GUARDED, {"Host": "evil.example"}, path="/healthz/x")).status == 403


# ---------------------------------------------------------------------------- through a real uvicorn

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
DISCOVER = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}).encode()


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with http_server(["examples/demo_server.py"]) as base:
        yield int(base.rsplit(":", 1)[1])


def raw_request(
    port: int, method: str, path: str, headers: list[tuple[str, str]], body: bytes = b""
) -> tuple[int, bytes]:
    """Send a request byte for byte (Host only when given); its status and response (headers only for a stream)."""
    head = [f"{method} {path} HTTP/1.1", *(f"{name}: {value}" for name, value in headers),
            f"Content-Length: {len(body)}", "Connection: close", "", ""]
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall("\r\n".join(head).encode("latin-1") + body)
        while chunk := sock.recv(65536):
            received += chunk
            header, _, _ = received.partition(b"\r\n\r\n")
            if b"\r\n\r\n" in received and b"text/event-stream" in header.lower():
                break  # a stream stays open: its status is all we need
    return int(received.split(b" ", 2)[1]), received


def discover(port: int, headers: list[tuple[str, str]]) -> tuple[int, bytes]:
    """A stateless 2026-07-28 `server/discover` on /mcp: 200 when the guard lets it through."""
    return raw_request(
        port,
        "POST",
        "/mcp",
        [
            *headers,
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
        ],
        DISCOVER,
    )


@pytest.mark.parametrize("host", ALLOWED_HOSTS)
def test_uvicorn_serves_allowed_hosts(port: int, host: str) -> None:
    status, received = discover(port, [("Host", host)])
    assert status == 200, received
    assert b'"supportedVersions"' in received


@pytest.mark.parametrize("host", [*REFUSED_HOSTS, None])
def test_uvicorn_refuses_near_miss_hosts_and_a_missing_host(port: int, host: str | None) -> None:
    status, received = discover(port, [] if host is None else [("Host", host)])
    assert status == 403, received
    assert b"Host header not allowed" in received


@pytest.mark.parametrize("origin", ALLOWED_ORIGINS)
def test_uvicorn_serves_allowed_origins(port: int, origin: str) -> None:
    status, received = discover(port, [("Host", f"127.0.0.1:{port}"), ("Origin", origin)])
    assert status == 200, received


@pytest.mark.parametrize("origin", REFUSED_ORIGINS)
def test_uvicorn_refuses_near_miss_origins(port: int, origin: str) -> None:
    status, received = discover(port, [("Host", f"127.0.0.1:{port}"), ("Origin", origin)])
    assert status == 403, received
    assert b"Origin not allowed" in received


@pytest.mark.parametrize(("method", "path"), [("GET", "/sse"), ("POST", "/messages/"), ("POST", "/messages"),
                                              ("GET", "/mcp"), ("DELETE", "/mcp")])
def test_the_legacy_endpoints_and_every_method_sit_behind_the_same_guard(port: int, method: str, path: str) -> None:
    local = f"127.0.0.1:{port}"
    for headers, reason in (([("Host", "127.0.0.1.nip.io")], b"Host header not allowed"),
                            ([("Host", "127.0.0.1:1@evil.example")], b"Host header not allowed"),
                            ([("Host", local), ("Origin", "http://localhost.evil.example")], b"Origin not allowed"),
                            ([("Host", local), ("Origin", "null")], b"Origin not allowed")):
        status, received = raw_request(port, method, path, headers)
        assert (status, reason in received) == (403, True), (headers, received)
    status, received = raw_request(port, method, path, [("Host", local), ("Origin", f"http://localhost:{port}")])
    assert status != 403, received  # past the guard: the endpoint itself answers


def test_healthz_needs_no_allowed_host(port: int) -> None:
    status, received = raw_request(port, "GET", "/healthz", [("Host", "evil.example")])
    assert status == 200 and received.endswith(b'{"status":"ok"}')


@pytest.mark.parametrize("how", ["option", "environment"])
def test_allowed_host_adds_a_public_name_to_the_loopback_names_of_a_server_behind_a_proxy(how: str) -> None:
    # a reverse proxy on the same machine forwards the public name in Host to a server bound to loopback
    args, env = (["--allowed-host", "mcp.example.test"], {}) if how == "option" else \
        ([], {"MCP_ALLOWED_HOSTS": "other.example.test, mcp.example.test"})
    with http_server(["examples/demo_server.py", *args], env=env) as base:
        port = int(base.rsplit(":", 1)[1])
        assert discover(port, [("Host", "mcp.example.test")])[0] == 200
        assert discover(port, [("Host", f"MCP.example.test:{port}")])[0] == 200
        assert discover(port, [("Host", f"127.0.0.1:{port}")])[0] == 200  # the loopback names stay
        assert discover(port, [("Host", "mcp.example.test.evil.example")])[0] == 403


def test_without_allowed_host_a_proxied_public_name_is_refused(port: int) -> None:
    status, received = discover(port, [("Host", "mcp.example.test")])
    assert status == 403 and b"Host header not allowed" in received
