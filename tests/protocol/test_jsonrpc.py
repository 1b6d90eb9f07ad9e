"""JSON-RPC 2.0 codec: decoding classifies every message or returns the exact error to send back."""

from __future__ import annotations

import json

import pytest

from mcp_kit._protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    Batch,
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    Response,
    decode_message,
    encode_message,
    parse_message,
    to_wire,
)


def error_of(decoded: object) -> ErrorResponse:
    assert isinstance(decoded, InvalidMessage), decoded
    assert decoded.error is not None
    assert decoded.error.code != 0
    return decoded.error


@pytest.mark.parametrize(
    "frame",
    [b"not json", b"{", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b"\xff\xfe{}", b'{"a": "\xc3\x28"}', ""],
)
def test_unparseable_input_is_a_parse_error_with_null_id(frame: bytes) -> None:
    error = error_of(decode_message(frame))
    assert error.code == PARSE_ERROR
    assert error.id is None
    wire = to_wire(error)
    assert wire["id"] is None and wire["error"]["code"] == -32700


@pytest.mark.parametrize(
    ("message", "expected_id"),
    [
        ({"jsonrpc": "1.0", "id": 7, "method": "ping"}, 7),
        ({"id": 7, "method": "ping"}, 7),
        ({"jsonrpc": 2.0, "id": "x", "method": "ping"}, "x"),
    ],
)
def test_wrong_jsonrpc_version_is_invalid_request_keeping_a_valid_id(message: dict, expected_id: object) -> None:
    error = error_of(parse_message(message))
    assert error.code == INVALID_REQUEST
    assert error.id == expected_id
    assert "jsonrpc" in error.message


@pytest.mark.parametrize("bad_id", [1.5, 1.0, True, False, {"a": 1}, [1], None])
def test_id_of_a_bad_type_is_invalid_request_with_null_id(bad_id: object) -> None:
    error = error_of(decode_message(json.dumps({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})))
    assert error.code == INVALID_REQUEST
    assert error.id is None
    assert "id" in error.message


@pytest.mark.parametrize("good_id", [0, -3, 2**40, "abc", ""])
def test_string_and_integer_ids_are_accepted(good_id: object) -> None:
    decoded = decode_message(json.dumps({"jsonrpc": "2.0", "id": good_id, "method": "ping"}))
    assert isinstance(decoded, Request)
    assert decoded.id == good_id and type(decoded.id) is type(good_id)


def test_missing_method_is_invalid_request() -> None:
    error = error_of(decode_message(b'{"jsonrpc": "2.0", "id": 3}'))
    assert error.code == INVALID_REQUEST and error.id == 3
    assert "method" in error.message


def test_method_that_is_not_a_string_is_invalid_request() -> None:
    error = error_of(decode_message(b'{"jsonrpc": "2.0", "id": 3, "method": 12}'))
    assert error.code == INVALID_REQUEST and error.id == 3


@pytest.mark.parametrize("params", [[1, 2], "x", 5, True])
def test_params_that_are_not_an_object_are_invalid_request(params: object) -> None:
    error = error_of(
        decode_message(json.dumps({"jsonrpc": "2.0", "id": "p", "method": "tools/list", "params": params}))
    )
    assert error.code == INVALID_REQUEST and error.id == "p"
    assert "params" in error.message


@pytest.mark.parametrize("value", [b"42", b'"hello"', b"null", b"true"])
def test_a_json_value_that_is_not_an_object_is_invalid_request(value: bytes) -> None:
    error = error_of(decode_message(value))
    assert error.code == INVALID_REQUEST and error.id is None


def test_empty_batch_is_invalid_request() -> None:
    error = error_of(decode_message(b"[]"))
    assert error.code == INVALID_REQUEST and error.id is None


