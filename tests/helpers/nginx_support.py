"""Debian's nginx as a test's reverse proxy: a foreground master process with its own prefix directory,
in front of a server on loopback, running the shipped deploy/nginx/mcp-kit.conf.

nginx cannot listen on port 0, so a port free now is chosen and the start is retried on another one when
nginx reports "Address already in use" (another program took it in between). Readiness: the master is
alive and the port accepts a connection. The master is stopped by its PID (SIGQUIT: graceful, then
SIGKILL). Without nginx the tests that need it are skipped, unless `MCP_KIT_REQUIRE_NGINX=1` (set by
`.ci/run`) turns the skip into a failure.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.support import ROOT

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
SHIPPED = ROOT / "deploy" / "nginx" / "mcp-kit.conf"
ACCESS_LOG_FORMAT = '$request_method $uri $status "$http_last_event_id" $upstream_status'


def require_nginx() -> str:
    """The nginx path; skips (or fails under MCP_KIT_REQUIRE_NGINX=1) when it is not installed."""
    if NGINX:
        return NGINX
    reason = "nginx is not installed (apt-get install -y nginx); .ci/run installs it"
    if os.environ.get("MCP_KIT_REQUIRE_NGINX") == "1":
        pytest.fail(reason + ", and MCP_KIT_REQUIRE_NGINX=1 says these tests must run")
    pytest.skip(reason)


def shipped_config(listen: str, upstream: str) -> str:
    """deploy/nginx/mcp-kit.conf with its `listen` and upstream `server` lines pointed at the test's."""
    text = SHIPPED.read_text()
    text, listens = re.subn(r"(?m)^(\s*)listen 80;", rf"\1listen {listen};", text)
    text, upstreams = re.subn(r"(?m)^(\s*)server 127\.0\.0\.1:8000;", rf"\1server {upstream};", text)
    assert (listens, upstreams) == (1, 1), "deploy/nginx/mcp-kit.conf no longer has the lines this test points"
    return text


@dataclass
class Nginx:
    port: int
    process: subprocess.Popen[bytes]
    prefix: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def access_log(self) -> list[str]:
        path = self.prefix / "logs" / "access.log"
        return path.read_text().splitlines() if path.exists() else []

    def error_log(self) -> str:
        path = self.prefix / "logs" / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: the master waits for its workers
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _main_config(prefix: Path) -> str:
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else ""  # workers may read prefix
    return (f"{user}daemon off;\nworker_processes 1;\npid {prefix}/nginx.pid;\n"
            f"error_log {prefix}/logs/error.log info;\n"
            f"events {{ worker_connections 256; }}\n"
            f"http {{\n    log_format mcp '{ACCESS_LOG_FORMAT}';\n"
            f"    access_log {prefix}/logs/access.log mcp;\n"
            + "".join(f"    {kind}_temp_path {prefix}/temp/{kind};\n"
                      for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
            + f"    include {prefix}/site.conf;\n}}\n")


def start_nginx(upstream: str, attempts: int = 10) -> Nginx:
    """nginx on a free 127.0.0.1 port in front of `upstream` (host:port), running the shipped site config."""
    binary = require_nginx()
    last = ""
    for _ in range(attempts):
        port = _free_port()
        prefix = Path(tempfile.mkdtemp(prefix=f"mcp-kit-nginx-{port}-"))
        (prefix / "logs").mkdir()
        (prefix / "temp").mkdir()
        (prefix / "site.conf").write_text(shipped_config(f"127.0.0.1:{port}", upstream))
        (prefix / "nginx.conf").write_text(_main_config(prefix))
        process = subprocess.Popen([binary, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e",
                                    str(prefix / "logs" / "error.log")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server = Nginx(port, process, prefix)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return server
            except OSError:
                time.sleep(0.05)
        server.stop()
        last = server.error_log()[-2000:]
        shutil.rmtree(prefix, ignore_errors=True)
        if "Address already in use" not in last:
            break
    raise RuntimeError(f"nginx did not start: {last}")


@contextmanager
def nginx_proxy(upstream: str) -> Iterator[Nginx]:
    server = start_nginx(upstream)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.prefix, ignore_errors=True)
