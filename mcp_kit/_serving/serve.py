"""Starting a server: the transport choice, the command-line options every server shares.

    parser = argparse.ArgumentParser()
    add_run_arguments(parser)        # --transport, --host, --port, --auth-token, --allowed-origin, --allowed-host, ...
    app.run_from_args(parser.parse_args())

Each option can also come from the environment (MCP_TRANSPORT, MCP_HOST, MCP_PORT, MCP_AUTH_TOKEN,
MCP_ALLOWED_ORIGINS and MCP_ALLOWED_HOSTS comma-separated, MCP_LOG_LEVEL, MCP_OAUTH_*: see auth/options.py).
The request-pipeline options (--tool-timeout, --mask-errors/--no-mask-errors, --max-result-chars,
--list-by-scope, --log-requests) install the built-in middleware of `mcp_kit.middleware`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import logging
import os
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio

from .._app.application import Application
from .._eras.session import Session
from .._protocol.dispatcher import Dispatcher
from .._telemetry.health import Readiness
from .._telemetry.options import (
    DEFAULT_METRICS_PORT,
    add_telemetry_arguments,
    configure_log_format,
    ensure_telemetry,
    options_of,
)
from .._telemetry.otel import MissingTelemetryExtra
from .._telemetry.prometheus import multiprocess_directory, remove_directory, worker_exited
from .._transports.http_options import HttpOptions
from .._transports.stdio import StdioWriter, protocol_stdout, serve_lines
from .._transports.stdio_mode import requested_mode
from ..auth._options import add_oauth_arguments, auth_config_from_args

TRANSPORTS = ("stdio", "http", "sse")
PORT_HINT = "choose another port with --port N (or MCP_PORT), or --port 0 for any free one (the log names it)"


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """`--help` that shows each option's default (when it has one worth showing and its text does not say it)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (not action.option_strings or default in (None, False, True, [], (), "") or default is argparse.SUPPRESS
                or isinstance(default, BadEnvironment) or "default" in text.lower()):
            return action.help
        return f"{text} (default: %(default)s)"


@dataclasses.dataclass(frozen=True)
class BadEnvironment:
    """An environment variable whose value its option cannot take: reported (exit 2) when the server starts,
    unless the command line gives the option."""

    name: str
    value: str
    expected: str

    def __str__(self) -> str:
        return f"{self.name}={self.value!r} is not {self.expected}; fix or unset it"


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535; 0: any free one)")
    return port


def _from_env(name: str, convert: Any, fallback: Any, expected: str) -> Any:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return fallback
    try:
        return convert(raw)
    except (ValueError, argparse.ArgumentTypeError):
        return BadEnvironment(name, raw, expected)


def _env_transport() -> Any:
    raw = os.environ.get("MCP_TRANSPORT")
    if raw is None:
        return "stdio"
    if raw.strip().lower() in TRANSPORTS:
        return raw.strip().lower()
    return BadEnvironment("MCP_TRANSPORT", raw, f"a transport: use one of {', '.join(TRANSPORTS)}")


def environment_problems(args: argparse.Namespace) -> list[str]:
    """What the MCP_* environment gave that its options cannot take (and the command line did not override)."""
    return [str(value) for value in vars(args).values() if isinstance(value, BadEnvironment)]


