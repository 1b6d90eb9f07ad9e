"""A model's tool-call arguments on their way to an MCP server: parsed, restored from strict mode, validated.

    checker = ArgumentChecker(tool["inputSchema"])
    arguments = checker.check(parse_arguments('{"ticker": "AAPL", "period": null}'))   # -> {"ticker": "AAPL"}

- `parse_arguments` takes what the vendor sent (a JSON string from OpenAI, an object from Anthropic and
  Gemini) and insists on one JSON object.
- `ArgumentChecker.restore` undoes the strict-mode mapping: a null for a property the tool marks optional
  means "not given" and is dropped, at any depth (through `$ref`, `anyOf`, arrays), so the server applies
  its default; unless the property's own schema accepts null and its default is not null, where null may
  mean something of its own (clear a value) and is kept.
- `ArgumentChecker.check` restores, then validates against the tool's input schema (JSON Schema, with
  format checks) and raises `ArgumentError` listing every problem by path, in words a model can act on.

Uses `jsonschema` (the maintained JSON Schema validator) through `_schema_walk`: the schema is inspected
first and references are resolved inside it only, never fetched or read from a file (the constructor
raises SchemaConversionError for a schema it will not read). Must not import the client or vendor modules.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from jsonschema import ValidationError  # type: ignore[import-untyped]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

from .._errors import MCPKitError
from ._schema_document import SchemaConversionError, SchemaDocument, type_of
from ._schema_walk import inspect_schema, local_validator

MAX_PROBLEMS = 8
MAX_DEPTH = 64  # schema levels `restore` follows
MAX_VALUE_DEPTH = 64  # levels of nesting in the arguments


class ArgumentError(MCPKitError, ValueError):
    """The arguments cannot be sent: the message says why and what is expected."""


def parse_arguments(raw: Any) -> dict[str, Any]:
    """The arguments as a dict: from a JSON text (OpenAI) or an object (Anthropic, Gemini)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    value = raw
    if isinstance(raw, str | bytes):
        try:
            value = json.loads(raw, parse_constant=_refuse_constant)
        except RecursionError:
            raise ArgumentError(
                f"The arguments nest too deeply; at most {MAX_VALUE_DEPTH} levels are accepted."
            ) from None
        except ValueError as exc:
            where = (
                f" (line {exc.lineno}, column {exc.colno}: {exc.msg})" if isinstance(exc, json.JSONDecodeError) else ""
            )
            raise ArgumentError(f"The arguments are not valid JSON{where}. Send one JSON object, "
                                'for example {"name": "value"}.') from None
    if not isinstance(value, Mapping):
        raise ArgumentError(f"The arguments must be a JSON object (named parameters), not {type_of(value)}.")
    check_json_value(value)
    return dict(value)


