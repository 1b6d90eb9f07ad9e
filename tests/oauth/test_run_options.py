"""--oauth-* run options (and MCP_OAUTH_* variables) protect every HTTP server: the reference servers and `mcp-kit run`.

Real subprocesses on 127.0.0.1, a real authorization server, and the mcp-kit client authorizing
headlessly against a reference server.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx

from ..support import ROOT, free_port, stop
from .authorization_server import AuthorizationServer

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@contextlib.contextmanager
def http_server(args: list[str], *, env_factory: Callable[[int], dict[str, str]] | None = None,
                args_factory: Callable[[int], list[str]] | None = None) -> Iterator[str]:
    """`python ARGS --transport http --port P [more args]` until /healthz answers; the factories get P.

    The resource URI names the port before the server starts, hence a port chosen up front (the
    subprocess cannot be handed a bound socket).
    """
    port = free_port()
    command = [sys.executable, *args, "--transport", "http", "--host", "127.0.0.1", "--port", str(port),
               *(args_factory(port) if args_factory else [])]
    env = {**os.environ, **(env_factory(port) if env_factory else {})}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited early: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not become ready")
            time.sleep(0.05)
        yield base
    finally:
        stop(process)


def test_reference_server_protected_through_the_environment(authorization_server: AuthorizationServer) -> None:
    port_holder: dict[str, str] = {}

    def env_for(port: int) -> dict[str, str]:
        port_holder["resource"] = f"http://127.0.0.1:{port}/mcp"
        return {"MCP_OAUTH_ISSUER": authorization_server.issuer, "MCP_OAUTH_RESOURCE": port_holder["resource"],
                "MCP_OAUTH_SCOPES": "mcp:read"}

    with http_server(["-m", "servers.weather", "--provider", "sample"], env_factory=env_for) as base:
        resource = port_holder["resource"]
        metadata = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp").json()
        assert metadata["resource"] == resource and metadata["scopes_supported"] == ["mcp:read"]
        assert metadata["authorization_servers"] == [authorization_server.issuer]
        refused = httpx.post(f"{base}/mcp", json={}, headers=MCP_HEADERS)
        assert refused.status_code == 401 and 'scope="mcp:read"' in refused.headers["www-authenticate"]
        listed = subprocess.run([sys.executable, "-m", "mcp_kit.cli", "call", f"{base}/mcp", "search_location",
                                 "query=Paris", "--oauth-headless"], cwd=ROOT, capture_output=True, text=True,
                                timeout=120)
        assert listed.returncode == 0, listed.stderr
        assert "Paris" in listed.stdout


def test_mcp_kit_run_takes_the_oauth_options(authorization_server: AuthorizationServer) -> None:
    def args_for(port: int) -> list[str]:
        return ["--oauth-issuer", authorization_server.issuer, "--oauth-resource", f"http://127.0.0.1:{port}/mcp",
                "--oauth-scopes", "mcp:read", "mcp:write"]

    with http_server(["-m", "mcp_kit.cli", "run", "examples/demo_server.py"], args_factory=args_for) as base:
        assert httpx.get(f"{base}/.well-known/oauth-protected-resource").json()["scopes_supported"] == [
            "mcp:read", "mcp:write"]
        assert httpx.post(f"{base}/mcp", json={}, headers=MCP_HEADERS).status_code == 401
        assert httpx.get(f"{base}/healthz").status_code == 200


def test_an_issuer_without_a_resource_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, "-m", "servers.weather", "--provider", "sample", "--transport", "http",
                           "--oauth-issuer", "https://auth.example.com"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ})
    assert done.returncode == 2
    assert "--oauth-issuer needs --oauth-resource" in done.stderr