def add_run_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the options shared by every mcp_kit server to `parser` (whose `--help` then shows the defaults)."""
    if parser.formatter_class is argparse.HelpFormatter:
        parser.formatter_class = DefaultsHelpFormatter
    env = os.environ.get
    group = parser.add_argument_group("transport")
    group.add_argument("--transport", choices=TRANSPORTS, default=_env_transport(),
                       help="stdio (default; for Claude Desktop/Cursor), or http / sse: one HTTP app serving "
                            "Streamable HTTP at /mcp and legacy HTTP+SSE at /sse [env MCP_TRANSPORT]")
    group.add_argument("--host", default=env("MCP_HOST", "127.0.0.1"), help="HTTP bind address [env MCP_HOST]")
    group.add_argument("--port", type=port_number, help="HTTP port; 0: any free one, logged [env MCP_PORT]",
                       default=_from_env("MCP_PORT", port_number, 8000, "a port number (0-65535; 0: any free one)"))
    group.add_argument("--auth-token", default=env("MCP_AUTH_TOKEN"),
                       help="require 'Authorization: Bearer TOKEN' on HTTP [env MCP_AUTH_TOKEN]")
    group.add_argument("--allowed-origin", action="append", default=_env_list("MCP_ALLOWED_ORIGINS"),
                       help="an Origin allowed to call the HTTP endpoint (repeatable) [env MCP_ALLOWED_ORIGINS]")
    group.add_argument("--allowed-host", action="append", default=_env_list("MCP_ALLOWED_HOSTS"),
                       help="a Host header name the HTTP endpoint accepts, e.g. the public name a reverse proxy "
                            "forwards (repeatable; added to the loopback names when bound to loopback) "
                            "[env MCP_ALLOWED_HOSTS]")
    group.add_argument("--json-response", action="store_true", default=env("MCP_JSON_RESPONSE", "") == "1",
                       help="answer Streamable HTTP POSTs with JSON instead of an SSE stream [env MCP_JSON_RESPONSE=1]")
    group.add_argument("--max-sessions", type=int, default=_from_env("MCP_MAX_SESSIONS", int, 1000, "an integer"),
                       help="HTTP sessions allowed at once; more get 503 [env MCP_MAX_SESSIONS]")
    group.add_argument("--session-ttl", type=float, default=_from_env("MCP_SESSION_TTL", float, 3600.0, "a number"),
                       help="seconds an idle HTTP session lives [env MCP_SESSION_TTL]")
    group.add_argument("--max-connections", type=int,
                       default=_from_env("MCP_MAX_CONNECTIONS", int, 1000, "an integer"),
                       help="HTTP connections served at once; requests beyond get 503 [env MCP_MAX_CONNECTIONS]")
    group.add_argument("--listen-fd", type=int, default=_env_int("MCP_LISTEN_FD"),
                       help="serve HTTP on this already bound socket inherited from a supervisor (POSIX), instead of "
                            "binding --host/--port [env MCP_LISTEN_FD]")
    group.add_argument("--backend", default=env("MCP_BACKEND") or None,
                       help="where HTTP sessions, event streams, subscriptions and request state are shared: memory "
                            "(default: this process only) or a Redis URL, e.g. redis://127.0.0.1:6379/0, rediss://..., "
                            "redis+cluster://host:port (needs mcp-kit-framework[redis]) [env MCP_BACKEND]")
    group.add_argument("--workers", type=int, default=_from_env("MCP_WORKERS", int, 1, "an integer"),
                       help="HTTP processes serving the same port (POSIX; more than 1 needs --backend redis://...) "
                            "[env MCP_WORKERS]")
    group.add_argument("--shutdown-grace", type=int, default=_from_env("MCP_SHUTDOWN_GRACE", int, 10, "an integer"),
                       help="seconds a stopping HTTP server (SIGTERM, Ctrl-C) waits for requests and streams in "
                            "flight before it cancels them and exits [env MCP_SHUTDOWN_GRACE]")
    group.add_argument("--body-timeout", type=float, default=_from_env("MCP_BODY_TIMEOUT", float, 30.0, "a number"),
                       help="seconds a request body may take to arrive; slower ones get 408 [env MCP_BODY_TIMEOUT]")
    group.add_argument("--log-level", default=env("MCP_LOG_LEVEL", "info"),
                       choices=["debug", "info", "warning", "error"], help="stderr log level [env MCP_LOG_LEVEL]")
    add_oauth_arguments(
        parser.add_argument_group("OAuth 2.1 (HTTP only; stdio servers take credentials from the environment)")
    )
    add_limit_arguments(parser)
    add_pipeline_arguments(parser.add_argument_group("request pipeline (built-in middleware)"))
    add_telemetry_arguments(parser)
    return parser


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the stateful built-ins: rate limits, the response cache, ctx.state (kept in --backend)."""
    env = os.environ.get
    group = parser.add_argument_group("rate limits, response cache and state (shared by every process with --backend)")
    group.add_argument("--rate-limit", action="append", default=_env_list("MCP_RATE_LIMIT"), metavar="[TARGET=]RATE",
                       help="a token-bucket limit per caller (OAuth subject, else session, else client address): "
                            "10/s for every request, search=5/m for one tool, resources/read=100/m for one method; "
                            "RATE is COUNT/WINDOW[:BURST] (s, m, h, d); repeatable "
                            "[env MCP_RATE_LIMIT, comma-separated]")
    group.add_argument("--rate-limit-burst", type=float, default=_env_float("MCP_RATE_LIMIT_BURST"),
                       help="the burst of each --rate-limit written without one (default: its count) "
                            "[env MCP_RATE_LIMIT_BURST]")
    group.add_argument("--cache", action="store_true", default=env("MCP_CACHE", "") == "1",
                       help="answer lists and resource reads from a cache in the backend, dropped when they change "
                            "[env MCP_CACHE=1]")
    group.add_argument("--cache-ttl-ms", type=int, default=_env_int("MCP_CACHE_TTL_MS"),
                       help="how long lists and reads stay fresh: the cache hint (ttlMs) clients get and what --cache "
                            "keeps [env MCP_CACHE_TTL_MS]")
    group.add_argument("--cache-scope", choices=["public", "private"], default=env("MCP_CACHE_SCOPE") or None,
                       help="who may share a cached list or read (cacheScope): private (default: per caller) or public "
                            "[env MCP_CACHE_SCOPE]")
    group.add_argument("--state-ttl", type=float, default=_env_float("MCP_STATE_TTL"),
                       help="seconds a ctx.state / ctx.user_state value lives (default 3600) [env MCP_STATE_TTL]")
    group.add_argument("--state-max-bytes", type=int, default=_env_int("MCP_STATE_MAX_BYTES"),
                       help="the largest ctx.state value, JSON-encoded (default 16384) [env MCP_STATE_MAX_BYTES]")
    group.add_argument("--state-max-keys", type=int, default=_env_int("MCP_STATE_MAX_KEYS"),
                       help="keys one state holds (default 100) [env MCP_STATE_MAX_KEYS]")


