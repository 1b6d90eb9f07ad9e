"""Reading one JSON Schema document: JSON Pointers, local `$ref`s, `allOf` merging, type inference.

Shared by the vendor schema converters (`strict_schema`, `gemini_schema`). Owns nothing vendor-specific
and must not import anything else from mcp_kit: it works on plain dicts.

    SchemaConversionError       -> a part of a schema cannot be expressed in the target dialect
    ├── StrictSchemaError       (strict_schema)
    └── GeminiSchemaError       (gemini_schema)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from .._errors import MCPKitError

JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
# Keywords that only document a schema: they never change which values it accepts.
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "example", "deprecated", "readOnly",
                         "writeOnly", "$comment", "$schema", "$id", "$anchor", "discriminator"})


class SchemaConversionError(MCPKitError, ValueError):
    """A part of a tool's input schema cannot be expressed for the target API.

    `pointer` is the RFC 6901 JSON Pointer of that part in the tool's input schema ("" is the root);
    `tool` is filled in by whoever knows which tool the schema belongs to.
    """

    def __init__(self, pointer: str, reason: str, tool: str | None = None) -> None:
        self.pointer = pointer
        self.reason = reason
        self.tool = tool
        super().__init__(reason)

    def __str__(self) -> str:
        where = f"#{self.pointer}" if self.pointer else "the root of the input schema"
        prefix = f"tool {self.tool!r}: " if self.tool else ""
        return f"{prefix}{where}: {self.reason}"


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def child(pointer: str, *tokens: str | int) -> str:
    """`pointer` extended by `tokens` (escaped)."""
    return pointer + "".join("/" + escape_token(str(token)) for token in tokens)


def show(value: Any) -> str:
    """A JSON value as the model reads it in a description."""
    return json.dumps(value, ensure_ascii=False)


class SchemaDocument:
    """One schema with its definitions; resolves local references by JSON Pointer."""

    def __init__(self, root: Any, error: type[SchemaConversionError] = SchemaConversionError) -> None:
        self.root = root
        self.error = error

    def at(self, pointer: str) -> Any:
        """The subschema at `pointer` (RFC 6901)."""
        node = self.root
        for raw in pointer.split("/")[1:] if pointer else []:
            token = unescape_token(raw)
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and token == str(int(token)) and int(token) < len(node):
                node = node[int(token)]
            else:
                raise KeyError(pointer)
        return node

    def ref_target(self, ref: Any, at: str) -> str:
        """The JSON Pointer a `$ref` found at `at` points to; only local references ("#...") are followed."""
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise self.error(at, f"$ref {ref!r} points outside this schema; only local references (#/$defs/...) "
                                 "can be followed")
        target = ref[1:]
        if target and not target.startswith("/"):
            raise self.error(
                at, f"$ref {ref!r} uses an anchor; only JSON Pointer references (#/$defs/...) are supported"
            )
        try:
            self.at(target)
        except KeyError:
            raise self.error(at, f"$ref {ref!r} points to nothing in this schema") from None
        return target

    def merge_all_of(self, node: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        """`node` with its `allOf` folded in: each part (references followed) merged into one schema.

        Objects merge their properties (a property two parts declare differently gets both schemas, as an
        allOf of its own) and required lists; other keywords must not conflict. Closed objects
        (`additionalProperties`) that another part adds properties to cannot be merged: the merged object
        would accept those properties, which the closed part refuses.
        """
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        closed: list[tuple[str, set[str]]] = []  # (pointer, its properties) of each part with additionalProperties
        if merged.get("additionalProperties", True) not in (True, {}):
            closed.append((pointer, set(merged.get("properties") or {})))
        for index, part in enumerate(node["allOf"]):
            part_pointer = child(pointer, "allOf", index)
            seen: set[str] = set()
            while isinstance(part, Mapping) and "$ref" in part:
                target = self.ref_target(part["$ref"], part_pointer)
                if target in seen:
                    raise self.error(part_pointer, "allOf refers to itself")
                seen.add(target)
                rest = {k: v for k, v in part.items() if k != "$ref"}
                part = {**self.at(target), **rest}
                part_pointer = target
            if part is True or part == {}:
                continue
            if part is False:
                raise self.error(part_pointer, "accepts no value at all")
            if not isinstance(part, Mapping):
                raise self.error(part_pointer, "allOf contains something that is not a schema")
            if "allOf" in part:
                part = self.merge_all_of(part, part_pointer)
            if part.get("additionalProperties", True) not in (True, {}):
                closed.append((part_pointer, set(part.get("properties") or {})))
            for key, value in part.items():
                if key == "properties":
                    properties = dict(merged.get("properties", {}))
                    for name, schema in value.items():
                        known = properties.get(name)
                        properties[name] = schema if known is None or known == schema else {"allOf": [known, schema]}
                    merged["properties"] = properties
                elif key == "required":
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
                elif key in ANNOTATIONS:
                    merged.setdefault(key, value)
                elif key in merged and merged[key] != value:
                    raise self.error(part_pointer, f"allOf combines conflicting {key!r} constraints, which cannot be "
                                                   "written as one schema")
                else:
                    merged[key] = copy.deepcopy(value)
        every_property = set(merged.get("properties") or {})
        for closed_pointer, own in closed:
            if every_property - own:
                extra = sorted(every_property - own)[0]
                raise self.error(
                    closed_pointer,
                    f"is a closed object (additionalProperties) inside an allOf whose other "
                    f"parts add property {extra!r}; merged into one object it would "
                    "accept what this part refuses",
                )
        return merged


def declared_types(node: Mapping[str, Any]) -> list[str]:
    """The JSON types a schema node admits: its `type`, else what `enum`/`const`/`properties`/`items` imply."""
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    values: list[Any] = []
    if "const" in node:
        values = [node["const"]]
    elif isinstance(node.get("enum"), list):
        values = node["enum"]
    if values:
        return list(dict.fromkeys(type_of(value) for value in values))
    if "properties" in node or "additionalProperties" in node or "required" in node:
        return ["object"]
    if "items" in node or "prefixItems" in node:
        return ["array"]
    if any(k in node for k in ("pattern", "minLength", "maxLength", "format")):
        return ["string"]
    if any(k in node for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return ["number"]
    return []


def type_of(value: Any) -> str:
    """The JSON Schema type name of a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def join_description(description: Any, notes: list[str]) -> str | None:
    """A description followed by notes, as sentences."""
    parts = [description.strip()] if isinstance(description, str) and description.strip() else []
    if parts and notes and not parts[0].endswith((".", "!", "?", ")")):
        parts[0] += "."
    parts.extend(notes)
    return " ".join(parts) or None


def annotation_notes(node: Mapping[str, Any]) -> list[str]:
    """What a node's default, examples and deprecation tell the model, as sentences for its description."""
    notes: list[str] = []
    if node.get("default") is not None:
        notes.append(f"Default: {show(node['default'])}.")
    examples = node.get("examples")
    if isinstance(examples, list) and examples:
        notes.append(f"Example{'s' if len(examples) > 1 else ''}: {', '.join(show(e) for e in examples[:3])}.")
    if node.get("deprecated"):
        notes.append("Deprecated.")
    return notes
