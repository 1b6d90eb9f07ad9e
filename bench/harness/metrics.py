"""The figures the harness reports: key, label, unit, whether lower or higher is better, and its wire case.

A metric's `wire` names the sample holding the bytes per reply of the requests it times (response
ids not counted). With `exact` the table refuses the row unless every implementation sent the same
bytes; without it (initialize and tools/list results carry each framework's own metadata and
schemas) the bytes are shown beside the row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """One reported figure."""

    key: str
    label: str
    unit: str
    lower_is_better: bool
    wire: str | None = None
    exact: bool = True


def _stdio() -> list[Metric]:
    return [
        Metric(
            "stdio.cold_start_init_ms",
            "stdio cold start: spawn -> initialize result",
            "ms",
            True,
            "stdio.wire_init_bytes",
            exact=False,
        ),
        Metric(
            "stdio.cold_start_first_call_ms",
            "stdio cold start: spawn -> first tool result",
            "ms",
            True,
            "stdio.wire_echo_bytes",
        ),
        Metric("stdio.seq_p50_us", "stdio tools/call sequential p50", "us", True, "stdio.wire_echo_bytes"),
        Metric("stdio.seq_p99_us", "stdio tools/call sequential p99", "us", True, "stdio.wire_echo_bytes"),
        Metric(
            "stdio.pipelined_calls_per_s",
            "stdio tools/call pipelined (64 in flight)",
            "calls/s",
            False,
            "stdio.wire_echo_pipelined_bytes",
        ),
        Metric(
            "stdio.cpu_per_call_seq_us",
            "stdio server CPU per call (sequential)",
            "us",
            True,
            "stdio.wire_echo_bytes",
        ),
        Metric(
            "stdio.cpu_per_call_pipelined_us",
            "stdio server CPU per call (pipelined)",
            "us",
            True,
            "stdio.wire_echo_pipelined_bytes",
        ),
        Metric(
            "stdio.tools_list_p50_us", "stdio tools/list p50", "us", True, "stdio.wire_tools_list_bytes", exact=False
        ),
        Metric("stdio.resources_read_p50_us", "stdio resources/read p50", "us", True, "stdio.wire_read_bytes"),
        Metric("stdio.echo_1mib_ms", "stdio 1 MiB echo round trip", "ms", True, "stdio.wire_echo_1mib_bytes"),
        Metric("stdio.rss_after_init_mib", "RSS after initialize", "MiB", True),
        Metric("stdio.peak_rss_mib", "peak RSS (VmHWM) of a stdio session", "MiB", True),
        Metric(
            "stdio.rss_after_leak_first_mib",
            "RSS after the first leak-check calls",
            "MiB",
            True,
        ),
        Metric(
            "stdio.rss_after_leak_total_mib",
            "RSS after all leak-check calls",
            "MiB",
            True,
        ),
        Metric(
            "stdio.rss_growth_pct",
            "RSS growth between the two leak-check points",
            "%",
            True,
        ),
    ]


def _http(mode: str, concurrencies: tuple[int, ...]) -> list[Metric]:
    title = "SSE" if mode == "sse" else "JSON"
    metrics: list[Metric] = []
    for c in concurrencies:
        prefix = f"http_{mode}.c{c}_"
        wire = prefix + "wire_payload_bytes"
        metrics += [
            Metric(prefix + "calls_per_s", f"HTTP {title} c={c} throughput", "calls/s", False, wire),
            Metric(prefix + "p50_ms", f"HTTP {title} c={c} p50", "ms", True, wire),
            Metric(prefix + "p99_ms", f"HTTP {title} c={c} p99", "ms", True, wire),
            Metric(prefix + "cpu_per_call_us", f"HTTP {title} c={c} server CPU per call", "us", True, wire),
        ]
    metrics.append(
        Metric(
            f"http_{mode}.rss_idle_mib",
            f"HTTP {title} RSS after start (idle)",
            "MiB",
            True,
        )
    )
    return metrics


LEGACY_CONCURRENCIES = (1, 16)


def _legacy() -> list[Metric]:
    metrics: list[Metric] = []
    for c in LEGACY_CONCURRENCIES:
        prefix = f"legacy_sse.c{c}_"
        wire = prefix + "wire_payload_bytes"
        metrics += [
            Metric(prefix + "calls_per_s", f"legacy HTTP+SSE c={c} throughput", "calls/s", False, wire),
            Metric(prefix + "p50_ms", f"legacy HTTP+SSE c={c} p50", "ms", True, wire),
            Metric(prefix + "cpu_per_call_us", f"legacy HTTP+SSE c={c} server CPU per call", "us", True, wire),
        ]
    return metrics


def all_metrics(concurrencies: tuple[int, ...]) -> list[Metric]:
    """Every metric in display order."""
    return _stdio() + _http("sse", concurrencies) + _http("json", concurrencies) + _legacy()


# Client-side figures recorded in the JSON (not in the table): harness CPU per HTTP call.
CLIENT_KEYS_SUFFIX = "client_cpu_per_call_us"
