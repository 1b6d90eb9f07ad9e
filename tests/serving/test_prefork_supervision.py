"""`--workers`: the workers never outlive their supervisor, and a worker that keeps dying is restarted at a
bounded rate for as long as the server lives (not given up on after a lifetime count).

- `kill -9` of the supervisor: its workers notice (end of file on a pipe only the supervisor held),
  stop, and the port refuses connections; before, they went on serving it unsupervised.
- A worker that dies 15 times is started a 16th time (the rate is paced, each restart logged);
  before, restarts stopped after 10 for the server's whole life.
Every process a test starts is killed by its PID in a `finally`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_kit._serving import prefork as workers
from mcp_kit._serving.prefork import RestartPacing
from tests.helpers.support import ROOT, ProcessLog, process_ended

SERVING_SCRIPT = """
import logging, os, signal, socket, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from mcp_kit._serving.prefork import serve_workers
marker = sys.argv[1]
sock = socket.create_server(("127.0.0.1", 0))
print(sock.getsockname()[1], flush=True)

def serve():
    signal.signal(signal.SIGTERM, lambda *args: sys.exit(0))
    open(f"{marker}.{os.getpid()}", "w").close()
    while True:
        connection, _ = sock.accept()
        with connection:
            connection.sendall(str(os.getpid()).encode())

serve_workers(sock, 2, serve)
"""

FAILING_SCRIPT = """
import logging, os, signal, socket, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
import mcp_kit._serving.prefork as workers
workers.RESTART_WINDOW, workers.MAX_RESTARTS_PER_WINDOW = 1.5, 3  # fast, yet filled on a loaded machine
workers.RESTART_BACKOFF, workers.RESTART_BACKOFF_MAX = 0.01, 0.05
starts, deaths = sys.argv[1], int(sys.argv[2])

def serve():
    with open(starts, "a") as log:
        log.write(f"{os.getpid()}\\n")
    with open(starts) as log:
        if len(log.read().split()) <= deaths:
            raise SystemExit(3)
    signal.signal(signal.SIGTERM, lambda *args: sys.exit(0))
    print("worker up", file=sys.stderr, flush=True)
    signal.pause()

workers.serve_workers(socket.create_server(("127.0.0.1", 0)), 1, serve)
print("all workers ended", flush=True)
"""


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
    except ConnectionRefusedError:
        return True
    return False


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    """Bounded polling of a condition no event signals (files appearing, processes ending elsewhere)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def kill_all(*pids: int) -> None:
    for pid in pids:
        if not process_ended(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(sys.platform == "win32" or not Path("/proc").is_dir(), reason="fork and /proc")
def test_the_workers_exit_when_their_supervisor_is_killed(tmp_path: Path) -> None:
    marker = tmp_path / "worker"
    supervisor = subprocess.Popen([sys.executable, "-c", SERVING_SCRIPT, str(marker)], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    worker_pids: list[int] = []
    try:
        port = int(supervisor.stdout.readline())  # type: ignore[union-attr]
        assert wait_until(lambda: len(list(tmp_path.glob("worker.*"))) == 2, 30)
        worker_pids = [int(path.name.split(".")[1]) for path in tmp_path.glob("worker.*")]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            assert int(connection.recv(32)) in worker_pids  # a worker serves the port

        os.kill(supervisor.pid, signal.SIGKILL)
        supervisor.wait(timeout=10)
        ended = wait_until(lambda: all(process_ended(pid) for pid in worker_pids), 20)
        assert ended, "the workers outlived their supervisor"
        # a leader shows as a zombie while its other threads still finish: the port closes once all have
        assert wait_until(lambda: refused(port), 10), "the port still accepts connections"
        log = supervisor.stderr.read()  # type: ignore[union-attr]  # at end of file: every holder has exited
        assert log.count("its supervisor (pid") == 2 and "is gone; stopping" in log, log
    finally:
        kill_all(supervisor.pid, *worker_pids)
        supervisor.wait(timeout=10)
        for pipe in (supervisor.stdout, supervisor.stderr):
            if pipe is not None:
                pipe.close()


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_a_worker_that_keeps_dying_is_restarted_at_a_paced_rate_past_any_lifetime_count(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    deaths = 15
    supervisor = subprocess.Popen([sys.executable, "-c", FAILING_SCRIPT, str(starts), str(deaths)], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = ProcessLog(supervisor.stderr)
    worker_pids: list[int] = []
    try:
        log.wait_for(r"worker up|not restarted", 60)
        worker_pids = [int(pid) for pid in starts.read_text().split()]
        assert "worker up" in log.text and len(worker_pids) == deaths + 1, log.text
        assert log.text.count("worker 0 exited (3); starting it again in") >= 3  # the first ones, after a backoff
        assert "worker 0 exited (3); it was restarted 3 times in the last 1.5 s: starting it again in" in log.text
        supervisor.send_signal(signal.SIGTERM)
        out, _ = supervisor.communicate(timeout=30)
        assert supervisor.returncode == 0 and "all workers ended" in out
    finally:
        kill_all(supervisor.pid, *worker_pids)
        supervisor.wait(timeout=10)
        log.join()
        for pipe in (supervisor.stdout, supervisor.stderr):
            if pipe is not None:
                pipe.close()


def test_restarts_are_paced_by_a_doubling_backoff_and_a_window_not_counted_for_life() -> None:
    pacing = RestartPacing()
    assert (pacing.window, pacing.per_window) == (workers.RESTART_WINDOW, workers.MAX_RESTARTS_PER_WINDOW)
    now = 1000.0
    delays = []
    for _ in range(pacing.per_window + 1):  # a worker dying as soon as it starts
        due = pacing.next_start(0, 1, now)
        delays.append(round(due - now, 3))
        now = due
    backoff = workers.RESTART_BACKOFF
    assert delays[:-1] == [round(min(workers.RESTART_BACKOFF_MAX, backoff * 2**n), 3) for n in range(pacing.per_window)]
    assert delays[-1] > delays[-2]  # the window is full: the next start waits for its oldest to leave it
    first_start = 1000.0 + delays[0]
    assert now == pytest.approx(first_start + pacing.window)
    assert pacing.next_start(1, 1, now) - now == pytest.approx(backoff)  # each worker is paced on its own
    later = now + 10 * pacing.window  # after a long healthy run, it starts again after the first backoff
    assert pacing.next_start(0, 1, later) - later == pytest.approx(backoff)
    for _ in range(100):  # however often it dies, it is always started again, at most a window later
        due = pacing.next_start(0, 1, later)
        assert 0 < due - later <= max(workers.RESTART_BACKOFF_MAX, pacing.window)
        later = due
