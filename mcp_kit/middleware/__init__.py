"""Built-in middleware: rate limits and the response cache, whose state lives in the application's backend.

    from mcp_kit.middleware import RateLimit, ResponseCache

    app = MCPServer("demo", middleware=[RateLimit("10/s", limits={"search": "5/m"}), ResponseCache()])

Both count and keep in `app.backend`: this process's memory by default, one Redis for every
process with `--backend redis://...` (so a limit of 10/s on three processes is 10/s, and a read
cached by one process is served by all). The same from the command line: `--rate-limit 10/s`,
`--rate-limit search=5/m`, `--rate-limit-burst 20`, `--cache` (see `add_run_arguments`).
`ctx.state` and `ctx.user_state` (`mcp_kit.Context`) keep handler state in the same backend.
"""

from .._protocol.errors import RateLimited
from ._cache import ResponseCache
from ._rate_limit import RateLimit
from ._rates import Rate, parse_rate

__all__ = ["Rate", "RateLimit", "RateLimited", "ResponseCache", "parse_rate"]
