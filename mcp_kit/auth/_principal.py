"""`AccessToken`: what a validated access token says about the caller, and nothing it could be replayed with.

The guard stores one per authorized request in the ASGI scope (`scope["state"]["access_token"]`,
i.e. `request.state.access_token` in Starlette); the HTTP transports hand it to the dispatcher
with each request, and handlers see it as `ctx.principal` (`mcp_kit.AccessToken`). It never holds
the token string itself, so a handler cannot pass the caller's token on to another API (the MCP
spec forbids token passthrough).

Identity is decided here and nowhere else. `AccessToken.identity` is who a token speaks for, as a
typed triple: `(issuer, "sub", subject)` for a token with a subject, `(issuer, "client", client_id)`
for one without (client credentials), None for a token that names neither (the validator refuses
those). The kind is part of the value, so a user whose `sub` is `client:svc` is not the client `svc`,
and a subject is only ever compared with subjects of the same issuer. `session_owner` is the
identity a session (or a 2026-07-28 request state) is bound to, `may_use` the one comparison of an
owner with a caller, and `owner_key` the owner's canonical string (a JSON array: no two owners share
one), for what is signed or stored as text.

Imports nothing from mcp_kit but `auth.scopes`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ._scopes import missing_scopes

STATE_KEY = "access_token"
Owner = tuple[str, str, str]  # (issuer, "sub" | "client", the subject or client id): see `AccessToken.identity`
OWNER_KINDS = ("sub", "client")


@dataclass(frozen=True)
class AccessToken:
    """A validated access token: who (subject), through which client, allowed what (scopes), until when."""

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    expires_at: float | None
    issuer: str
    audience: tuple[str, ...]
    source: Literal["jwt", "introspection"]
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)
    fingerprint: str = field(default="", repr=False)  # first bytes of the token's SHA-256, for log correlation
    implies: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )  # AuthConfig.scope_implies

    def __post_init__(self) -> None:
        object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))

    @property
    def identity(self) -> Owner | None:
        """Who this token speaks for: (issuer, "sub", subject), else (issuer, "client", client_id), else None."""
        if self.subject:
            return (self.issuer, "sub", self.subject)
        if self.client_id:
            return (self.issuer, "client", self.client_id)
        return None

    def missing(self, required: Iterable[str], implies: Mapping[str, Iterable[str]] | None = None) -> tuple[str, ...]:
        """The scopes of `required` this token does not grant (a granted scope counts with what it implies)."""
        return missing_scopes(self.scopes, required, self.implies if implies is None else implies)

    def allows(self, *required: str) -> bool:
        """Whether the token grants every scope of `required`, e.g. `ctx.principal.allows("files:write")`."""
        return not self.missing(required)


def session_owner(principal: object | None) -> Owner | None:
    """Who a session opened with `principal` belongs to: its `identity`; None without an AccessToken (no OAuth).

    A token naming no one gets an owner of its own that matches nobody, not even itself, so such a
    session can never be shared (the validator refuses these tokens before they get here).
    """
    if not isinstance(principal, AccessToken):
        return None
    identity = principal.identity
    if identity is None:
        return (principal.issuer, "unidentified", secrets.token_hex(16))
    return identity


def may_use(owner: Owner | None, principal: object | None) -> bool:
    """Whether the caller `principal` may use what `owner` holds (anyone, when it was opened without OAuth)."""
    return owner is None or (owner[1] in OWNER_KINDS and owner == session_owner(principal))


def owner_key(owner: Owner | None) -> str | None:
    """`owner` as one canonical string (a compact JSON array), e.g. for a signed payload; None stays None."""
    return None if owner is None else json.dumps(list(owner), separators=(",", ":"))


def owner_from_record(value: Any) -> Owner | None:
    """The owner a stored record names (`[issuer, kind, id]`, see `owner_key`); None when it names none.

    A value of any other shape names an owner nobody matches: a damaged record is never open to all.
    """
    if value is None:
        return None
    if isinstance(value, list) and len(value) == 3 and all(isinstance(part, str) for part in value):
        return (value[0], value[1], value[2])
    return ("", "unreadable", secrets.token_hex(16))


def audit_subject(principal: Any) -> str | None:
    """Who called, for the audit trail: the token's subject, or client:<id> for a token without one."""
    if principal is None:
        return None
    return principal.subject if principal.subject is not None else f"client:{principal.client_id}"


def access_token_of(scope: Mapping[str, Any]) -> AccessToken | None:
    """The AccessToken the guard left in an ASGI scope (None when the request was not OAuth-authorized)."""
    state = scope.get("state")
    token = state.get(STATE_KEY) if isinstance(state, Mapping) else None
    return token if isinstance(token, AccessToken) else None


def principal_to_dict(principal: AccessToken) -> dict[str, Any]:
    """`principal` as plain JSON values, to travel with a request relayed to another process (no token string)."""
    return {"subject": principal.subject, "client_id": principal.client_id, "scopes": sorted(principal.scopes),
            "expires_at": principal.expires_at, "issuer": principal.issuer, "audience": list(principal.audience),
            "source": principal.source, "claims": dict(principal.claims), "fingerprint": principal.fingerprint,
            "implies": {scope: list(implied) for scope, implied in principal.implies.items()}}


def principal_from_dict(data: Mapping[str, Any]) -> AccessToken:
    """The AccessToken `principal_to_dict` described."""
    return AccessToken(subject=data["subject"], client_id=data["client_id"], scopes=frozenset(data["scopes"]),
                       expires_at=data["expires_at"], issuer=data["issuer"], audience=tuple(data["audience"]),
                       source=data["source"], claims=data["claims"], fingerprint=data["fingerprint"],
                       implies={scope: tuple(implied) for scope, implied in data["implies"].items()})
