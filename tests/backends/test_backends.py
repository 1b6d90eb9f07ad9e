"""The backend seam: choosing a backend from its URL, the in-memory backend, and the Redis backend's
concerns one by one against a real redis-server (sessions with TTL, the event log, the bus, leases,
the shared key, bounded failure when Redis is gone), plus `--workers` and its refusals."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from mcp_kit._backends import BackendUnavailable, MemoryBackend, open_backend
from mcp_kit._backends.redis_backend import RedisBackend, parse_url
from mcp_kit._transports.http_options import HttpOptions
from tests.helpers.redis_support import RedisProcess
from tests.helpers.scaleout_client import SERVER
from tests.helpers.support import ROOT, http_server, refused_port

pytestmark = pytest.mark.anyio


def test_the_url_chooses_the_backend() -> None:
    assert isinstance(open_backend(None), MemoryBackend)
    assert isinstance(open_backend("memory"), MemoryBackend)
    assert isinstance(open_backend("redis://127.0.0.1:1/0"), RedisBackend)
    with pytest.raises(ValueError, match="unknown backend URL 'postgres://x'"):
        open_backend("postgres://x")


def test_redis_urls_name_the_client_the_prefix_and_the_timeout() -> None:
    assert parse_url("redis://h:1/0") == ("redis://h:1/0", False, "mcp", 2.0)
    assert parse_url("redis+cluster://h:1") == ("redis://h:1", True, "mcp", 2.0)
    assert parse_url("rediss://h:1/2?cluster=1&prefix=app&timeout=0.5") == ("rediss://h:1/2", True, "app", 0.5)


def test_workers_need_a_shared_backend() -> None:
    with pytest.raises(ValueError, match="--workers 2 needs a shared backend"):
        HttpOptions(workers=2)
    with pytest.raises(ValueError, match="workers must be at least 1"):
        HttpOptions(workers=0)
    assert HttpOptions(workers=2, backend="redis://127.0.0.1:6379/0").workers == 2


def test_the_command_line_refuses_workers_without_a_shared_backend() -> None:
    done = subprocess.run([sys.executable, *SERVER, "--transport", "http", "--port", "0", "--workers", "2"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2
    assert "--workers 2 needs a shared backend" in done.stderr and "session not found" in done.stderr


async def test_the_memory_backend_keeps_everything_in_this_process() -> None:
    backend = MemoryBackend()
    await backend.start()
    assert not backend.shared
    await backend.save_session("a", b"{}", 10)
    assert await backend.load_session("a", 10) == b"{}"
    await backend.delete_session("a")
    assert await backend.load_session("a", 10) is None
    await backend.set_holder("legacy", "a", 10)
    assert await backend.holder("legacy", "a") == backend.process_id
    await backend.drop_holder("legacy", "a")
    assert await backend.holder("legacy", "a") is None
    await backend.append_events("a", "s1", [(1, b"x")], True)
    assert await backend.read_events("a", "s1", 0, 0) == ([], False, False)
    await backend.publish("u", {"uri": "x"})
    backend.on("u", lambda message: None)
    ran: list[str] = []

    async def work() -> None:
        ran.append("work")

    await backend.run_exclusive("w", work, lambda: ran.append("standby"))
    assert ran == ["work"] and await backend.shared_secret() == await backend.shared_secret()
    await backend.aclose()


@pytest.fixture
async def pair(redis: RedisProcess) -> AsyncIterator[tuple[RedisBackend, RedisBackend]]:
    first, second = RedisBackend(redis.url + "?prefix=unit"), RedisBackend(redis.url + "?prefix=unit")
    await first.start()
    await second.start()
    try:
        yield first, second
    finally:
        await first.aclose()
        await second.aclose()


async def test_session_records_are_shared_and_their_ttl_renewed(pair: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = pair
    await first.save_session("s1", b'{"session_id":"s1"}', 5)
    assert await first.client.ttl("unit:{s1}:state") <= 5
    assert await second.load_session("s1", 100) == b'{"session_id":"s1"}'
    assert 5 < await first.client.ttl("unit:{s1}:state") <= 100  # renewed by the read
    await second.delete_session("s1")
    assert await first.load_session("s1", 5) is None
    await first.set_holder("legacy", "s2", 30)
    assert await second.holder("legacy", "s2") == first.process_id
    await first.drop_holder("legacy", "s2")
    assert await second.holder("legacy", "s2") is None


async def test_the_event_log_replays_after_a_position_and_follows_until_the_end(
        pair: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = pair
    assert await second.read_events("s3", "x1", 0, 0) == ([], False, False)
    await first.append_events("s3", "x1", [(2, b"a"), (3, b"b")])
    assert await second.read_events("s3", "x1", 2, 0) == ([(3, b"b")], False, True)
    assert 0 < await first.client.ttl("unit:{s3}:ev:x1") <= 60

    async def later() -> None:
        await anyio.sleep(0.2)
        await first.append_events("s3", "x1", [(4, b"c")], finished=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(later)
        found, finished, exists = await second.read_events("s3", "x1", 3, 0.9)  # waits for the next event
    assert exists and found == [(4, b"c")]
    assert await second.read_events("s3", "x1", 4, 0) == ([], True, True)


async def test_the_bus_reaches_other_processes_not_the_sender(pair: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = pair
    heard: list[tuple[str, Any]] = []
    got = anyio.Event()
    first.on("u", lambda message: heard.append(("first", message["uri"])))
    second.on("u", lambda message: (heard.append(("second", message["uri"])), got.set()))
    second.on("bad", lambda message: 1 / 0)  # a failing handler is logged, the bus goes on
    with anyio.fail_after(10):
        await first.publish("bad", {})
        await first.publish("u", {"uri": "demo://x"})
        await got.wait()
    assert heard == [("second", "demo://x")]
    second._dispatch(b"not json")  # logged and dropped


async def test_a_lease_runs_work_on_one_process_at_a_time(pair: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = pair
    order: list[str] = []
    holding = anyio.Event()
    release = anyio.Event()
    standby = anyio.Event()

    async def hold() -> None:
        order.append("first runs")
        holding.set()
        await release.wait()

    async def take_over() -> None:
        order.append("second runs")

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first.run_exclusive, "watch:demo://x", hold, lambda: None)
            await holding.wait()
            tg.start_soon(second.run_exclusive, "watch:demo://x", take_over, standby.set)
            await standby.wait()  # held elsewhere: the second stands by, its work not started
            assert order == ["first runs"]
            release.set()
    assert order == ["first runs", "second runs"]


async def test_every_process_signs_with_one_key(pair: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = pair
    key = await first.shared_secret()
    assert len(key) == 32 and await second.shared_secret() == key


async def test_an_unreachable_redis_fails_within_a_bound() -> None:
    with refused_port() as port:
        backend = RedisBackend(f"redis://127.0.0.1:{port}/0?timeout=0.3")
        with anyio.fail_after(10):
            await backend.start()  # logs a warning; does not fail the server's start
            with pytest.raises(BackendUnavailable, match="Redis is unavailable"):
                await backend.load_session("x", 10)
            await backend.aclose()


def test_workers_share_one_port_and_redis(redis: RedisProcess) -> None:
    with http_server([*SERVER, "--workers", "2"], env={"MCP_BACKEND": redis.url}) as base:
        assert base.log.wait_for(r"with 2 workers", 10)
        seen: set[str] = set()
        for _ in range(40):  # a new connection each time: the kernel hands it to either worker
            with httpx.Client(timeout=10) as client:
                from tests.helpers.scaleout_client import Session

                session = Session(client)
                session.open(base)
                session.notify(base, "notifications/initialized")
                seen.add(session.tool(base, "whoami"))
            if len(seen) == 2:
                break
        assert len(seen) == 2 and str(base.process.pid) not in seen  # two workers, neither the parent


def test_backend_and_workers_come_from_the_command_line_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from mcp_kit import add_run_arguments
    from mcp_kit._serving.serve import http_options_from_args

    monkeypatch.setenv("MCP_BACKEND", "redis://127.0.0.1:6379/3")
    monkeypatch.setenv("MCP_WORKERS", "3")
    options = http_options_from_args(add_run_arguments(argparse.ArgumentParser()).parse_args(["--transport", "http"]))
    assert (options.backend, options.workers) == ("redis://127.0.0.1:6379/3", 3)
    given = add_run_arguments(argparse.ArgumentParser()).parse_args(["--backend", "memory", "--workers", "1"])
    assert (http_options_from_args(given).backend, http_options_from_args(given).workers) == ("memory", 1)


WORKERS_SCRIPT = """
import logging, os, signal, socket, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from mcp_kit._serving.prefork import serve_workers
marker = sys.argv[1]