def apply_limit_arguments(app: Application, args: argparse.Namespace) -> None:
    """Install what `add_limit_arguments` parsed on `app`; ValueError naming a bad option."""
    from ..middleware import RateLimit, ResponseCache

    specs = [spec for item in getattr(args, "rate_limit", None) or () for spec in item.split(",") if spec.strip()]
    if specs:
        try:
            limit = RateLimit.from_specs(specs, getattr(args, "rate_limit_burst", None))
            app.set_builtin_middleware("rate_limit", limit)
        except ValueError as exc:
            raise ValueError(f"--rate-limit: {exc}") from None
    if getattr(args, "cache_ttl_ms", None) is not None:
        if args.cache_ttl_ms < 0:
            raise ValueError("--cache-ttl-ms must be 0 or more")
        app.cache_ttl_ms = args.cache_ttl_ms
    if getattr(args, "cache_scope", None):
        app.cache_scope = args.cache_scope
    if getattr(args, "cache", False):
        app.set_builtin_middleware("cache", ResponseCache())
    changes = {name: getattr(args, f"state_{name}", None) for name in ("ttl", "max_bytes", "max_keys")}
    if any(value is not None for value in changes.values()):
        limits = app.state_limits
        app.state_limits = dataclasses.replace(
            limits, ttl=changes["ttl"] if changes["ttl"] is not None else limits.ttl,
            max_value_bytes=changes["max_bytes"] if changes["max_bytes"] is not None else limits.max_value_bytes,
            max_keys=changes["max_keys"] if changes["max_keys"] is not None else limits.max_keys)


