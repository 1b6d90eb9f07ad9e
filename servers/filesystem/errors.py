"""Errors raised by the filesystem server's path policy and file operations.

Every message is safe to show to the client: it names the path the client asked
for and what went wrong, never bytes read from a file outside the allowed roots.
"""

from __future__ import annotations


class FilesystemError(Exception):
    """A failed file operation whose message can be shown to the client as is."""


class AccessDenied(FilesystemError):
    """The requested path is not allowed (outside the roots, malformed, too long...)."""


def describe(path: str, limit: int = 160) -> str:
    """Quote a client-supplied path for an error message, shortened if very long."""
    text = path if len(path) <= limit else path[: limit - 1] + "…"
    return repr(text)
