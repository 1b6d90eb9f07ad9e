"""The harness against real servers (mcp_kit and the floor: no peer venv needed), on loopback, stopped by PID."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import IO

import pytest
from harness import curve_cpu, curve_fanout, curve_tools, implementations, processes, procstat, stdio_suite
from harness.stdio_client import StdioPeer


@pytest.fixture
def stderr(tmp_path) -> Iterator[IO[bytes]]:
    """Where the servers' stderr goes (a file: subprocess needs a descriptor)."""
    with open(tmp_path / "server.log", "wb") as handle:
        yield handle


@pytest.fixture(scope="module")
def impls() -> dict[str, implementations.Implementation]:
    prepared = implementations.prepare(["mcp_kit", "floor"], setup_peers=False, loops=("uvloop", "asyncio"))
    assert all(impl.available for impl in prepared), [impl.reason for impl in prepared]
    return {impl.name: impl for impl in prepared}


def test_variants_are_named_by_loop_and_the_stdio_floor_has_none(impls: dict) -> None:
    assert list(impls) == ["mcp_kit", "mcp_kit@asyncio", "floor", "floor@asyncio"]
    assert impls["floor@asyncio"].transports == ("http",)
    assert impls["mcp_kit@asyncio"].env()["BENCH_LOOP"] == "asyncio"
    assert impls["mcp_kit"].env(BENCH_EXTRA_TOOLS="5")["BENCH_EXTRA_TOOLS"] == "5"


@pytest.mark.parametrize("name, uvloop", [("mcp_kit", True), ("mcp_kit@asyncio", False)])
def test_stdio_server_loads_uvloop_only_in_the_uvloop_variant(
    impls: dict, name: str, uvloop: bool, stderr: IO[bytes]
) -> None:
    impl = impls[name]
    peer = StdioPeer(impl.argv("stdio"), impl.env(), implementations.REPO_DIR, stderr)
    try:
        peer.initialize(60)
        assert peer.request("ping", None, 30) == {}  # the server runs: its loop exists
        assert procstat.native_modules(peer.pid) == {"uvloop": uvloop, "httptools": False}
        with pytest.raises(RuntimeError, match="event-loop variant not in effect"):
            procstat.check_native(peer.pid, {"uvloop": not uvloop, "httptools": False})
    finally:
        peer.stop()
    assert not peer.alive()


@pytest.mark.parametrize("name, native", [("mcp_kit", True), ("mcp_kit@asyncio", False), ("floor", None)])
def test_http_server_loads_uvloop_and_httptools_only_in_the_uvloop_variant(
    impls: dict, name: str, native: bool | None, stderr: IO[bytes]
) -> None:
    impl = impls[name]
    port = processes.free_port()
    proc = processes.spawn(impl.argv("http", port), impl.env(), implementations.REPO_DIR, stderr, pipes=False)
    try:
        processes.wait_for_port(port, proc, 60)
        expected = impl.expected_native("http")
        if native is None:  # the floor: its own asyncio protocol on uvloop, no uvicorn
            assert expected == {"uvloop": True, "httptools": False}
        else:
            assert expected == {"uvloop": native, "httptools": native}
        assert procstat.check_native(proc.pid, expected) == expected
    finally:
        processes.stop(proc)
    assert proc.poll() is not None


def test_asyncio_choice_makes_uvloop_and_httptools_unimportable() -> None:
    code = ("import sys; sys.path.insert(0, 'bench/servers'); import _bench_loop, asyncio\n"
            "for name in ('uvloop', 'httptools'):\n"
            "    try:\n        __import__(name)\n    except ImportError:\n        print(name, 'blocked')\n"
            "print(type(asyncio.get_event_loop_policy()).__module__)")
    env = {**implementations.Implementation("x", "x", implementations.PROJECT_PYTHON, implementations.SERVERS_DIR,
                                            ()).env(), "BENCH_LOOP": "asyncio"}
    blocked = subprocess.run([sys.executable, "-c", code], env=env, cwd=implementations.REPO_DIR,
                             capture_output=True, text=True, timeout=60, check=True)
    assert blocked.stdout.split("\n")[:3] == ["uvloop blocked", "httptools blocked", "asyncio.unix_events"]
    env["BENCH_LOOP"] = "uvloop"
    chosen = subprocess.run([sys.executable, "-c", code], env=env, cwd=implementations.REPO_DIR,
                            capture_output=True, text=True, timeout=60, check=True)
    assert chosen.stdout.strip() == "uvloop"


def test_mcp_kit_and_the_floor_put_equal_bytes_on_the_wire(impls: dict, stderr: IO[bytes]) -> None:
    figures = {name: stdio_suite.cold_start(impls[name], stderr, 60) for name in ("mcp_kit", "floor")}
    assert figures["mcp_kit"]["wire_echo_bytes"] == figures["floor"]["wire_echo_bytes"] == 93
    assert figures["mcp_kit"]["wire_init_bytes"] != figures["floor"]["wire_init_bytes"]  # metadata differs


@pytest.mark.parametrize("name", ["mcp_kit", "floor"])
def test_tools_curve_lists_one_page_of_generated_tools(impls: dict, name: str, stderr: IO[bytes]) -> None:
    settings = {"page_calls": 3, "timeout_s": 60}
    figures = curve_tools._one(impls[name], 150, settings, stderr)
    assert figures["page_tools"] == 100  # 152 registered, 100 per page
    assert figures["page_ms"] > 0 and figures["first_page_ms"] >= figures["init_ms"] > 0


def test_fanout_reaches_every_subscriber_in_both_eras(impls: dict, stderr: IO[bytes]) -> None:
    settings = {"subscribers": (1, 4), "triggers": 2, "notify_timeout_s": 20, "timeout_s": 60}
    for name in ("mcp_kit", "floor"):
        figures = curve_fanout.measure(impls[name], settings, stderr)
        for era in ("handshake", "modern"):
            for n in (1, 4):
                assert figures[f"{era}_all_ms@{n}"] > 0 and figures[f"{era}_call_ms@{n}"] > 0, (name, era, n)


def test_cpu_curve_pings_while_busy_calls_are_in_flight(impls: dict, stderr: IO[bytes]) -> None:
    settings = {"bursts": (6,), "busy_ms": 3, "idle_pings": 5, "timeout_s": 60}
    figures = curve_cpu.measure(impls["mcp_kit"], settings, stderr)
    assert figures["pings@6"] >= 1
    assert figures["burst_s@6"] >= 0.009  # 6 x 3 ms of CPU cannot take less than 9 ms on 2 cores
    assert figures["ping_max_ms@6"] >= figures["ping_p50_ms@6"] > 0
