"""The dispatcher: one peer's traffic, request by request, and the tasks that serve it.

Inbound, `feed` (or `feed_frame`, which decodes first): every request runs in its own task
(independent calls run concurrently; a slow one never blocks another) and is answered exactly
once (an answer that cannot be encoded is replaced by an error naming why); `notifications/cancelled`
cancels the request's task (which then sends no answer, but tells the writer the request is over);
answers to our own requests are matched to them. Nothing a peer sends makes it raise: a malformed
cancellation is logged and ignored.

Outbound, the dispatcher is the narrow port its handler talks through: `notify`, `post` (notify
without waiting), `request` (with a timeout), `start_soon` (background work of the connection),
`was_cancelled`, `close_stream`. Whoever serves the connection (the stdio runner, an HTTP
transport) builds the dispatcher over its writer, builds the handler with the dispatcher as its
port, and `attach`es it.

Backpressure: at most `max_in_flight` requests of one peer run at once. `feed_frame` (what a
reader of a byte stream calls, line by line) waits while that many are in flight, so the reader
stops reading until one ends; a batch starts its requests as room frees up; a transport that
cannot stop reading (an HTTP POST) checks `full` and refuses (`TOO_MANY_REQUESTS`). What a peer
pipelines therefore waits in the operating system's buffers, not in this process's memory. The
cost on the hot path is one length comparison per frame.

Ownership: every task the dispatcher starts is registered with it until it has ended (a request's
task in the in-flight table, which it leaves only once its answer was handed to the writer;
background work in a set). `close()` cancels them all, fails outbound waits and tells the handler;
`aclose()` (or leaving `async with`) also waits, boundedly, for the tasks to end; `wait_idle()`
returns once no request is in flight. Request tasks are plain asyncio tasks: an anyio task-group
spawn (a cancel scope per task) costs about 14 us more CPU per request here, against about 2.5 us for
`loop.create_task`, and the in-flight table already gives each task an owner.

After the answer: `after_answer(fn)`, called from a request's own task, runs `fn` right after that
request's answer was handed to the writer (a tool that announces a change reaches its thousand subscribers
after its own caller has its answer, not before), or `AFTER_ANSWER_BOUND` seconds later for a handler still
running then; elsewhere (another task, a thread) it returns False and the caller runs `fn` itself.

It knows JSON-RPC, not MCP: a handler is `handle_request(request, principal) -> result`.
Must not import: session, server, transports, or anything MCP.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any, Protocol, runtime_checkable

import anyio

from .._telemetry import hooks as telemetry_hooks
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


AFTER_ANSWER_BOUND = 0.05  # seconds a handler still running may hold back what it deferred


class _AfterAnswer:
    """What runs once the answer of the request whose task holds it was handed to the writer (or, for a
    handler still running, `AFTER_ANSWER_BOUND` seconds after the first call was deferred)."""

    __slots__ = ("calls", "open", "task", "timer")

    def __init__(self, task: asyncio.Task[Any] | None) -> None:
        self.calls: list[Callable[[], None]] = []
        self.open = True
        self.task = task
        self.timer: asyncio.TimerHandle | None = None

    def run(self) -> None:
        self.open = False
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        calls, self.calls = self.calls, []
        for call in calls:
            try:
                call()
            except Exception:
                logger.exception("error in a call made after an answer")


_after_answer: ContextVar[_AfterAnswer | None] = ContextVar("mcp_kit_after_answer", default=None)


def after_answer(fn: Callable[[], None]) -> bool:
    """Run `fn` once the answer of the request being handled (by this very task) was handed to the writer.

    A handler still running `AFTER_ANSWER_BOUND` seconds later has its deferred calls run then. False when
    there is no such request (not in a request's own task, which excludes tasks and threads it started, or
    its answer already sent): the caller runs `fn` itself.
    """
    pending = _after_answer.get()
    if pending is None or not pending.open:
        return False
    try:
        if asyncio.current_task() is not pending.task:
            return False
    except RuntimeError:  # a worker thread that inherited the context: no loop here
        return False
    if pending.timer is None:
        pending.timer = asyncio.get_running_loop().call_later(AFTER_ANSWER_BOUND, pending.run)
    pending.calls.append(fn)
    return True

CANCELLED_NOTIFICATION = "notifications/cancelled"


CLOSE_TIMEOUT = 5.0  # how long `aclose` waits for cancelled tasks to end
MAX_IN_FLIGHT = 1000  # requests of one peer running at once; reading waits (or HTTP refuses) beyond
TOO_MANY_REQUESTS = -31004  # mcp_kit's (see errors.py): the peer already has `max_in_flight` requests running


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


@runtime_checkable
class StreamClosingWriter(Protocol):
    """A writer whose per-request streams can be ended early (Streamable HTTP: the client resumes them)."""

    def close_stream_of(self, request_id: RequestId) -> bool: ...


class Handler(Protocol):
    """What the dispatcher calls. Implemented by the MCP session."""

    async def handle_request(self, request: Request, principal: object | None) -> Any:
        """The result of `request`, or raise JSONRPCError. `principal` is who sent it, as the transport
        authenticated them (None when it did not)."""
        ...

    async def handle_notification(self, notification: Notification) -> None: ...

    def accepts_batches(self) -> bool: ...

    def unencodable_result(self, request: Request, error: EncodeError) -> Any:
        """What to answer instead of a result that could not be encoded (or raise JSONRPCError)."""
        ...

    def close(self) -> None:
        """The connection is over (called once, by `Dispatcher.close`)."""
        ...


class _InFlight:
    __slots__ = ("task", "cancelled_by_peer", "stopped", "running", "settled")

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        self.cancelled_by_peer = False
        self.stopped = False  # cancelled (by the peer, or the connection is gone)
        self.running = False  # the task has started: from now on it is stopped by cancelling it
        self.settled = False  # in a batch: it has its answer, and waits (tracked, not running) for the others

    def stop(self) -> None:
        """Cancel the request. A task that has not started yet is not cancelled (a coroutine cancelled
        before its first step never runs its cleanup); it sees `stopped` when it starts and ends at once."""
        self.stopped = True
        if self.running and self.task is not None:
            self.task.cancel()


class Dispatcher:
    """Runs the requests of one peer, sends their answers through `writer`, and owns their tasks.

    Use it as `async with Dispatcher(writer) as dispatcher:` (or call `aclose()`), and `attach` the
    handler before feeding it anything.
    """

    def __init__(
        self, writer: MessageWriter, handler: Handler | None = None, *, max_in_flight: int = MAX_IN_FLIGHT
    ) -> None:
        self._handler: Handler = handler if handler is not None else _Unattached()
        self._writer = writer
        self._release = writer.release if isinstance(writer, ReleasingWriter) else _nothing_to_release
        self._close_stream = writer.close_stream_of if isinstance(writer, StreamClosingWriter) else _no_stream
        self._loop = asyncio.get_running_loop()
        self._in_flight: dict[RequestId, _InFlight] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._pending: dict[RequestId, _PendingReply] = {}
        self._next_id = 0
        self.id_prefix = "s"  # outbound request ids; unique per process when several serve one session
        self.on_unknown_reply: Callable[[Response | ErrorResponse], None] | None = None  # e.g. relay to the asker
        self._idle: asyncio.Event | None = None  # made by the first wait_idle(); set when nothing is in flight
        self.max_in_flight = max_in_flight
        self._room: asyncio.Event | None = None  # made while someone waits for room; set when a request ends
        self._settled = 0  # batch requests that have their answer and wait for the rest of their batch
        self.closed = False

    def attach(self, handler: Handler) -> None:
        """Serve requests with `handler` (built with this dispatcher as its outbound port)."""
        self._handler = handler

    async def __aenter__(self) -> Dispatcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ inbound

    async def feed_frame(self, frame: bytes | str) -> None:
        """Decode one frame (a line or a body) and act on it; first wait while `max_in_flight` requests
        are running (the caller, reading a stream, stops reading meanwhile)."""
        if len(self._in_flight) - self._settled >= self.max_in_flight:
            await self.wait_for_room()
        await self.feed(decode_message(frame))

    async def feed(
        self, decoded: Decoded, related_to: RequestId | None = None, *, principal: object | None = None
    ) -> None:
        """Act on one decoded inbound item. Requests are started, not awaited.

        `principal` is who sent the item, as the transport authenticated them; each request's
        handler call receives it.
        """
        if isinstance(decoded, Request):
            self._start(decoded, principal)
        elif isinstance(decoded, Notification):
            await self._notification(decoded)
        elif isinstance(decoded, (Response, ErrorResponse)):
            self._reply(decoded)
        elif isinstance(decoded, Batch):
            await self._batch(decoded, principal)
        elif decoded.error is not None:
            await self._writer.send(decoded.error, related_to)

    def _track(self, request: Request) -> _InFlight | None:
        """Register an in-flight request; None (and an error answer) when its id is already in use."""
        if request.id in self._in_flight:
            self._spawn(
                self._send_quietly(
                    ErrorResponse(request.id, INVALID_REQUEST, f"Invalid Request: id {request.id!r} is already in use"),
                    None,
                )
            )
            return None
        entry = self._in_flight[request.id] = _InFlight()
        return entry

    def _start(self, request: Request, principal: object | None) -> None:
        entry = self._track(request)
        if entry is not None:
            entry.task = self._loop.create_task(self._run(request, entry, principal))

    async def _run(self, request: Request, entry: _InFlight, principal: object | None) -> None:
        """A request's task: run the handler, send the answer (as `_answer` does, inlined: this is the hot path)."""
        deferred = _AfterAnswer(asyncio.current_task())
        _after_answer.set(deferred)  # this task's own context (and what the handler starts copies it)
        try:
            if entry.stopped:  # cancelled before it could start
                self._release(request.id)
                return
            entry.running = True
            try:
                answer: Message = Response(request.id, await self._handler.handle_request(request, principal))
            except JSONRPCError as exc:
                answer = ErrorResponse(request.id, exc.code, exc.message, exc.data)
            except asyncio.CancelledError:  # cancelled by the peer, or the connection is going away: never answered
                self._release(request.id)
                return
            except Exception as exc:  # a bug in a handler: answer -32603, log the traceback
                logger.exception("internal error while handling %s", request.method)
                answer = ErrorResponse(request.id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
            try:
                await self._writer.send(answer, request.id)
            except EncodeError as exc:
                await self._send_quietly(self._substitute(request, exc), request.id)
            except Exception:  # the transport failed (the peer went away): nothing left to answer to
                logger.debug("could not send the answer to %s", request.method, exc_info=True)
        finally:  # the id is free again
            deferred.run()
            self._in_flight.pop(request.id, None)
            if self._idle is not None and not self._in_flight:
                self._idle.set()
            if self._room is not None:
                self._room.set()
                self._room = None

    def _finished(self, request_id: RequestId) -> None:
        """The batch is done with the request (answered, or not to be answered): its id is free again."""
        entry = self._in_flight.pop(request_id, None)
        if entry is not None and entry.settled:
            self._settled -= 1
        if self._idle is not None and not self._in_flight:
            self._idle.set()

    def _settle(self, entry: _InFlight) -> None:
        """A batch request has its answer: it no longer counts against `max_in_flight`."""
        entry.settled = True
        self._settled += 1
        if self._room is not None:
            self._room.set()
            self._room = None

    def _substitute(self, request: Request, error: EncodeError) -> Message:
        """The answer sent when the real one could not be encoded: never silence."""
        logger.error("the answer to %s (id %r) cannot be encoded: %s", request.method, request.id, error)
        try:
            return Response(request.id, self._handler.unencodable_result(request, error))
        except JSONRPCError as exc:
            return ErrorResponse(request.id, exc.code, exc.message, exc.data)
        except Exception:
            logger.exception("error while replacing an unencodable answer")
            return ErrorResponse(
                request.id, INTERNAL_ERROR, f"Internal error: the result cannot be encoded as JSON: {error}"
            )

    async def _send_quietly(self, message: Message | list[Message], related_to: RequestId | None) -> None:
        """Send a replacement answer; if even that fails, fall back to a bare error and then give up."""
        try:
            await self._writer.send(message, related_to)
        except EncodeError:
            if isinstance(message, (Response, ErrorResponse)):
                await self._send_quietly(
                    ErrorResponse(message.id, INTERNAL_ERROR, "Internal error: the answer cannot be encoded as JSON"),
                    related_to,
                )
        except Exception:
            logger.debug("could not send an answer", exc_info=True)

    async def _answer(self, request: Request, entry: _InFlight, principal: object | None) -> Message | None:
        """Run the handler and return the response to send, or None when the request was cancelled (batches)."""
        try:
            return await self._answer_of(request, entry, principal)
        finally:
            self._settle(entry)

    async def _answer_of(self, request: Request, entry: _InFlight, principal: object | None) -> Message | None:
        try:
            if entry.stopped:  # cancelled before it could start
                return None
            entry.running = True
            return Response(request.id, await self._handler.handle_request(request, principal))
        except JSONRPCError as exc:
            return ErrorResponse(request.id, exc.code, exc.message, exc.data)
        except asyncio.CancelledError:
            return None  # cancelled by the peer, or the connection is going away: never answered
        except Exception as exc:  # a bug in a handler: answer -32603, log the traceback
            logger.exception("internal error while handling %s", request.method)
            return ErrorResponse(request.id, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")

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
            await self._handler.handle_notification(notification)
        except Exception:
            logger.exception("error while handling notification %s", notification.method)

    async def _batch(self, batch: Batch, principal: object | None) -> None:
        if not self._handler.accepts_batches():
            await self._writer.send(
                ErrorResponse(
                    None, INVALID_REQUEST, "Invalid Request: batches are not supported in this protocol version"
                )
            )
            return
        self._spawn(self._run_batch(batch, principal))

    async def _run_batch(self, batch: Batch, principal: object | None) -> None:
        tracked: list[RequestId] = []
        try:
            await self._answer_batch(batch, principal, tracked)
        finally:
            for request_id in tracked:
                self._finished(request_id)

    async def _answer_batch(self, batch: Batch, principal: object | None, tracked: list[RequestId]) -> None:
        started: list[tuple[Request, asyncio.Task[Message | None]] | ErrorResponse | None] = []
        for item in batch.items:
            if isinstance(item, Request):
                if len(self._in_flight) - self._settled >= self.max_in_flight:
                    await self.wait_for_room()
                entry = self._track(item)
                if entry is None:
                    continue
                tracked.append(item.id)
                entry.task = self._loop.create_task(self._answer(item, entry, principal))
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
            await self._writer.send(replies)
        except EncodeError:  # send the answers one by one, replacing those that cannot be encoded
            for reply in replies:
                request_id = reply.id if isinstance(reply, (Response, ErrorResponse)) else None
                try:
                    await self._writer.send(reply, request_id)
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

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    @property
    def full(self) -> bool:
        """Whether `max_in_flight` requests are running: a new one waits (`feed_frame`) or is refused."""
        return len(self._in_flight) - self._settled >= self.max_in_flight

    async def wait_for_room(self) -> None:
        """Return once fewer than `max_in_flight` requests are running, or the connection is closed."""
        while len(self._in_flight) - self._settled >= self.max_in_flight and not self.closed:
            if self._room is None:
                self._room = asyncio.Event()
            await self._room.wait()

    def refuse(self, decoded: Decoded) -> bool:
        """Answer every request in `decoded` with TOO_MANY_REQUESTS when the peer's requests fill the bound
        (for a transport that cannot stop reading and has no other way to say so); False when not full."""
        if not self.full or (isinstance(decoded, Batch) and not self._handler.accepts_batches()):
            return False
        items = decoded.items if isinstance(decoded, Batch) else [decoded]
        refusals: list[Message] = [self.too_many_requests(item.id) for item in items if isinstance(item, Request)]
        if not refusals:
            return False
        for item in items:  # what else it carries (answers, cancellations) is still taken
            if not isinstance(item, Request):
                self._spawn(self.feed(item))
        self._spawn(self._send_quietly(refusals if isinstance(decoded, Batch) else refusals[0], None))
        return True

    def too_many_requests(self, request_id: RequestId | None) -> ErrorResponse:
        """The answer to a request refused because the peer already has `max_in_flight` requests running."""
        return ErrorResponse(request_id, TOO_MANY_REQUESTS, f"Too many requests: {self.max_in_flight} requests of this "
                             "connection are already running, the most it runs at once; retry once one is answered")

    async def wait_idle(self) -> None:
        """Return once no inbound request is in flight (at once when none is)."""
        while self._in_flight:
            if self._idle is None or self._idle.is_set():
                self._idle = asyncio.Event()
            await self._idle.wait()

    # ------------------------------------------------------------------ outbound port

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, related_to: RequestId | None = None
    ) -> None:
        """Send a notification to the peer."""
        await self._writer.send(Notification(method, params), related_to)

    def post(self, method: str, params: dict[str, Any] | None = None, related_to: RequestId | None = None) -> None:
        """Send a notification without waiting (from synchronous code); a failure is logged, never raised."""
        if not self.closed:
            self._spawn(self._notify_or_log(method, params, related_to))

    async def _notify_or_log(self, method: str, params: dict[str, Any] | None, related_to: RequestId | None) -> None:
        try:
            await self.notify(method, params, related_to)
        except Exception as exc:  # e.g. it cannot be encoded, or the peer is gone
            logger.error("could not send %s: %s", method, exc)

    def start_soon(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run `fn(*args)` as background work of this connection: cancelled when it closes."""
        if not self.closed:
            self._spawn(fn(*args))

    def close_stream(self, request_id: RequestId) -> bool:
        """End the transport stream carrying `request_id`'s messages now, where the transport has such
        streams (the client resumes it); False where it has none."""
        return self._close_stream(request_id)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = 60.0,
        related_to: RequestId | None = None,
    ) -> Any:
        """Send a request to the peer and wait for its answer; raises JSONRPCError or TimeoutError.

        While telemetry is on (`telemetry_hooks.active`), the exchange is a CLIENT span whose trace
        context goes in the request's `params._meta`."""
        if self.closed:
            raise JSONRPCError(INTERNAL_ERROR, "the connection is closed")
        self._next_id += 1
        request_id: RequestId = f"{self.id_prefix}{self._next_id}"
        probe = telemetry_hooks.active
        if probe is not None:
            return await probe.outbound(method, params, request_id,
                                        lambda traced: self._exchange(request_id, method, traced, timeout, related_to))
        return await self._exchange(request_id, method, params, timeout, related_to)

    async def _exchange(self, request_id: RequestId, method: str, params: dict[str, Any] | None,
                        timeout: float | None, related_to: RequestId | None) -> Any:
        pending = _PendingReply()
        self._pending[request_id] = pending
        try:
            await self._writer.send(Request(request_id, method, params), related_to)
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
        if not self.deliver_reply(reply):
            if self.on_unknown_reply is not None:
                self.on_unknown_reply(reply)
            else:
                logger.debug("dropping an answer to an unknown request id %r", reply.id)

    def deliver_reply(self, reply: Response | ErrorResponse) -> bool:
        """Hand the peer's answer to the request waiting for it; False when none is."""
        pending = self._pending.get(reply.id) if reply.id is not None else None
        if pending is None:
            return False
        pending.reply = reply
        pending.event.set()
        return True

    # ------------------------------------------------------------------ ownership

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = self._loop.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def close(self) -> None:
        """The peer is gone: cancel every request and background task, fail outbound waits, tell the handler."""
        if self.closed:
            return
        self.closed = True
        for entry in list(self._in_flight.values()):
            entry.stop()
        for pending in self._pending.values():
            pending.event.set()
        if self._room is not None:
            self._room.set()
        for task in self._background:
            task.cancel()
        self._handler.close()

    async def aclose(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """`close()`, then wait (at most `timeout` seconds) until every task it cancelled has ended."""
        self.close()
        tasks = {entry.task for entry in self._in_flight.values() if entry.task is not None} | self._background
        if not tasks:
            return
        _, still_running = await asyncio.wait(tasks, timeout=timeout)
        if still_running:
            logger.warning("%d task(s) of a closed connection did not end within %g s of being cancelled",
                           len(still_running), timeout)


class _Unattached:
    """The handler of a dispatcher nobody attached one to: it refuses requests, and closes quietly."""

    async def handle_request(self, request: Request, principal: object | None) -> Any:
        raise RuntimeError("no handler attached to this dispatcher")

    async def handle_notification(self, notification: Notification) -> None:
        raise RuntimeError("no handler attached to this dispatcher")

    def accepts_batches(self) -> bool:
        return False

    def unencodable_result(self, request: Request, error: EncodeError) -> Any:
        raise RuntimeError("no handler attached to this dispatcher")

    def close(self) -> None:
        return None


def _nothing_to_release(request_id: RequestId) -> None:
    return None


def _no_stream(request_id: RequestId) -> bool:
    return False


class _PendingReply:
    __slots__ = ("event", "reply")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.reply: Response | ErrorResponse | None = None
