"""Tasks in process: both eras over one store, expiry, cancellation, input mid-task, reconnection, shutdown.

2026-07-28 requests carry the envelope in `_meta` (declaring the tasks extension or not); the
2025-11-25 ones use the handshake session of `mcp_kit.testing.connect`. Tools wait on events the
test controls, so nothing depends on timing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from mcp_kit import Context, MCPServer, ToolError
from mcp_kit._protocol.errors import MCPError
from mcp_kit.tasks import InMemoryTaskStore, TaskSettings
from mcp_kit.tasks._methods import tasks_of
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"


def meta(*, tasks: bool = True, elicitation: bool = True) -> dict[str, Any]:
    capabilities: dict[str, Any] = {}
    if tasks:
        capabilities["extensions"] = {TASKS: {}}
    if elicitation:
        capabilities["elicitation"] = {}
    return {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": capabilities}


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


class Gates:
    """Events a test opens and the tools wait on; `stopped` records a tool's work being cancelled."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.started = anyio.Event()
        self.stopped = anyio.Event()


def build(store: InMemoryTaskStore | None = None, settings: TaskSettings | None = None) -> tuple[MCPServer, Gates]:
    app = MCPServer("tasks-test", task_store=store, task_settings=settings)
    gates = Gates()

    @app.tool(task="optional")
    async def blocker(ctx: Context) -> str:
        """Wait until the test releases it."""
        gates.started.set()
        try:
            await ctx.report_progress(1, 2, "halfway")
            await gates.release.wait()
        except BaseException:
            gates.stopped.set()
            raise
        return "released"

    @app.tool(task="required")
    def sync_job(n: int) -> str:
        """A sync tool (runs in a worker thread) that only runs as a task."""
        if n < 0:
            raise ToolError("n must be at least 0")
        return f"squared: {n * n}"

    @app.tool(task="optional")
    async def confirm(item: str, ctx: Context) -> str:
        """Ask twice, concurrently, then answer."""
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        answers: dict[str, Any] = {}

        async def ask(key: str) -> None:
            answers[key] = await ctx.elicit(f"{key} {item}?", schema, key=key)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "first")
            tg.start_soon(ask, "second")
        return f"{item}: {answers['first'].action}/{answers['second'].action}"

    @app.tool(task="required", task_start="explicit")
    async def staged(ctx: Context) -> str:
        """Ask before the task (an input round), then run as one."""
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name")
        name = (answer.content or {}).get("name")
        if name == "nobody":
            return "not started"  # never became a task
        task_id = await ctx.start_task(f"greeting {name}")
        assert ctx.task_id == task_id
        return f"hello {name}"

    @app.tool
    def plain(x: int) -> int:
        """Never a task."""
        return x + 1

    return app, gates


@pytest.fixture
async def app_and_gates() -> AsyncIterator[tuple[MCPServer, Gates]]:
    app, gates = build()
    async with app.running():
        yield app, gates


async def modern(client: Any, method: str, params: dict[str, Any], **options: Any) -> Any:
    return await client.request(method, {**params, "_meta": meta(**options)})


async def settle(client: Any, task_id: str, statuses: tuple[str, ...] = ("completed", "failed", "cancelled")) -> Any:
    with anyio.fail_after(10):
        while True:
            task = await modern(client, "tasks/get", {"taskId": task_id})
            if task["status"] in statuses:
                return task
            await anyio.sleep(0.01)


# ---------------------------------------------------------------------- 2026-07-28