def check_json_value(value: Any) -> None:
    """Raise ArgumentError unless `value` is JSON that can be sent on: at most MAX_VALUE_DEPTH levels deep,
    text that is valid Unicode (no lone surrogate), finite numbers. Walks without recursion."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "arguments")]
    while stack:
        item, depth, path = stack.pop()
        if depth > MAX_VALUE_DEPTH:
            raise ArgumentError(f"The arguments nest more than {MAX_VALUE_DEPTH} levels deep (at {path}); "
                                "send a flatter value.")
        if isinstance(item, str):
            _check_text(item, path)
        elif isinstance(item, bool) or item is None or isinstance(item, int):
            continue
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ArgumentError(f"{path}: {item} is not a JSON number; send a finite number.")
        elif isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise ArgumentError(f"{path}: the key {key!r} is not text; JSON object keys are strings.")
                _check_text(key, f"{path} (a key)")
                stack.append((child, depth + 1, f"{path}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((child, depth + 1, f"{path}[{index}]") for index, child in enumerate(item))
        else:
            raise ArgumentError(f"{path}: a {type(item).__name__} is not a JSON value.")


def _check_text(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ArgumentError(f"{path}: the text holds a lone surrogate ({text[exc.start]!r} at position {exc.start}), "
                            "which is not valid Unicode; send the character itself or leave it out.") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class ArgumentChecker:
    """Restores and validates arguments for one tool's input schema."""

    def __init__(self, schema: Mapping[str, Any] | None) -> None:
        """Raises SchemaConversionError when `schema` is one the bridge does not read (see `_schema_walk`)."""
        self.schema: dict[str, Any] = dict(schema or {"type": "object"})
        inspect_schema(self.schema)
        self.validator = local_validator(self.schema, check_formats=True)
        self.document = SchemaDocument(self.schema)

    def check(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The restored arguments, or ArgumentError naming each problem."""
        restored = self.restore(arguments)
        problems = self.problems(restored)
        if problems:
            listed = "\n".join(f"- {problem}" for problem in problems)
            raise ArgumentError(f"The arguments do not match the tool's input schema:\n{listed}\n"
                                "Correct them and call the tool again.")
        return restored

    def problems(self, arguments: Any) -> list[str]:
        try:
            errors = sorted(self.validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path])
        except RecursionError:
            raise ArgumentError("The arguments nest too deeply to be checked against the tool's input schema; "
                                "send a flatter value.") from None
        lines = [f"{_path(error) or 'arguments'}: {_message(error)}" for error in errors[:MAX_PROBLEMS]]
        if len(errors) > MAX_PROBLEMS:
            lines.append(f"... and {len(errors) - MAX_PROBLEMS} more")
        return lines

    def restore(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """`arguments` with strict mode's nulls for omitted optional properties dropped."""
        restored = self._restore(dict(arguments), self.schema, 0)
        return restored if isinstance(restored, dict) else dict(arguments)

    # ------------------------------------------------------------------ internals

    def _accepts(self, schema: Any, value: Any) -> bool:
        return bool(self.validator.evolve(schema=schema).is_valid(value))

    def _restore(self, value: Any, node: Any, depth: int) -> Any:
        if not isinstance(node, Mapping) or depth > MAX_DEPTH:
            return value
        if "$ref" in node:
            try:
                target = self.document.at(self.document.ref_target(node["$ref"], ""))
            except (SchemaConversionError, KeyError):
                return value
            value = self._restore(value, target, depth + 1)
        for part in node.get("allOf") or []:
            value = self._restore(value, part, depth + 1)
        for keyword in ("anyOf", "oneOf"):
            for branch in node.get(keyword) or []:
                candidate = self._restore(value, branch, depth + 1)
                if self._accepts(branch, candidate):
                    value = candidate
                    break
        properties = node.get("properties")
        if isinstance(value, dict) and isinstance(properties, Mapping):
            required = set(node.get("required") or [])
            kept: dict[str, Any] = {}
            for key, item in value.items():
                schema = properties.get(key)
                if schema is None:
                    kept[key] = item
                elif item is None and key not in required and (_defaults_to_null(schema)
                                                                or not self._accepts(schema, None)):
                    continue  # strict mode's way of leaving it out
                else:
                    kept[key] = self._restore(item, schema, depth + 1)
            value = kept
        items = node.get("items")
        if isinstance(value, list) and isinstance(items, Mapping):
            value = [self._restore(item, items, depth + 1) for item in value]
        return value


def _defaults_to_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and "default" in schema and schema["default"] is None


def _path(error: ValidationError) -> str:
    """`edits[0].oldText`: where in the arguments the problem is."""
    text = ""
    for part in error.absolute_path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _message(error: ValidationError) -> str:
    """The validator's message; for a union, the message of the one branch that matters when there is one."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        relevant = [e for e in error.context if not (e.validator == "type" and e.validator_value == "null")]
        branches = {e.relative_schema_path[0] for e in relevant if e.relative_schema_path}
        best = best_match(relevant or error.context)
        if len(branches) == 1 and best is not None:  # `X | None`: say what is wrong with X
            return _message(best)
        return f"{error.message} (for example: {best.message})" if best is not None else error.message
    return error.message
