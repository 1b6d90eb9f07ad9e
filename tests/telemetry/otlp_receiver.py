"""An OTLP/HTTP receiver on loopback for the tests: decodes ExportTraceServiceRequest (and metrics) protobufs
posted to /v1/traces and /v1/metrics, and keeps the spans, flattened, for assertions."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class ReceivedSpan:
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    links: list[tuple[str, str, dict[str, Any]]]
    service: str
    status_code: int


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def _attributes(items: Any) -> dict[str, Any]:
    return {item.key: _value(item.value) for item in items}


@dataclass
class Receiver:
    port: int = 0
    spans: list[ReceivedSpan] = field(default_factory=list)
    metric_names: set[str] = field(default_factory=set)
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def take_traces(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_spans in request.resource_spans:
            service = str(_attributes(resource_spans.resource.attributes).get("service.name"))
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(ReceivedSpan(
                        span.name, span.kind, span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(),
                        _attributes(span.attributes),
                        [(link.trace_id.hex(), link.span_id.hex(), _attributes(link.attributes))
                         for link in span.links],
                        service, span.status.code))
        with self.changed:
            self.spans.extend(found)
            self.changed.notify_all()

    def take_metrics(self, body: bytes) -> None:
        request = ExportMetricsServiceRequest()
        request.ParseFromString(body)
        names = {metric.name for rm in request.resource_metrics for sm in rm.scope_metrics for metric in sm.metrics}
        with self.changed:
            self.metric_names |= names
            self.changed.notify_all()

    def wait_for(self, condition: Callable[[list[ReceivedSpan]], Any], what: str, timeout: float = 30.0) -> Any:
        """The first truthy `condition(spans)`, waiting for exports as they come; AssertionError at the deadline."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = condition(list(self.spans))
                if found:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {what} within {timeout:g} s; received: "
                                         f"{sorted({s.name for s in self.spans})}")
                self.changed.wait(left)


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path == "/v1/traces":
                receiver.take_traces(body)
            elif self.path == "/v1/metrics":
                receiver.take_metrics(body)
            payload = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def otel_environment(receiver: Receiver, service: str) -> dict[str, str]:
    """What a server needs to export to `receiver`, by OpenTelemetry's own variables only."""
    return {"OTEL_SERVICE_NAME": service, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_METRIC_EXPORT_INTERVAL": "500"}