async def test_modern_task_lifecycle_and_plain_fallback(app_and_gates: tuple[MCPServer, Gates]) -> None:
    app, gates = app_and_gates
    async with connect(app) as client:
        discovered = await client.request("server/discover", {"_meta": meta()})
        assert discovered["capabilities"]["extensions"] == {TASKS: {}} and "tasks" not in discovered["capabilities"]
        created = await modern(client, "tools/call", {"name": "blocker", "arguments": {}})
        assert created["resultType"] == "task" and created["status"] == "working"
        assert set(created) >= {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
        await gates.started.wait()
        working = await settle(client, created["taskId"], ("working",))
        assert working["resultType"] == "complete"
        with anyio.fail_after(5):
            while (await modern(client, "tasks/get", {"taskId": created["taskId"]})).get("statusMessage") != "halfway":
                await anyio.sleep(0.01)
        gates.release.set()
        done = await settle(client, created["taskId"])
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "released"
        # not declaring the extension: a plain call, and -32021 for the task methods and a task-only tool
        assert (await modern(client, "tools/call", {"name": "sync_job", "arguments": {"n": 3}}))["resultType"] == "task"
        plain = await modern(client, "tools/call", {"name": "confirm", "arguments": {"item": "z"}}, tasks=False)
        assert plain["resultType"] == "input_required" and "taskId" not in plain  # an ordinary input round
        with pytest.raises(MCPError) as missing:
            await modern(client, "tasks/get", {"taskId": created["taskId"]}, tasks=False)
        assert missing.value.code == -32021
        with pytest.raises(MCPError) as required:
            await modern(client, "tools/call", {"name": "sync_job", "arguments": {"n": 3}}, tasks=False)
        assert required.value.code == -32021
        assert required.value.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
        with pytest.raises(MCPError) as removed:
            await modern(client, "tasks/list", {})
        assert removed.value.code == -32601
        with pytest.raises(MCPError) as unknown:
            await modern(client, "tasks/get", {"taskId": "no-such-task"})
        assert unknown.value.code == -32602


async def test_a_sync_tool_runs_as_a_task_and_its_tool_error_completes_it(
        app_and_gates: tuple[MCPServer, Gates]) -> None:
    app, _ = app_and_gates
    async with connect(app) as client:
        ok = await modern(client, "tools/call", {"name": "sync_job", "arguments": {"n": 7}})
        assert (await settle(client, ok["taskId"]))["result"]["content"][0]["text"] == "squared: 49"
        bad = await modern(client, "tools/call", {"name": "sync_job", "arguments": {"n": -1}})
        failed = await settle(client, bad["taskId"])
        assert failed["status"] == "completed" and failed["result"]["isError"] is True  # SEP-2663: completed


async def test_cancelling_a_running_task_stops_its_work(app_and_gates: tuple[MCPServer, Gates]) -> None:
    app, gates = app_and_gates
    async with connect(app) as client:
        created = await modern(client, "tools/call", {"name": "blocker", "arguments": {}})
        await gates.started.wait()
        assert not gates.stopped.is_set()
        ack = await modern(client, "tasks/cancel", {"taskId": created["taskId"]})
        assert ack == {"resultType": "complete"}
        with anyio.fail_after(5):
            await gates.stopped.wait()  # the work was cancelled, not left running
        task = await modern(client, "tasks/get", {"taskId": created["taskId"]})
        assert task["status"] == "cancelled" and "result" not in task
        assert await modern(client, "tasks/cancel", {"taskId": created["taskId"]}) == {"resultType": "complete"}


async def test_a_task_expires_after_its_ttl_and_its_work_is_cancelled() -> None:
    clock = Clock()
    app, gates = build(InMemoryTaskStore(clock=clock), TaskSettings(ttl_ms=5_000, min_ttl_ms=1_000))
    async with app.running(), connect(app) as client:
        created = await modern(client, "tools/call", {"name": "blocker", "arguments": {}})
        assert created["ttlMs"] == 5_000
        await gates.started.wait()
        clock.now += 4.9
        assert (await modern(client, "tasks/get", {"taskId": created["taskId"]}))["status"] == "working"
        clock.now += 0.2  # past createdAt + ttlMs
        with pytest.raises(MCPError) as gone:
            await modern(client, "tasks/get", {"taskId": created["taskId"]})
        assert gone.value.code == -32602
        with anyio.fail_after(5):
            await gates.stopped.wait()
        assert len(tasks_of(app).store) == 0  # type: ignore[arg-type]


async def test_input_required_mid_task_with_partial_answers(app_and_gates: tuple[MCPServer, Gates]) -> None:
    app, _ = app_and_gates
    async with connect(app) as client:
        created = await modern(client, "tools/call", {"name": "confirm", "arguments": {"item": "x"}})
        task_id = created["taskId"]
        with anyio.fail_after(5):
            while len((task := await modern(client, "tasks/get", {"taskId": task_id})).get("inputRequests", {})) < 2:
                await anyio.sleep(0.01)
        assert task["status"] == "input_required"
        assert {r["method"] for r in task["inputRequests"].values()} == {"elicitation/create"}
        with pytest.raises(MCPError) as invalid:
            await modern(client, "tasks/update", {"taskId": task_id, "inputResponses": {"first": {"action": "maybe"}}})
        assert invalid.value.code == -32602
        ack = await modern(client, "tasks/update", {"taskId": task_id, "inputResponses": {
            "first": {"action": "accept", "content": {"ok": True}}, "unknown": {"action": "accept"}}})
        assert ack == {"resultType": "complete"}
        partial = await modern(client, "tasks/get", {"taskId": task_id})
        assert partial["status"] == "input_required" and list(partial["inputRequests"]) == ["second"]
        await modern(client, "tasks/update", {"taskId": task_id, "inputResponses": {"second": {"action": "decline"}}})
        done = await settle(client, task_id)
        assert done["result"]["content"][0]["text"] == "x: accept/decline"


async def test_explicit_start_asks_in_an_input_round_first(app_and_gates: tuple[MCPServer, Gates]) -> None:
    app, _ = app_and_gates
    async with connect(app) as client:
        first = await modern(client, "tools/call", {"name": "staged", "arguments": {}})
        assert first["resultType"] == "input_required" and "taskId" not in first
        retry = {"name": "staged", "arguments": {}, "requestState": first["requestState"],
                 "inputResponses": {"name": {"action": "accept", "content": {"name": "Alice"}}}}
        created = await modern(client, "tools/call", retry)
        assert created["resultType"] == "task" and "requestState" not in created
        assert created["statusMessage"] == "greeting Alice"
        assert (await settle(client, created["taskId"]))["result"]["content"][0]["text"] == "hello Alice"
        shortcut = await modern(client, "tools/call", {**retry, "inputResponses": {
            "name": {"action": "accept", "content": {"name": "nobody"}}}})
        assert shortcut["resultType"] == "complete" and shortcut["content"][0]["text"] == "not started"


# ---------------------------------------------------------------------- 2025-11-25


async def test_handshake_era_tasks(app_and_gates: tuple[MCPServer, Gates]) -> None:
    app, gates = app_and_gates
    asked: list[dict[str, Any]] = []

    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"ok": True}}

    async with connect(app, elicitation=elicit) as client:
        caps = client.initialize_result["capabilities"]
        assert caps["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        tools = {t["name"]: t for t in await client.list_tools()}
        assert tools["blocker"]["execution"] == {"taskSupport": "optional"} and "execution" not in tools["plain"]
        with pytest.raises(MCPError) as required:
            await client.call_tool("sync_job", {"n": 2})
        assert required.value.code == -32601

        created = await client.request("tools/call", {"name": "blocker", "arguments": {}, "task": {"ttl": 60_000}})
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] == 60_000 and "ttlMs" not in task
        await gates.started.wait()
        listed = await client.request("tasks/list", {})
        assert [t["taskId"] for t in listed["tasks"]] == [task["taskId"]]
        cancelled = await client.request("tasks/cancel", {"taskId": task["taskId"]})
        assert cancelled["status"] == "cancelled"
        with pytest.raises(MCPError) as terminal:
            await client.request("tasks/cancel", {"taskId": task["taskId"]})
        assert terminal.value.code == -32602
        await client.wait_notification("notifications/tasks/status", where=lambda p: p["status"] == "cancelled")

        # input mid-task: tasks/result relays the question to the client, then returns the result
        job = (await client.request("tools/call", {"name": "confirm", "arguments": {"item": "y"}, "task": {}}))["task"]
        result = await client.request("tasks/result", {"taskId": job["taskId"]})
        assert result["content"][0]["text"] == "y: accept/accept"
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": job["taskId"]}
        assert len(asked) == 2 and all(q["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": job["taskId"]}
                                       for q in asked)
        # a tool error fails the task in 2025-11-25, and tasks/result still returns that result
        bad = (await client.request("tools/call", {"name": "sync_job", "arguments": {"n": -1}, "task": {}}))["task"]
        payload = await client.request("tasks/result", {"taskId": bad["taskId"]})
        assert payload["isError"] is True
        assert (await client.request("tasks/get", {"taskId": bad["taskId"]}))["status"] == "failed"