def test_messages_are_classified() -> None:
    assert decode_message(b'{"jsonrpc":"2.0","id":1,"method":"ping"}') == Request(1, "ping", None)
    assert decode_message(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == Notification(
        "notifications/initialized", None
    )
    assert decode_message(b'{"jsonrpc":"2.0","id":"s1","result":{"ok":true}}') == Response("s1", {"ok": True})
    error = decode_message(b'{"jsonrpc":"2.0","id":"s2","error":{"code":-32601,"message":"nope","data":[1]}}')
    assert error == ErrorResponse("s2", -32601, "nope", [1])
    params = decode_message(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}')
    assert isinstance(params, Request) and params.params == {"name": "x"}


def test_a_result_of_null_is_still_a_response() -> None:
    assert decode_message(b'{"jsonrpc":"2.0","id":5,"result":null}') == Response(5, None)


def test_a_response_without_id_is_invalid() -> None:
    assert isinstance(decode_message(b'{"jsonrpc":"2.0","result":{}}'), InvalidMessage)


def test_error_response_without_a_code_never_gets_code_zero() -> None:
    decoded = decode_message(b'{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}')
    assert isinstance(decoded, ErrorResponse)
    assert decoded.code == INTERNAL_ERROR


def test_batch_items_are_classified_individually() -> None:
    decoded = decode_message(
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},5,{"jsonrpc":"2.0","id":1.5,"method":"x"}]'
    )
    assert isinstance(decoded, Batch)
    first, second, third, fourth = decoded.items
    assert isinstance(first, Request) and isinstance(second, Notification)
    assert error_of(third).code == INVALID_REQUEST
    assert error_of(fourth).code == INVALID_REQUEST


@pytest.mark.parametrize(
    "message",
    [
        Request(1, "tools/call", {"name": "echo", "arguments": {"text": "é ✓ \u0000"}}),
        Request("abc", "ping", None),
        Notification("notifications/progress", {"progressToken": "t", "progress": 0.5}),
        Notification("notifications/initialized", None),
        Response(9, {"content": [{"type": "text", "text": "x"}], "isError": False}),
        Response("r", None),
        ErrorResponse(4, -32602, "bad", {"field": "a"}),
        ErrorResponse(None, -32700, "Parse error", None),
    ],
)
def test_encode_then_decode_round_trips(message: object) -> None:
    data = encode_message(message)  # type: ignore[arg-type]
    assert isinstance(data, bytes) and b"\n" not in data
    assert json.loads(data)["jsonrpc"] == "2.0"
    assert decode_message(data) == message


def test_encode_omits_absent_params_and_data() -> None:
    assert json.loads(encode_message(Notification("n", None))) == {"jsonrpc": "2.0", "method": "n"}
    assert json.loads(encode_message(ErrorResponse(1, -32601, "m"))) == {
        "jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "m"}
    }


def test_encode_a_batch_answer_as_an_array() -> None:
    data = encode_message([Response(1, {}), ErrorResponse(2, -32601, "no")])
    assert json.loads(data) == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "no"}},
    ]


def test_encode_handles_big_integers_and_non_ascii() -> None:
    data = encode_message(Response(1, {"n": 2**70, "s": "日本"}))
    assert json.loads(data.decode("utf-8")) == {"jsonrpc": "2.0", "id": 1, "result": {"n": 2**70, "s": "日本"}}


def test_the_standard_error_codes_are_the_specs() -> None:
    from mcp_kit._protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

    assert (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR) == (
        -32700, -32600, -32601, -32602, -32603)


@pytest.mark.parametrize("frame", [b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":NaN}}',
                                   b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":Infinity}}',
                                   b'[{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":-Infinity}}]'])
def test_nan_and_infinity_are_not_json(frame: bytes) -> None:
    assert error_of(decode_message(frame)).code == PARSE_ERROR
    assert error_of(decode_message(frame.decode())).code == PARSE_ERROR


def test_what_we_send_is_always_strict_json() -> None:
    data = encode_message(Response(1, {"nan": float("nan"), "inf": float("inf")}))
    assert json.loads(data, parse_constant=lambda name: pytest.fail(f"{name} is not JSON")) == {
        "jsonrpc": "2.0", "id": 1, "result": {"nan": None, "inf": None}}


def test_encoding_stays_compact_utf8_on_the_big_integer_path() -> None:
    data = encode_message(Response(1, {"n": 2**70, "s": "日本"}))  # past 64 bits: the stdlib encoder's path
    assert data == b'{"jsonrpc":"2.0","id":1,"result":{"n":1180591620717411303424,"s":"' + "日本".encode() + b'"}}'


def test_models_in_a_message_are_dumped_by_alias_without_nones_on_the_big_integer_path() -> None:
    from pydantic import BaseModel, Field

    class Shape(BaseModel):
        input_schema: dict = Field(alias="inputSchema")
        title: str | None = None

    data = encode_message(Response(1, {"n": 2**70, "tool": Shape(inputSchema={"type": "object"})}))
    assert json.loads(data)["result"] == {"n": 2**70, "tool": {"inputSchema": {"type": "object"}}}
    with pytest.raises((TypeError, ValueError), match="object is not JSON serialisable"):  # named, whatever the class
        encode_message(Response(1, {"n": 2**70, "x": object()}))
