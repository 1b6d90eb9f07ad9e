"""An MCP client for any server, ours or not: stdio subprocesses, Streamable HTTP, legacy HTTP+SSE.

    from mcp_kit.client import connect

    async with connect("python -m servers.weather --provider sample") as session:
        names = [tool["name"] for tool in await session.list_tools()]
        result = await session.call_tool("get_weather", {"city": "Paris"})

Results are wire JSON (dicts). A JSON-RPC error raises `mcp_kit.MCPError`; a server that cannot
be started or goes away raises a `ClientError` that says why (with the server's stderr tail).
"""

from ._base import BaseClient, ProgressCallback
from ._connect import connect, is_url, open_transport
from ._errors import ClientError, ConnectionClosed, ServerNotFound
from ._legacy_sse import LegacySSETransport
from ._session import ClientSession
from ._stdio import StdioTransport
from ._streamable_http import StreamableHTTPTransport
from ._transport import Transport

__all__ = [
    "BaseClient",
    "ClientError",
    "ClientSession",
    "ConnectionClosed",
    "LegacySSETransport",
    "ProgressCallback",
    "ServerNotFound",
    "StdioTransport",
    "StreamableHTTPTransport",
    "Transport",
    "connect",
    "is_url",
    "open_transport",
]
