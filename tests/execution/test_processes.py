"""`run_in="process"` tools in memory: validated before, shaped after, errors as isError, bounded, cancellable.

The tool functions live in `process_pool_tools` (a worker process imports them by name); `hold`
talks to the test through files in a temporary directory.
"""

from __future__ import annotations

import functools
import os
import pickle
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_kit import Context, MCPServer
from mcp_kit._execution.processes import ProcessPoolError, ToolProcesses, run_packed
from mcp_kit._execution.threads import machine_cpus
from mcp_kit._protocol.jsonrpc import Request
from mcp_kit.testing import connect
from tests.helpers import process_pool_tools as tools
from tests.helpers.live_http import until
from tests.helpers.support import process_ended

pytestmark = pytest.mark.anyio
WAIT_S = 30.0  # a spawned worker imports mcp_kit first: generous on a busy machine


def process_app(limit: int | None = None) -> MCPServer:
    app = MCPServer("processes", max_tool_processes=limit)
    for fn in (tools.crunch, tools.refuse, tools.explode, tools.explode_oddly, tools.lock, tools.die, tools.hold):
        app.add_tool(fn, run_in="process")

    @app.tool
    async def on_the_loop() -> int:
        """The server's own pid."""
        return os.getpid()

    return app


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def started(gate: Path) -> int:
    marker = Path(f"{gate}.started")
    await until(marker.exists, f"{gate.name} to start", WAIT_S)
    return int(marker.read_text())


async def test_a_process_tool_runs_in_another_process_and_its_result_is_shaped_as_usual() -> None:
    async with connect(process_app()) as client:
        tool = next(t for t in await client.list_tools() if t["name"] == "crunch")
        assert tool["outputSchema"]["type"] == "object"  # schema as for any tool
        result = await client.call_tool("crunch", {"n": 10})
        server_pid = int(text(await client.call_tool("on_the_loop")))
    assert result["isError"] is False
    assert result["structuredContent"]["total"] == 285
    assert result["structuredContent"]["pid"] != server_pid == os.getpid()


async def test_arguments_are_validated_before_anything_is_sent_to_a_process() -> None:
    app = process_app()
    async with connect(app) as client:
        result = await client.call_tool("crunch", {"n": "ten"})
        assert result["isError"] is True
        assert "Invalid arguments for tool 'crunch'" in text(result) and "'n'" in text(result)
        assert app.executors.processes.started is False  # no pool was started for a refused call
        assert (await client.call_tool("crunch", {"n": 3}))["structuredContent"]["total"] == 5
        assert app.executors.processes.started is True
    assert app.executors.processes.started is False  # stopped with the server


async def test_exceptions_in_the_process_become_error_results_like_in_threads() -> None:
    async with connect(process_app()) as client:
        refused = await client.call_tool("refuse", {"reason": "no data for that city"})
        assert refused["isError"] is True and text(refused) == "no data for that city"
        failed = await client.call_tool("explode")
        assert failed["isError"] is True and text(failed) == "Tool 'explode' failed: ValueError: boom"
        odd = await client.call_tool("explode_oddly")
        assert (
            odd["isError"] is True and text(odd) == "Tool 'explode_oddly' failed: ProcessPoolError: Unrebuildable: odd"
        )
        unpicklable = await client.call_tool("lock")
        assert unpicklable["isError"] is True and "Tool 'lock' failed:" in text(unpicklable)
        assert "pickle" in text(unpicklable)
        assert (await client.call_tool("crunch", {"n": 4}))["structuredContent"]["total"] == 14  # the pool lives on


async def test_a_worker_process_that_dies_fails_its_call_and_the_pool_starts_again() -> None:
    async with connect(process_app()) as client:
        died = await client.call_tool("die")
        assert died["isError"] is True
        assert "Tool 'die' failed: ProcessPoolError: a worker process of the pool died" in text(died)
        assert (await client.call_tool("crunch", {"n": 5}))["structuredContent"]["total"] == 30


