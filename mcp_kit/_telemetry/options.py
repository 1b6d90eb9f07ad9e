"""The observability options every server shares, and installing `Telemetry` when something asks for it.

    --metrics              the Prometheus scrape endpoint: /metrics on the HTTP app; a stdio server serves it
                           on a loopback port (--metrics-port, default 9464)        [env MCP_METRICS=1]
    --metrics-port PORT    serve /metrics on this loopback port instead (0: a free one, logged)
                                                                                    [env MCP_METRICS_PORT]
    --log-format json      one JSON object per stderr line, with trace, span, session and subject
                                                                                    [env MCP_LOG_FORMAT]

Traces and OTLP metrics need no option: OpenTelemetry's environment variables turn them on (`otel.py`).
Nothing asked for, nothing is installed: the request path is as without telemetry.

Imports the application's type (for typing), the telemetry modules and argparse.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from . import otel
from .logs import LOG_FORMATS, JsonLogFormatter

DEFAULT_METRICS_PORT = 9464  # OpenTelemetry's Prometheus exporter's default port


def add_telemetry_arguments(parser: argparse.ArgumentParser) -> None:
    env = os.environ.get
    group = parser.add_argument_group("observability (traces and OTLP export: OpenTelemetry's OTEL_* variables)")
    group.add_argument("--metrics", action="store_true", default=env("MCP_METRICS", "") == "1",
                       help="serve Prometheus metrics: GET /metrics on the HTTP app (behind its guard); stdio servers "
                            f"serve them on a loopback port (--metrics-port, default {DEFAULT_METRICS_PORT}); "
                            "needs mcp-kit-framework[otel] [env MCP_METRICS=1]")
    port = env("MCP_METRICS_PORT", "").strip()
    group.add_argument("--metrics-port", type=int, default=port or None, metavar="PORT",  # argparse converts it
                       help="serve /metrics on this loopback port rather than the HTTP app's (0: any free port, "
                            "logged); implies --metrics [env MCP_METRICS_PORT]")
    group.add_argument("--log-format", choices=LOG_FORMATS, default=env("MCP_LOG_FORMAT", "text") or "text",
                       help="stderr log lines: text, or json (one object per line with trace_id, span_id, session_id "
                            "and subject, so logs join traces) [env MCP_LOG_FORMAT]")


def telemetry_of(app: Any) -> Any:
    """The `Telemetry` middleware serving `app` (a built-in, or one the program added), or None."""
    from .middleware import Telemetry

    for each in (*app.builtin_middleware.values(), *app.middleware):
        if isinstance(each, Telemetry):
            return each
    return None


def ensure_telemetry(app: Any, *, metrics: bool = False, log_format: str | None = None) -> Any:
    """Install `Telemetry` on `app` when the environment, `metrics` or a JSON log format asks for it; the one
    serving it (None when nothing asks). MissingTelemetryExtra when the packages it needs are missing."""
    found = telemetry_of(app)
    if found is not None:
        if metrics and found.prometheus is None:
            found.want_prometheus = True
            found._app = None
            found.bind(app)
        return found
    traced = otel.configured_by_environment()
    if not (traced or metrics or log_format == "json"):
        return None
    if metrics:
        otel.require("prometheus")
    from .middleware import Telemetry

    telemetry = Telemetry(prometheus=metrics, logs_only=not (traced or metrics))
    app.set_builtin_middleware("telemetry", telemetry)
    return telemetry


def configure_log_format(log_format: str | None) -> None:
    """Format the root logger's stderr lines as `log_format` asks ("json": `JsonLogFormatter`)."""
    if log_format != "json":
        return
    root = logging.getLogger()
    handlers = [h for h in root.handlers if isinstance(h, logging.StreamHandler)] or []
    if not handlers:
        handler = logging.StreamHandler(sys.stderr)
        root.addHandler(handler)
        handlers = [handler]
    for handler in handlers:
        handler.setFormatter(JsonLogFormatter())


def options_of(args: argparse.Namespace) -> tuple[bool, int | None, str]:
    """(metrics, metrics port, log format) as `add_telemetry_arguments` parsed them."""
    port = getattr(args, "metrics_port", None)
    return bool(getattr(args, "metrics", False) or port is not None), port, getattr(args, "log_format", "text")
