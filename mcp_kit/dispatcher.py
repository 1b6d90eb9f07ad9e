"""The dispatcher: one peer's traffic, request by request.

It decodes inbound frames, runs every request in its own task (independent calls run
concurrently; a slow one never blocks another), answers each request exactly once (an answer
that cannot be encoded is replaced by an error naming why), cancels a request's task on
`notifications/cancelled` (and then sends no answer, but tells the writer the request is over),
and correlates the answers to requests we send ourselves (with a timeout). Nothing a peer sends
makes it raise: a malformed cancellation is logged and ignored.

It knows JSON-RPC, not MCP: a handler is `handle_request(request) -> result`.
Must not import: session, server, transports.
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any, Protocol, runtime_checkable

import anyio
from anyio.abc import TaskGroup

from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Batch,
    Decoded,
    EncodeError,
    ErrorResponse,
    InvalidMessage,
    JSONRPCError,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    decode_message,
    valid_id,
)

logger = logging.getLogger("mcp_kit.dispatcher")

CANCELLED_NOTIFICATION = "notifications/cancelled"


class MessageWriter(Protocol):
    """Where outbound messages go. `related_to` names the inbound request a message belongs to.

    `send` encodes before it has any effect: a message that cannot be encoded raises EncodeError
    and leaves nothing behind.
    """

    async def send(self, message: Message | list[Message], related_to: RequestId | None = None) -> None: ...


@runtime_checkable
class ReleasingWriter(Protocol):
    """A writer that holds something per inbound request (an HTTP response waiting for its answer).

    `release` says the request ended without an answer (it was cancelled): stop waiting for one.
    """

    def release(self, request_id: RequestId) -> None: ...


class Handler(Protocol):
    """What the dispatcher calls. Implemented by the MCP session."""

    async def handle_request(self, request: Request) -> Any: ...

    async def handle_notification(self, notification: Notification) -> None: ...

    def accepts_batches(self) -> bool: ...

    def unencodable_result(self, request: Request, error: EncodeError) -> Any:
        """What to answer instead of a result that could not be encoded (or raise JSONRPCError)."""
        ...


class _InFlight:
    __slots__ = ("task", "cancelled_by_peer", "stopped", "running")

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        self.cancelled_by_peer = False
        self.stopped = False  # cancelled (by the peer, or the connection is gone)
        self.running = False  # the task has started: from now on it is stopped by cancelling it

    def stop(self) -> None:
        """Cancel the request. A task that has not started yet is not cancelled (a coroutine cancelled
        before its first step never runs its cleanup); it sees `stopped` when it starts and ends at once."""
        self.stopped = True
        if self.running and self.task is not None:
            self.task.cancel()


class Dispatcher:
    """Runs requests from one peer and sends their answers through `writer`.

    Each request runs in its own asyncio task (created directly: cheaper than a task-group
    spawn with a cancel scope, and cancellable one by one with `task.cancel()`).
    """

    def __init__(self, handler: Handler, writer: MessageWriter, task_group: TaskGroup) -> None:
        self.handler = handler
        self.writer = writer
        self._release = writer.release if isinstance(writer, ReleasingWriter) else _nothing_to_release
        self._tg = task_group
        self._loop = asyncio.get_running_loop()
        self._in_flight: dict[RequestId, _InFlight] = {}
        self._pending: dict[RequestId, _PendingReply] = {}
        self._next_id = 0
        self._idle: asyncio.Event | None = None  # made by the first wait_idle(); set when nothing is in flight
        self.closed = False

    # ------------------------------------------------------------------ inbound

    async def feed_frame(self, frame: bytes | str) -> None:
        """Decode one frame (a line or a body) and act on it."""
        await self.feed(decode_message(frame))

    async def feed(self, decoded: Decoded, related_to: RequestId | None = None) -> None:
        """Act on one decoded inbound item. Requests are started, not awaited."""
        if isinstance(decoded, Request):
            self._start(decoded)
        elif isinstance(decoded, Notification):
            await self._notification(decoded)
        elif isinstance(decoded, (Response, ErrorResponse)):
            self._reply(decoded)
        elif isinstance(decoded, Batch):
            await self._batch(decoded)
        elif decoded.error is not None:
            await self.writer.send(decoded.error, related_to)

    def _track(self, request: Request) -> _InFlight | None:
        """Register an in-flight request; None (and an error answer) when its id is already in use."""
        if request.id in self._in_flight:
            self._tg.start_soon(
                self._send_quietly,
                ErrorResponse(request.id, INVALID_REQUEST, f"Invalid Request: id {request.id!r} is already in use"),
                None,
            )
            return None
        entry = self._in_flight[request.id] = _InFlight()
        return entry

    def _start(self, request: Request) -> None:
        entry = self._track(request)
        if entry is not None:
            entry.task = self._loop.create_task(self._run(request, entry))

    async def _run(self, request: Request, entry: _InFlight) -> None:
        answer = await self._answer(request, entry)
        if answer is None:
            self._release(request.id)
            return
        try:
            await self.writer.send(answer, request.id)
        except EncodeError as exc:
            await self._send_quietly(self._substitute(request, exc), request.id)
        except Exception:  # the transport failed (the peer went away): nothing left to answer to
            logger.debug("could not send the answer to %s", request.method, exc_info=True)

    def _substitute(self, request: Request, error: EncodeError) -> Message:
        """The answer sent when the real one could not be encoded: never silence."""
        logger.error("the answer to %s (id %r) cannot be encoded: %s", request.method, request.id, error)
        try:
            return Response(request.id, self.handler.unencodable_result(request, error))
        except JSONRPCError as exc:
            return ErrorResponse(request.id, exc.code, exc.message, exc.data)
        except Exception:
            logger.exception("error while replacing an unencodable answer")
            return ErrorResponse(request.id, INTERNAL_ERROR, f"Internal error: the result cannot be encoded as JSON: {error}")

    async def _send_quietly(self, message: Message | list[Message], related_to: RequestId | None) -> None:
        """Send a replacement answer; if even that fails, fall back to a bare error and then give up."""
        try:
            await self.writer.send(message, related_to)
        except EncodeError:
            if isinstance(message, (Response, ErrorResponse)):
                await self._send_quietly(ErrorResponse(message.id, INTERNAL_ERROR, "Internal error: the answer cannot be encoded as JSON"),
                                         related_to)
        except Exception:
            logger.debug("could not send an answer", exc_info=True)

    async def _answer(self, request: Request, entry: _InFlight) -> Message | None:
        """Run the handler and return the response to send, or None when the request was cancelled."""
        try:
            if entry.stopped:  # cancelled before it could start
                return None
            entry.running = True
            return Response(request.id, await self.handler.handle_request(request))
        except JSONRPCError as exc:
            return ErrorResponse(request.id, exc.code, exc.message, exc.data)
        except asyncio.CancelledError:
            return None  # cancelled by the peer, or the connection is going away: never answered
        except Exception as exc:  # a bug in a handler: answer -32603, log the traceback
            logger.exception("internal error while handling %s", request.method)
            return ErrorResponse(request.id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
        finally:
            self._in_flight.pop(request.id, None)
            if self._idle is not None and not self._in_flight:
                self._idle.set()

    async def _notification(self, notification: Notification) -> None:
        if notification.method == CANCELLED_NOTIFICATION:
            request_id = (notification.params or {}).get("requestId")
            if not valid_id(request_id):
                logger.warning("ignoring %s: 'requestId' must be a string or an integer, got %s",
                               CANCELLED_NOTIFICATION, type(request_id).__name__)
                return
            self.cancel(request_id)
            return
        try:
            await self.handler.handle_notification(notification)
        except Exception:
            logger.exception("error while handling notification %s", notification.method)

    async def _batch(self, batch: Batch) -> None:
        if not self.handler.accepts_batches():
            await self.writer.send(
                ErrorResponse(None, INVALID_REQUEST, "Invalid Request: batches are not supported in this protocol version")
            )
            return
        self._tg.start_soon(self._run_batch, batch)

    async def _run_batch(self, batch: Batch) -> None:
        started: list[tuple[Request, asyncio.Task[Message | None]] | ErrorResponse | None] = []
        for item in batch.items:
            if isinstance(item, Request):
                entry = self._track(item)
                if entry is None:
                    continue
                entry.task = self._loop.create_task(self._answer(item, entry))
                started.append((item, entry.task))
            elif isinstance(item, InvalidMessage):
                started.append(item.error)
            else:
                await self.feed(item)
        replies: list[Message] = []
        answered: dict[RequestId, Request] = {}
        for answer in started:
            if isinstance(answer, tuple):
                request, task = answer
                reply = await task
                if reply is None:
                    self._release(request.id)
                    continue
                answered[request.id] = request
            else:
                reply = answer
            if reply is not None:
                replies.append(reply)
        if not replies:
            return
        try:
            await self.writer.send(replies)
        except EncodeError:  # send the answers one by one, replacing those that cannot be encoded
            for reply in replies:
                request_id = reply.id if isinstance(reply, (Response, ErrorResponse)) else None
                try:
                    await self.writer.send(reply, request_id)
                except EncodeError as exc:
                    original = answered.get(request_id) if request_id is not None else None
                    if original is not None:
                        await self._send_quietly(self._substitute(original, exc), original.id)
                except Exception:
                    logger.debug("could not send a batch answer", exc_info=True)
        except Exception:
            logger.debug("could not send a batch answer", exc_info=True)

    def cancel(self, request_id: Any) -> bool:
        """Cancel an in-flight inbound request; its answer is then never sent."""
        if not valid_id(request_id):
            return False
        entry = self._in_flight.get(request_id)
        if entry is None:
            return False
        entry.cancelled_by_peer = True
        entry.stop()
        return True

    def was_cancelled(self, request_id: RequestId) -> bool:
        """True once the peer cancelled the in-flight request `request_id`."""
        entry = self._in_flight.get(request_id)
        return entry is not None and entry.cancelled_by_peer

    def cancel_all(self) -> None:
        """Cancel every in-flight request (the peer is gone)."""
        for entry in list(self._in_flight.values()):
            entry.stop()

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    async def wait_idle(self) -> None:
        """Return once no inbound request is in flight (at once when none is)."""
        while self._in_flight:
            if self._idle is None or self._idle.is_set():
                self._idle = asyncio.Event()
            await self._idle.wait()

    # ------------------------------------------------------------------ outbound

    async def notify(self, method: str, params: dict[str, Any] | None = None, related_to: RequestId | None = None) -> None:
        """Send a notification to the peer."""
        await self.writer.send(Notification(method, params), related_to)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = 60.0,
        related_to: RequestId | None = None,
    ) -> Any:
        """Send a request to the peer and wait for its answer; raises JSONRPCError or TimeoutError."""
        if self.closed:
            raise JSONRPCError(INTERNAL_ERROR, "the connection is closed")
        self._next_id += 1
        request_id: RequestId = f"s{self._next_id}"
        pending = _PendingReply()
        self._pending[request_id] = pending
        try:
            await self.writer.send(Request(request_id, method, params), related_to)
            with anyio.fail_after(timeout if timeout is not None else math.inf):
                await pending.event.wait()
        except TimeoutError:
            await self.notify(CANCELLED_NOTIFICATION, {"requestId": request_id, "reason": "timed out"})
            raise TimeoutError(f"the client did not answer {method} within {timeout:g} s") from None
        finally:
            self._pending.pop(request_id, None)
        reply = pending.reply
        if isinstance(reply, ErrorResponse):
            raise JSONRPCError(reply.code, reply.message, reply.data)
        if reply is None:
            raise JSONRPCError(INTERNAL_ERROR, "the connection closed before the client answered")
        return reply.result

    def _reply(self, reply: Response | ErrorResponse) -> None:
        pending = self._pending.get(reply.id) if reply.id is not None else None
        if pending is None:
            logger.debug("dropping an answer to an unknown request id %r", reply.id)
            return
        pending.reply = reply
        pending.event.set()

    def close(self) -> None:
        """Fail every outbound request still waiting: the peer is gone."""
        self.closed = True
        for pending in self._pending.values():
            pending.event.set()


def _nothing_to_release(request_id: RequestId) -> None:
    return None


class _PendingReply:
    __slots__ = ("event", "reply")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.reply: Response | ErrorResponse | None = None
