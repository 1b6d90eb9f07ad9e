"""Checks against the vendors' own published request types (the official `openai`, `anthropic` and
`google-genai` packages): pydantic validates a dict against a TypedDict, and `unknown_keys` finds keys a
TypedDict does not declare (pydantic ignores those), at any depth."""

from __future__ import annotations

import collections.abc
import re
import types
import typing
from typing import Any

import typing_extensions
from pydantic import TypeAdapter

OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$")
# The Gemini Developer API's Schema fields (Vertex AI's extras, such as $ref, are not used).
GEMINI_SCHEMA_KEYS = {"type", "format", "description", "nullable", "enum", "properties", "required", "items",
                      "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
                      "minProperties", "maxProperties", "anyOf"}
GEMINI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}


def check_typed(typed_dict: Any, value: Any) -> None:
    """`value` validates as `typed_dict` and uses no key it does not declare."""
    TypeAdapter(typed_dict).validate_python(value)
    assert unknown_keys(typed_dict, value) == [], unknown_keys(typed_dict, value)


def unknown_keys(annotation: Any, value: Any, path: str = "") -> list[str]:
    options = _alternatives(annotation)
    if isinstance(value, dict):
        if any(_is_plain_mapping(option) for option in options):
            return []
        typed = [option for option in options if typing_extensions.is_typeddict(option) and _same_type(option, value)]
        if not typed:
            return [] if not any(typing_extensions.is_typeddict(o) for o in options) else [f"{path}: no type fits"]
        results = [_typed_dict_unknown(option, value, path) for option in typed]
        return [] if any(not r for r in results) else min(results, key=len)
    if isinstance(value, list):
        for option in options:
            origin = typing.get_origin(option)
            if origin in (list, collections.abc.Iterable, collections.abc.Sequence) and typing.get_args(option):
                item_type = typing.get_args(option)[0]
                return [problem for index, item in enumerate(value)
                        for problem in unknown_keys(item_type, item, f"{path}[{index}]")]
    return []


def _same_type(typed_dict: Any, value: dict[str, Any]) -> bool:
    """False when the TypedDict pins `type` to literals that `value["type"]` is not (a discriminated union)."""
    declared = typing_extensions.get_type_hints(typed_dict).get("type")
    literals = [arg for alt in _alternatives(declared) if typing.get_origin(alt) is typing.Literal
                for arg in typing.get_args(alt)] if declared is not None else []
    return not literals or "type" not in value or value["type"] in literals


def _typed_dict_unknown(typed_dict: Any, value: dict[str, Any], path: str) -> list[str]:
    hints = typing_extensions.get_type_hints(typed_dict)
    problems = [f"{path}.{key} is not a field of {typed_dict.__name__}" for key in value if key not in hints]
    for key, item in value.items():
        if key in hints:
            problems += unknown_keys(hints[key], item, f"{path}.{key}")
    return problems


def _alternatives(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [alt for arg in typing.get_args(annotation) for alt in _alternatives(arg)]
    return [annotation]


def _is_plain_mapping(annotation: Any) -> bool:
    return annotation in (dict, object) or typing.get_origin(annotation) in (dict, collections.abc.Mapping)


def gemini_schema_problems(schema: Any, path: str = "parameters") -> list[str]:
    """Keys outside the Gemini Developer API's Schema subset, and shapes it rejects."""
    if not isinstance(schema, dict):
        return [f"{path}: not an object"]
    problems = [f"{path}.{key}: not in Gemini's schema subset" for key in schema if key not in GEMINI_SCHEMA_KEYS]
    if "type" in schema and schema["type"] not in GEMINI_TYPES:
        problems.append(f"{path}.type: {schema['type']!r}")
    if schema.get("type") == "OBJECT" and not schema.get("properties"):
        problems.append(f"{path}: an OBJECT needs properties")
    if ("properties" in schema or "required" in schema) and schema.get("type") != "OBJECT":
        problems.append(f"{path}: properties only on OBJECT")
    if "items" in schema and schema.get("type") != "ARRAY":
        problems.append(f"{path}: items only on ARRAY")
    if schema.get("type") == "ARRAY" and "items" not in schema:
        problems.append(f"{path}: an ARRAY needs items")
    for name in schema.get("required", []):
        if name not in schema.get("properties", {}):
            problems.append(f"{path}.required: {name} is not a property")
    if "enum" in schema and not all(isinstance(v, str) for v in schema["enum"]):
        problems.append(f"{path}.enum: values must be strings")
    for name, sub in schema.get("properties", {}).items():
        problems += gemini_schema_problems(sub, f"{path}.properties.{name}")
    if "items" in schema:
        problems += gemini_schema_problems(schema["items"], f"{path}.items")
    for index, sub in enumerate(schema.get("anyOf", [])):
        problems += gemini_schema_problems(sub, f"{path}.anyOf[{index}]")
    return problems


def gemini_to_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A Gemini schema read back as JSON Schema, to check that valid arguments stay expressible."""
    out: dict[str, Any] = {}
    kind = schema.get("type")
    if kind:
        out["type"] = kind.lower()
    if "enum" in schema:
        out["enum"] = [int(v) for v in schema["enum"]] if kind == "INTEGER" else list(schema["enum"])
    for key in ("minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum", "required",
                "minProperties", "maxProperties"):
        if key in schema:
            out[key] = schema[key]
    if "properties" in schema:
        out["properties"] = {k: gemini_to_json_schema(v) for k, v in schema["properties"].items()}
    if "items" in schema:
        out["items"] = gemini_to_json_schema(schema["items"])
    if "anyOf" in schema:
        out["anyOf"] = [gemini_to_json_schema(s) for s in schema["anyOf"]]
    if schema.get("nullable"):
        out = {"anyOf": [out, {"type": "null"}]}
    return out
