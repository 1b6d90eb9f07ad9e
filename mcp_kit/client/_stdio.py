"""The stdio client transport: start the server as a subprocess and speak JSON lines on its stdin/stdout.

The traps people hit are reported in words: a command that does not exist, a server that prints
ordinary text to stdout (which belongs to the protocol), a server that exits (with the last lines
of its stderr). The subprocess is always stopped on exit: stdin closed, `exit_grace` seconds, SIGTERM,
`kill_grace` seconds, SIGKILL (2 s each by default).
"""

from __future__ import annotations

import collections
import logging
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from types import TracebackType

import anyio
from anyio.abc import Process, TaskGroup

from .._protocol.jsonrpc import PARSE_ERROR, InvalidMessage, Message, decode_message, encode_message
from .._transports.stdio import LineReader
from ._argv import join_command, split_command
from ._errors import ConnectionClosed, ServerNotFound
from ._transport import Transport

logger = logging.getLogger("mcp_kit.client")

STDERR_TAIL_LINES = 40
STRAY_LINES_KEPT = 5
EXIT_GRACE = 2.0  # seconds a server gets to exit after its stdin closes (and again after SIGTERM), by default


def command_line(command: str | Sequence[str]) -> list[str]:
    """A command as argv: a string is split the way this system would (a POSIX shell; on Windows, its C runtime)."""
    argv = split_command(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ServerNotFound("empty command: give the command line that starts the server")
    return argv


class StdioTransport(Transport):
    """Runs `command` and exchanges newline-delimited JSON-RPC with it."""

    def __init__(self, command: str | Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                 on_stderr: Callable[[str], None] | None = None, exit_grace: float = EXIT_GRACE,
                 kill_grace: float = EXIT_GRACE) -> None:
        super().__init__()
        self.argv = command_line(command)
        self.exit_grace = exit_grace  # after stdin closes, before SIGTERM
        self.kill_grace = kill_grace  # after SIGTERM, before SIGKILL
        self.description = f"server ({join_command(self.argv)})"
        self.env = env
        self.cwd = cwd
        self.on_stderr = on_stderr
        self.stderr_lines: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.stray_output: list[str] = []
        self.process: Process | None = None
        self._tg: TaskGroup | None = None
        self._stderr_done = anyio.Event()

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> StdioTransport:
        try:
            self.process = await self._start()
        except BaseException:
            self.release()
            raise
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._read_stderr)
        self._tg.start_soon(self._read_stdout)
        return self

    async def _start(self) -> Process:
        executable = self.argv[0]
        search_path = (self.env or os.environ).get("PATH")
        if os.sep not in executable and shutil.which(executable, path=search_path) is None:
            raise ServerNotFound(f"command not found: {executable!r} (is it installed and on PATH? GUI clients such as "
                                 f"Claude Desktop do not inherit your shell's PATH: use an absolute path)")
        try:
            return await anyio.open_process(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, env=self.env, cwd=self.cwd)
        except FileNotFoundError as exc:
            missing = self.cwd if self.cwd and not os.path.isdir(self.cwd) else executable
            raise ServerNotFound(f"cannot start the server: no such file or directory: {missing!r}") from exc
        except PermissionError as exc:
            raise ServerNotFound(f"cannot start the server: {executable!r} is not executable ({exc.strerror})") from exc

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        with anyio.CancelScope(shield=True):
            await self._stop_process()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            await self._tg.__aexit__(None, None, None)
        self.finish(None)
        self.release()

    async def _stop_process(self) -> None:
        process = self.process
        if process is None:
            return
        if process.stdin is not None:
            await process.stdin.aclose()
        for stop, grace in ((None, self.exit_grace), (process.terminate, self.kill_grace), (process.kill, EXIT_GRACE)):
            if process.returncode is not None:
                break
            if stop is not None:
                try:
                    stop()
                except ProcessLookupError:
                    break
            with anyio.move_on_after(grace):
                await process.wait()

    # ------------------------------------------------------------------ I/O

    async def send(self, message: Message) -> None:
        self.check_open()
        assert self.process is not None and self.process.stdin is not None
        try:
            await self.process.stdin.send(encode_message(message) + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._ended()
            self.check_open()

    async def _read_stdout(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        reader = LineReader()
        try:
            async for chunk in self.process.stdout:
                for line in reader.feed(chunk):
                    self._on_line(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        last = reader.rest()
        if last:
            self._on_line(last)
        await self._ended()

    def _on_line(self, line: bytes) -> None:
        decoded = decode_message(line)
        if isinstance(decoded, InvalidMessage) and decoded.error is not None and decoded.error.code == PARSE_ERROR:
            text = line.decode("utf-8", "replace")
            if len(self.stray_output) < STRAY_LINES_KEPT:
                self.stray_output.append(text)
            logger.warning("the server printed non-JSON text to stdout, which is reserved for MCP messages "
                           "(it should log to stderr): %.200s", text)
            return
        self.deliver(decoded)

    async def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        reader = LineReader()
        try:
            async for chunk in self.process.stderr:
                for line in reader.feed(chunk):
                    self._on_stderr_line(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        last = reader.rest()
        if last:
            self._on_stderr_line(last)
        self._stderr_done.set()

    def _on_stderr_line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace")
        self.stderr_lines.append(text)
        if self.on_stderr is not None:
            self.on_stderr(text)

    async def _ended(self) -> None:
        """stdout closed: wait briefly for the exit status and the last stderr lines, then say why it ended."""
        if self.closed_error is not None:
            return
        assert self.process is not None
        with anyio.move_on_after(EXIT_GRACE):
            await self.process.wait()
        with anyio.move_on_after(0.5):
            await self._stderr_done.wait()
        self.finish(ConnectionClosed(self.exit_report(), self.stderr_tail()))

    # ------------------------------------------------------------------ reporting

    def stderr_tail(self) -> str:
        return "\n".join(self.stderr_lines)

    def exit_report(self) -> str:
        """What happened to the server process, in words, with its stderr tail."""
        assert self.process is not None
        code = self.process.returncode
        what = (f"the server exited with status {code}" if code is not None and code >= 0
                else f"the server was killed by signal {-code}" if code is not None
                else "the server closed its stdout")
        parts = [f"{what} ({join_command(self.argv)})"]
        parts.extend(self.stray_report())
        tail = self.stderr_tail()
        parts.append(f"last lines of its stderr:\n{tail}" if tail else "it wrote nothing to stderr")
        return "\n".join(parts)

    def stray_report(self) -> list[str]:
        if not self.stray_output:
            return []
        sample = "\n".join(f"  {line[:200]}" for line in self.stray_output)
        return ["it printed non-JSON text to stdout, which is reserved for MCP messages "
                f"(log to stderr instead):\n{sample}"]

    def diagnosis(self) -> list[str]:
        """Stray stdout and the stderr tail, for errors that are not an exit."""
        tail = self.stderr_tail()
        return [*self.stray_report(), *([f"last lines of its stderr:\n{tail}"] if tail else [])]
