"""OpenTelemetry's providers, configured by OpenTelemetry's own environment variables.

Telemetry is off until asked for. OTLP export turns on with the SDK's variables, no code:
`OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` (`otlp`, `console`, or another installed exporter's
name; `none` for off), or an endpoint alone (`OTEL_EXPORTER_OTLP_ENDPOINT`,
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `..._METRICS_ENDPOINT`), which means `otlp`. `OTEL_SDK_DISABLED=true`
turns it all off. The SDK itself reads the rest: `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`
(the resource), `OTEL_TRACES_SAMPLER` and `..._ARG` (the sampler), `OTEL_EXPORTER_OTLP_*` (endpoint,
headers, timeout, compression), `OTEL_BSP_*` (batching), `OTEL_METRIC_EXPORT_INTERVAL`.

`otlp` means OTLP over HTTP/protobuf (the specification's default protocol, and what the `otel` extra
installs) unless `OTEL_EXPORTER_OTLP_PROTOCOL` (or the signal's own) says `grpc`. Exporters are found by
name in the SDK's entry points, as `opentelemetry-instrument` finds them. A program that configured
OpenTelemetry itself (a global SDK provider is set) keeps its providers.

Needs `pip install 'mcp-kit-framework[otel]'`; without it, asking for telemetry raises `MissingTelemetryExtra`.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points
from typing import Any

from .._errors import MCPKitError

EXTRA = "pip install -e '.[otel]' in a clone, or the otel extra of mcp-kit-framework"
SIGNALS = ("traces", "metrics")
_PROTOCOL_EXPORTERS = {"http/protobuf": "otlp_proto_http", "grpc": "otlp_proto_grpc", "http/json": "otlp_proto_http"}


class MissingTelemetryExtra(MCPKitError, ImportError):
    """Telemetry was asked for, but the OpenTelemetry (or prometheus_client) packages are not installed."""


def require(what: str) -> None:
    """MissingTelemetryExtra naming the extra to install, when `what` ("opentelemetry", "prometheus") is missing."""
    module = {"opentelemetry": "opentelemetry.sdk", "prometheus": "prometheus_client"}[what]
    try:
        __import__(module)
    except ImportError:
        raise MissingTelemetryExtra(f"telemetry needs the {module.split('.')[0]} package: {EXTRA}") from None


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


def exporters_asked(signal: str) -> list[str]:
    """The exporter names the environment asks for `signal` ("traces" or "metrics"); [] when it asks for none."""
    if _env("OTEL_SDK_DISABLED").lower() == "true":
        return []
    names = _env(f"OTEL_{signal.upper()}_EXPORTER")
    if names:
        return [] if names.lower() == "none" else [name.strip() for name in names.split(",") if name.strip()]
    if _env("OTEL_EXPORTER_OTLP_ENDPOINT") or _env(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"):
        return ["otlp"]
    return []


def configured_by_environment() -> bool:
    """Whether the environment asks for OpenTelemetry traces or metrics."""
    return any(exporters_asked(signal) for signal in SIGNALS)


def _exporter_class(name: str, signal: str) -> Any:
    if name == "otlp":
        protocol = _env(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL") or _env("OTEL_EXPORTER_OTLP_PROTOCOL")
        name = _PROTOCOL_EXPORTERS.get(protocol or "http/protobuf", "")
        if not name:
            raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: use http/protobuf or grpc")
    found = [point for point in entry_points(group=f"opentelemetry_{signal}_exporter") if point.name == name]
    if not found:
        hint = "pip install opentelemetry-exporter-otlp-proto-grpc" if name == "otlp_proto_grpc" else EXTRA
        raise MissingTelemetryExtra(f"OTEL_{signal.upper()}_EXPORTER asks for {name!r}, which is not installed: {hint}")
    return found[0].load()


def tracer_provider_from_environment() -> Any | None:
    """The tracer provider the environment asks for (exporting in batches), the program's own, or None."""
    exporters = exporters_asked("traces")
    if exporters:
        require("opentelemetry")
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    current = trace.get_tracer_provider()
    if _is_sdk(current):
        return current
    if not exporters:
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create())  # sampler: OTEL_TRACES_SAMPLER
    for name in exporters:
        provider.add_span_processor(BatchSpanProcessor(_exporter_class(name, "traces")()))
    trace.set_tracer_provider(provider)
    return provider


def meter_provider_from_environment() -> Any | None:
    """The meter provider the environment asks for (exporting periodically), the program's own, or None."""
    exporters = exporters_asked("metrics")
    if exporters:
        require("opentelemetry")
    try:
        from opentelemetry import metrics
    except ImportError:
        return None
    current = metrics.get_meter_provider()
    if _is_sdk(current):
        return current
    if not exporters:
        return None
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    readers = [PeriodicExportingMetricReader(_exporter_class(name, "metrics")()) for name in exporters]
    provider = MeterProvider(resource=Resource.create(), metric_readers=readers)
    metrics.set_meter_provider(provider)
    return provider


def _is_sdk(provider: Any) -> bool:
    """Whether `provider` is a real one (the program's), not the API's proxy or no-op default."""
    return type(provider).__module__.startswith("opentelemetry.sdk")


def shutdown(provider: Any) -> None:
    """Flush and stop a provider this module made (exported spans and metrics are not lost at exit)."""
    stop = getattr(provider, "shutdown", None)
    if callable(stop):
        try:
            stop()
        except Exception:  # an exporter that cannot reach its collector at exit: nothing more to do
            pass