async def test_handshake_task_survives_its_session_and_is_fetched_from_another() -> None:
    app, gates = build()
    async with app.running():
        async with connect(app) as first:
            task = (await first.request("tools/call", {"name": "blocker", "arguments": {}, "task": {}}))["task"]
            await gates.started.wait()
        # the first session is closed; the task keeps running
        gates.release.set()
        async with connect(app) as second:
            result = await second.request("tasks/result", {"taskId": task["taskId"]})
            assert result["content"][0]["text"] == "released"
            assert (await second.request("tasks/get", {"taskId": task["taskId"]}))["status"] == "completed"
            assert (await second.request("tasks/list", {}))["tasks"] == []  # listed only in its own session


async def test_older_protocols_run_task_tools_plainly_and_refuse_task_only_ones() -> None:
    app, _ = build()
    async with connect(app, protocol_version="2025-06-18") as client:
        assert "tasks" not in client.initialize_result["capabilities"]
        assert "execution" not in {t["name"]: t for t in await client.list_tools()}["blocker"]
        refused = await client.call_tool("sync_job", {"n": 2})
        assert refused["isError"] is True and "only as a task" in refused["content"][0]["text"]
        with pytest.raises(MCPError) as missing:
            await client.request("tasks/get", {"taskId": "x"})
        assert missing.value.code == -32601


