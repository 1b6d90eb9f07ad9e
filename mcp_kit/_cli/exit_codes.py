"""Exit statuses of `mcp-kit`, so scripts can tell failures apart."""
from .._errors import MCPKitError

OK = 0
TOOL_ERROR = 1  # the tool ran and reported isError: true
USAGE = 2  # bad command line (argparse uses 2 as well)
PROTOCOL_ERROR = 3  # the server answered with a JSON-RPC error
CONNECTION_ERROR = 4  # the server could not be started or reached, or went away
INTERRUPTED = 130
BROKEN_PIPE = 141  # stdout was closed by the reader (128 + SIGPIPE)


class CommandError(MCPKitError):
    """A failure to report as `mcp-kit: error: MESSAGE` with exit status `code`."""

    def __init__(self, message: str, code: int = USAGE) -> None:
        super().__init__(message)
        self.code = code
