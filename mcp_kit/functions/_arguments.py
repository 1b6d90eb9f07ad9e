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

Uses `jsonschema` (the maintained JSON Schema validator). Must not import the client or vendor modules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

from .._errors import MCPKitError
from ._schema_document import SchemaConversionError, SchemaDocument, type_of

MAX_PROBLEMS = 8
MAX_DEPTH = 64


class ArgumentError(MCPKitError, ValueError):
    """The arguments cannot be sent: the message says why and what is expected."""


def parse_arguments(raw: Any) -> dict[str, Any]:
    """The arguments as a dict: from a JSON text (OpenAI) or an object (Anthropic, Gemini)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    value = raw
    if isinstance(raw, str | bytes):
        try:
            value = json.loads(raw)
        except ValueError as exc:
            where = f" (line {exc.lineno}, column {exc.colno}: {exc.msg})" if isinstance(exc, json.JSONDecodeError) else ""
            raise ArgumentError(f"The arguments are not valid JSON{where}. Send one JSON object, "
                                'for example {"name": "value"}.') from None
    if not isinstance(value, Mapping):
        raise ArgumentError(f"The arguments must be a JSON object (named parameters), not {type_of(value)}.")
    return dict(value)


class ArgumentChecker:
    """Restores and validates arguments for one tool's input schema."""

    def __init__(self, schema: Mapping[str, Any] | None) -> None:
        self.schema: dict[str, Any] = dict(schema or {"type": "object"})
        cls = validators.validator_for(self.schema, default=Draft202012Validator)
        self.validator = cls(self.schema, format_checker=cls.FORMAT_CHECKER)
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
        errors = sorted(self.validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path])
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
