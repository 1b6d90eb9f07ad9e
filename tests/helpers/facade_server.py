"""A server behind the OAuth facade, run as its own process with the --oauth-upstream options: for the
multi-process tests (several of these on one Redis, each step of a flow landing on another).

    python tests/helpers/facade_server.py --transport http --oauth-upstream oidc --oauth-discovery-url URL \
        --oauth-client-id ID --oauth-client-secret-file FILE --oauth-resource URL --backend redis://...

`USERINFO_URL` (environment) is the provider's user endpoint the `upstream_user` tool calls.
`GITHUB_LIKE_URL` (environment) points `--oauth-upstream github` at a GitHub-shaped provider on loopback
(tests.helpers.github_like) instead of github.com: its OAuth endpoints and its `/user` at that URL.
"""

from __future__ import annotations

import argparse
import functools
import os
from typing import Any

import httpx

from mcp_kit import Context, MCPServer, add_run_arguments
from mcp_kit.auth import _facade_presets

if os.environ.get("GITHUB_LIKE_URL"):
    _github = _facade_presets.github
    _facade_presets.github = functools.partial(_github, base_url=os.environ["GITHUB_LIKE_URL"],
                                               api_url=os.environ["GITHUB_LIKE_URL"])

app = MCPServer("facade-process")


@app.tool(read_only=True)
def whoami(ctx: Context) -> dict[str, Any]:
    """Who is calling, and which process answers."""
    assert ctx.principal is not None
    return {"subject": ctx.principal.subject, "scopes": sorted(ctx.principal.scopes), "pid": os.getpid()}


@app.tool(scopes=["notes:write"])
def write_note(name: str) -> dict[str, Any]:
    """Needs notes:write."""
    return {"wrote": name, "pid": os.getpid()}


@app.tool(read_only=True)
async def upstream_user(ctx: Context) -> dict[str, Any]:
    """The provider's user endpoint, called with the caller's upstream token."""
    token = await ctx.upstream_token()
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(os.environ["USERINFO_URL"], headers={"Authorization": token.authorization})
    user = answer.json()
    return {"sub": user.get("sub"), "login": user.get("login"), "pid": os.getpid()}


if __name__ == "__main__":
    app.run_from_args(add_run_arguments(argparse.ArgumentParser(description="facade test server")).parse_args())
