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

`requestState` carries the answers of earlier rounds and the keys of the questions this round
asked, signed with HMAC-SHA256 (`MCP_KIT_STATE_SECRET`, or `use_secret` with a shared backend's key,
shares the key across processes) and bound, as the 2026-07-28 specification advises, to:

- the request: its method and a SHA-256 of the canonical JSON of its params without `_meta`,
  `requestState` and `inputResponses` (so the tool or resource, and every argument);
- the caller: the canonical owner identity of its access token (`auth.principal.owner_key`), or
  None for a request without OAuth (stdio, an unprotected HTTP server);
- an expiry: `state_ttl` seconds after it was issued (600 by default; `MCP_KIT_STATE_TTL` or
  `use_state_ttl`).

A state presented on another request, by another caller, or after its expiry is refused with
-32602, as is one that does not verify. With a state, `inputResponses` count only for the questions
that state asked; answers to others are ignored (the specification: a server SHOULD ignore
information it does not recognize), so a retry cannot answer a question before it is asked nor
change an answer an earlier round took. A first request (no state) may carry answers up front,
used if the handler asks those keys (the specification's requests stand alone, and the official
conformance suite checks this): answers are the client's data either way, never proof that a user
saw a question. What a replay can still do: the same caller may present a state again, unchanged,
until it expires, and the call runs again with the same arguments and answers. A state is not
single-use; a tool for which that matters must record its own consumption.
While tracing is on, the state also carries the asking span's trace context (`trace_of_state` reads it back),
so the retry's span links to the round that asked, on whichever process serves it.
`sign_handle` signs other client-held ids with the same key (`ctx.state`'s 2026-07-28 handle).

Imports nothing from mcp_kit but `errors` and the telemetry hooks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import anyio
import anyio.lowlevel

from .._protocol.errors import invalid_params
from .._telemetry import hooks as telemetry_hooks

_SECRET = os.environ.get("MCP_KIT_STATE_SECRET", "").encode() or os.urandom(32)
STATE_VERSION = 2
DEFAULT_STATE_TTL = 600.0
UNBOUND_PARAMS = ("_meta", "requestState", "inputResponses")  # what a retry adds or may change
clock: Callable[[], float] = time.time  # wall clock of expiries (a signed state may be verified by another process)


def _ttl_from_environment() -> float:
    text = os.environ.get("MCP_KIT_STATE_TTL", "").strip()
    if not text:
        return DEFAULT_STATE_TTL
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise ValueError(f"MCP_KIT_STATE_TTL must be a positive number of seconds, e.g. 600; got {text!r}")
    return seconds


state_ttl = _ttl_from_environment()


def use_secret(secret: bytes) -> None:
    """Sign and verify request state with `secret` (a deployment's shared key) unless MCP_KIT_STATE_SECRET is set."""
    global _SECRET
    if not os.environ.get("MCP_KIT_STATE_SECRET"):
        _SECRET = secret


def use_state_ttl(seconds: float) -> None:
    """Issue request states valid for `seconds` (a positive number) from now on."""
    global state_ttl
    if not 0 < seconds < float("inf"):
        raise ValueError(f"a request state's lifetime must be a positive number of seconds; got {seconds!r}")
    state_ttl = float(seconds)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def request_binding(method: str, params: Mapping[str, Any]) -> str:
    """What a request state is bound to: `method` and a SHA-256 of the canonical JSON of `params`
    (sorted keys, no spaces, ASCII) without the parts a retry adds (`UNBOUND_PARAMS`)."""
    salient = {key: value for key, value in params.items() if key not in UNBOUND_PARAMS}
    canonical = json.dumps(salient, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{method}:{hashlib.sha256(canonical.encode()).hexdigest()}"


def sign_state(answers: dict[str, Any], asked: Iterable[str], *, binding: str, principal: str | None) -> str:
    """A request state: `answers` so far and the keys `asked` this round, bound to the request, the caller
    (`auth.principal.owner_key`, None without OAuth) and an expiry `state_ttl` seconds from now."""
    data: dict[str, Any] = {"v": STATE_VERSION, "b": binding, "p": principal, "e": math.ceil(clock() + state_ttl),
                            "q": sorted(set(asked)), "a": answers}
    probe = telemetry_hooks.active
    traced = probe.trace_context() if probe is not None else None
    if traced is not None:  # the asking span: the retry's span links to it, on whichever process serves it
        data["t"] = traced
    payload = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=True).encode()
    mac = hmac.new(_SECRET, payload, hashlib.sha256).digest()
    return f"{_b64(payload)}.{_b64(mac)}"


def _refused(why: str) -> Exception:
    return invalid_params(f"Invalid requestState: {why}; start the request again without requestState "
                          "and inputResponses")


def verify_state(state: str, *, binding: str, principal: str | None) -> tuple[dict[str, Any], frozenset[str]]:
    """The answers inside a request state and the keys of the questions it asked; -32602 when it was forged
    or altered, belongs to another request or another caller, or has expired."""
    try:
        payload_text, mac_text = state.split(".")
        payload = _unb64(payload_text)
        valid = hmac.compare_digest(hmac.new(_SECRET, payload, hashlib.sha256).digest(), _unb64(mac_text))
        data = json.loads(payload) if valid else None
    except (ValueError, TypeError):
        data = None
    if not (isinstance(data, dict) and data.get("v") == STATE_VERSION and isinstance(data.get("a"), dict)
            and isinstance(data.get("q"), list) and isinstance(data.get("e"), int)):
        raise _refused("it was altered, forged, or issued by another server")
    if data.get("b") != binding:
        raise _refused("it belongs to another request (another method, target or arguments)")
    if data.get("p") != principal:
        raise _refused("it was issued to another caller")
    if clock() > data["e"]:
        raise _refused("it has expired")
    return data["a"], frozenset(key for key in data["q"] if isinstance(key, str))


def trace_of_state(state: str) -> dict[str, str] | None:
    """The trace context of the round that issued `state` (telemetry links the retry to it); None when the state
    carries none or does not verify (a forged state links nowhere; the request itself refuses it)."""
    try:
        payload_text, mac_text = state.split(".")
        payload = _unb64(payload_text)
        if not hmac.compare_digest(hmac.new(_SECRET, payload, hashlib.sha256).digest(), _unb64(mac_text)):
            return None
        traced = json.loads(payload).get("t")
    except (ValueError, TypeError, AttributeError):
        return None
    if not isinstance(traced, dict):
        return None
    checked = telemetry_hooks.incoming_context(traced)
    return checked


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

    def input_required(self, binding: str, principal: str | None) -> dict[str, Any]:
        """The result asking this round's questions, with the state to present on the retry."""
        return {
            "resultType": "input_required",
            "inputRequests": self.questions,
            "requestState": sign_state(self.answers, self.questions, binding=binding, principal=principal),
        }


def answers_from(params: dict[str, Any], binding: str, principal: str | None) -> dict[str, Any]:
    """The answers this round runs with: those of a verified requestState, and this request's
    inputResponses to the questions that state asked (answers to anything else are ignored).

    A request without a requestState is a first contact: its inputResponses are taken as answers
    given up front (the specification's requests stand alone, a state is optional, and the official
    conformance suite checks that a first call carrying the answer completes). Each is used only if
    the handler asks a question of that key; the others are never seen.
    """
    responses = params.get("inputResponses")
    offered = responses if isinstance(responses, dict) else {}
    state = params.get("requestState")
    if state is None:
        return dict(offered)
    if not isinstance(state, str):
        raise invalid_params("requestState must be the string the server returned")
    answers, asked = verify_state(state, binding=binding, principal=principal)
    answers.update({key: value for key, value in offered.items() if key in asked})
    return answers
