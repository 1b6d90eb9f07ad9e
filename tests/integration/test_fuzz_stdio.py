"""Fault suite, stdio: any sequence of messages, valid or not, sent to a real server subprocess, gets every request
answered exactly once with a valid JSON-RPC response (or the documented error), and the session stays alive.

Property-based (hypothesis, derandomized so every run sends the same sequences; example counts bounded).
"""

from __future__ import annotations

import itertools
import json
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.fuzz_messages import FUZZ, Plan, check_answer, check_notification, plans
from tests.helpers.stdio_peer import StdioPeer

_examples = itertools.count()


@pytest.fixture(scope="module")
def peer() -> Iterator[StdioPeer]:
    server = StdioPeer()
    try:
        server.initialize()
        yield server
    finally:
        server.close()


def drain(peer: StdioPeer, plan: Plan, sentinel: str) -> tuple[Counter[str], int]:
    """Send a ping after the plan and read until it is answered and everything owed has arrived."""
    owed = plan.expected_ids()
    answers: Counter[str] = Counter()
    null_errors = 0
    peer.send({"jsonrpc": "2.0", "id": sentinel, "method": "ping"})
    deadline = time.monotonic() + 15
    sentinel_seen = False
    while not (sentinel_seen and all(answers[key] >= low for key, (low, _) in owed.items())
               and null_errors >= plan.null_errors()):
        message = peer.next(deadline)
        assert "unparseable" not in message, f"not JSON-RPC on stdout: {message}"
        if isinstance(message, list):  # a batch answer
            messages = message
        else:
            messages = [message]
        for item in messages:
            if "method" in item:
                check_notification(item)
                continue
            check_answer(item, plan)
            if item["id"] == sentinel:
                sentinel_seen = True
            elif item["id"] is None:
                null_errors += 1
            else:
                answers[json.dumps(item["id"])] += 1
    return answers, null_errors


@FUZZ
@given(data=st.data())
def test_any_message_sequence_over_stdio_is_answered_exactly_once(peer: StdioPeer, data: st.DataObject) -> None:
    example = next(_examples)
    plan = data.draw(plans(f"e{example}"))
    peer.send_bytes(b"".join(item.line() + b"\n" for item in plan.items))
    answers, null_errors = drain(peer, plan, f"sentinel-{example}")
    late, late_nulls = drain(peer, Plan(), f"sentinel-{example}-late")  # anything arriving twice shows up here
    answers.update(late)
    for key, (low, high) in plan.expected_ids().items():
        assert low <= answers[key] <= high, f"id {key}: {answers[key]} answers, owed {low}..{high}; plan {plan.items}"
    assert set(answers) <= set(plan.expected_ids()), (
        f"answers to ids never sent: {set(answers) - set(plan.expected_ids())}"
    )
    assert null_errors + late_nulls == plan.null_errors(), plan.items
    assert peer.proc.poll() is None


def test_the_session_is_alive_after_the_fuzzing(peer: StdioPeer) -> None:
    assert peer.alive()
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": "after",
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        }
    )
    assert peer.answer("after")["result"]["content"][0]["text"] == "5"
    assert "Traceback" not in peer.stderr_text(), peer.stderr_text()[-3000:]