async def test_stopping_the_server_fails_its_running_tasks() -> None:
    store = InMemoryTaskStore()
    app, gates = build(store)
    async with app.running(), connect(app) as client:
        created = await modern(client, "tools/call", {"name": "blocker", "arguments": {}})
        await gates.started.wait()
    record = await store.get(created["taskId"])
    assert record is not None and record.status == "failed" and "stopped" in (record.status_message or "")
    assert gates.stopped.is_set()


async def test_the_task_limit_answers_a_tool_error() -> None:
    app, gates = build(InMemoryTaskStore(max_tasks=1))
    async with app.running(), connect(app) as client:
        await modern(client, "tools/call", {"name": "blocker", "arguments": {}})
        refused = await modern(client, "tools/call", {"name": "blocker", "arguments": {}})
        assert refused["isError"] is True and "limit" in refused["content"][0]["text"]
        gates.release.set()


class _Scope:
    """A 2026-07-28 request scope declaring the tasks extension (for calling routes directly)."""

    session_id = "direct"
    protocol_version = "2026-07-28"
    client_capabilities = {"extensions": {TASKS: {}}}
    log_threshold = None
    lifespan_state = None

    async def notify(self, *args: Any, **kwargs: Any) -> None:
        return None

    def was_cancelled(self, request_id: Any) -> bool:
        return False


async def test_a_principal_s_tasks_are_invisible_to_other_callers() -> None:
    from types import SimpleNamespace

    from mcp_kit._app.methods import ROUTES

    app, _ = build()

    def as_caller(subject: str | None) -> Context:
        principal = (
            None
            if subject is None
            else SimpleNamespace(identity=("as", "sub", subject), subject=subject, client_id="app")
        )
        return Context(_Scope(), 1, {}, principal)  # type: ignore[arg-type]

    async with app.running():
        created = await ROUTES["tools/call"](app, {"name": "sync_job", "arguments": {"n": 1}}, as_caller("alice"))
        record = await tasks_of(app).store.get(created["taskId"])
        assert record is not None and record.owner == 'principal:["as","sub","alice"]'
        get = app.extension_routes["tasks/get"]
        assert (await get(app, {"taskId": created["taskId"]}, as_caller("alice")))["taskId"]
        for other in ("mallory", None):
            with pytest.raises(MCPError) as hidden:
                await app.extension_routes["tasks/get"](app, {"taskId": created["taskId"]}, as_caller(other))
            assert hidden.value.code == -32602
        anonymous = await ROUTES["tools/call"](app, {"name": "sync_job", "arguments": {"n": 2}}, as_caller(None))
        assert (await tasks_of(app).store.get(anonymous["taskId"])).owner is None  # type: ignore[union-attr]


