"""The mcp-kit client under the conformance suite's client-side `auth/*` scenarios (conformance/run.sh).

    conformance client --command "python tests/conformance/auth_client.py" --suite auth --spec-version V

The suite appends the server URL and sets MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT (JSON;
pre-registered `client_id`/`client_secret` for auth/pre-registration) and
MCP_CONFORMANCE_PROTOCOL_VERSION. Every scenario gets the same well-behaved client: mcp_kit's
OAuth (`mcp_kit.client.oauth`, headless: the suite's authorization server redirects at once), with a
Client ID Metadata Document URL it may use where the server supports them, then tools/list and a
call of the first tool. Dated versions use `mcp_kit.client._connect` (the initialize handshake);
2026-07-28 sends stateless requests (per-request `_meta`) through the same OAuth, since mcp_kit's
client session speaks the handshake era only. Exit status 0 on success, 1 with the reason on stderr.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from typing import Any

import anyio
import httpx

from mcp_kit.client import connect
from mcp_kit.client.oauth import HeadlessRedirect, OAuth, OAuthClientConfig

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # the suite's fixed CIMD URL
STATELESS_VERSIONS = ("2026-07-28",)
CLIENT_INFO = {"name": "mcp-kit-conformance", "version": "1.0.0"}


async def handshake_era(url: str, auth: OAuth, version: str | None) -> None:
    options = {"protocol_version": version} if version else {}
    async with connect(url, auth=auth, timeout=20, **options) as session:
        tools = await session.list_tools()
        if tools:
            await session.call_tool(tools[0]["name"], {})


async def stateless_era(url: str, auth: OAuth, version: str) -> None:
    ids = itertools.count(1)
    meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": version}
    async with httpx.AsyncClient(auth=auth, timeout=20) as http:

        async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            body = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": {**params, "_meta": meta}}
            response = await http.post(url, json=body, headers=headers)
            answer = response.json()
            if "error" in answer or response.status_code != 200:
                raise RuntimeError(f"{method}: HTTP {response.status_code} {answer}")
            return dict(answer["result"])

        tools = (await request("tools/list", {})).get("tools") or []
        if tools:
            await request("tools/call", {"name": tools[0]["name"], "arguments": {}})


async def main(url: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    auth = OAuth(url, OAuthClientConfig(
        redirect=HeadlessRedirect("http://localhost:3000/callback"), client_name="mcp-kit conformance client",
        client_id=context.get("client_id"), client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL))
    try:
        if version in STATELESS_VERSIONS:
            assert version is not None
            await stateless_era(url, auth, version)
        else:
            await handshake_era(url, auth, version)
    finally:
        await auth.aclose()


if __name__ == "__main__":
    try:
        anyio.run(main, sys.argv[-1])
    except Exception as exc:  # the scenario's checks judge; the reason goes to stderr
        print(f"auth_client: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
