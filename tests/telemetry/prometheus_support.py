"""Debian's `prometheus` server for the tests: started on a free loopback port with a temporary config and
storage directory, scraping the given targets every second, stopped by its PID. Without the binary the tests
skip (or fail under MCP_KIT_REQUIRE_PROMETHEUS=1, which .ci/run sets after installing it)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.support import stop

PROMETHEUS = shutil.which("prometheus")


def require_prometheus() -> str:
    if PROMETHEUS:
        return PROMETHEUS
    reason = "prometheus is not installed (apt-get install -y prometheus); .ci/run installs it"
    if os.environ.get("MCP_KIT_REQUIRE_PROMETHEUS") == "1":
        pytest.fail(reason + ", and MCP_KIT_REQUIRE_PROMETHEUS=1 says these tests must run")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Prometheus:
    def __init__(self, url: str) -> None:
        self.url = url

    def query(self, promql: str) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=10)
        response.raise_for_status()
        body = response.json()
        assert body["status"] == "success", body
        return list(body["data"]["result"])

    def value(self, promql: str) -> float | None:
        found = self.query(promql)
        return float(found[0]["value"][1]) if found else None

    def wait_for_value(self, promql: str, expected: float, within: float = 45.0) -> float | None:
        """The query's value once it equals `expected` (scrapes come every second), else the last one seen."""
        deadline = time.monotonic() + within
        seen = self.value(promql)
        while seen != expected and time.monotonic() < deadline:
            time.sleep(0.25)
            seen = self.value(promql)
        return seen


@contextmanager
def prometheus(targets: list[str], headers_token: str | None = None) -> Iterator[Prometheus]:
    binary = require_prometheus()
    workdir = Path(tempfile.mkdtemp(prefix="mcp-kit-prometheus-"))
    port = _free_port()
    auth = f"    authorization:\n      credentials: {headers_token}\n" if headers_token else ""
    (workdir / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: mcp\n    metrics_path: /metrics\n" + auth +
        "    static_configs:\n      - targets: [" + ", ".join(f"'{t}'" for t in targets) + "]\n")
    log = open(workdir / "prometheus.log", "wb")
    process = subprocess.Popen([binary, f"--config.file={workdir / 'prometheus.yml'}",
                                f"--storage.tsdb.path={workdir / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                                "--storage.tsdb.retention.time=1h"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/-/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("prometheus did not start: " + (workdir / "prometheus.log").read_text()[-2000:])
            time.sleep(0.1)
        yield Prometheus(url)
    finally:
        stop(process)
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
