"""Property-based tests of both schema converters (strict mode, Gemini) over generated schemas with reference
cycles, unions, allOf, external references and deep nesting. Every conversion ends within budget without
touching the network or a file, and either refuses with a reason (its JSON Pointer named) or keeps the
schema's meaning on generated values, checked with jsonschema (local references only):

- strict mode, through its documented mapping (optional properties sent as null): a value the strict schema
  accepts is, once restored, one the original accepts (never looser), and a value the original accepts,
  sent the strict way, is one the strict schema accepts (nothing valid lost);
- Gemini, whose subset drops some constraints by design (closed objects, recursion past a cut): every
  value the original accepts stays acceptable, and where nothing was dropped, exactly those values are.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import jsonschema.validators
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.exceptions import NoSuchResource

from mcp_kit.functions import (
    ArgumentChecker,
    GeminiSchemaError,
    SchemaConversionError,
    StrictSchemaError,
    to_gemini_schema,
    to_strict_schema,
)
from tests.helpers.strict_rules import strict_violations
from tests.helpers.vendor_types import gemini_schema_problems, gemini_to_json_schema

NAMES = ("a", "b", "c")
DEFINITIONS = ("d0", "d1", "d2")
EXTERNAL = ("http://127.0.0.1:9/s.json", "file:///etc/passwd", "other.json#/x", "#anchor")
SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])
BUDGET_SECONDS = 10.0  # generous: a conversion takes milliseconds; unbounded ones took minutes

scalars = st.sampled_from([None, True, False, 0, 1, 2.5, "", "x", "y"])
leaf_schemas = st.one_of(
    st.sampled_from([{"type": t} for t in ("string", "integer", "number", "boolean", "null")]),
    st.sampled_from([{"type": ["string", "null"]}, {"type": ["integer", "string"]}]),
    st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3, unique=True).map(lambda v: {"enum": v}),
    st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=2, unique=True).map(
        lambda v: {"type": "integer", "enum": v}
    ),
    st.sampled_from(["x", 1]).map(lambda v: {"const": v}),
    st.sampled_from([{"$ref": f"#/$defs/{name}"} for name in DEFINITIONS]),
    st.sampled_from([{"$ref": f"#/$defs/{name}", "description": "documented"} for name in DEFINITIONS]),
    st.just({"$ref": "#"}),
)


def compound(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.builds(
        lambda props, required, closed: {"type": "object", "properties": props,
                                         "required": [n for n in required if n in props],
                                         **({"additionalProperties": False} if closed else {})},
        st.dictionaries(st.sampled_from(NAMES), inner, min_size=1, max_size=3),
        st.lists(st.sampled_from(NAMES), unique=True, max_size=3), st.booleans())
    arrays = st.builds(lambda items: {"type": "array", "items": items}, inner)
    unions = st.lists(inner, min_size=1, max_size=3).map(lambda branches: {"anyOf": branches})
    merged = st.lists(inner, min_size=1, max_size=2).map(lambda parts: {"allOf": parts})
    return st.one_of(objects, objects, objects, arrays, arrays, unions, unions, merged)  # weighted


schemas = st.recursive(leaf_schemas, compound, max_leaves=12)


@st.composite
def documents(draw: st.DrawFn, *, external: bool = False) -> dict[str, Any]:
    """A tool input schema: a root object with definitions that may refer to each other (and to the root)."""
    defs = {name: draw(schemas) for name in DEFINITIONS}
    properties = draw(st.dictionaries(st.sampled_from(NAMES), schemas, min_size=1, max_size=3))
    required = [name for name in draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3)) if name in properties]
    doc: dict[str, Any] = {"type": "object", "properties": properties, "required": required, "$defs": defs}
    if draw(st.integers(0, 7)) == 5:  # now and then, two unions that must both hold
        first, second = draw(schemas), draw(schemas)
        properties[draw(st.sampled_from(NAMES))] = {"allOf": [{"anyOf": [first]}, {"oneOf": [second]}]}
    if external:
        target = draw(st.sampled_from(sorted(properties) + list(DEFINITIONS)))
        ref = {"$ref": draw(st.sampled_from(EXTERNAL))}
        (properties if target in properties else defs)[target] = {"anyOf": [{"type": "integer"}, ref]}
    return doc


@st.composite
def deep_documents(draw: st.DrawFn) -> dict[str, Any]:
    """Objects, arrays and unions nested up to 400 levels, around a leaf."""
    node: Any = draw(leaf_schemas.filter(lambda s: "$ref" not in s))
    levels = draw(st.integers(1, 400))
    for wrapper in draw(st.lists(st.sampled_from(["object", "array", "anyOf", "allOf"]), min_size=levels,
                                 max_size=levels)):
        node = ({"type": "object", "properties": {"n": node}, "required": ["n"]} if wrapper == "object"
                else {"type": "array", "items": node} if wrapper == "array" else {wrapper: [node]})
    return {"type": "object", "properties": {"root": node}, "required": ["root"]}


values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.sampled_from(NAMES), inner, max_size=3)),
                      max_leaves=10)
arguments = st.dictionaries(st.sampled_from(NAMES), values, max_size=3)


@contextlib.contextmanager
def no_outside_access(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Records (and stops) any attempt to open a URL or a network connection while the block runs."""
    attempts: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(repr(args[:2]))
        raise OSError("outside access attempted")

    with monkeypatch.context() as patch:
        patch.setattr(urllib.request, "urlopen", refuse)
        patch.setattr(jsonschema.validators, "urlopen", refuse, raising=False)
        patch.setattr(socket, "create_connection", refuse)
        patch.setattr(socket.socket, "connect", refuse)
        yield attempts


