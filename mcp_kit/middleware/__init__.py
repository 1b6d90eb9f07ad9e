"""Built-in middleware for the request pipeline (`mcp_kit.Middleware`), each also a shared command-line option.

    from mcp_kit.middleware import MaskErrors, RequestLog, ResultSizeLimit, Timeouts

    app = MCPServer("demo", middleware=[Timeouts(default=30), ResultSizeLimit(100_000)])

- `Timeouts`: per-tool (`@app.tool(timeout=...)`, or a map) and default limits that stop the work
  (`--tool-timeout SECONDS`).
- `MaskErrors`: an unexpected exception reaches the client as an error id, the traceback only the
  server log (`--mask-errors/--no-mask-errors`; on by default over HTTP, off over stdio).
- `ResultSizeLimit`: tool results cut to a number of characters, with a marker (`--max-result-chars`).
- `RequestLog`: one JSON line per request on stderr, arguments redacted by default (`--log-requests`).

Visibility per caller is an option of the server: `MCPServer(list_by_scope=True)` (`--list-by-scope`).
"""

from ._masking import MaskErrors
from ._request_log import RequestLog
from ._result_size import ResultSizeLimit
from ._timeouts import Timeouts

__all__ = ["MaskErrors", "RequestLog", "ResultSizeLimit", "Timeouts"]
