"""Observability: traces, metrics, readiness and JSON log lines (the public face is `mcp_kit.telemetry`).

- `hooks.py`: the switch the seams outside the middleware chain check (imports nothing of mcp_kit);
- `otel.py`: OpenTelemetry providers from OpenTelemetry's environment variables;
- `middleware.py`: `Telemetry`, the built-in middleware (spans, metrics) and the seams' probe;
- `spans.py`: the spans themselves (imports OpenTelemetry: only when tracing is configured);
- `metrics.py`: the metrics and the gauges' readings; `prometheus.py`: the scrape endpoint's registry;
- `health.py`: `/readyz`; `logs.py`: the JSON log formatter; `options.py`: the command-line options.

OpenTelemetry and prometheus_client are the optional extra `otel` (`pip install 'mcp-kit-framework[otel]'`).
"""