def add_pipeline_arguments(group: Any) -> None:
    """The options installing `mcp_kit.middleware`'s built-ins on every server."""
    env = os.environ.get
    group.add_argument("--tool-timeout", type=float, metavar="SECONDS", default=_env_float("MCP_TOOL_TIMEOUT"),
                       help="stop a tool call after SECONDS (a tool's own timeout wins) [env MCP_TOOL_TIMEOUT]")
    group.add_argument("--mask-errors", action=argparse.BooleanOptionalAction, default=_env_flag("MCP_MASK_ERRORS"),
                       help="answer unexpected exceptions with an error id only, the traceback in the log (default: "
                            "on over HTTP, off over stdio) [env MCP_MASK_ERRORS=1/0]")
    group.add_argument("--max-result-chars", type=int, metavar="N", default=_env_int("MCP_MAX_RESULT_CHARS"),
                       help="cut tool results' text to N characters, with a marker (default: no limit) "
                            "[env MCP_MAX_RESULT_CHARS]")
    group.add_argument("--list-by-scope", action="store_true", default=env("MCP_LIST_BY_SCOPE", "") == "1",
                       help="lists show a caller only what its OAuth scopes allow [env MCP_LIST_BY_SCOPE=1]")
    group.add_argument("--log-requests", action="store_true", default=env("MCP_LOG_REQUESTS", "") == "1",
                       help="one JSON line per request on stderr (no arguments) [env MCP_LOG_REQUESTS=1]")


def apply_pipeline_arguments(app: Application, args: argparse.Namespace) -> None:
    """Install the built-in middleware the parsed options ask for (`add_pipeline_arguments`)."""
    from ..middleware import MaskErrors, RequestLog, ResultSizeLimit, Timeouts

    if getattr(args, "log_requests", False):
        app.set_builtin_middleware("request_log", RequestLog())
    mask = getattr(args, "mask_errors", None)
    if mask is not None:
        app.mask_errors = mask
        app.set_builtin_middleware("mask_errors", MaskErrors() if mask else None)
    if getattr(args, "max_result_chars", None):
        app.set_builtin_middleware("result_size", ResultSizeLimit(args.max_result_chars))
    if getattr(args, "tool_timeout", None):
        app.set_builtin_middleware("timeouts", Timeouts(default=args.tool_timeout))
    if getattr(args, "list_by_scope", False):
        app.list_by_scope = True


def _env_float(name: str) -> Any:
    return _from_env(name, float, None, "a number")


def _env_flag(name: str) -> bool | None:
    value = os.environ.get(name, "").strip().lower()
    return None if not value else value in ("1", "true", "yes", "on")


def _env_int(name: str) -> Any:
    return _from_env(name, int, None, "an integer")


def _env_list(name: str) -> list[str]:
    value = os.environ.get(name, "")
    return [item.strip() for item in value.split(",") if item.strip()]


def http_options_from_args(args: argparse.Namespace) -> HttpOptions:
    """The HTTP options `add_run_arguments` parsed (OAuth included); exits 2 naming a bad OAuth option."""
    try:
        auth = auth_config_from_args(args)
        return _http_options(args, auth)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _http_options(args: argparse.Namespace, auth: Any) -> HttpOptions:
    return HttpOptions(host=args.host, port=args.port, auth_token=None if auth is not None else args.auth_token,
                       auth=auth, allowed_origins=tuple(args.allowed_origin or ()),
                       allowed_hosts=tuple(getattr(args, "allowed_host", None) or ()), json_response=args.json_response,
                       max_sessions=args.max_sessions, session_ttl=args.session_ttl,
                       max_connections=args.max_connections, body_timeout=args.body_timeout,
                       listen_fd=getattr(args, "listen_fd", None), backend=getattr(args, "backend", None),
                       workers=getattr(args, "workers", 1), shutdown_grace=getattr(args, "shutdown_grace", 10),
                       metrics=options_of(args)[0], metrics_port=options_of(args)[1],
                       log_format=options_of(args)[2])


def run_from_command_line(app: Application, argv: list[str] | None = None) -> None:
    """What `app.run()` without arguments does: read `argv` (default: this process's command line) and the
    MCP_* environment with `add_run_arguments`' options, then serve (`python server.py --transport http`)."""
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else None
    parser = argparse.ArgumentParser(prog=prog, description=f"The {app.name} MCP server.")
    add_run_arguments(parser)
    run_from_args(app, parser.parse_intermixed_args(sys.argv[1:] if argv is None else argv))


