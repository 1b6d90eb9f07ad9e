"""The connection state of a handshake-era session, as one plain record.

Everything `initialize`, `notifications/initialized`, `logging/setLevel` and
`resources/subscribe` establish lives here and nowhere else: the session id, the negotiated
protocol version, the client's info and capabilities, the log level and the subscribed URIs.
The record holds no objects (no streams, tasks or callbacks) and round-trips through JSON
(`to_dict` / `from_dict`), so a backend can keep it outside the process and another process can
serve the session from it (`Session(app, port, state=SessionState.from_dict(...))`).

The 2026-07-28 era keeps no connection state: its requests carry theirs in their envelope.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SessionState:
    """What one handshake-era session has agreed with its client."""

    session_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    protocol_version: str | None = None  # negotiated by initialize; None until then
    client_info: dict[str, Any] = field(default_factory=dict)
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    initialized: bool = False  # notifications/initialized arrived
    log_level: str | None = None  # set by logging/setLevel; None: every level
    subscriptions: set[str] = field(default_factory=set)  # URIs subscribed with resources/subscribe

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        return {
            "session_id": self.session_id,
            "protocol_version": self.protocol_version,
            "client_info": self.client_info,
            "client_capabilities": self.client_capabilities,
            "initialized": self.initialized,
            "log_level": self.log_level,
            "subscriptions": sorted(self.subscriptions),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionState:
        """The record `to_dict` gave; ValueError when `data` is not one."""
        try:
            state = cls(
                session_id=_typed(data["session_id"], str, "session_id"),
                protocol_version=_optional(data.get("protocol_version"), str, "protocol_version"),
                client_info=dict(_typed(data.get("client_info", {}), dict, "client_info")),
                client_capabilities=dict(_typed(data.get("client_capabilities", {}), dict, "client_capabilities")),
                initialized=_typed(data.get("initialized", False), bool, "initialized"),
                log_level=_optional(data.get("log_level"), str, "log_level"),
                subscriptions=set(_typed(data.get("subscriptions", []), list, "subscriptions")),
            )
        except KeyError as missing:
            raise ValueError(f"a session record needs {missing}") from None
        if not all(isinstance(uri, str) for uri in state.subscriptions):
            raise ValueError("a session record's subscriptions are URIs (strings)")
        return state


def _typed(value: Any, kind: type, name: str) -> Any:
    if not isinstance(value, kind):
        raise ValueError(f"a session record's {name} must be a {kind.__name__}, not {type(value).__name__}")
    return value


def _optional(value: Any, kind: type, name: str) -> Any:
    return None if value is None else _typed(value, kind, name)
