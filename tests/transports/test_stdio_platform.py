"""The pieces that make stdio work on every system, one by one: the mode decision (with the
platform faked), the stop-signal plan (Windows faked), both signal paths in this process, the
thread-served reader and writer, the write side's close with its deadline, and the dispatcher's
idle event that shutdown waits on. The whole transport runs as real processes in
`test_stdio_raw.py` (both modes) and `test_stdio_handles.py` (/dev/null, files).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import selectors
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_kit._protocol.dispatcher import Dispatcher
from mcp_kit._protocol.jsonrpc import Notification, Request
from mcp_kit._transports import stdio_mode
from mcp_kit._transports.stdio import StdioWriter
from mcp_kit._transports.stdio_mode import MODE_ENV, choose_mode, requested_mode, why_loop_cannot_serve
from mcp_kit._transports.stdio_threads import ThreadedReader, ThreadedWriter
from mcp_kit._transports.stop_signals import SignalPlan, signal_plan, watch_stop_signals

# ---------------------------------------------------------------------------------------- mode


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        try:
            os.close(fd)
        except OSError:
            pass


def test_requested_mode_comes_from_the_argument_then_the_environment_then_auto() -> None:
    assert requested_mode(None, {}) == "auto"
    assert requested_mode(None, {MODE_ENV: "threads"}) == "threads"
    assert requested_mode("loop", {MODE_ENV: "threads"}) == "loop"
    assert requested_mode(None, {MODE_ENV: " Loop "}) == "loop"
    with pytest.raises(ValueError, match=f"{MODE_ENV} must be one of auto, loop, threads; got 'fast'"):
        requested_mode(None, {MODE_ENV: "fast"})
    with pytest.raises(ValueError, match="mode must be one of"):
        requested_mode("fast", {})


def test_pipes_and_sockets_are_served_on_the_loop(pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODE_ENV, raising=False)
    read_fd, write_fd = pipe
    assert choose_mode(read_fd, writing=False) == "loop"
    assert choose_mode(write_fd, writing=True) == "loop"
    one, other = socket.socketpair()
    with one, other:
        assert choose_mode(one.fileno(), writing=False) == "loop"
        assert choose_mode(other.fileno(), writing=True) == "loop"


def test_terminals_are_served_on_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODE_ENV, raising=False)
    controller, terminal = os.openpty()
    try:
        assert choose_mode(terminal, writing=False) == "loop"
        assert choose_mode(terminal, writing=True) == "loop"
    finally:
        os.close(controller)
        os.close(terminal)


def test_a_handle_the_selector_refuses_is_served_by_a_thread(pipe: tuple[int, int],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    class RefusingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
        def register(self, fileobj: Any, events: int, data: Any = None) -> Any:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(stdio_mode.selectors, "DefaultSelector", RefusingSelector)
    read_fd, _ = pipe
    assert why_loop_cannot_serve(read_fd, writing=False) == "the OS cannot poll it (Operation not permitted)"
    assert choose_mode(read_fd, writing=False, mode="auto") == "threads"


def test_dev_null_regular_files_and_closed_handles_are_served_by_threads(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODE_ENV, raising=False)
    with open(os.devnull, "rb") as null, open(tmp_path / "f", "wb") as regular:
        assert why_loop_cannot_serve(null.fileno(), writing=False) == "it is a device other than a terminal"
        assert choose_mode(null.fileno(), writing=False) == "threads"
        assert why_loop_cannot_serve(regular.fileno(), writing=True) == "it is a regular file"
        assert choose_mode(regular.fileno(), writing=True) == "threads"
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    os.close(write_fd)
    assert "cannot be inspected" in (why_loop_cannot_serve(read_fd, writing=False) or "")
    assert choose_mode(read_fd, writing=False) == "threads"


def test_windows_is_always_served_by_threads(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    assert "Windows" in (why_loop_cannot_serve(read_fd, writing=False, platform="win32") or "")
    assert choose_mode(read_fd, writing=False, mode="auto", platform="win32") == "threads"
    assert choose_mode(write_fd, writing=True, mode="loop", platform="win32") == "threads"
    assert choose_mode(read_fd, writing=False, mode="auto", platform="darwin") == "loop"
    assert choose_mode(read_fd, writing=False, mode="auto", platform="linux") == "loop"


def test_forcing_threads_and_refusing_a_forced_loop_that_cannot_work(pipe: tuple[int, int],
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    read_fd, _ = pipe
    assert choose_mode(read_fd, writing=False, mode="threads") == "threads"
    with open(os.devnull, "wb") as null, caplog.at_level(logging.WARNING, "mcp_kit.stdio"):
        assert choose_mode(null.fileno(), writing=True, mode="loop") == "threads"
    assert "stdout cannot be served on the event loop as requested" in caplog.text


# ---------------------------------------------------------------------------------------- signals


def test_the_signal_plan_per_system() -> None:
    assert signal_plan("win32") == SignalPlan("handlers", ("SIGINT", "SIGBREAK"))
    assert signal_plan("linux") == SignalPlan("receiver", ("SIGTERM", "SIGINT"))
    assert signal_plan("darwin") == SignalPlan("receiver", ("SIGTERM", "SIGINT"))
    assert signal_plan() == signal_plan("linux")
    assert signal_plan("win32").signals() == [signal.SIGINT]  # SIGBREAK exists only on Windows


@pytest.mark.anyio
@pytest.mark.parametrize("way", ["receiver", "handlers"])
async def test_a_stop_signal_reaches_the_callback_on_the_loop_and_handlers_are_restored(way: str) -> None:
    before = signal.getsignal(signal.SIGUSR1)
    received: list[tuple[str, int]] = []
    arrived = anyio.Event()
    loop_thread = threading.get_ident()

    def on_signal(name: str) -> None:
        received.append((name, threading.get_ident()))
        arrived.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch_stop_signals, on_signal, SignalPlan(way, ("SIGUSR1", "SIGBREAK")))  # type: ignore[arg-type]
            await anyio.wait_all_tasks_blocked()
            signal.raise_signal(signal.SIGUSR1)
            await arrived.wait()
            tg.cancel_scope.cancel()
    assert received == [("SIGUSR1", loop_thread)]
    assert signal.getsignal(signal.SIGUSR1) == before


def test_stop_signals_outside_the_main_thread_are_skipped_without_error() -> None:
    outcome: list[Any] = []

    async def watch_briefly() -> None:
        with anyio.move_on_after(0.2):
            await watch_stop_signals(lambda name: None)
        outcome.append("returned")

    def run() -> None:
        try:
            anyio.run(watch_briefly)
        except BaseException as exc:  # recorded for the assert below
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=10)
    assert outcome == ["returned"]


# ---------------------------------------------------------------------------------------- threads


@pytest.mark.anyio
async def test_the_threaded_reader_hands_over_every_chunk_in_order_then_end_of_input(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    payload = os.urandom(1 << 20)

    def produce() -> None:
        view = memoryview(payload)
        while view:
            view = view[os.write(write_fd, view[:8192]):]
        os.close(write_fd)

    producer = threading.Thread(target=produce)
    producer.start()
    reader = ThreadedReader(read_fd, 4096)
    received = bytearray()
    with anyio.fail_after(30):
        while chunk := await reader.read():
            received += chunk
    producer.join(timeout=10)
    assert bytes(received) == payload
    assert await reader.read() == b""  # end of input stays the end


@pytest.mark.anyio
async def test_the_threaded_writer_pushes_back_above_its_limit_and_finishes_on_close(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    writer = ThreadedWriter(write_fd, high_water=1 << 16)
    writer.write(b"x" * (1 << 20))  # far more than the pipe holds: the thread blocks, the loop does not
    assert not writer.below_limit.is_set()
    received = bytearray()

    def consume() -> None:
        while len(received) < (1 << 20) + 3:
            received.extend(os.read(read_fd, 1 << 16))

    consumer = threading.Thread(target=consume)
    consumer.start()
    with anyio.fail_after(30):
        await writer.below_limit.wait()
        writer.write(b"end")
        await writer.aclose(timeout=30)
    consumer.join(timeout=10)
    assert len(received) == (1 << 20) + 3 and received.endswith(b"xend")


@pytest.mark.anyio
async def test_the_threaded_writer_drops_output_once_the_reader_is_gone(pipe: tuple[int, int],
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    read_fd, write_fd = pipe
    os.close(read_fd)
    writer = ThreadedWriter(write_fd, high_water=16)
    with caplog.at_level(logging.INFO, "mcp_kit.stdio"), anyio.fail_after(10):
        writer.write(b"nobody reads this\n")
        await writer.aclose(timeout=10)
        writer.write(b"dropped at once\n")
    assert writer.below_limit.is_set()
    assert "stdout is closed" in caplog.text


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["loop", "threads"])
async def test_messages_sent_in_one_loop_turn_leave_in_one_write(pipe: tuple[int, int], mode: str) -> None:
    read_fd, write_fd = pipe
    writer = StdioWriter(write_fd, mode)
    await writer.start()
    sink: Any = writer._transport if mode == "loop" else writer._threaded
    writes: list[bytes] = []
    real_write = sink.write

    def counting_write(data: bytes) -> None:
        writes.append(bytes(data))
        real_write(data)

    sink.write = counting_write
    for n in range(3):
        await writer.send(Notification("notifications/message", {"n": n}))
    assert writes == []  # nothing leaves before the loop turn ends
    await asyncio.sleep(0)  # the flush scheduled with call_soon runs before this task resumes
    assert len(writes) == 1 and writes[0].count(b"\n") == 3
    with anyio.fail_after(10):
        await writer.aclose(timeout=10)
    assert os.read(read_fd, 1 << 16) == writes[0]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["loop", "threads"])
async def test_closing_the_writer_waits_for_the_output_to_leave(pipe: tuple[int, int], mode: str) -> None:
    read_fd, write_fd = pipe
    writer = StdioWriter(write_fd, mode)
    await writer.start()
    assert writer.mode == mode
    message = Notification("notifications/message", {"data": "y" * (3 << 20)})
    received = bytearray()

    def consume() -> None:
        while chunk := os.read(read_fd, 1 << 16):
            received.extend(chunk)
            if received.endswith(b"\n"):
                return

    consumer = threading.Thread(target=consume)
    consumer.start()
    with anyio.fail_after(30):
        await writer.send(message)
        await writer.aclose(timeout=30)
    consumer.join(timeout=10)
    assert received.startswith(b'{"jsonrpc":"2.0","method":"notifications/message"') and len(received) > 3 << 20


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["loop", "threads"])
async def test_closing_the_writer_gives_up_at_its_deadline_when_nobody_reads(pipe: tuple[int, int], mode: str,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    _, write_fd = pipe
    writer = StdioWriter(write_fd, mode)
    await writer.start()
    with anyio.fail_after(20):
        writer._pending.append(b"z" * (8 << 20) + b"\n")  # more than the pipe holds, never read
        await writer.aclose(timeout=0.3)
    if mode == "loop":
        assert "stdout did not take the last" in caplog.text


# ---------------------------------------------------------------------------------------- idle


class _SlowHandler:
    def __init__(self) -> None:
        self.release = anyio.Event()

    async def handle_request(self, request: Request, principal: object | None = None) -> Any:
        await self.release.wait()
        return {}

    async def handle_notification(self, notification: Notification) -> None:
        return None

    def accepts_batches(self) -> bool:
        return False

    def close(self) -> None:
        return None


class _Sink:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def send(self, message: Any, related_to: Any = None) -> None:
        self.sent.append(message)


@pytest.mark.anyio
async def test_wait_idle_returns_when_the_last_request_in_flight_is_answered() -> None:
    handler, sink = _SlowHandler(), _Sink()
    async with Dispatcher(sink, handler) as dispatcher, anyio.create_task_group() as tg:
        with anyio.fail_after(5):
            await dispatcher.wait_idle()  # nothing in flight: at once
        await dispatcher.feed_frame(b'{"jsonrpc":"2.0","id":1,"method":"x"}')
        await dispatcher.feed_frame(b'{"jsonrpc":"2.0","id":2,"method":"x"}')
        idle = anyio.Event()

        async def wait() -> None:
            await dispatcher.wait_idle()
            idle.set()

        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert not idle.is_set() and dispatcher.in_flight == 2
        handler.release.set()
        with anyio.fail_after(5):
            await idle.wait()
        assert dispatcher.in_flight == 0
        assert sorted(m.id for m in sink.sent) == [1, 2]  # both answers were sent by the time idle was seen


# ---------------------------------------------------------------------------------------- app.run


def test_app_run_takes_the_stdio_mode_and_refuses_a_bad_one_before_starting() -> None:
    from mcp_kit import MCPServer

    app = MCPServer("modes")
    with pytest.raises(ValueError, match="mode must be one of auto, loop, threads; got 'fast'"):
        app.run(stdio_mode="fast")
    with pytest.raises(TypeError, match="stdio takes no options but stdio_mode, metrics_port and log_format; got port"):
        app.run(port=8000)


def test_app_run_with_stdio_mode_threads_serves_from_threads(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = tmp_path / "threads_server.py"
    script.write_text("from mcp_kit import MCPServer\n"
                      "MCPServer('threads').run(stdio_mode='threads', log_level='debug')\n")
    env = {k: v for k, v in os.environ.items() if k != MODE_ENV}
    # As a client does: a request, its answer, then the end of input.
    server = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        server.stdin.flush()
        answer = server.stdout.readline()
        rest, stderr_bytes = server.communicate(timeout=60)  # closes stdin: the end of input
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    stderr = stderr_bytes.decode()
    assert (server.returncode, answer + rest) == (0, b'{"jsonrpc":"2.0","id":1,"result":{}}\n'), stderr
    assert "stdin: served by a worker thread (threads were requested)" in stderr
    assert "stdout: served by a worker thread (threads were requested)" in stderr