def converted(convert: Any, schema: dict[str, Any], error: type[SchemaConversionError]) -> Any:
    """The conversion, or the refusal (checked to be the converter's error, with a pointer and a reason)."""
    started = time.monotonic()
    try:
        return convert(schema)
    except error as exc:
        assert isinstance(exc.pointer, str) and exc.reason
        return exc
    finally:
        assert time.monotonic() - started < BUDGET_SECONDS


def resolve(node: Any, root: dict[str, Any]) -> Any:
    for _ in range(64):
        if not (isinstance(node, dict) and "$ref" in node):
            return node
        ref = node["$ref"]
        node = root if ref == "#" else root["$defs"][ref.split("/")[-1]]
    raise AssertionError("a reference chain in a converted schema")


def sent_strictly(value: Any, node: Any, root: dict[str, Any], validator: Any) -> Any:
    """What a model bound by the strict schema sends to mean `value`: every declared property, null if unset."""
    node = resolve(node, root)
    if isinstance(node, dict) and "anyOf" in node:
        for branch in node["anyOf"]:
            candidate = sent_strictly(value, branch, root, validator)
            if validator.evolve(schema=branch).is_valid(candidate):
                return candidate
        return value
    if isinstance(value, dict) and isinstance(node, dict) and "properties" in node:
        return {key: sent_strictly(value[key], schema, root, validator) if key in value else None
                for key, schema in node["properties"].items()}
    if isinstance(value, list) and isinstance(node, dict) and isinstance(node.get("items"), dict):
        return [sent_strictly(item, node["items"], root, validator) for item in value]
    return value


def refuse(uri: str) -> Any:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def local_validator(schema: dict[str, Any]) -> Any:
    """The test's own oracle: jsonschema 2020-12, references resolved inside `schema` only."""
    return Draft202012Validator(schema, registry=Registry(retrieve=refuse))  # type: ignore[call-arg]


def original_validator(schema: dict[str, Any]) -> Any:
    return local_validator(schema)


@SETTINGS
@given(schema=documents(), samples=st.lists(arguments, min_size=4, max_size=8))
def test_strict_conversion_keeps_the_meaning_or_refuses(schema: dict[str, Any], samples: list[dict[str, Any]],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with no_outside_access(monkeypatch) as attempts:
        result = converted(to_strict_schema, schema, StrictSchemaError)
        if not isinstance(result, StrictSchemaError):
            assert strict_violations(result) == [], json.dumps(result)
            strict = local_validator(result)
            original = original_validator(schema)
            checker = ArgumentChecker(schema)
            for sample in samples:
                for candidate in (sample, sent_strictly(sample, result, result, strict)):
                    if strict.is_valid(candidate):  # never looser
                        assert original.is_valid(checker.restore(candidate)), (candidate, json.dumps(result))
                if original.is_valid(sample):  # nothing valid lost
                    sent = sent_strictly(sample, result, result, strict)
                    assert strict.is_valid(sent), (sample, sent, json.dumps(result))
                    assert original.is_valid(checker.restore(sent)), (sample, sent)
    assert attempts == []


@SETTINGS
@given(schema=documents(), samples=st.lists(arguments, min_size=4, max_size=8))
def test_gemini_conversion_keeps_every_valid_value_or_refuses(schema: dict[str, Any], samples: list[dict[str, Any]],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with no_outside_access(monkeypatch) as attempts:
        result = converted(to_gemini_schema, schema, GeminiSchemaError)
        if result is not None and not isinstance(result, GeminiSchemaError):
            assert gemini_schema_problems(result) == [], json.dumps(result)
            readable = local_validator(gemini_to_json_schema(result))
            original = original_validator(schema)
            text = json.dumps(result)
            lossless = ("additionalProperties" not in json.dumps(schema) and "not expanded" not in text
                        and "One of:" not in text and "Must be" not in text and "A JSON object" not in text)
            for sample in samples:
                if original.is_valid(sample):
                    assert readable.is_valid(sample), (sample, text)
                elif lossless:
                    assert not readable.is_valid(sample), (sample, text)
    assert attempts == []


@SETTINGS
@given(schema=documents(external=True))
def test_an_external_reference_is_refused_and_never_resolved(schema: dict[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with no_outside_access(monkeypatch) as attempts:
        for convert, error in ((to_strict_schema, StrictSchemaError), (to_gemini_schema, GeminiSchemaError)):
            result = converted(convert, schema, error)
            if not isinstance(result, error):  # only when the reference is unreachable from the arguments
                assert not any(ref in json.dumps(result) for ref in EXTERNAL)
        with contextlib.suppress(SchemaConversionError):
            ArgumentChecker(schema).problems({"a": 1, "b": "x", "c": None})
    assert attempts == []


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])
@given(schema=deep_documents())
def test_deep_nesting_converts_or_is_refused_within_budget(schema: dict[str, Any]) -> None:
    for convert, error in ((to_strict_schema, StrictSchemaError), (to_gemini_schema, GeminiSchemaError)):
        converted(convert, schema, error)
    with contextlib.suppress(SchemaConversionError):
        checker = ArgumentChecker(schema)
        checker.problems({"root": [[{"n": 1}]]})
