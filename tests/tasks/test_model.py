"""Task records, statuses and transitions, settings, and their wire shapes in both protocols."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from mcp_kit.tasks import STATUSES, TERMINAL, TaskRecord, TaskSettings, can_transition, new_task_id
from mcp_kit.tasks._wire import (
    RELATED_TASK_KEY,
    acknowledgement,
    create_task_result,
    detailed_task,
    get_task_result,
    iso_time,
    legacy_create_task_result,
    legacy_payload,
    legacy_task,
)

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
RESULT = {"content": [{"type": "text", "text": "done"}], "isError": False}


def record(**changes: object) -> TaskRecord:
    base = TaskRecord(task_id="t1", status="working", created_at_ms=1_785_000_000_000,
                      updated_at_ms=1_785_000_000_500, ttl_ms=60_000, owner="session:a", target="slow",
                      era="2026-07-28", poll_interval_ms=1000)
    return replace(base, **changes)  # type: ignore[arg-type]


def test_the_allowed_transitions_are_exactly_the_specified_ones() -> None:
    allowed = {(a, b) for a in STATUSES for b in STATUSES if can_transition(a, b)}
    assert allowed == {
        ("working", "input_required"), ("working", "completed"), ("working", "failed"), ("working", "cancelled"),
        ("input_required", "working"), ("input_required", "completed"), ("input_required", "failed"),
        ("input_required", "cancelled"),
    }
    assert all(not can_transition(t, s) for t in TERMINAL for s in STATUSES)


def test_task_ids_are_unguessable_url_safe_strings() -> None:
    ids = {new_task_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{32}", i) for i in ids)


def test_a_record_survives_a_round_trip_through_json() -> None:
    original = record(status="input_required", status_message="waiting",
                      input_requests={"k": {"method": "elicitation/create", "params": {"message": "ok?"}}},
                      answers={"j": {"action": "accept"}}, issued_keys=("j", "k"), version=7)
    assert TaskRecord.from_dict(json.loads(json.dumps(original.to_dict()))) == original
    finished = record(status="failed", error={"code": -32603, "message": "boom"}, ttl_ms=None)
    assert TaskRecord.from_dict(json.loads(json.dumps(finished.to_dict()))) == finished


@pytest.mark.parametrize(("change", "reason"), [
    ({"format": 2}, "unknown task record format"),
    ({"status": "paused"}, "status 'paused'"),
    ({"createdAtMs": "1"}, "'createdAtMs' must be int"),
    ({"version": True}, "'version' must be int"),
    ({"ttlMs": 1.5}, "'ttlMs' must be null or int"),
    ({"inputRequests": []}, "'inputRequests' must be dict"),
    ({"taskId": ""}, "needs a task id"),
    ({"version": 0}, "version of at least 1"),
])
def test_a_damaged_record_is_refused_naming_the_field(change: dict, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        TaskRecord.from_dict({**record().to_dict(), **change})


def test_changed_bumps_the_version_and_the_update_time() -> None:
    original = record()
    later = original.changed(original.updated_at_ms + 10, status_message="half way")
    assert (later.version, later.updated_at_ms, later.status_message) == (2, original.updated_at_ms + 10, "half way")
    earlier = original.changed(original.updated_at_ms - 10_000)  # a clock that went back never goes back here
    assert earlier.updated_at_ms == original.updated_at_ms


def test_expiry_is_creation_plus_ttl() -> None:
    task = record()
    assert task.expires_at_ms == task.created_at_ms + 60_000
    assert not task.expired(task.created_at_ms + 59_999)
    assert task.expired(task.created_at_ms + 60_000)
    assert record(ttl_ms=None).expires_at_ms is None


def test_settings_clamp_a_requested_ttl_and_build_records() -> None:
    settings = TaskSettings(ttl_ms=10_000, max_ttl_ms=20_000, min_ttl_ms=1_000, poll_interval_ms=250)
    assert [settings.ttl_for(x) for x in (None, 5_000, 50, 10**12, "5000", True)] == \
        [10_000, 5_000, 1_000, 20_000, 10_000, 10_000]
    task = settings.new_record(now_ms=42, method="tools/call", target="report", era="2025-11-25",
                               owner="o", requested_ttl=15_000)
    assert (task.status, task.ttl_ms, task.poll_interval_ms, task.created_at_ms, task.updated_at_ms) == \
        ("working", 15_000, 250, 42, 42)


@pytest.mark.parametrize("arguments", [{"ttl_ms": 0}, {"ttl_ms": 10, "max_ttl_ms": 5}, {"min_ttl_ms": 10**9},
                                       {"poll_interval_ms": 0}])
def test_settings_refuse_inconsistent_values(arguments: dict) -> None:
    with pytest.raises(ValueError):
        TaskSettings(**arguments)


# ---------------------------------------------------------------------- SEP-2663 shapes


def test_create_task_result_is_flat_with_renamed_duration_fields() -> None:
    created = create_task_result(record())
    assert created["resultType"] == "task"
    assert (created["taskId"], created["status"], created["ttlMs"], created["pollIntervalMs"]) == \
        ("t1", "working", 60_000, 1000)
    assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"])
    for absent in ("task", "ttl", "pollInterval", "result", "error", "inputRequests", "requestState"):
        assert absent not in created


def test_iso_times_are_utc_with_milliseconds() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00.000Z"
    assert iso_time(1_785_000_000_123) == "2026-07-25T17:20:00.123Z"


def test_detailed_task_carries_what_each_status_has() -> None:
    question = {"k1": {"method": "elicitation/create", "params": {"message": "Delete?"}}}
    assert detailed_task(record(status="input_required", input_requests=question))["inputRequests"] == question
    completed = detailed_task(record(status="completed", result=RESULT))
    assert completed["result"] == RESULT and "error" not in completed
    assert RELATED_TASK_KEY not in (completed["result"].get("_meta") or {})
    failed = detailed_task(record(status="failed", error={"code": -32603, "message": "boom"}, result=RESULT))
    assert failed["error"] == {"code": -32603, "message": "boom"} and "result" not in failed
    cancelled = detailed_task(record(status="cancelled", status_message="stopped"))
    assert {"result", "error", "inputRequests"}.isdisjoint(cancelled)
    working = detailed_task(record(input_requests=question))
    assert "inputRequests" not in working


def test_get_result_and_acknowledgements_are_complete_results() -> None:
    assert get_task_result(record())["resultType"] == "complete"
    assert acknowledgement() == {"resultType": "complete"}


def test_unlimited_ttl_is_null_not_absent() -> None:
    assert create_task_result(record(ttl_ms=None))["ttlMs"] is None


# ---------------------------------------------------------------------- 2025-11-25 shapes


def test_legacy_task_uses_the_2025_field_names_and_a_wrapper_on_creation() -> None:
    task = legacy_task(record(status_message="on it"))
    assert (task["ttl"], task["pollInterval"], task["statusMessage"]) == (60_000, 1000, "on it")
    assert "ttlMs" not in task and "pollIntervalMs" not in task
    created = legacy_create_task_result(record(), immediate_response="Started; I will report back.")
    assert created["task"] == legacy_task(record())
    assert created["_meta"] == {"io.modelcontextprotocol/model-immediate-response": "Started; I will report back."}
    assert "resultType" not in created and "_meta" not in legacy_create_task_result(record())


def test_legacy_payload_is_the_result_tagged_with_its_task_or_the_error() -> None:
    result, error = legacy_payload(record(status="completed", result={**RESULT, "_meta": {"x": 1}}))
    assert error is None and result is not None
    assert result["_meta"] == {"x": 1, RELATED_TASK_KEY: {"taskId": "t1"}}
    tool_error = {"content": [{"type": "text", "text": "bad input"}], "isError": True}
    result, error = legacy_payload(record(status="failed", result=tool_error))
    assert error is None and result is not None and result["isError"] is True
    assert legacy_payload(record(status="failed", error={"code": -32603, "message": "boom"})) == \
        (None, {"code": -32603, "message": "boom"})
    result, error = legacy_payload(record(status="cancelled"))
    assert result is None and error is not None and "cancelled" in error["message"]