async def test_a_worker_killed_while_idle_costs_at_most_one_call() -> None:
    async with connect(process_app(limit=1)) as client:
        worker = (await client.call_tool("crunch", {"n": 2}))["structuredContent"]["pid"]
        os.kill(worker, signal.SIGKILL)
        await until(lambda: process_ended(worker), "the worker to be gone", WAIT_S)
        first = await client.call_tool("crunch", {"n": 3})  # the pool may not have noticed yet: this one may fail
        assert first["isError"] is False or "a worker process of the pool died" in text(first)
        second = await client.call_tool("crunch", {"n": 4})
        assert second["isError"] is False and second["structuredContent"]["pid"] != worker


async def test_no_more_process_calls_run_at_once_than_max_tool_processes(tmp_path: Path) -> None:
    gates = [tmp_path / f"gate{i}" for i in range(4)]
    results: list[str] = []
    async with connect(process_app(limit=2)) as client:

        async def call(gate: Path) -> None:
            results.append(text(await client.call_tool("hold", {"gate": str(gate)})))

        async with anyio.create_task_group() as tg:
            for gate in gates:
                tg.start_soon(call, gate)
            await until(lambda: sum(Path(f"{g}.started").exists() for g in gates) == 2, "two calls to start", WAIT_S)
            await client.request("ping")
            running = [g for g in gates if Path(f"{g}.started").exists()]
            assert len(running) == 2  # the other two wait in the server, not in the pool's queue
            for gate in running:
                Path(f"{gate}.release").touch()
            await until(lambda: all(Path(f"{g}.started").exists() for g in gates), "the other two to start", WAIT_S)
            for gate in gates:
                Path(f"{gate}.release").touch()
    assert sorted(results) == sorted(f"released {g.name}" for g in gates)
    pids = {Path(f"{g}.started").read_text() for g in gates}
    assert 1 <= len(pids) <= 2


