"""The metrics: OpenTelemetry's MCP conventions, and what an operator needs, under the same namespace.

From the semantic conventions: `mcp.server.operation.duration` (histogram, s; attributes
`mcp.method.name`, `gen_ai.tool.name` or `gen_ai.prompt.name`, `error.type`, `mcp.protocol.version`,
`network.transport`) and `mcp.server.session.duration` (histogram, s; `mcp.protocol.version`,
`network.transport`), both with the conventions' bucket boundaries. The conventions say nothing of the
rest; mcp_kit adds, each for this process:

    mcp.server.active_requests      gauge             requests in flight (`mcp.method.name`)
    mcp.server.active_sessions      gauge             handshake-era sessions open
    mcp.server.tasks                gauge             tasks running or waiting for a place (`mcp.task.state`)
    mcp.server.tasks.finished       counter           tasks that ended (`mcp.task.status`)
    mcp.server.subscriptions        gauge             resource subscriptions (sessions and listen streams)
    mcp.server.listeners            gauge             2026-07-28 `subscriptions/listen` streams open
    mcp.server.event_store.size     gauge, By         bytes the resumable SSE event stores hold
    mcp.server.rate_limit.refusals  counter           requests refused by a rate limit (`mcp.method.name`)
    mcp.server.timeouts             counter           timeouts (`mcp.timeout.kind`: tool, client_request, backend)
    mcp.server.backend.errors       counter           backend operations that failed (`db.operation.name`)
    mcp.server.sync_threads.queue_depth   gauge       sync tool calls waiting for a worker thread
    mcp.server.process_pool.queue_depth   gauge       process-pool calls waiting for a worker process

Every label value is bounded: methods from the method table, tool and prompt names from the registries
(anything else is `_OTHER`), error types from codes and exception classes, versions from the known list.

The gauges read counters that exist anyway (`Readings`), when an exporter or a scrape asks; requests in
flight are a per-method count the middleware keeps (an instrument update per request would cost more).
`OtelSink` records into an OpenTelemetry meter; `prometheus.PromSink` into prometheus_client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..tasks._wire import TASKS_EXTENSION

DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
OPERATION = "mcp.server.operation.duration"
SESSION = "mcp.server.session.duration"
ACTIVE = "mcp.server.active_requests"
OTHER = "_OTHER"
# counted events: name -> (instrument, description, label)
COUNTERS = {
    "rate_limited": ("mcp.server.rate_limit.refusals", "Requests refused by a rate limit", "mcp.method.name"),
    "timeout": ("mcp.server.timeouts", "Timeouts: tool calls, requests to the client, backend operations",
                "mcp.timeout.kind"),
    "backend_error": ("mcp.server.backend.errors", "Backend operations that failed", "db.operation.name"),
    "task_finished": ("mcp.server.tasks.finished", "Tasks that ended, by status", "mcp.task.status"),
}
# gauges: name -> (unit, description, label or None)
GAUGES = {
    ACTIVE: ("{request}", "Requests in flight on this process", "mcp.method.name"),
    "mcp.server.active_sessions": ("{session}", "Handshake-era sessions open on this process", None),
    "mcp.server.tasks": ("{task}", "Tasks on this process, running or waiting for a place", "mcp.task.state"),
    "mcp.server.subscriptions": ("{subscription}", "Resource subscriptions held on this process", None),
    "mcp.server.listeners": ("{stream}", "2026-07-28 subscriptions/listen streams open on this process", None),
    "mcp.server.event_store.size": ("By", "Bytes the resumable SSE event stores hold on this process", None),
    "mcp.server.sync_threads.queue_depth": ("{call}", "Sync tool calls waiting for a worker thread", None),
    "mcp.server.process_pool.queue_depth": ("{call}", "Process-pool tool calls waiting for a worker process", None),
}
OPERATION_LABELS = ("mcp.method.name", "gen_ai.tool.name", "gen_ai.prompt.name", "error.type",
                    "mcp.protocol.version", "network.transport")


class Readings:
    """The gauges' values, read from what the application and the HTTP transport already count."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.event_budget: Any = None  # the HTTP session table's `StoreBudget`, once an HTTP app serves
        self.in_flight: dict[str, int] = {}  # requests in flight by method (kept by the middleware: a dict update)

    def values(self) -> Iterator[tuple[str, str | None, float]]:
        """(gauge, label value or None, value) for every gauge."""
        app = self.app
        for method, count in list(self.in_flight.items()):
            yield ACTIVE, method, count
        yield "mcp.server.active_sessions", None, len(app.sessions)
        tasks = app.extension(TASKS_EXTENSION)  # every application has the tasks extension; a stand-in may not
        running = list(tasks.runner.running) if tasks is not None else []
        placed = sum(1 for call in running if call.holds_place)
        yield "mcp.server.tasks", "running", placed
        yield "mcp.server.tasks", "waiting", len(running) - placed
        yield "mcp.server.subscriptions", None, _subscriptions(app.hub)
        yield "mcp.server.listeners", None, len(app.listeners)
        budget = self.event_budget
        yield "mcp.server.event_store.size", None, budget.total_bytes if budget is not None else 0
        yield "mcp.server.sync_threads.queue_depth", None, _thread_queue(app.executors.threads)
        yield "mcp.server.process_pool.queue_depth", None, _process_queue(app.executors.processes)


def _subscriptions(hub: Any) -> int:
    return int(getattr(hub, "_count", 0))


def _thread_queue(threads: Any) -> int:
    executor = getattr(threads, "_executor", None)
    queue = getattr(executor, "_work_queue", None)
    return queue.qsize() if queue is not None else 0


def _process_queue(processes: Any) -> int:
    slots = getattr(processes, "_slots", None)  # an asyncio.Semaphore: its waiters wait for a worker process
    waiters = getattr(slots, "_waiters", None)
    return len(waiters) if waiters else 0


class OtelSink:
    """Records into an OpenTelemetry meter; the gauges are observable ones, read at each collection."""

    def __init__(self, meter_provider: Any, readings: Readings) -> None:
        from opentelemetry.metrics import Observation

        meter = meter_provider.get_meter("mcp_kit")
        self._operation = meter.create_histogram(
            OPERATION, unit="s", explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
            description="MCP request or notification duration as observed on the receiver from the time it was "
                        "received until the result or ack is sent")
        self._session = meter.create_histogram(SESSION, unit="s", explicit_bucket_boundaries_advisory=list(
            DURATION_BUCKETS), description="The duration of the MCP session as observed on the MCP server")
        self._counters = {event: (meter.create_counter(name, description=text), label)
                          for event, (name, text, label) in COUNTERS.items()}

        def reader(gauge: str, label: str | None) -> Callable[[Any], list[Any]]:
            def observe(options: Any) -> list[Any]:
                return [Observation(value, {label: kind} if label and kind is not None else None)
                        for name, kind, value in readings.values() if name == gauge]
            return observe

        for gauge, (unit, text, label) in GAUGES.items():
            meter.create_observable_gauge(gauge, callbacks=[reader(gauge, label)], unit=unit, description=text)

    def operation(self, attributes: dict[str, str], seconds: float) -> None:
        self._operation.record(seconds, attributes)

    def count(self, event: str, kind: str) -> None:
        counter, label = self._counters[event]
        counter.add(1, {label: kind})

    def session(self, attributes: dict[str, str], seconds: float) -> None:
        self._session.record(seconds, attributes)
