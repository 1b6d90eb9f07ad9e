"""`StepUp`: how a resource server asks an authorized caller for more scopes (403 `insufficient_scope`).

The guard leaves one in the ASGI scope of every request it lets through (`scope["state"]["oauth_step_up"]`).
A transport that finds, before dispatching, that the tool, resource or prompt a request names needs
scopes the caller's token lacks answers with its `challenge`: a 403 whose `WWW-Authenticate` names
the scopes the operation needs (the server-wide ones and the primitive's, RFC 6750 section 3.1 and
the MCP authorization chapter's step-up flow; clients add them to what they asked for before) and
where the Protected Resource Metadata is.

Imports nothing from mcp_kit but `auth.challenge`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._challenge import bearer_challenge

STATE_KEY = "oauth_step_up"


@dataclass(frozen=True)
class StepUp:
    """What a 403 `insufficient_scope` challenge of this server names besides the missing scopes."""

    resource_metadata: str | None
    required_scopes: tuple[str, ...] = ()  # the server-wide ones, which every operation needs too

    def needed(self, scopes: tuple[str, ...]) -> tuple[str, ...]:
        """The scopes an operation whose primitive declares `scopes` needs."""
        return tuple(dict.fromkeys((*self.required_scopes, *scopes)))

    def challenge(self, scopes: tuple[str, ...], description: str) -> str:
        """The `WWW-Authenticate` value for a request whose primitive needs `scopes` the token lacks."""
        return bearer_challenge(resource_metadata=self.resource_metadata, scopes=self.needed(scopes),
                                error="insufficient_scope", error_description=description)


def step_up_of(scope: Mapping[str, Any]) -> StepUp:
    """The StepUp the guard left in an ASGI scope (one without metadata when there is none)."""
    state = scope.get("state")
    found = state.get(STATE_KEY) if isinstance(state, Mapping) else None
    return found if isinstance(found, StepUp) else StepUp(None)
