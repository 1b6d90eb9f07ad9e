"""PKCE (RFC 7636, S256) and the `state` value of one authorization request. Imports nothing from mcp_kit."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class PKCE:
    verifier: str = field(default_factory=lambda: _b64(secrets.token_bytes(48)), repr=False)
    state: str = field(default_factory=lambda: _b64(secrets.token_bytes(24)))

    @property
    def challenge(self) -> str:
        return _b64(hashlib.sha256(self.verifier.encode()).digest())
