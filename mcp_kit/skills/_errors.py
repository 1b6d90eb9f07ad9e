"""Why skills cannot be served: the skills package's exceptions."""

from __future__ import annotations

from .._errors import MCPKitError
from .._protocol.errors import MCPError
from .._protocol.jsonrpc import INVALID_PARAMS


class SkillError(MCPKitError, ValueError):
    """Skills that cannot be served as they are; the message lists every problem found."""


class ScanError(MCPKitError, ValueError):
    """The tree could not be read within its limits (the message says which and where)."""


class FrontmatterError(MCPKitError, ValueError):
    """The frontmatter is missing, is not valid YAML, or breaks the Agent Skills rules (the message says how)."""


class SkillNotFound(MCPError):
    """-32602: the URI names no skill (or no directory) this server serves."""

    def __init__(self, uri: str, message: str) -> None:
        super().__init__(INVALID_PARAMS, message, {"uri": uri})
        self.uri = uri
