"""Why the client could not obtain an access token (a ClientError: the conversation cannot start or go on)."""

from __future__ import annotations

from .._errors import ClientError


class OAuthError(ClientError):
    """The authorization flow failed; the message says at which step and what to do."""