async def test_a_cancelled_process_call_is_answered_at_once_and_its_process_runs_to_the_end(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    app = process_app(limit=1)
    async with connect(app) as client:
        await client._send(Request("held", "tools/call", {"name": "hold", "arguments": {"gate": str(gate)}}))
        worker = await started(gate)
        await client.cancel("held")
        await until(lambda: client._dispatcher.in_flight == 0, "the cancelled call to end", WAIT_S)
        assert not Path(f"{gate}.finished").exists()  # the request is over while its process still computes
        assert not process_ended(worker)
        async with anyio.create_task_group() as tg:
            answers: list[dict[str, Any]] = []

            async def next_call() -> None:
                answers.append(await client.call_tool("crunch", {"n": 6}))

            tg.start_soon(next_call)
            await client.request("ping")
            assert answers == []  # the only process is still busy with the cancelled call
            Path(f"{gate}.release").touch()
        assert Path(f"{gate}.finished").exists()  # it ran to its end; nobody was answered for it
        assert answers[0]["structuredContent"]["total"] == 55


async def test_a_cancelled_process_call_waiting_for_a_process_never_starts_and_takes_no_place(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    async with connect(process_app(limit=1)) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "hold", {"gate": str(first)})
            await started(first)
            await client._send(Request("waiting", "tools/call", {"name": "hold", "arguments": {"gate": str(second)}}))
            await client.request("ping")  # the second call waits in the server for the only process
            await client.cancel("waiting")
            await until(lambda: client._dispatcher.in_flight == 1, "the waiting call to be dropped", WAIT_S)
            Path(f"{first}.release").touch()
        assert (await client.call_tool("crunch", {"n": 3}))["structuredContent"]["total"] == 5  # the place is free
    assert Path(f"{first}.finished").exists()
    assert not Path(f"{second}.started").exists()


async def test_a_worker_dying_mid_call_fails_the_calls_running_beside_it_in_words(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    async with connect(process_app(limit=2)) as client:
        outcome: dict[str, dict[str, Any]] = {}

        async def call(name: str, arguments: dict[str, Any]) -> None:
            outcome[name] = await client.call_tool(name, arguments)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "hold", {"gate": str(gate)})
            bystander = await started(gate)
            tg.start_soon(call, "die", {})
        for name in ("die", "hold"):  # concurrent.futures ends every call of a pool one of its workers broke
            assert outcome[name]["isError"] is True
            assert text(outcome[name]).startswith(f"Tool '{name}' failed: ProcessPoolError: a worker process of the "
                                                  "pool died (killed, or it crashed the interpreter)")
            assert "the call may be tried again" in text(outcome[name])
        await until(lambda: process_ended(bystander), "the broken pool's other worker to end", WAIT_S)
        again = await client.call_tool("crunch", {"n": 5})
        assert again["isError"] is False and again["structuredContent"]["pid"] != bystander
    assert not Path(f"{gate}.finished").exists()


async def test_stopping_the_server_terminates_process_work_in_flight(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    app = process_app()
    outcome: list[Any] = []
    async with connect(app) as client:

        async def call() -> None:
            try:
                outcome.append(await client.call_tool("hold", {"gate": str(gate)}))
            except Exception as exc:  # the connection closes under the waiting call
                outcome.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            worker = await started(gate)
            assert not process_ended(worker)
            tg.cancel_scope.cancel()
    await until(lambda: process_ended(worker), "the worker process to end", WAIT_S)
    assert not Path(f"{gate}.finished").exists()
    assert app.executors.processes.started is False


async def test_the_pool_starts_again_after_the_server_stopped_and_its_idle_workers_end_with_it() -> None:
    app = process_app()
    workers = []
    for n in (2, 3):
        async with connect(app) as client:
            result = await client.call_tool("crunch", {"n": n})
            assert result["structuredContent"]["total"] == sum(i * i for i in range(n))
            workers.append(result["structuredContent"]["pid"])
            assert not process_ended(workers[-1])
        await until(lambda: process_ended(workers[-1]), "the idle worker to end with its server", WAIT_S)
    assert workers[0] != workers[1]


@pytest.mark.parametrize(("make", "why"), [
    (lambda: (lambda x: x), "is a lambda or is defined inside another function"),
    (lambda: _nested(), "is a lambda or is defined inside another function"),
    (lambda: functools.partial(_nested(), 1), "cannot be pickled"),
    (lambda: _Local(), "cannot be pickled"),
])
def test_a_function_a_process_cannot_import_is_refused_at_registration(make: Any, why: str) -> None:
    app = MCPServer("x")
    with pytest.raises(TypeError, match="cannot run in a process") as error:
        app.add_tool(make(), name="bad", run_in="process")
    assert why in str(error.value)
    assert app.tools.names() == []


def test_coroutine_functions_and_context_parameters_are_refused_for_processes() -> None:
    app = MCPServer("x")

    async def coroutine() -> str:
        return "x"

    with pytest.raises(TypeError, match="it is a coroutine function"):
        app.add_tool(coroutine, name="co", run_in="process")
    with pytest.raises(TypeError, match="it takes a Context"):
        app.add_tool(needs_context, run_in="process")
    assert app.tools.names() == []


def needs_context(ctx: Context) -> str:
    return "x"


def _nested() -> Any:
    def inner(x: int) -> int:
        return x

    return inner


def _make_local_class() -> Any:
    class Local:
        def __call__(self) -> str:
            return "x"

    return Local


_Local = _make_local_class()


def test_a_function_that_cannot_be_loaded_in_the_worker_fails_in_words() -> None:
    payload = pickle.dumps((tools.crunch, {"n": 1})).replace(b"process_pool_tools", b"process_pool_xxxxx")
    with pytest.raises(ProcessPoolError, match="could not load the tool function: ModuleNotFoundError"):
        run_packed(payload)


def test_the_default_process_bound_is_the_machine_cpus() -> None:
    assert ToolProcesses().limit == machine_cpus()
    assert MCPServer("x", max_tool_processes=3).executors.processes.limit == 3
    with pytest.raises(ValueError, match="max_tool_processes must be a positive integer"):
        MCPServer("x", max_tool_processes=0)
