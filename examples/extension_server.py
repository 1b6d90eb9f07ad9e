"""A user-written MCP extension (SEP-2133) in a page: feature flags a client can opt into.

    python examples/extension_server.py            # serve over stdio (or --transport http --port 8000)
    python examples/extension_server.py --demo     # two clients: one declares the extension, one does not

The extension `com.example/flags` declares its flags in `capabilities.extensions`, serves
`flags/list` (through the same middleware as every core method), hears `notifications/flags/seen`,
marks flagged tools with `_meta`, and shows a flagged tool only to a client that declared the
extension with that flag in its `optIn` settings: every other client sees the server as before.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from mcp_kit import Context, MCPServer
from mcp_kit.extensions import Extension, method, notification


class FeatureFlags(Extension):
    id = "com.example/flags"

    def __init__(self, flags: dict[str, str]) -> None:
        self.flags = flags  # flag -> the tool it guards
        self.seen: list[str] = []

    def settings(self, version: str) -> dict[str, Any]:
        return {"flags": sorted(self.flags)}

    @method("flags/list")
    async def list_flags(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        chosen = self.require_client(ctx, "flags/list").get("optIn", [])
        return {"flags": [{"name": name, "tool": tool, "on": name in chosen} for name, tool in self.flags.items()]}

    @notification("notifications/flags/seen")
    async def flags_seen(self, params: dict[str, Any], ctx: Context) -> None:
        self.seen.append(str(params.get("flag")))

    def tool_meta(self, tool: Any) -> dict[str, Any] | None:
        flag = next((name for name, guarded in self.flags.items() if guarded == tool.name), None)
        return {self.id: {"flag": flag}} if flag else None

    def tool_visible(self, tool: Any, ctx: Context) -> bool:
        flag = next((name for name, guarded in self.flags.items() if guarded == tool.name), None)
        return flag is None or flag in (self.client_settings(ctx) or {}).get("optIn", [])


app = MCPServer("flags-demo")
flags = app.add_extension(FeatureFlags({"beta-forecast": "forecast_v2"}))


@app.tool(read_only=True)
def forecast(city: str) -> str:
    """Tomorrow's weather in a city."""
    return f"{city}: sunny"


@app.tool(read_only=True)
def forecast_v2(city: str) -> str:
    """Tomorrow's weather in a city, hour by hour (beta)."""
    return f"{city}: sunny from 9 to 17"


async def demo() -> None:
    from mcp_kit.testing import connect

    async with connect(app) as plain:
        print("plain client tools:", [tool["name"] for tool in (await plain.request("tools/list", {}))["tools"]])
    async with connect(app, extensions={FeatureFlags.id: {"optIn": ["beta-forecast"]}}) as client:
        print("server declares:", client.initialize_result["capabilities"]["extensions"])
        listed = (await client.request("tools/list", {}))["tools"]
        print("opted-in client tools:", [(tool["name"], tool.get("_meta")) for tool in listed])
        print("flags/list:", (await client.request("flags/list", {}))["flags"])
        await client.notify("notifications/flags/seen", {"flag": "beta-forecast"})
        print("call:", (await client.call_tool("forecast_v2", {"city": "Oslo"}))["content"][0]["text"])
    print("seen:", flags.seen)


if __name__ == "__main__":
    if "--demo" in sys.argv[1:]:
        anyio.run(demo)
    else:
        app.run_from_args()
