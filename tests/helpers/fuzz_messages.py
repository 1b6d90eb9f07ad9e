"""Hypothesis strategies for the fault suite: sequences of messages, valid or not, and what each must get back.

A sequence is a list of `Sent` items. Each knows its wire form and what the server owes for it:
- `answer_id`: a request with this id must get exactly one answer carrying it (0 or 1 if it was cancelled);
- `null_errors`: how many error answers with id null it causes (a line that is not JSON, a batch in a
  version without batches, an id that is not an id);
- nothing at all for notifications and for responses sent to the server.
The oracle is the JSON-RPC and MCP specs as written here, not our decoder. Every answer must be a valid
JSON-RPC response, and -32603 ("our bug") is allowed only where it is documented (a result that cannot be
encoded, other than a tool result).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.helpers.live_http import MODERN_META

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

TOOLS = ["echo", "add", "unencodable", "lookup", "nope", "greet"]  # never `forever`/`gated`: they would not answer
URIS = ["fault://unencodable", "fault://item/abc", "fault://item/%2E%2E%2F", "fault://item/" + "a" * 300,
        "nothing://", "", "fault://item/A"]
METHODS = ["ping", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list",
           "prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "initialize", "server/discover",
           "no/such/method", "notifications/initialized"]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
meta_values = st.sampled_from([None, 5, [1], "x", {}, {"progressToken": "p"}, {"progressToken": [1]}, MODERN_META,
                               {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"},
                               {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": "all"}]) | json_values


@dataclass
class Sent:
    """One thing sent, and what it is owed."""

    wire: Any  # a JSON value, or bytes for a raw line
    answer_id: Any = None
    cancellable: bool = False
    null_errors: int = 0
    internal_error_allowed: bool = False

    def line(self) -> bytes:
        return self.wire if isinstance(self.wire, bytes) else json.dumps(self.wire).encode()


@dataclass
class Plan:
    items: list[Sent] = field(default_factory=list)

    def expected_ids(self) -> dict[Any, tuple[int, int]]:
        """id -> (fewest, most) answers owed."""
        owed: dict[Any, list[int]] = {}
        for item in self.items:
            if item.answer_id is not None:
                low, high = owed.setdefault(json.dumps(item.answer_id), [0, 0])
                owed[json.dumps(item.answer_id)] = [low + (0 if item.cancellable else 1), high + 1]
        return {key: (low, high) for key, (low, high) in owed.items()}

    def null_errors(self) -> int:
        return sum(item.null_errors for item in self.items)


@st.composite
def params_for(draw: st.DrawFn, method: str) -> dict[str, Any]:
    params: dict[str, Any]
    if method == "tools/call":
        arguments = draw(st.sampled_from([{}, {"text": "hi"}, {"a": 1, "b": 2}, {"code": "abc"}, {"code": "../x"}])
                         | json_values)
        params = {"name": draw(st.sampled_from(TOOLS) | json_values), "arguments": arguments}
    elif method == "resources/read":
        params = {"uri": draw(st.sampled_from(URIS) | json_values)}
    elif method == "prompts/get":
        params = {"name": draw(st.sampled_from(["greet", "nope"]) | json_values),
                  "arguments": draw(st.sampled_from([{"name": "x"}, {}, None]) | json_values)}
    elif method == "completion/complete":
        params = {"ref": draw(st.sampled_from([{"type": "ref/prompt", "name": "greet"},
                                               {"type": "ref/resource", "uri": "fault://item/{code}"}]) | json_values),
                  "argument": draw(st.sampled_from([{"name": "name", "value": "a"}]) | json_values),
                  "context": draw(st.none() | json_values)}
    elif method == "logging/setLevel":
        params = {"level": draw(st.sampled_from(["debug", "error", "loud"]) | json_values)}
    elif method == "initialize":
        params = {"protocolVersion": draw(st.sampled_from(["2025-11-25", "2024-11-05"]) | json_values),
                  "capabilities": draw(st.just({}) | json_values), "clientInfo": {"name": "fuzz", "version": "1"}}
    else:
        params = draw(st.dictionaries(st.text(max_size=6), json_values, max_size=2))
    if draw(st.booleans()):
        meta = draw(meta_values)
        if meta is not None:
            params["_meta"] = meta
    return params


@st.composite
def plans(draw: st.DrawFn, ids_prefix: str, batches: bool = False, max_size: int = 8) -> Plan:
    """A sequence of messages; ids are unique within the example unless deliberately reused."""
    plan = Plan()
    used: list[Any] = []
    for index in range(draw(st.integers(1, max_size))):
        kind = draw(st.sampled_from(["request", "request", "request", "notification", "cancel", "garbage",
                                     "bad-envelope", "response", "batch"]))
        if kind == "request":
            method = draw(st.sampled_from(METHODS) | st.text(max_size=10))
            request_id: Any = draw(st.sampled_from(used)) if used and draw(st.integers(0, 9)) == 0 \
                else draw(st.sampled_from([f"{ids_prefix}-{index}", zlib.crc32(f"{ids_prefix}-{index}".encode())]))
            used.append(request_id)
            params = draw(params_for(method))
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if draw(st.integers(0, 4)):
                message["params"] = params
            read_unencodable = method == "resources/read" and params.get("uri") == "fault://unencodable"
            plan.items.append(Sent(message, answer_id=request_id, internal_error_allowed=read_unencodable))
        elif kind == "notification":
            method = draw(
                st.sampled_from(
                    [
                        "notifications/initialized",
                        "notifications/progress",
                        "notifications/roots/list_changed",
                        "notifications/x",
                    ]
                )
                | st.text(max_size=8)
            )
            plan.items.append(Sent({"jsonrpc": "2.0", "method": method, "params": draw(params_for("x"))}))
        elif kind == "cancel":
            target = draw(st.sampled_from(used)) if used and draw(st.booleans()) else draw(json_values)
            for item in plan.items:
                if item.answer_id == target:
                    item.cancellable = True
            plan.items.append(
                Sent(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": draw(
                            st.sampled_from([{"requestId": target}, {"requestId": target, "reason": 5}, {}])
                            | st.just({"requestId": target})
                        ),
                    }
                )
            )
        elif kind == "garbage":
            text = draw(st.sampled_from(["{", "[1,", '{"jsonrpc":', "nul", "{'a':1}", '"unterminated', "}{"])) + draw(
                st.text(alphabet=st.characters(exclude_characters="\n\r", exclude_categories=["Cs"]), max_size=20)
            )
            try:
                json.loads(text)
            except ValueError:
                plan.items.append(Sent(text.encode("utf-8"), null_errors=1))
        elif kind == "bad-envelope":
            request_id = f"{ids_prefix}-bad-{index}"
            variant = draw(st.integers(0, 6))
            if variant == 0:
                plan.items.append(Sent({"jsonrpc": "1.0", "id": request_id, "method": "ping"}, answer_id=request_id))
            elif variant == 1:
                plan.items.append(Sent({"jsonrpc": "2.0", "id": draw(st.sampled_from([1.5, [1], {"a": 1}, True])),
                                        "method": "ping"}, null_errors=1))
            elif variant == 2:
                plan.items.append(
                    Sent(
                        {"jsonrpc": "2.0", "id": request_id, "method": draw(st.sampled_from([5, None, [1]]))},
                        answer_id=request_id,
                    )
                )
            elif variant == 3:
                plan.items.append(Sent({"jsonrpc": "2.0", "id": request_id, "method": "ping",
                                        "params": draw(st.sampled_from([[1], 5, "x", True]))}, answer_id=request_id))
            elif variant == 4:
                plan.items.append(Sent({"jsonrpc": "2.0", "id": request_id}, answer_id=request_id))
            elif variant == 5:
                plan.items.append(Sent(draw(st.sampled_from([5, "x", None, True])), null_errors=1))
            else:
                plan.items.append(Sent([], null_errors=1))
        elif kind == "response":
            plan.items.append(Sent(draw(st.sampled_from([
                {"jsonrpc": "2.0", "id": "s999", "result": {}},
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}},
                {"jsonrpc": "2.0", "id": "s1", "error": {"code": 1, "message": "no"}}]))))
        elif batches:
            plan.items.append(Sent([{"jsonrpc": "2.0", "id": f"{ids_prefix}-batch-{index}", "method": "ping"}],
                                   answer_id=f"{ids_prefix}-batch-{index}"))
        else:  # a batch where this version has none: one error, id null, nothing run
            plan.items.append(Sent([{"jsonrpc": "2.0", "id": f"{ids_prefix}-batch-{index}", "method": "ping"},
                                    {"jsonrpc": "2.0", "method": "notifications/x"}], null_errors=1))
    return plan


def check_answer(message: Any, plan: Plan) -> None:
    """A valid JSON-RPC response, with -32603 only where documented."""
    assert isinstance(message, dict), message
    assert message.get("jsonrpc") == "2.0", message
    assert ("result" in message) != ("error" in message), message
    if "error" in message:
        error = message["error"]
        assert (
            isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
        ), message
        if error["code"] == -32603:
            allowed = [item for item in plan.items if item.internal_error_allowed
                       and json.dumps(item.answer_id) == json.dumps(message.get("id"))]
            assert allowed, f"internal error (a bug) for {message}"


def check_notification(message: Any) -> None:
    assert isinstance(message, dict) and message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str), (
        message
    )