class _HandshakeScope(_Scope):
    """A 2025-11-25 session's scope (for calling routes directly)."""

    protocol_version = "2025-11-25"
    client_capabilities: dict[str, Any] = {}


async def test_a_tool_call_run_as_a_task_is_audited_with_its_caller() -> None:
    from types import SimpleNamespace

    from mcp_kit import AuditRecord
    from mcp_kit._app.methods import ROUTES

    app, _ = build()
    audited: list[AuditRecord] = []
    app.add_audit_hook(audited.append)
    alice = Context(_Scope(), 1, {}, SimpleNamespace(subject="alice", client_id="app"))  # type: ignore[arg-type]
    async with app.running():
        created = await ROUTES["tools/call"](app, {"name": "sync_job", "arguments": {"n": 1}}, alice)
        record = await tasks_of(app).store.get(created["taskId"])
        assert record is not None
        with anyio.fail_after(10):
            while record is not None and record.status == "working":
                record = await tasks_of(app).store.wait_for_change(record.task_id, record.version, 5)
        assert record is not None and record.status == "completed"
    assert [(r.tool, r.subject) for r in audited] == [("sync_job", "alice")]


async def test_tasks_list_of_one_era_leaves_out_the_callers_tasks_of_the_other() -> None:
    from types import SimpleNamespace

    from mcp_kit._app.methods import ROUTES

    app, _ = build()
    alice = SimpleNamespace(subject="alice", client_id="app")
    async with app.running():
        modern = await ROUTES["tools/call"](app, {"name": "sync_job", "arguments": {"n": 1}},
                                            Context(_Scope(), 1, {}, alice))  # type: ignore[arg-type]
        assert (await tasks_of(app).store.get(modern["taskId"])).era == "2026-07-28"  # type: ignore[union-attr]
        handshake = Context(_HandshakeScope(), 2, {}, alice)  # type: ignore[arg-type]
        listed = await app.extension_routes["tasks/list"](app, {}, handshake)
        assert listed["tasks"] == []  # the 2026-07-28 task is alice's, but tasks/get here would not know it


def probe_app() -> MCPServer:
    """Tools that use every `ctx` facility inside a task, and before an explicit start."""
    app = MCPServer("probe", lifespan=lambda app: _state())

    @app.tool(task="optional")
    async def inside(ctx: Context) -> str:
        """Log, report progress, list roots, ping and check cancellation from inside a task."""
        await ctx.info("working")
        await ctx.report_progress(1)
        roots = await ctx.list_roots()
        await ctx.ping()
        return (f"task={ctx.task_id is not None} roots={[str(r.uri) for r in roots]} closed={ctx.close_sse_stream()} "
                f"cancelled={ctx.is_cancelled} state={ctx.lifespan_state} v={ctx.protocol_version} "
                f"session={bool(ctx.session_id)}")

    @app.tool(task="optional", task_start="explicit")
    async def before(ctx: Context) -> str:
        """Use the request's facilities, then start the task."""
        await ctx.report_progress(1, 2, "before the task")
        roots = await ctx.list_roots()
        if ctx.protocol_version == "2026-07-28":
            await ctx.ping()  # a no-op there; the in-memory test client answers no ping
        closed = ctx.close_sse_stream()
        cancelled = ctx.is_cancelled
        await ctx.start_task()
        return f"roots={len(roots)} closed={closed} cancelled={cancelled} task={ctx.task_id is not None}"

    @app.tool(task="optional")
    async def impatient(ctx: Context) -> str:
        """Ask with a short timeout that nobody answers."""
        await ctx.elicit("Anyone?", {"type": "object", "properties": {}}, timeout=0.05)
        return "answered"

    @app.tool(task="optional")
    async def needs_sampling(ctx: Context) -> str:
        """Ask the client's model (the client declared no sampling)."""
        await ctx.sample("hi")
        return "sampled"

    return app


