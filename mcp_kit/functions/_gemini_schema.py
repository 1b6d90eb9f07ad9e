"""Gemini function declarations take a select subset of the OpenAPI 3.0 Schema object, not JSON Schema.

    to_gemini_schema({"type": "object", "properties": {"n": {"type": ["integer", "null"], "default": 4}}})
    -> {"type": "OBJECT", "properties": {"n": {"type": "INTEGER", "nullable": true, "description": "Default: 4."}}}

The subset (Gemini API `Schema`): type (one of STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT), format,
description, nullable, enum (strings), properties, required, items, minItems/maxItems, minLength/maxLength,
pattern, minimum/maximum, minProperties/maxProperties, anyOf. So:
- `$ref`/`$defs` are inlined (the Developer API has no references); a recursive reference is cut where
  it recurs, leaving a value of any shape with a description saying so;
- `null` in a type or an `anyOf` becomes `nullable: true`; several types become `anyOf`; `oneOf` becomes
  `anyOf`; `allOf` is merged; `const` becomes a one-value enum;
- enums of strings stay enums (`format: enum`), integer enums use Gemini's string form, other enums and
  everything the subset lacks (`default`, `examples`, `exclusiveMinimum`, `multipleOf`, `uniqueItems`,
  formats other than date-time) move into the description; `additionalProperties`, `title` are dropped;
- an object without properties is sent as a value of any shape (Gemini rejects an OBJECT without
  properties), and a tool without parameters gets no `parameters` at all.

Every schema is first checked by `_schema_walk` (local references only, no reference cycle without
nesting, size and depth budgets), and the conversion runs within that module's budgets.

Must not import anything from mcp_kit but `schema_document` and `_schema_walk`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._schema_document import ANNOTATIONS, JSON_TYPES, SchemaConversionError, child, declared_types, show
from ._schema_walk import SchemaWalker

GEMINI_TYPES = {"string": "STRING", "number": "NUMBER", "integer": "INTEGER", "boolean": "BOOLEAN",
                "array": "ARRAY", "object": "OBJECT"}
FORMATS = {"STRING": {"date-time"}, "NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64"}}
KEPT = {"STRING": ("pattern", "minLength", "maxLength"), "NUMBER": ("minimum", "maximum"),
        "INTEGER": ("minimum", "maximum"), "ARRAY": ("minItems", "maxItems"),
        "OBJECT": ("minProperties", "maxProperties"), "BOOLEAN": ()}
MAX_INLINE_DEPTH = 32


class GeminiSchemaError(SchemaConversionError):
    """A part of the schema has no equivalent in Gemini's schema subset."""


