"""The TypeScript SDK clients drive `mcp-kit proxy` in front of npm server-everything (a stdio upstream), over
stdio (the client spawns the proxy) and Streamable HTTP (the proxy serves on port 0): 1.x in the handshake era,
2.x in auto mode (2026-07-28, bridged to the handshake-only upstream) when installed. Each case lists, calls,
reads and gets, then subscribes (1.x: resources/subscribe; 2.x: subscriptions/listen) and hears the upstream's
resource update. With @modelcontextprotocol/ext-tasks installed, its client runs a 2025-11-25 task through the
proxy in front of `tests.helpers.kit_tasks_upstream`. One node process runs every case through
`tests/ts_sdk/proxy_client.cjs`; each test checks one case's answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers.support import ROOT, http_server
from tests.proxy.npm_servers import MODULES, NODE, everything

NODE_MODULES = ROOT / "conformance" / "node_modules"
TS_SDK_1 = NODE_MODULES / "@modelcontextprotocol" / "sdk" / "package.json"
TS_SDK_2 = NODE_MODULES / "@modelcontextprotocol" / "client" / "package.json"
TS_TASKS = NODE_MODULES / "@modelcontextprotocol" / "ext-tasks" / "package.json"
TS_CLIENT = ROOT / "tests" / "ts_sdk" / "proxy_client.cjs"
CASES = {"v1-stdio": ("v1", "stdio"), "v1-http": ("v1", "http"), "v2-stdio": ("v2", "stdio"),
         "v2-http": ("v2", "http")}
MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def proxy_url() -> Iterator[str]:
    with http_server(["-m", "mcp_kit", "proxy", *everything()]) as base:  # its options follow: no "--"
        yield base


@pytest.fixture(scope="module")
def reports(proxy_url: str) -> dict[str, dict[str, Any]]:
    if not (os.path.exists(NODE) and TS_SDK_1.exists() and (MODULES / "server-everything").exists()):
        pytest.skip("the npm tools are not installed: run bin/test (npm ci in conformance/ and tests/npm_servers/)")
    cases = [{"name": name, "sdk": sdk, "transport": transport} for name, (sdk, transport) in CASES.items()
             if sdk == "v1" or TS_SDK_2.exists()]
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", ""), "MCP_LOG_LEVEL": "warning"}
    if TS_TASKS.exists() and TS_SDK_2.exists():
        cases.append({"name": "tasks", "sdk": "tasks", "transport": "stdio"})
    config = {"python": sys.executable, "cwd": str(ROOT), "env": env,
              "proxy": ["-m", "mcp_kit", "proxy", "--", *everything()], "url": proxy_url,
              "tasks_proxy": ["-m", "mcp_kit", "proxy", "--", sys.executable, "-m", "tests.helpers.kit_tasks_upstream"],
              "cases": cases}
    done = subprocess.run([str(NODE), str(TS_CLIENT), str(NODE_MODULES), json.dumps(config)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    return {report["name"]: report for report in map(json.loads, done.stdout.splitlines())}


@pytest.mark.parametrize("name", list(CASES))
def test_the_typescript_sdk_drives_the_proxy(name: str, reports: dict[str, dict[str, Any]]) -> None:
    if name not in reports:
        pytest.skip("@modelcontextprotocol/client (the TypeScript SDK 2.x) is not installed")
    report = reports[name]
    assert report["error"] is None, report["error"]
    assert report["stray"] == []
    assert report["era"] == (MODERN if name.startswith("v2") else "handshake")
    assert {"echo", "get-sum", "trigger-long-running-operation"} <= set(report["tools"])
    assert report["echo"] == "Echo: through"
    assert report["sum"] == "The sum of 2 and 3 is 5."
    assert report["resource"].startswith("demo://resource/")
    assert report["read"]["uri"] == report["resource"]
    assert report["read"]["text"] is not None or report["read"]["blob"]
    assert any("Lyon" in (text or "") for text in report["prompt"])
    assert report["subscribed"] == [report["resource"]]  # 2.x: the proxy's listen honoured the subscription
    assert report["updated"] == report["resource"]  # the upstream's update reached the TypeScript client


def test_the_typescript_tasks_client_runs_a_task_through_the_proxy(reports: dict[str, dict[str, Any]]) -> None:
    if "tasks" not in reports:
        pytest.skip("@modelcontextprotocol/ext-tasks and the TypeScript SDK 2.x are not installed")
    report = reports["tasks"]
    assert report["error"] is None, report["error"]
    assert report["stray"] == []
    assert report["capabilities"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert ["job", "optional"] in report["declared"] and ["ask_first", "required"] in report["declared"]
    assert report["opened"] == "open"  # an ordinary call beside the task, while it waits upstream
    assert report["status"] == "completed" and report["text"] == "done 2"
    assert report["taskId"] and report["related"] == report["taskId"]  # the upstream's task, fetched through us
