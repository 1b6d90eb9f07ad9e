"""Arguments on their way to a server: parsed, strict-mode nulls restored, validated with messages a model
can act on."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_kit.functions import ArgumentChecker, ArgumentError, parse_arguments

EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {"Edit": {"type": "object", "properties": {"oldText": {"type": "string"}, "note": {"type": "string"}},
                       "required": ["oldText"]}},
    "properties": {"path": {"type": "string"}, "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
                   "when": {"type": "string", "format": "date"},
                   "label": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                   "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5},
                   "first": {"anyOf": [{"$ref": "#/$defs/Edit"}, {"type": "null"}], "default": None}},
    "required": ["path"],
}


def test_parse_arguments() -> None:
    assert parse_arguments(None) == {} and parse_arguments("") == {} and parse_arguments("  ") == {}
    assert parse_arguments('{"a": 1}') == {"a": 1} and parse_arguments(b'{"a": 1}') == {"a": 1}
    assert parse_arguments({"a": 1}) == {"a": 1}
    with pytest.raises(ArgumentError, match=r"not valid JSON \(line 1, column 2: Expecting property name"):
        parse_arguments("{'a': 1}")
    with pytest.raises(ArgumentError, match="must be a JSON object .* not string"):
        parse_arguments('"just text"')


def test_restore_drops_strict_nulls_at_any_depth_and_keeps_meaningful_ones() -> None:
    checker = ArgumentChecker(EDIT_SCHEMA)
    sent = {"path": "a", "when": None, "label": None, "limit": None,
            "edits": [{"oldText": "x", "note": None}], "first": {"oldText": "y", "note": None}}
    assert checker.restore(sent) == {"path": "a", "label": None, "limit": None,
                                     "edits": [{"oldText": "x"}], "first": {"oldText": "y"}}
    # label accepts null and has no default: null may mean "clear it", so it stays;
    # limit accepts null but defaults to 5: null is a value of its own and stays too.
    assert checker.restore({"path": None}) == {"path": None}  # required: left for validation to refuse
    assert checker.restore({"path": "a", "first": None}) == {"path": "a"}  # default null: same as leaving it out


def test_check_lists_every_problem_by_path() -> None:
    checker = ArgumentChecker(EDIT_SCHEMA)
    with pytest.raises(ArgumentError) as caught:
        checker.check({"when": "2024-13-45", "edits": [{"note": 3}], "limit": "ten"})
    text = str(caught.value)
    assert text.splitlines() == [
        "The arguments do not match the tool's input schema:",
        "- arguments: 'path' is a required property",
        "- edits[0]: 'oldText' is a required property",
        "- edits[0].note: 3 is not of type 'string'",
        "- limit: 'ten' is not of type 'integer'",
        "- when: '2024-13-45' is not a 'date'",
        "Correct them and call the tool again.",
    ]
    assert checker.check({"path": "p", "when": "2024-02-29"}) == {"path": "p", "when": "2024-02-29"}


def test_a_tool_without_schema_takes_any_object() -> None:
    assert ArgumentChecker(None).check({"x": 1}) == {"x": 1}
