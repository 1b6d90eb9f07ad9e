"""Observability: traces and metrics per OpenTelemetry's MCP conventions, Prometheus, readiness, JSON logs.

Nothing to write for the usual case: OpenTelemetry's environment variables (`OTEL_SERVICE_NAME`,
`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_TRACES_EXPORTER`, `OTEL_METRICS_EXPORTER`, `OTEL_TRACES_SAMPLER`, ...)
turn on OTLP export, `--metrics` the Prometheus endpoint, `--log-format json` log lines that join traces.
In Python, for what the environment cannot say:

    from mcp_kit.telemetry import Telemetry

    app = MCPServer("demo")
    app.set_builtin_middleware("telemetry", Telemetry(capture_tools={"search"}))  # search's arguments in spans

A handler continues its request's trace with `ctx.trace_headers()`; code without a `Context` (an upstream
client deep in a library) with `current_trace_headers()`. Needs `pip install 'mcp-kit-framework[otel]'`; without
it, asking for telemetry raises `MissingTelemetryExtra`. The private modules (`mcp_kit._telemetry`) hold
the rest: `hooks`, `otel`, `middleware`, `spans`, `metrics`, `prometheus`, `metrics_port`, `health`,
`logs`, `options`.
"""

from .._telemetry.hooks import current_trace_headers
from .._telemetry.logs import JsonLogFormatter
from .._telemetry.middleware import Telemetry
from .._telemetry.otel import MissingTelemetryExtra

__all__ = ["JsonLogFormatter", "MissingTelemetryExtra", "Telemetry", "current_trace_headers"]
