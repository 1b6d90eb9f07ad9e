"""A host stops a stdio proxy as the MCP SDKs do (close its stdin, SIGTERM after 2 s, SIGKILL 2 s later): the
proxy stops its stdio upstreams before that, so none is left running. server-everything outlives its stdin
while the proxy's pooled 2026-07-28 session is open (it needs SIGTERM)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.support import ROOT, process_ended, stop
from tests.proxy.npm_servers import MODULES, everything

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "host", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}
HOST_GRACE = 2.0  # what the SDKs' stdio clients give a server at each step


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


@pytest.mark.skipif(not (MODULES / "server-everything").exists() or not Path("/proc/self/task").exists(),
                    reason="needs the npm servers (bin/test) and /proc")
def test_a_host_stopping_the_proxy_leaves_no_upstream_behind() -> None:
    proxy = subprocess.Popen([sys.executable, "-m", "mcp_kit", "proxy", "--", *everything()], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT), "MCP_LOG_LEVEL": "warning"})
    upstreams: set[int] = set()
    try:
        assert proxy.stdin is not None and proxy.stdout is not None
        for number, method in enumerate(("server/discover", "tools/list"), 1):
            proxy.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method,
                                          "params": {"_meta": META}}) + "\n")
            proxy.stdin.flush()
            assert json.loads(proxy.stdout.readline())["id"] == number
        upstreams = children(proxy.pid)  # the caller's pooled upstream session: server-everything
        assert upstreams
        proxy.stdin.close()  # the host stops the proxy as the SDKs do
        for signal in (None, proxy.terminate, proxy.kill):
            if signal is not None and proxy.poll() is None:
                signal()
            try:
                proxy.wait(HOST_GRACE)
                break
            except subprocess.TimeoutExpired:
                continue
        assert proxy.returncode == 0  # it stopped within the first grace, on end of input
        assert not [pid for pid in upstreams if not process_ended(pid)]
    finally:
        stop(proxy)
        for pid in upstreams:
            if not process_ended(pid):
                os.kill(pid, 9)  # left behind: stopped here, by the PID the test found