def to_gemini_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Gemini `parameters` for a tool input `schema`; None when the tool takes no parameters."""
    converter = _GeminiConverter(schema)  # checks the schema first (a JSON object, local references, budgets)
    root = {k: v for k, v in schema.items() if k not in ("$defs", "definitions", "$schema", "$id")}
    try:
        out = converter.convert(root, "")
    except RecursionError:  # the walker's budgets stop well before; this is the last line of defence
        raise GeminiSchemaError("", "nests too deeply to convert") from None
    if out.get("type") != "OBJECT" and "anyOf" not in out and out.get("properties") is None:
        if declared_types(root) in ([], ["object"]):
            return None  # an object without properties: no parameters
        raise GeminiSchemaError("", "the arguments must be an object")
    if out.get("type") != "OBJECT":
        raise GeminiSchemaError("", "the arguments must be one object, not a union")
    return out


class _GeminiConverter(SchemaWalker):
    error = GeminiSchemaError

    def __init__(self, root: Mapping[str, Any]) -> None:
        super().__init__(root)
        self.expanding: list[str] = []

    def convert_reference(self, node: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        if set(rest) - ANNOTATIONS:
            return self.convert({"allOf": [{"$ref": node["$ref"]}, rest]}, pointer)
        target = self.doc.ref_target(node["$ref"], pointer)
        if target in self.expanding or len(self.expanding) >= MAX_INLINE_DEPTH:
            name = target.rsplit("/", 1)[-1] or "the arguments"
            return {"description": f"A nested {name}, with the same structure as the enclosing one "
                                   "(recursion is not expanded further)."}
        self.expanding.append(target)
        try:
            return self.convert(self.doc.at(target), target)
        finally:
            self.expanding.pop()

    def convert_union(self, node: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        keyword = "anyOf" if "anyOf" in node else "oneOf"
        shared = {k: v for k, v in node.items() if k not in ANNOTATIONS and k not in ("anyOf", "oneOf")}
        branches: list[dict[str, Any]] = []
        nullable = False
        for index, branch in enumerate(node[keyword]):
            if shared and isinstance(branch, Mapping):
                branch = self.with_shared(shared, branch, child(pointer, keyword, index))
            if isinstance(branch, Mapping) and declared_types(branch) == ["null"]:
                nullable = True
                continue
            converted = self.convert(branch, child(pointer, keyword, index))
            nullable = nullable or bool(converted.pop("nullable", False))
            parts = converted["anyOf"] if set(converted) == {"anyOf"} else [converted]
            branches.extend(part for part in parts if part not in branches)
        out: dict[str, Any] = dict(branches[0]) if len(branches) == 1 else {"anyOf": branches} if branches else {}
        if nullable:
            out["nullable"] = True
        return out

    def convert_typed(self, node: Mapping[str, Any], pointer: str, notes: list[str]) -> dict[str, Any]:
        types = declared_types(node)
        unknown = [t for t in types if t not in JSON_TYPES]
        if unknown:
            raise GeminiSchemaError(pointer, f"unknown type {unknown[0]!r}")
        nullable = "null" in types
        types = [t for t in types if t != "null"]
        if not types:
            return {"nullable": True} if nullable else {}
        if len(types) > 1:
            out: dict[str, Any] = {"anyOf": [self.convert_typed({**node, "type": t}, pointer, notes) for t in types]}
        else:
            out = self.convert_single(node, pointer, GEMINI_TYPES[types[0]], notes)
        if nullable:
            out["nullable"] = True
        return out

    def convert_single(self, node: Mapping[str, Any], pointer: str, kind: str, notes: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": kind}
        values = (
            [node["const"]] if "const" in node else node.get("enum") if isinstance(node.get("enum"), list) else None
        )
        if values is not None:
            self.enum(out, kind, values, notes)
        fmt = node.get("format")
        if isinstance(fmt, str) and "enum" not in out:
            if fmt in FORMATS.get(kind, ()):
                out["format"] = fmt
            else:
                notes.append(f"Format: {fmt}.")
        out.update({k: node[k] for k in KEPT[kind] if k in node})
        for key, sentence in (("exclusiveMinimum", "Greater than {}."), ("exclusiveMaximum", "Less than {}."),
                              ("multipleOf", "A multiple of {}.")):
            if key in node:
                notes.append(sentence.format(node[key]))
        if kind == "ARRAY":
            if node.get("uniqueItems"):
                notes.append("Items must be unique.")
            items = node.get("items")
            if isinstance(items, list) or "prefixItems" in node:
                positions = items if isinstance(items, list) else node["prefixItems"]
                out["items"] = self.convert({"anyOf": positions}, child(pointer, "prefixItems"))
                notes.append(f"Exactly {len(positions)} items, in order.")
            else:
                out["items"] = self.convert(items if items is not None else {}, child(pointer, "items"))
        if kind == "OBJECT":
            return self.convert_object(node, pointer, out, notes)
        return out

    def convert_object(self, node: Mapping[str, Any], pointer: str, out: dict[str, Any],
                       notes: list[str]) -> dict[str, Any]:
        properties = node.get("properties") or {}
        if not properties:  # Gemini rejects an OBJECT without properties: say it in words instead
            extra = node.get("additionalProperties")
            notes.append("A JSON object" + (" (any keys)." if extra is not False else "."))
            return {}
        out["properties"] = {name: self.convert(schema, child(pointer, "properties", name))
                             for name, schema in properties.items()}
        required = [name for name in node.get("required") or [] if name in properties]
        if required:
            out["required"] = required
        return out

    @staticmethod
    def enum(out: dict[str, Any], kind: str, values: list[Any], notes: list[str]) -> None:
        present = [v for v in values if v is not None]
        if None in values:
            out["nullable"] = True
        if kind == "STRING" and all(isinstance(v, str) for v in present):
            out.update(format="enum", enum=present)
        elif kind == "INTEGER" and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            out.update(format="enum", enum=[str(v) for v in present])
        elif len(present) == 1:
            notes.append(f"Must be {show(present[0])}.")
        else:
            notes.append(f"One of: {', '.join(show(v) for v in present)}.")
