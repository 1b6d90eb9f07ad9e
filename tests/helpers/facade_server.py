"""A server behind the OAuth facade, run as its own process with the --oauth-upstream options: for the
multi-process tests (several of these on one Redis, each step of a flow landing on another).

    python tests/helpers/facade_server.py --transport http --oauth-upstream oidc --oauth-discovery-url URL \
        --oauth-client-id ID --oauth-client-secret-file FILE --oauth-resource URL --backend redis://...

`USERINFO_URL` (environment) is the provider's user endpoint the `upstream_user` tool calls.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import httpx

from mcp_kit import Context, MCPServer, add_run_arguments

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
    return {"sub": answer.json().get("sub"), "pid": os.getpid()}


if __name__ == "__main__":
    app.run_from_args(add_run_arguments(argparse.ArgumentParser(description="facade test server")).parse_args())
