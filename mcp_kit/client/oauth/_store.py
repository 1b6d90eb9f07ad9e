"""Where the client keeps what it obtained: client registrations per authorization server, tokens per resource.

`MemoryTokenStore` (the default) forgets everything when the process ends. `FileTokenStore(path)`
keeps it in one JSON file readable by its owner only (created 0600, replaced atomically), so that
`mcp-kit` invocations share a login; it holds refresh tokens, so treat it like a password file.

Records are plain dicts: `client` (client_id, client_secret, token_endpoint_auth_method,
redirect_uris) keyed by issuer, `tokens` (access_token, refresh_token, expires_at, scope, issuer)
keyed by resource URI. Imports nothing from mcp_kit.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol


class TokenStore(Protocol):
    def client(self, issuer: str) -> dict[str, Any] | None: ...

    def save_client(self, issuer: str, record: dict[str, Any] | None) -> None: ...

    def tokens(self, resource: str) -> dict[str, Any] | None: ...

    def save_tokens(self, resource: str, record: dict[str, Any] | None) -> None: ...


class MemoryTokenStore:
    """Registrations and tokens for the life of the process."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {"clients": {}, "tokens": {}}

    def client(self, issuer: str) -> dict[str, Any] | None:
        return self.data["clients"].get(issuer)

    def save_client(self, issuer: str, record: dict[str, Any] | None) -> None:
        self._put("clients", issuer, record)

    def tokens(self, resource: str) -> dict[str, Any] | None:
        return self.data["tokens"].get(resource)

    def save_tokens(self, resource: str, record: dict[str, Any] | None) -> None:
        self._put("tokens", resource, record)

    def _put(self, section: str, key: str, record: dict[str, Any] | None) -> None:
        if record is None:
            self.data[section].pop(key, None)
        else:
            self.data[section][key] = record


class FileTokenStore(MemoryTokenStore):
    """The same records in a JSON file only its owner can read."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path).expanduser()
        try:
            loaded = json.loads(self.path.read_text())
        except FileNotFoundError:
            loaded = None
        except (OSError, ValueError) as exc:
            raise ValueError(f"the token cache {self.path} cannot be read ({exc}); remove it to start over") from None
        if isinstance(loaded, dict):
            self.data = {"clients": dict(loaded.get("clients") or {}), "tokens": dict(loaded.get("tokens") or {})}

    def _put(self, section: str, key: str, record: dict[str, Any] | None) -> None:
        super()._put(section, key, record)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".tokens-", dir=self.path.parent)  # mkstemp creates it 0600
        try:
            with os.fdopen(fd, "w") as handle:
                json.dump(self.data, handle, indent=1)
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
