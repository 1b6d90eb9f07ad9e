"""A stdio server (npm server-filesystem) behind `mcp-kit proxy --transport http` with OAuth, a `--scope-map`,
and `--workers 3` on a real Redis: a token without the mapped scope is refused (403 naming it), one with it is
served, whichever worker each request lands on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.auth.test_scopes import INITIALIZE, Files, answer, challenge, files_as  # noqa: F401  (fixture)
from tests.helpers.authorization_server import AuthorizationServer
from tests.helpers.redis_support import redis_server, require_redis
from tests.helpers.support import http_server
from tests.helpers.uvicorn_thread import bound_socket
from tests.proxy.npm_servers import filesystem


def test_a_proxied_stdio_server_with_oauth_and_three_workers_on_redis(files_as: AuthorizationServer,  # noqa: F811
                                                                      tmp_path: Path) -> None:
    require_redis()
    (tmp_path / "a.txt").write_text("hello")
    with redis_server() as redis:
        sock, port = bound_socket()
        resource = f"http://127.0.0.1:{port}/mcp"
        command = ["-m", "mcp_kit", "proxy", *filesystem(tmp_path), "--oauth-issuer", files_as.issuer,
                   "--oauth-resource", resource, "--oauth-scopes", "files:read",
                   "--scope-map", "write_file=files:write", "--scope-map", "edit_*=files:write",
                   "--workers", "3", "--backend", redis.url]
        with sock, http_server(command, listen_on=sock, env={"MCP_OAUTH_SCOPES": ""}) as url:
            server = Files(str(url), resource, files_as, [])
            assert challenge(server.post(None, INITIALIZE))["scope"] == "files:read"  # no token: 401
            reader = server.token("erin", "files:read")
            session = server.session(reader)
            tools: dict[str, Any] = answer(server.call(reader, session, "tools/list", {}))["result"]
            assert {"read_text_file", "write_file"} <= {tool["name"] for tool in tools["tools"]}
            for attempt in range(6):  # several requests: they land on several of the three workers
                read = answer(server.call(reader, session, "tools/call", {
                    "name": "read_text_file", "arguments": {"path": str(tmp_path / "a.txt")}}, request_id=10 + attempt))
                assert read["result"]["content"][0]["text"] == "hello"
            write = {"name": "write_file", "arguments": {"path": str(tmp_path / "a.txt"), "content": "bye"}}
            refused = server.call(reader, session, "tools/call", write)
            assert refused.status_code == 403
            assert "files:write" in challenge(refused)["scope"]
            assert (tmp_path / "a.txt").read_text() == "hello"
            writer = server.token("erin", "files:read", "files:write")
            wrote = answer(server.call(writer, server.session(writer), "tools/call", write))
            assert not wrote["result"].get("isError"), wrote
            assert (tmp_path / "a.txt").read_text() == "bye"
            assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
