"""Input rounds (2026-07-28 multi-round-trip requests): questions to the client become an input-required result.

In the stateless era a server cannot send `elicitation/create` or `sampling/createMessage`
mid-call. Instead the handler runs until it asks; the questions asked (concurrently asked ones
together) go back as `{"resultType": "input_required", "inputRequests": {...}, "requestState"}`
and the client retries with `inputResponses`. The handler then runs again from the top and each
question it asks is answered from what the client sent.

A question this round cannot answer suspends the task that asked it for good. The round closes
once the handler has settled: each question arms one pass of the event loop over the work that
was runnable when it was asked (tasks started by `asyncio.gather` or a task group are), and the
round closes after a pass in which no new question arrived. No timer, no fixed number of polls:
the handler's concurrently asked questions join the round; a question asked only after waiting
on I/O comes in the next one.

`requestState` carries the answers of earlier rounds, signed with HMAC-SHA256 and bound to the
method and target, so a client cannot forge or transplant it (`MCP_KIT_STATE_SECRET` shares the
key across processes). `sign_handle` signs other client-held ids with the same key (`ctx.state`'s
2026-07-28 handle).

Imports nothing from mcp_kit but `errors`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel

from .._protocol.errors import invalid_params

_SECRET = os.environ.get("MCP_KIT_STATE_SECRET", "").encode() or os.urandom(32)


def use_secret(secret: bytes) -> None:
    """Sign and verify request state with `secret` (a deployment's shared key) unless MCP_KIT_STATE_SECRET is set."""
    global _SECRET
    if not os.environ.get("MCP_KIT_STATE_SECRET"):
        _SECRET = secret


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_state(answers: dict[str, Any], binding: str) -> str:
    payload = json.dumps({"b": binding, "a": answers}, separators=(",", ":"), sort_keys=True).encode()
    mac = hmac.new(_SECRET, payload, hashlib.sha256).digest()
    return f"{_b64(payload)}.{_b64(mac)}"


def verify_state(state: str, binding: str) -> dict[str, Any]:
    """The answers inside a request state; -32602 when it was forged, altered or is for another call."""
    try:
        payload_text, mac_text = state.split(".")
        payload = _unb64(payload_text)
        valid = hmac.compare_digest(hmac.new(_SECRET, payload, hashlib.sha256).digest(), _unb64(mac_text))
        data = json.loads(payload) if valid else None
    except (ValueError, TypeError):
        data = None
    if not isinstance(data, dict) or data.get("b") != binding or not isinstance(data.get("a"), dict):
        raise invalid_params("Invalid requestState: it was altered, forged, or belongs to another request; "
                             "start the request again without requestState")
    return data["a"]


def sign_handle(purpose: str, value: str) -> str:
    """`value` with an HMAC of it (for `purpose`) under the same key: a handle a client carries and cannot forge."""
    mac = hmac.new(_SECRET, f"{purpose}:{value}".encode(), hashlib.sha256).digest()[:18]
    return f"{value}.{_b64(mac)}"


def verify_handle(purpose: str, handle: str) -> str | None:
    """The value inside a handle `sign_handle` made for `purpose`; None when it was altered or forged."""
    value, _, mac_text = handle.rpartition(".")
    if not value or len(handle) > 512:
        return None
    try:
        mac = _unb64(mac_text)
    except ValueError:
        return None
    expected = hmac.new(_SECRET, f"{purpose}:{value}".encode(), hashlib.sha256).digest()[:18]
    return value if hmac.compare_digest(expected, mac) else None


def valid_answer(method: str, answer: Any) -> bool:
    """Whether `answer` has the shape of a result of `method` (elicitation, sampling, roots)."""
    if not isinstance(answer, dict):
        return False
    if method == "elicitation/create":
        return answer.get("action") in ("accept", "decline", "cancel")
    if method == "sampling/createMessage":
        return "role" in answer and "content" in answer
    if method == "roots/list":
        return isinstance(answer.get("roots"), list)
    return True


class Rounds:
    """The questions and answers of one multi-round-trip request."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.questions: dict[str, dict[str, Any]] = {}
        self._asked = anyio.Event()
        self._count = 0

    async def ask(self, method: str, params: dict[str, Any], key: str | None) -> Any:
        """The client's answer when it gave one; otherwise record the question and wait to be cancelled."""
        self._count += 1
        key = key or f"{method.split('/')[0]}_{self._count}"
        answer = self.answers.get(key)
        if valid_answer(method, answer):
            return answer
        self.questions[key] = {"method": method, "params": params}
        self._asked.set()
        await anyio.sleep_forever()  # this round cannot answer: the round closes and cancels the handler

    async def run(self, handler: Callable[[], Awaitable[Any]]) -> tuple[bool, Any]:
        """Run `handler`; (True, result) when it finished, (False, None) when it is waiting for answers."""
        outcome: list[Any] = []
        failure: list[Exception] = []
        async with anyio.create_task_group() as tg:

            async def run_handler() -> None:
                try:
                    outcome.append(await handler())
                except Exception as exc:  # re-raised below, outside the task group
                    failure.append(exc)
                tg.cancel_scope.cancel()

            tg.start_soon(run_handler)
            await self._asked.wait()  # the first question (or the handler ended: then this scope is cancelled)
            await self._settled()
            tg.cancel_scope.cancel()
        if failure:
            raise failure[0]
        return (True, outcome[0]) if outcome else (False, None)

    async def _settled(self) -> None:
        """Return once a pass of the event loop over the work runnable now brought no new question.

        Every question asked re-arms the pass; `checkpoint()` reschedules this task behind all the
        work that is ready, so the pass ends once that work has run its next step.
        """
        while True:
            asked = len(self.questions)
            await anyio.lowlevel.checkpoint()
            if len(self.questions) == asked:
                return

    def input_required(self, binding: str) -> dict[str, Any]:
        return {
            "resultType": "input_required",
            "inputRequests": self.questions,
            "requestState": sign_state(self.answers, binding),
        }


def answers_from(params: dict[str, Any], binding: str) -> dict[str, Any]:
    """Earlier answers (from a verified requestState) merged with this round's inputResponses."""
    answers: dict[str, Any] = {}
    state = params.get("requestState")
    if state is not None:
        if not isinstance(state, str):
            raise invalid_params("requestState must be the string the server returned")
        answers.update(verify_state(state, binding))
    responses = params.get("inputResponses")
    if isinstance(responses, dict):
        answers.update(responses)
    return answers

