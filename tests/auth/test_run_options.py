"""--oauth-* run options (and MCP_OAUTH_* variables) protect every HTTP server: the reference servers and `mcp-kit run`.

Real subprocesses on 127.0.0.1, a real authorization server, and the mcp-kit client authorizing
headlessly against a reference server.
"""

from __future__ import annotations

import os
import subprocess
import sys

import httpx

from tests.helpers.authorization_server import AuthorizationServer
from tests.helpers.support import ROOT, http_server, listening_socket

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_reference_server_protected_through_the_environment(authorization_server: AuthorizationServer) -> None:
    # The resource URI names the port before the server starts: the test binds the socket and hands it over.
    with listening_socket() as sock:
        resource = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        env = {"MCP_OAUTH_ISSUER": authorization_server.issuer, "MCP_OAUTH_RESOURCE": resource,
               "MCP_OAUTH_SCOPES": "mcp:read"}
        with http_server(["-m", "servers.weather", "--provider", "sample"], env=env, listen_on=sock) as base:
            metadata = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp").json()
            assert metadata["resource"] == resource and metadata["scopes_supported"] == ["mcp:read"]
            assert metadata["authorization_servers"] == [authorization_server.issuer]
            refused = httpx.post(f"{base}/mcp", json={}, headers=MCP_HEADERS)
            assert refused.status_code == 401 and 'scope="mcp:read"' in refused.headers["www-authenticate"]
            listed = subprocess.run([sys.executable, "-m", "mcp_kit", "call", f"{base}/mcp", "search_location",
                                     "query=Paris", "--oauth-headless"], cwd=ROOT, capture_output=True, text=True,
                                    timeout=120)
            assert listed.returncode == 0, listed.stderr
            assert "Paris" in listed.stdout


def test_mcp_kit_run_takes_the_oauth_options(authorization_server: AuthorizationServer) -> None:
    with listening_socket() as sock:
        options = ["--oauth-issuer", authorization_server.issuer, "--oauth-scopes", "mcp:read", "mcp:write",
                   "--oauth-resource", f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"]
        with http_server(["-m", "mcp_kit", "run", "examples/demo_server.py", *options], listen_on=sock) as base:
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
