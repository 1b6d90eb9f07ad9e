"""The Prometheus scrape endpoint: the metrics of `metrics.py` in prometheus_client, named as OpenTelemetry's
Prometheus exporters name them (dots become underscores, the unit a suffix, counters end in `_total`):
`mcp_server_operation_duration_seconds`, `mcp_server_active_requests`, `mcp_server_timeouts_total`, ...

One process: a scrape reads this process's numbers. With `--workers N` the processes share one port, so a
scrape reaches any one of them: prometheus_client's multiprocess mode makes each scrape report the whole
deployment. The parent makes a directory for it before it forks (`PROMETHEUS_MULTIPROC_DIR`, unless set
already), each worker writes its numbers there, and gauges are summed over the live workers
(`livesum`; a worker that exits is marked dead). Separate processes on their own ports (three servers
behind a load balancer) are separate scrape targets: sum them in PromQL (`sum by (...)`), each series
labelled with its `instance`.

The endpoint is `GET /metrics` on the HTTP app, behind the same Host/Origin/token guard as the rest, or
on a loopback port of its own (`--metrics-port`; how a stdio server is scraped), behind a guard that
admits loopback Host and Origin only.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from typing import Any

from .metrics import COUNTERS, DURATION_BUCKETS, GAUGES, OPERATION_LABELS, Readings
from .otel import require

logger = logging.getLogger("mcp_kit.telemetry")
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
REFRESH_SECONDS = 1.0  # how often each worker of a multiprocess deployment writes its gauges


def prom_name(name: str) -> str:
    return name.replace(".", "_")


def _label(name: str) -> str:
    return name.replace(".", "_")


class PromSink:
    """Records into prometheus_client metrics on a registry of its own (or multiprocess files)."""

    def __init__(self, readings: Readings) -> None:
        require("prometheus")
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.readings = readings
        self.multiprocess = bool(os.environ.get(MULTIPROC_ENV))
        self.registry = CollectorRegistry(auto_describe=True)
        registry = None if self.multiprocess else self.registry  # multiprocess: the files are the registry
        self._operation = Histogram("mcp_server_operation_duration_seconds",
                                    "MCP request or notification duration as observed on the receiver",
                                    [_label(n) for n in OPERATION_LABELS], buckets=DURATION_BUCKETS,
                                    registry=registry)
        self._session = Histogram("mcp_server_session_duration_seconds", "The duration of the MCP session",
                                  ["mcp_protocol_version", "network_transport"], buckets=DURATION_BUCKETS,
                                  registry=registry)
        self._counters = {event: Counter(prom_name(name).removesuffix("_total"), text, [_label(label)],
                                         registry=registry)
                          for event, (name, text, label) in COUNTERS.items()}
        self._gauges = {name: Gauge(prom_name(name).replace("_size", "_size_bytes"), text,
                                    [_label(label)] if label else [], registry=registry, multiprocess_mode="livesum")
                        for name, (_unit, text, label) in GAUGES.items()}
        self._children: dict[tuple[str, ...], Any] = {}
        self._refresher: asyncio.Task[None] | None = None

    def operation(self, attributes: dict[str, str], seconds: float) -> None:
        key = tuple(attributes.get(label, "") for label in OPERATION_LABELS)
        child = self._children.get(key)
        if child is None:
            child = self._operation.labels(*key)
            if len(self._children) < 4096:  # label values are bounded; this only caps the cache itself
                self._children[key] = child
        child.observe(seconds)

    def count(self, event: str, kind: str) -> None:
        self._counters[event].labels(kind).inc()

    def session(self, attributes: dict[str, str], seconds: float) -> None:
        self._session.labels(attributes.get("mcp.protocol.version", ""),
                             attributes.get("network.transport", "")).observe(seconds)

    def refresh(self) -> None:
        """Write the gauges' current values (before a scrape, and every second in a multiprocess deployment)."""
        for name, kind, value in self.readings.values():
            gauge = self._gauges[name]
            (gauge.labels(kind) if kind is not None else gauge).set(value)

    def start(self) -> None:
        """In multiprocess mode, keep this worker's gauges fresh for whichever worker is scraped (on the loop)."""
        if self.multiprocess and self._refresher is None:
            self._refresher = asyncio.get_running_loop().create_task(self._refresh_loop())

    def stop(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()
            self._refresher = None

    async def _refresh_loop(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            try:
                self.refresh()
            except Exception:
                logger.debug("refreshing gauges failed", exc_info=True)

    def scrape(self) -> bytes:
        """The exposition text of every metric (of the whole deployment in multiprocess mode)."""
        from prometheus_client import CollectorRegistry, generate_latest

        self.refresh()
        if not self.multiprocess:
            return bytes(generate_latest(self.registry))
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return bytes(generate_latest(registry))


_made_directory: str | None = None


def multiprocess_directory() -> str | None:
    """Make (once) the multiprocess directory of a `--workers` deployment, before the workers fork; the one
    made here, or None when PROMETHEUS_MULTIPROC_DIR was set by someone else (who keeps it)."""
    global _made_directory
    if os.environ.get(MULTIPROC_ENV):
        return _made_directory
    _made_directory = tempfile.mkdtemp(prefix="mcp-kit-metrics-")
    os.environ[MULTIPROC_ENV] = _made_directory
    import sys

    values = sys.modules.get("prometheus_client.values")
    if values is not None:  # imported before the directory existed: metrics made from now on write to files
        values.ValueClass = values.get_value_class()  # type: ignore[attr-defined]
    return _made_directory


def worker_exited(pid: int) -> None:
    """A worker of a multiprocess deployment exited: its live gauges no longer count."""
    if os.environ.get(MULTIPROC_ENV):
        try:
            from prometheus_client import multiprocess

            multiprocess.mark_process_dead(pid)
        except Exception:
            logger.debug("could not mark worker %d dead", pid, exc_info=True)


def remove_directory(directory: str | None) -> None:
    global _made_directory
    if directory is not None and directory == _made_directory:
        _made_directory = None
        shutil.rmtree(directory, ignore_errors=True)
        os.environ.pop(MULTIPROC_ENV, None)