class _state:  # noqa: N801 - an async context manager yielding the lifespan state
    async def __aenter__(self) -> str:
        return "ready"

    async def __aexit__(self, *exc: object) -> None:
        return None


async def test_ctx_inside_a_handshake_era_task() -> None:
    app = probe_app()
    progress: list[Any] = []
    async with connect(app, roots=[{"uri": "file:///work", "name": "work"}]) as client:
        created = (await client.request("tools/call", {"name": "inside", "arguments": {}, "task": {},
                                                       "_meta": {"progressToken": "p1"}}))["task"]
        result = await client.request("tasks/result", {"taskId": created["taskId"]})  # relays roots/list
        text = result["content"][0]["text"]
        assert text.startswith("task=True roots=['file:///work'] closed=False cancelled=False state=ready")
        progress = [n["params"] for n in client.notifications_named("notifications/progress")]
        assert progress and progress[0]["progressToken"] == "p1"  # still on the original token
        assert any(n["params"]["data"] == "working" for n in client.notifications_named("notifications/message"))
        early = (await client.request("tools/call", {"name": "before", "arguments": {}, "task": {},
                                                     "_meta": {"progressToken": "p2"}}))["task"]
        done = await client.request("tasks/result", {"taskId": early["taskId"]})
        assert done["content"][0]["text"] == "roots=1 closed=False cancelled=False task=True"
        assert any(p.get("message") == "before the task" for p in
                   (n["params"] for n in client.notifications_named("notifications/progress")))
        timed_out = (await client.request("tools/call", {"name": "impatient", "arguments": {}, "task": {}}))["task"]
        with anyio.fail_after(10):
            while (await client.request("tasks/get", {"taskId": timed_out["taskId"]}))["status"] != "failed":
                await anyio.sleep(0.01)


async def test_ctx_inside_a_stateless_task() -> None:
    app = probe_app()
    envelope = meta(elicitation=False)
    envelope["io.modelcontextprotocol/clientCapabilities"]["roots"] = {}
    async with app.running(), connect(app) as client:
        created = await client.request("tools/call", {"name": "inside", "arguments": {}, "_meta": envelope})
        with anyio.fail_after(5):
            while "inputRequests" not in (task := await client.request(
                    "tasks/get", {"taskId": created["taskId"], "_meta": envelope})):
                await anyio.sleep(0.01)
        [(key, request)] = task["inputRequests"].items()
        assert request["method"] == "roots/list"
        await client.request("tasks/update", {"taskId": created["taskId"], "_meta": envelope,
                                              "inputResponses": {key: {"roots": [{"uri": "file:///data"}]}}})
        done = await settle(client, created["taskId"])
        assert done["result"]["content"][0]["text"].startswith("task=True roots=['file:///data'] closed=False")
        assert client.notifications_named("notifications/message") == []  # no log channel for tasks in 2026
        asking = await client.request("tools/call", {"name": "before", "arguments": {}, "_meta": envelope})
        assert asking["resultType"] == "input_required"  # list_roots before the task: an ordinary input round
        answers = {key: {"roots": []} for key in asking["inputRequests"]}
        early = await client.request("tools/call", {"name": "before", "arguments": {}, "_meta": envelope,
                                                    "inputResponses": answers, "requestState": asking["requestState"]})
        assert (await settle(client, early["taskId"]))["result"]["content"][0]["text"].endswith("task=True")
        refused = await client.request("tools/call", {"name": "needs_sampling", "arguments": {}, "_meta": envelope})
        failed = await settle(client, refused["taskId"])
        assert failed["status"] == "failed" and failed["error"]["code"] == -32021