def serve():
    try:
        os.close(os.open(marker + ".crashed", os.O_CREAT | os.O_EXCL))  # exactly one worker gets here first
    except FileExistsError:
        pass
    else:
        raise RuntimeError("the first worker fails at start")
    signal.signal(signal.SIGTERM, lambda *args: sys.exit(0))
    open(f"{marker}.{os.getpid()}", "w").close()
    signal.pause()

serve_workers(socket.create_server(("127.0.0.1", 0)), 2, serve)
print("all workers ended", flush=True)
"""


def test_workers_are_restarted_when_they_die_and_stopped_with_the_parent(tmp_path: Any) -> None:
    import signal
    import time

    marker = tmp_path / "worker"
    parent = subprocess.Popen([sys.executable, "-c", WORKERS_SCRIPT, str(marker)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("worker.[0-9]*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(list(tmp_path.glob("worker.[0-9]*"))) == 2  # the failed worker was started again
        parent.send_signal(signal.SIGTERM)
        out, err = parent.communicate(timeout=30)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.communicate()
    assert parent.returncode == 0 and "all workers ended" in out
    import re

    assert re.search(r"worker (\d) failed(.|\n)*worker \1 exited \(1\); starting it again", err), err


def test_a_worker_reports_how_it_ended(caplog: pytest.LogCaptureFixture) -> None:
    from mcp_kit._serving.prefork import run_worker

    def fails() -> None:
        raise RuntimeError("boom")

    def exits(code: object) -> Any:
        def serve() -> None:
            raise SystemExit(code)
        return serve

    assert run_worker(0, lambda: None) == 0
    assert run_worker(1, exits(3)) == 3
    assert run_worker(2, exits("bad")) == 1
    assert run_worker(3, fails) == 1 and "worker 3 failed" in caplog.text


def test_workers_are_refused_with_a_way_forward_where_there_is_no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_kit._serving.prefork import serve_workers

    monkeypatch.setattr(sys, "platform", "win32")  # the Windows path, forced: nothing is forked
    with pytest.raises(SystemExit, match="needs POSIX fork.*several processes behind a proxy"):
        serve_workers(None, 2, lambda: None)  # type: ignore[arg-type]
