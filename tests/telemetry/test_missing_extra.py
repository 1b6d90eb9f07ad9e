"""Without the `otel` extra, asking for telemetry fails in words naming the extra; asking for nothing costs nothing."""

from __future__ import annotations

import sys

import pytest

from mcp_kit import MCPServer
from mcp_kit._telemetry.options import ensure_telemetry
from mcp_kit.telemetry import MissingTelemetryExtra


def test_metrics_without_prometheus_client_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # as if it were not installed
    with pytest.raises(MissingTelemetryExtra, match=r"in a clone, or the otel extra of mcp-kit-framework"):
        ensure_telemetry(MCPServer("x"), metrics=True)


def test_otlp_asked_for_without_the_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)
    with pytest.raises(MissingTelemetryExtra, match=r"in a clone, or the otel extra of mcp-kit-framework"):
        ensure_telemetry(MCPServer("x"))


def test_nothing_asked_for_installs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    app = MCPServer("x")
    assert ensure_telemetry(app) is None and app.pipeline is None
