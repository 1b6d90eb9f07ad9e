"""InMemoryTaskStore: what every TaskStore must do (creation, limits, TTL, transitions, input, listing, waiting)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_kit._protocol.errors import MCPError
from mcp_kit.skills import SkillCatalog
from mcp_kit.tasks import TERMINAL, InMemoryTaskStore, TaskLimitReached, TaskRecord, TaskSettings, can_transition
from mcp_kit.tasks._store import MAX_INPUT_KEYS, MAX_OUTSTANDING_INPUTS, MAX_STATUS_MESSAGE

pytestmark = pytest.mark.anyio
START_MS = 1_785_000_000_000
RESULT = {"content": [{"type": "text", "text": "done"}], "isError": False}
QUESTION = {"method": "elicitation/create", "params": {"mode": "form", "message": "Sure?", "requestedSchema": {}}}


class Clock:
    """A clock the test moves by hand (seconds since the epoch)."""

    def __init__(self) -> None:
        self.ms = START_MS

    def __call__(self) -> float:
        return self.ms / 1000

    def advance(self, ms: int) -> None:
        self.ms += ms


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> InMemoryTaskStore:
    return InMemoryTaskStore(clock=clock)


def new(clock: Clock, owner: str | None = "owner-a", ttl_ms: int = 60_000, target: str = "slow") -> TaskRecord:
    return TaskSettings(ttl_ms=ttl_ms, max_ttl_ms=max(ttl_ms, 86_400_000)).new_record(
        now_ms=clock.ms, method="tools/call", target=target, era="2026-07-28", owner=owner)


async def test_a_created_task_is_found_at_once(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    assert await store.get(task.task_id) == task
    assert await store.get("no-such-task") is None


async def test_creation_refuses_a_duplicate_id_and_a_non_working_start(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    with pytest.raises(ValueError, match="already exists"):
        await store.create(task)
    with pytest.raises(ValueError, match="starts as 'working'"):
        await store.create(new(clock).changed(clock.ms, status="completed"))


async def test_tasks_are_bounded_per_owner_and_per_server(clock: Clock) -> None:
    store = InMemoryTaskStore(max_tasks=3, max_tasks_per_owner=2, clock=clock)
    await store.create(new(clock, owner="a"))
    await store.create(new(clock, owner="a"))
    with pytest.raises(TaskLimitReached) as per_owner:
        await store.create(new(clock, owner="a"))
    assert (per_owner.value.bound, per_owner.value.limit) == ("owner", 2)
    await store.create(new(clock, owner=None))  # an anonymous task counts only against the server
    with pytest.raises(TaskLimitReached) as per_server:
        await store.create(new(clock, owner="b"))
    assert (per_server.value.bound, per_server.value.limit) == ("server", 3)
    assert "cancel tasks you no longer need" in str(per_server.value)
    assert len(store) == 3


async def test_a_task_lives_exactly_its_ttl(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock, ttl_ms=10_000)
    await store.create(task)
    clock.advance(9_999)
    assert await store.get(task.task_id) is not None
    clock.advance(1)
    assert await store.get(task.task_id) is None
    assert len(store) == 0


async def test_expired_tasks_free_their_room(clock: Clock) -> None:
    store = InMemoryTaskStore(max_tasks=1, clock=clock)
    await store.create(new(clock, ttl_ms=1_000))
    with pytest.raises(TaskLimitReached):
        await store.create(new(clock))
    clock.advance(1_000)
    await store.create(new(clock))
    assert len(store) == 1


async def test_purge_deletes_only_expired_tasks(store: InMemoryTaskStore, clock: Clock) -> None:
    short, long = new(clock, ttl_ms=1_000), new(clock, ttl_ms=5_000)
    await store.create(short)
    await store.create(long)
    clock.advance(2_000)
    assert await store.purge_expired() == 1
    assert await store.purge_expired() == 0
    assert await store.get(long.task_id) is not None


async def test_a_waiter_learns_that_its_task_expired(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock, ttl_ms=1_000)
    await store.create(task)
    seen: list[TaskRecord | None] = []
    async with anyio.create_task_group() as group:
        async def wait() -> None:
            seen.append(await store.wait_for_change(task.task_id, task.version, timeout=60))

        group.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        clock.advance(1_000)
        assert await store.purge_expired() == 1
    assert seen == [None]


async def test_wait_for_change_returns_on_the_next_change(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    seen: list[TaskRecord | None] = []
    async with anyio.create_task_group() as group:
        async def wait() -> None:
            seen.append(await store.wait_for_change(task.task_id, task.version, timeout=60))

        group.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert seen == []  # it is really waiting
        await store.set_status_message(task.task_id, "3 of 10 done")
    assert seen[0] is not None and seen[0].status_message == "3 of 10 done" and seen[0].version == 2


async def test_wait_for_change_answers_at_once_or_after_its_timeout(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    changed = await store.set_status_message(task.task_id, "x")
    assert changed is not None
    assert await store.wait_for_change(task.task_id, 1, timeout=60) == changed
    assert await store.wait_for_change(task.task_id, changed.version, timeout=0.01) == changed
    assert await store.wait_for_change("gone", 0, timeout=60) is None


async def test_cancel_reaches_a_worker_waiting_elsewhere(store: InMemoryTaskStore, clock: Clock) -> None:
    """The worker watches its record; a cancel made by another request (or process) ends its wait."""
    task = new(clock)
    await store.create(task)
    observed: list[str] = []
    async with anyio.create_task_group() as group:
        async def worker() -> None:
            version = task.version
            while True:
                current = await store.wait_for_change(task.task_id, version, timeout=60)
                assert current is not None
                version = current.version
                if current.is_terminal:
                    observed.append(current.status)
                    return

        group.start_soon(worker)
        await anyio.wait_all_tasks_blocked()
        await store.set_status_message(task.task_id, "still going")
        cancelled = await store.cancel(task.task_id)
    assert cancelled is not None and cancelled.status == "cancelled"
    assert observed == ["cancelled"]


async def test_a_terminal_task_never_changes_again(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    cancelled = await store.cancel(task.task_id, "user said stop")
    assert cancelled is not None and cancelled.status_message == "user said stop"
    assert await store.finish(task.task_id, "completed", result=RESULT) == cancelled  # late completion is ignored
    assert await store.cancel(task.task_id) == cancelled
    assert await store.set_status_message(task.task_id, "more") == cancelled
    assert await store.request_input(task.task_id, {"k": QUESTION}) == (cancelled, {})
    assert await store.answer_input(task.task_id, {"k": {}}) == cancelled
    other = new(clock)
    await store.create(other)
    done = await store.finish(other.task_id, "completed", result=RESULT)
    assert done is not None and done.status == "completed" and done.result == RESULT
    assert await store.cancel(other.task_id) == done
    assert await store.finish(other.task_id, "failed", error={"code": -32603, "message": "x"}) == done


async def test_finish_refuses_a_non_terminal_status(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    with pytest.raises(ValueError, match="'completed' or 'failed'"):
        await store.finish(task.task_id, "cancelled")  # type: ignore[arg-type]


async def test_a_result_too_large_to_keep_fails_the_task(clock: Clock) -> None:
    store = InMemoryTaskStore(max_result_bytes=100, clock=clock)
    task = new(clock)
    await store.create(task)
    big = {"content": [{"type": "text", "text": "x" * 200}]}
    failed = await store.finish(task.task_id, "completed", result=big)
    assert failed is not None and failed.status == "failed" and failed.result is None
    assert failed.error is not None and failed.error["code"] == -32603
    assert "more than the 100 bytes" in failed.error["message"]


async def test_changes_to_a_missing_task_answer_none(store: InMemoryTaskStore) -> None:
    assert await store.set_status_message("x", "m") is None
    assert await store.request_input("x", {"k": QUESTION}) is None
    assert await store.answer_input("x", {"k": {}}) is None
    assert await store.take_answers("x", ["k"]) == {}
    assert await store.finish("x", "completed", result=RESULT) is None
    assert await store.cancel("x") is None
    assert await store.delete("x") is False


async def test_status_messages_are_clipped(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    updated = await store.set_status_message(task.task_id, "x" * (MAX_STATUS_MESSAGE * 2))
    assert updated is not None and updated.status_message is not None
    assert len(updated.status_message) == MAX_STATUS_MESSAGE and updated.status_message.endswith("…")


async def test_input_rounds_follow_the_sep_2663_rules(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    asked = await store.request_input(task.task_id, {"name": QUESTION, "confirm": QUESTION})
    assert asked is not None
    waiting, keys = asked
    assert waiting.status == "input_required" and keys == {"name": "name", "confirm": "confirm"}
    assert set(waiting.input_requests) == {"name", "confirm"}

    same = await store.answer_input(task.task_id, {"unknown": {"action": "accept"}})
    assert same == waiting  # an unknown key changes nothing, not even the version

    partial = await store.answer_input(task.task_id, {"name": {"action": "accept", "content": {"name": "Ann"}}})
    assert partial is not None and partial.status == "input_required" and set(partial.input_requests) == {"confirm"}
    again = await store.answer_input(task.task_id, {"name": {"action": "decline"}})
    assert again == partial  # an answered key is not outstanding any more: ignored

    resumed = await store.answer_input(task.task_id, {"confirm": {"action": "accept", "content": {}}})
    assert resumed is not None and resumed.status == "working" and resumed.input_requests == {}
    assert await store.take_answers(task.task_id, ["name", "confirm", "never"]) == {
        "name": {"action": "accept", "content": {"name": "Ann"}}, "confirm": {"action": "accept", "content": {}}}
    assert await store.take_answers(task.task_id, ["name"]) == {}

    reasked = await store.request_input(task.task_id, {"name": QUESTION, "name-2": QUESTION})
    assert reasked is not None
    assert reasked[1] == {"name": "name-2", "name-2": "name-2-2"}  # keys are never reused, nor shared


async def test_taking_answers_leaves_the_visible_update_time_alone(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    await store.request_input(task.task_id, {"k": QUESTION})
    answered = await store.answer_input(task.task_id, {"k": {"action": "accept"}})
    assert answered is not None
    clock.advance(5_000)
    await store.take_answers(task.task_id, ["k"])
    after = await store.get(task.task_id)
    assert after is not None and after.updated_at_ms == answered.updated_at_ms and after.answers == {}


async def test_questions_per_task_are_bounded(store: InMemoryTaskStore, clock: Clock) -> None:
    task = new(clock)
    await store.create(task)
    with pytest.raises(TaskLimitReached) as at_once:
        await store.request_input(task.task_id, {f"k{i}": QUESTION for i in range(MAX_OUTSTANDING_INPUTS + 1)})
    assert at_once.value.bound == "inputs"
    for round_number in range(MAX_INPUT_KEYS):
        await store.request_input(task.task_id, {"k": QUESTION})
        current = await store.get(task.task_id)
        assert current is not None
        await store.answer_input(task.task_id, {key: {"action": "accept"} for key in current.input_requests})
        assert round_number < MAX_INPUT_KEYS
    with pytest.raises(TaskLimitReached, match="in its lifetime"):
        await store.request_input(task.task_id, {"k": QUESTION})


async def test_listing_is_per_owner_oldest_first_in_pages(store: InMemoryTaskStore, clock: Clock) -> None:
    mine: list[str] = []
    for index in range(5):
        task = new(clock, owner="me")
        mine.append(task.task_id)
        await store.create(task)
        await store.create(new(clock, owner="someone-else"))
        clock.advance(1 if index % 2 else 0)  # equal creation times too: ordered by id then
    expected = [t.task_id for t in sorted([await store.get(i) for i in mine],  # type: ignore[misc]
                                          key=lambda r: (r.created_at_ms, r.task_id))]
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(10):
        page, cursor = await store.list_page("me", cursor, limit=2)
        seen += [t.task_id for t in page]
        if cursor is None:
            break
    assert seen == expected
    assert (await store.list_page("nobody"))[0] == []


async def test_a_page_boundary_survives_deletions(store: InMemoryTaskStore, clock: Clock) -> None:
    tasks = []
    for _ in range(4):
        task = new(clock, owner="me")
        tasks.append(task)
        await store.create(task)
        clock.advance(1)
    first, cursor = await store.list_page("me", limit=2)
    assert [t.task_id for t in first] == [tasks[0].task_id, tasks[1].task_id]
    await store.delete(tasks[1].task_id)
    await store.delete(tasks[2].task_id)
    rest, cursor = await store.list_page("me", cursor, limit=2)
    assert [t.task_id for t in rest] == [tasks[3].task_id] and cursor is None


async def test_listing_leaves_expired_tasks_out(store: InMemoryTaskStore, clock: Clock) -> None:
    await store.create(new(clock, owner="me", ttl_ms=1_000))
    kept = new(clock, owner="me", ttl_ms=10_000)
    await store.create(kept)
    clock.advance(1_000)
    assert [t.task_id for t in (await store.list_page("me"))[0]] == [kept.task_id]


@pytest.mark.parametrize("cursor", ["nonsense", "WzEsMl0"])
async def test_a_bad_listing_cursor_is_invalid_params(store: InMemoryTaskStore, cursor: str) -> None:
    with pytest.raises(MCPError) as raised:
        await store.list_page("me", cursor)
    assert raised.value.code == -32602


async def test_a_cursor_of_another_listing_is_invalid_params(store: InMemoryTaskStore, tmp_path: Any) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n", encoding="utf-8")
    catalog = SkillCatalog(page_size=1)
    catalog.add_directory(tmp_path)
    _, skills_cursor = catalog.list_page()
    with pytest.raises(MCPError) as raised:
        await store.list_page("me", skills_cursor)
    assert raised.value.code == -32602


async def test_delete_wakes_waiters_and_frees_the_owner(clock: Clock) -> None:
    store = InMemoryTaskStore(max_tasks_per_owner=1, clock=clock)
    task = new(clock, owner="me")
    await store.create(task)
    assert await store.delete(task.task_id) is True
    assert await store.get(task.task_id) is None
    await store.create(new(clock, owner="me"))


OPERATIONS = st.lists(st.sampled_from(["ask", "answer_one", "answer_all", "take", "message", "complete", "fail",
                                       "cancel", "tick"]), max_size=40)


@settings(max_examples=150, deadline=None)
@given(OPERATIONS)
def test_no_sequence_of_operations_breaks_the_state_machine(operations: list[str]) -> None:
    """Whatever is done, a task only moves along the specified transitions and its version only grows."""

    async def run() -> None:
        clock = Clock()
        store = InMemoryTaskStore(clock=clock)
        task = new(clock)
        await store.create(task)
        previous = task
        for operation in operations:
            if operation == "ask":
                await store.request_input(task.task_id, {"q": QUESTION})
            elif operation in ("answer_one", "answer_all"):
                pending = list(previous.input_requests)[: 1 if operation == "answer_one" else None]
                await store.answer_input(task.task_id, {key: {"action": "accept"} for key in pending})
            elif operation == "take":
                await store.take_answers(task.task_id, list(previous.answers))
            elif operation == "message":
                await store.set_status_message(task.task_id, "m")
            elif operation == "complete":
                await store.finish(task.task_id, "completed", result=RESULT)
            elif operation == "fail":
                await store.finish(task.task_id, "failed", error={"code": -32603, "message": "x"})
            elif operation == "cancel":
                await store.cancel(task.task_id)
            else:
                clock.advance(10)
            current = await store.get(task.task_id)
            assert current is not None
            assert current.version >= previous.version
            if current.status != previous.status:
                assert can_transition(previous.status, current.status)
            if previous.status in TERMINAL:
                assert current == previous
            if current.status not in TERMINAL:
                assert (current.status == "input_required") == bool(current.input_requests)
            previous = current

    anyio.run(run)
