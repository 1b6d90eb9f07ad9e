"""What a transport serves: a connection (an MCP session, seen from below) and the dispatcher that carries it.

A transport knows no session: it gets a `ConnectionFactory` that builds one over an outbound port,
and needs from it only what `Connection` lists. `open_connection` builds the pair the way every
transport does: the dispatcher over the transport's writer, then the connection with that
dispatcher as its port. Closing the dispatcher closes the connection.

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._protocol.dispatcher import Dispatcher, Handler, MessageWriter


class Connection(Handler, Protocol):
    """What a transport needs from an MCP session, besides its being the dispatcher's handler."""

    @property
    def session_id(self) -> str: ...

    def primes_event_streams(self) -> bool:
        """Whether its SSE responses open with a priming event (an id to resume from)."""
        ...

    def record(self) -> dict[str, Any]:
        """The session's record (plain JSON data), for a shared backend."""
        ...

    def restore(self, record: dict[str, Any]) -> None:
        """Take over the record another process saved for this session."""
        ...

    on_change: Callable[[], Awaitable[None]] | None  # awaited after the record changed (persists it)


# builds a session over its outbound port; with a record, continues the session it describes
ConnectionFactory = Callable[..., Connection]


@dataclass(slots=True, eq=False)  # hashed by identity: kept in sets
class Served:
    """A connection, the dispatcher serving it, its writer, when a client last touched it, and whose it is."""

    connection: Connection
    dispatcher: Dispatcher
    writer: Any
    last_active: float = field(default_factory=time.monotonic)
    owner: Any = (
        None  # the OAuth identity that opened it (auth.principal.session_owner: issuer, kind, id); None without OAuth
    )
    record: bytes | None = None  # the record as the shared backend last had it (None: not shared)

    @property
    def session_id(self) -> str:
        return self.connection.session_id


def open_connection(factory: ConnectionFactory, writer: MessageWriter, record: dict[str, Any] | None = None) -> Served:
    """Build a dispatcher over `writer` and the connection it serves (continuing `record` when given)."""
    dispatcher = Dispatcher(writer)
    connection = factory(dispatcher) if record is None else factory(dispatcher, record)
    dispatcher.attach(connection)
    return Served(connection, dispatcher, writer)