def _refuse(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def check_backend(url: str | None) -> None:
    """Exit 2 with one line when `url` (--backend) is malformed, unknown, or needs a missing extra."""
    from .._backends import MissingBackendExtra, check_backend_url

    try:
        check_backend_url(url)
    except (ValueError, MissingBackendExtra) as exc:
        _refuse(str(exc))


def run_from_args(app: Application, args: argparse.Namespace) -> None:
    """Serve `app` as `add_run_arguments` parsed it (exit 2 naming an environment variable it cannot take)."""
    problems = environment_problems(args)
    if problems:
        _refuse("; ".join(problems))
    if args.transport != "stdio":
        check_backend(getattr(args, "backend", None))
    log_level = getattr(args, "log_level", "info")
    metrics, metrics_port, log_format = options_of(args)
    if metrics and args.transport != "stdio" and getattr(args, "workers", 1) > 1:
        multiprocess_directory()  # before any metric exists: every worker writes where any scrape reads
    try:
        apply_limit_arguments(app, args)
        apply_pipeline_arguments(app, args)
        ensure_telemetry(app, metrics=metrics, log_format=log_format)
    except (ValueError, MissingTelemetryExtra) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.transport == "stdio":
        if getattr(args, "oauth_issuer", None):
            logging.getLogger("mcp_kit").warning(
                "--oauth-* options apply to HTTP; stdio takes credentials from the environment"
            )
        run(app, "stdio", log_level, log_format=log_format,
            metrics_port=metrics_port if metrics_port is not None else DEFAULT_METRICS_PORT if metrics else None)
        return
    options = http_options_from_args(args)
    configure_logging(log_level, log_format)
    serve_http(app, options, log_level)


def configure_logging(level: str = "info", log_format: str | None = "text") -> None:
    """Log to stderr (stdout belongs to the protocol); `log_format` "json": one JSON object per line."""
    logging.basicConfig(stream=sys.stderr, level=level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    configure_log_format(log_format)


def run(app: Application, transport: str = "stdio", log_level: str = "info", **options: Any) -> None:
    """Serve `app` on `transport` until the client leaves or a signal arrives.

    stdio takes `stdio_mode`: `auto` (default), `loop` or `threads` (also MCP_KIT_STDIO_MODE), `metrics_port`
    (serve Prometheus metrics on that loopback port) and `log_format` ("text" or "json").
    http and sse take the fields of `HttpOptions` (a TypeError names an unknown one).
    """
    if transport == "stdio":
        stdio_mode = options.pop("stdio_mode", None)
        metrics_port = options.pop("metrics_port", None)
        log_format = options.pop("log_format", "text")
        if options:
            raise TypeError("stdio takes no options but stdio_mode, metrics_port and log_format; "
                            f"got {', '.join(options)}")
        requested_mode(stdio_mode)  # a bad value fails here, in words, before anything starts
        configure_logging(log_level, log_format)
        if _is_terminal(0):  # someone typed `python server.py` in a terminal: say why nothing happens
            print(f"{app.name}: MCP server on stdio, waiting for a client to write JSON-RPC on stdin; connect it from "
                  "an MCP client (see mcp-kit config), or run it with --transport http; Ctrl+C stops it",
                  file=sys.stderr, flush=True)
        ensure_telemetry(app, metrics=metrics_port is not None, log_format=log_format)
        anyio.run(serve_stdio, app, 0, stdio_mode, metrics_port, backend_options={"use_uvloop": _has_uvloop()})
        _exit_without_waiting_for_abandoned_threads()
    elif transport in ("http", "sse"):
        http_options = HttpOptions(**options)
        check_backend(http_options.backend)
        configure_logging(log_level, http_options.log_format)
        serve_http(app, http_options, log_level)
    else:
        raise ValueError(f"unknown transport {transport!r}; use one of {', '.join(TRANSPORTS)}")


async def serve_stdio(app: Application, stdin_fd: int = 0, mode: str | None = None,
                      metrics_port: int | None = None) -> None:
    """Serve one client on stdin/stdout; `mode` as in `stdio_mode.choose_mode`; `metrics_port`: Prometheus
    metrics on that loopback port (0: a free one, logged)."""
    telemetry = ensure_telemetry(app, metrics=metrics_port is not None)
    app.mask_errors_for("stdio")
    with protocol_stdout() as out_fd:
        writer = StdioWriter(out_fd, mode)
        await writer.start()
        try:
            async with app.running(), serving_metrics(telemetry, metrics_port), \
                    Dispatcher(writer) as dispatcher:  # leaving it ends every task it started
                dispatcher.attach(Session(app, dispatcher))
                await serve_lines(dispatcher.feed_frame, writer, stdin_fd=stdin_fd, mode=mode,
                                  wait_idle=dispatcher.wait_idle, on_close=dispatcher.close)
        finally:
            with anyio.CancelScope(shield=True):
                await writer.aclose()


def serve_http(app: Application, options: HttpOptions, log_level: str = "info") -> None:
    """Serve Streamable HTTP (/mcp) and legacy HTTP+SSE (/sse) with uvicorn.

    The listening socket is bound before uvicorn starts (port 0 picks a free port) or inherited
    (`options.listen_fd`), and the address it really listens on is logged: a supervisor or a test
    reads that line instead of guessing a free port. `options.max_connections` caps the connections
    uvicorn serves at once (503 beyond: its `limit_concurrency`); a stop waits at most
    `options.shutdown_grace` seconds for requests and streams in flight. uvicorn has no timeout for slow
    request headers: in production, put a reverse proxy in front that has one (see the README's
    security model).
    """
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    from .one_write import one_write_protocol

    protocol = one_write_protocol(AutoHTTPProtocol)  # httptools when installed, else h11: uvicorn's own choice

    def config() -> uvicorn.Config:
        return uvicorn.Config(http_app(app, options), host=options.host, port=options.port, log_level=log_level,
                              http=protocol,
                              access_log=False, lifespan="on", limit_concurrency=options.max_connections,
                              timeout_graceful_shutdown=options.shutdown_grace)

    if options.workers > 1 and options.metrics_port is not None:
        raise SystemExit("--metrics-port serves one process; with --workers, scrape /metrics on the HTTP port "
                         "(every worker's scrape reports them all)")
    metrics_dir = multiprocess_directory() if options.workers > 1 and options.metrics else None
    first = config()  # one process: the app is built before the address is announced; workers build their own
    sock = socket.socket(fileno=options.listen_fd) if options.listen_fd is not None else bind_tcp(options.host,
                                                                                                   options.port)
    if options.workers == 1:
        first.load()  # the HTTP parser is chosen (and loaded) before the port accepts connections
    sock = tcp_listener(sock)
    sock.listen(first.backlog)  # clients may connect from now on; they are served once the app has started
    logging.getLogger("mcp_kit").info("serving MCP on http://%s:%d/mcp (legacy SSE: /sse)%s", options.host,
                                      sock.getsockname()[1],
                                      f" with {options.workers} workers" if options.workers > 1 else "")
    if options.workers > 1:
        from .prefork import serve_workers

        try:
            serve_workers(sock, options.workers, lambda: _serve_socket(uvicorn.Server(config()), sock),
                          on_exit=worker_exited)
        finally:
            remove_directory(metrics_dir)
        return
    _serve_socket(uvicorn.Server(first), sock)


def _serve_socket(server: Any, sock: socket.socket) -> None:
    readiness = getattr(server.config.app, "readiness", None)
    if readiness is not None:  # /readyz answers 503 from the stop signal on, while requests drain
        handle_exit = server.handle_exit

        def draining(sig: int, frame: Any) -> None:
            readiness.draining = True
            handle_exit(sig, frame)

        server.handle_exit = draining
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    if not server.started:
        raise SystemExit(3)  # uvicorn's exit status for a server that could not start


def bind_tcp(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host`:`port` as uvicorn binds one; a port that cannot be had exits 3 saying
    which address, why, and what to do (instead of uvicorn's bare `[Errno 98] Address already in use`)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        shown = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
        reason = (exc.strerror or str(exc)).lower()
        if exc.errno == errno.EADDRINUSE:
            hint = f"another program (or another copy of this server) listens there; {PORT_HINT}"
        elif exc.errno == errno.EACCES:
            hint = f"ports below 1024 need privileges; {PORT_HINT}"
        else:
            hint = "check --host (MCP_HOST) names an address of this machine"
        print(f"error: cannot listen on {shown}: {reason}; {hint}", file=sys.stderr, flush=True)
        raise SystemExit(3) from None  # uvicorn's exit status for a server that could not start
    sock.set_inheritable(True)
    logging.getLogger("uvicorn.error").info("Uvicorn running on http://%s:%d (Press CTRL+C to quit)",  # as uvicorn
                                            f"[{host}]" if family == socket.AF_INET6 else host, sock.getsockname()[1])
    return sock


def tcp_listener(sock: socket.socket) -> socket.socket:
    """`sock` with its protocol marked TCP, so that every connection it accepts gets TCP_NODELAY.

    asyncio sets TCP_NODELAY only on sockets whose `proto` is IPPROTO_TCP, and an accepted socket
    inherits the listener's; uvicorn before 0.55 binds with proto 0. Without it the stdlib loop (Windows, or
    no uvloop) writes a reply's headers and body as two small segments, and Nagle's algorithm
    holds the second until the client's delayed ACK: about 40 ms per request. uvloop sets
    TCP_NODELAY itself.
    """
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.proto != socket.IPPROTO_TCP:
        return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
    return sock


def http_app(app: Application, options: HttpOptions) -> Any:
    """The HTTP app serving `app` (see `MCPServer.asgi`)."""
    from .._backends import open_backend
    from .._eras.record import SessionState
    from .._transports.http import create_app
    from ..auth._config import AuthConfig
    from ..auth._facade_config import FacadeConfig
    from .attach import attached

    app.mask_errors_for("http")
    auth = options.auth
    if isinstance(auth, (AuthConfig, FacadeConfig)) and auth.scopes_supported is None and app.declared_scopes():
        # the metadata names every scope a client may need: the server-wide ones and each primitive's
        published = tuple(dict.fromkeys((*auth.required_scopes, *app.declared_scopes())))
        options = dataclasses.replace(options, auth=dataclasses.replace(auth, scopes_supported=published))
    backend = open_backend(options.backend)
    telemetry = ensure_telemetry(app, metrics=options.metrics or options.metrics_port is not None)
    readiness = Readiness(backend)

    def session(port: Any, record: dict[str, Any] | None = None) -> Session:
        return Session(app, port, state=SessionState.from_dict(record) if record is not None else None)

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        async with app.running(), attached(app, backend), serving_metrics(telemetry, options.metrics_port):
            readiness.started = True
            try:
                yield
            finally:
                readiness.draining = True

    scrape = telemetry.prometheus if telemetry is not None and options.metrics_port is None else None
    asgi = create_app(session, lifespan, options, param_headers=app.param_headers,
                      required_scopes=app.required_scopes, backend=backend, admit=_admission(app),
                      readiness=readiness, scrape=scrape)
    if telemetry is not None:
        telemetry.serving_http(asgi.session_table)
    return asgi


@contextlib.asynccontextmanager
async def serving_metrics(telemetry: Any, port: int | None) -> AsyncIterator[None]:
    """While serving: the Prometheus gauges kept fresh, and the loopback scrape port when `port` is set."""
    sink = telemetry.prometheus if telemetry is not None else None
    if sink is None:
        yield
        return
    from .._telemetry.metrics_port import MetricsPort

    sink.start()
    listener = MetricsPort(sink, port=port) if port is not None else None
    try:
        if listener is not None:
            await listener.start()
        yield
    finally:
        sink.stop()
        if listener is not None:
            await listener.aclose()


def _admission(app: Application) -> Any:
    """What the HTTP transport asks before dispatching a lone request: the app's rate limits (None without any)."""
    from ..middleware import RateLimit

    limits = [m for m in (*app.builtin_middleware.values(), *app.middleware) if isinstance(m, RateLimit)]
    if not limits:
        return None

    async def admit(method: str, params: dict[str, Any], principal: Any, session_id: str | None,
                    version: str | None) -> Any:
        for limit in limits:
            refused = await limit.admit_http(limit.backend or app.backend, method, params, principal, session_id,
                                             version)
            if refused is not None:
                return refused
        return None

    return admit


def _exit_without_waiting_for_abandoned_threads() -> None:
    """A sync tool still blocking a worker thread must not hold the process after the client left."""
    import threading
    import time

    deadline = time.monotonic() + 0.5  # idle pool threads end on their own within this
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def _is_terminal(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _has_uvloop() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True

