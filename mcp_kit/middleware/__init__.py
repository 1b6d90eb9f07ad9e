"""Built-in middleware for the request pipeline (`mcp_kit.Middleware`), each also a shared command-line option.

    from mcp_kit.middleware import MaskErrors, RateLimit, ResponseCache, ResultSizeLimit, Timeouts

    app = MCPServer("demo", middleware=[Timeouts(default=30), RateLimit("10/s", limits={"search": "5/m"})])

- `Timeouts`: per-tool (`@app.tool(timeout=...)`, or a map) and default limits that stop the work
  (`--tool-timeout SECONDS`).
- `MaskErrors`: an unexpected exception reaches the client as an error id, the traceback only the
  server log (`--mask-errors/--no-mask-errors`; on by default over HTTP, off over stdio).
- `ResultSizeLimit`: tool results cut to a number of characters, with a marker (`--max-result-chars`).
- `RequestLog`: one JSON line per request on stderr, arguments redacted by default (`--log-requests`).
- `RateLimit` and `ResponseCache` count and keep in `app.backend`: this process's memory by default,
  one Redis for every process with `--backend redis://...` (so a limit of 10/s on three processes is
  10/s, and a read cached by one process is served by all): `--rate-limit 10/s`, `--rate-limit
  search=5/m`, `--rate-limit-burst 20`, `--cache`. `ctx.state` and `ctx.user_state`
  (`mcp_kit.Context`) keep handler state in the same backend.

Visibility per caller is an option of the server: `MCPServer(list_by_scope=True)` (`--list-by-scope`).
"""

from .._protocol.errors import RateLimited
from ._cache import ResponseCache
from ._masking import MaskErrors
from ._rate_limit import RateLimit
from ._rates import Rate, parse_rate
from ._request_log import RequestLog
from ._result_size import ResultSizeLimit
from ._timeouts import Timeouts

__all__ = ["MaskErrors", "Rate", "RateLimit", "RateLimited", "RequestLog", "ResponseCache", "ResultSizeLimit",
           "Timeouts", "parse_rate"]
