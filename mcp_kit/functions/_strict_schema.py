"""OpenAI strict mode: any tool input schema to one that `"strict": true` accepts, with the same meaning.

    to_strict_schema({"type": "object", "properties": {"n": {"type": "integer", "default": 4}}})
    -> {"type": "object", "properties": {"n": {"type": ["integer", "null"],
        "description": "Default: 4. null: use the default."}}, "required": ["n"], "additionalProperties": false}

What strict mode demands, and what we do about it:
- every object `additionalProperties: false` and every property in `required`: optional properties become
  required and nullable (a union with null); `restore_omitted` (arguments.py) turns those nulls back into
  omissions before the call, so the server applies its own defaults;
- only its keyword subset: `default`, `examples`, `minLength`/`maxLength`, unsupported formats and the like
  move into the description; `title` and other annotations are dropped; `oneOf` becomes `anyOf`, `allOf`
  is merged, `definitions` become `$defs`, and any local `$ref` (recursion included) is kept as a reference;
- a root that is an object, not a union; at most 5,000 properties, 10 levels of object nesting, 1,000 enum
  values and 120,000 characters of names and enum/const values (OpenAI's documented limits).
What cannot be said strictly (a free-form object or map, an untyped value, a tuple, a remote `$ref`)
raises `StrictSchemaError` naming its JSON Pointer.

Every schema is first checked by `_schema_walk` (local references only, no reference cycle without
nesting, size and depth budgets), and the conversion runs within that module's budgets.

Must not import anything from mcp_kit but `schema_document` and `_schema_walk`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._schema_document import (
    ANNOTATIONS,
    JSON_TYPES,
    SchemaConversionError,
    annotation_notes,
    child,
    declared_types,
    escape_token,
    join_description,
)
from ._schema_walk import SchemaWalker, local_validator

SUPPORTED_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
ARRAY_KEYWORDS = ("minItems", "maxItems")
MAX_PROPERTIES = 5_000
MAX_NESTING = 10
MAX_ENUM_VALUES = 1_000
MAX_TOTAL_CHARS = 120_000
LARGE_ENUM = 250
MAX_LARGE_ENUM_CHARS = 15_000
# Keywords whose constraint is left to the server (they narrow, never widen, what is valid).
DESCRIBED_ONLY = frozenset({"not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies",
                            "propertyNames", "contains", "minContains", "maxContains", "unevaluatedProperties",
                            "unevaluatedItems"})


class StrictSchemaError(SchemaConversionError):
    """A part of the schema has no equivalent in OpenAI strict mode."""


def to_strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the tool input `schema` that OpenAI strict mode accepts; raises StrictSchemaError."""
    try:
        result = _StrictConverter(schema).convert_root()
    except RecursionError:  # the walker's budgets stop well before; this is the last line of defence
        raise StrictSchemaError("", "nests too deeply to convert") from None
    check_strict_limits(result)
    return result


class _StrictConverter(SchemaWalker):
    error = StrictSchemaError

    def __init__(self, root: Mapping[str, Any]) -> None:
        super().__init__(root)
        self.null_check = local_validator(root)
        self.def_names: dict[str, str] = {}  # target pointer -> name under $defs
        self.defs: dict[str, dict[str, Any]] = {}
        self.pending: list[str] = []
        self.inlining: list[str] = []  # pointers of references being inlined (to stop at recursion)

    # ------------------------------------------------------------------ root and definitions

    def convert_root(self) -> dict[str, Any]:
        root = self.doc.root
        node: dict[str, Any] = {k: v for k, v in root.items() if k not in ("$defs", "definitions", "$schema", "$id")}
        pointer = ""
        while "$ref" in node:  # a chain of references to the arguments' object (cycles were refused before)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if set(rest) - ANNOTATIONS:  # `{"$ref": ..., "properties": ...}`: both hold
                node = self.doc.merge_all_of({"allOf": [{"$ref": node["$ref"]}, rest]}, pointer)
                break
            pointer = self.doc.ref_target(node["$ref"], pointer)
            target = self.doc.at(pointer)
            if not isinstance(target, Mapping):
                raise StrictSchemaError(pointer, "the arguments must be an object")
            node = {**{k: v for k, v in target.items() if k not in ("$defs", "definitions", "$schema", "$id")}, **rest}
        if "allOf" in node:
            node = self.doc.merge_all_of(node, pointer)
        if "anyOf" in node or "oneOf" in node:
            raise StrictSchemaError(pointer, "the arguments are a union (anyOf/oneOf); strict mode needs one object "
                                             "at the root")
        if not node.get("properties") and "type" not in node:
            node["type"] = "object"
        if declared_types(node) != ["object"]:
            raise StrictSchemaError(
                pointer, f"the arguments must be an object, not {declared_types(node) or 'untyped'}"
            )
        out = self.convert_object(node, pointer, annotation_notes(node), at_root=True)
        while self.pending:
            target = self.pending.pop(0)
            self.defs[self.def_names[target]] = self.convert(self.doc.at(target), target)
        if self.defs:
            out["$defs"] = dict(sorted(self.defs.items()))
        return out

    def reference(self, target: str) -> str:
        """The `$ref` for a target pointer in the output: `#` for the root, else a name under `$defs`."""
        if target == "":
            return "#"
        if target not in self.def_names:
            tokens = target.split("/")
            name = tokens[-1] if len(tokens) == 3 and tokens[1] in ("$defs", "definitions") else "_".join(tokens[1:])
            base, counter = name, 2
            while name in self.def_names.values():
                name, counter = f"{base}_{counter}", counter + 1
            self.def_names[target] = name
            self.pending.append(target)
        return "#/$defs/" + escape_token(self.def_names[target])

    # ------------------------------------------------------------------ any node

    def convert_any(self, node: Any, pointer: str) -> dict[str, Any]:
        raise StrictSchemaError(pointer, "accepts any JSON value; strict mode needs a definite type here "
                                         "(give it a type, or export this tool without strict mode)")

    def describe(self, out: dict[str, Any], description: str | None) -> dict[str, Any]:
        if description and set(out) == {"$ref"}:
            return out  # strict mode allows nothing beside $ref; only a recursive reference gets here
        return super().describe(out, description)

    def convert_reference(self, node: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        constraints = {k: v for k, v in node.items() if k not in ANNOTATIONS and k != "$ref"}
        if constraints:  # `{"$ref": ..., "minItems": 1}` means both must hold
            return self.convert({"allOf": [{"$ref": node["$ref"]}, constraints]}, pointer)
        target = self.doc.ref_target(node["$ref"], pointer)
        documented = any(k in node for k in ("description", "default", "examples", "deprecated"))
        if not documented or target in self.inlining:
            return {"$ref": self.reference(target)}
        # Strict mode rejects keywords beside $ref: inline the definition so the description can stay.
        self.inlining.append(target)
        try:
            return self.convert(self.doc.at(target), target)
        finally:
            self.inlining.pop()

    def convert_union(self, node: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        keyword = "anyOf" if "anyOf" in node else "oneOf"
        shared = {k: v for k, v in node.items() if k not in ANNOTATIONS and k not in ("anyOf", "oneOf")}
        branches: list[dict[str, Any]] = []
        for index, branch in enumerate(node[keyword]):
            if shared and isinstance(branch, Mapping):
                branch = self.with_shared(shared, branch, child(pointer, keyword, index))
            converted = self.convert(branch, child(pointer, keyword, index))
            parts = converted["anyOf"] if set(converted) == {"anyOf"} else [converted]
            branches.extend(part for part in parts if part not in branches)
        return {"anyOf": branches}

    def convert_typed(self, node: Mapping[str, Any], pointer: str, notes: list[str]) -> dict[str, Any]:
        types = declared_types(node)
        unknown = [t for t in types if t not in JSON_TYPES]
        if unknown:
            raise StrictSchemaError(pointer, f"unknown type {unknown[0]!r}")
        if not types:
            raise StrictSchemaError(pointer, "has no type; strict mode needs one (string, number, integer, boolean, "
                                             "array, object or null)")
        structured = [t for t in types if t in ("object", "array")]
        if len(types) > 1 and structured:  # e.g. ["object", "null"]: one branch per type
            return {"anyOf": [self.convert_typed({**node, "type": t}, pointer, notes) for t in types]}
        kind = types[0]
        if kind == "object":
            return self.convert_object(node, pointer, notes)
        if kind == "array":
            return self.convert_array(node, pointer, notes)
        out: dict[str, Any] = {"type": types[0] if len(types) == 1 else types}
        for key in ("enum", "const"):
            if key in node:
                out[key] = node[key]
        if "string" in types:
            self.string_keywords(node, out, notes)
        if "number" in types or "integer" in types:
            out.update({k: node[k] for k in NUMBER_KEYWORDS if k in node})
        describe_unenforced(node, notes)
        return out

    # ------------------------------------------------------------------ by type

    def convert_object(self, node: Mapping[str, Any], pointer: str, notes: list[str], *,
                       at_root: bool = False) -> dict[str, Any]:
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties", True)
        if node.get("patternProperties"):
            raise StrictSchemaError(pointer, "has patternProperties (keys chosen by the caller), which strict mode "
                                             "cannot express: every key must be declared in properties")
        if isinstance(extra, Mapping) and extra != {}:
            raise StrictSchemaError(pointer, "is a map (additionalProperties with a schema: keys chosen by the "
                                             "caller), which strict mode cannot express; declare the keys as "
                                             "properties, or use an array of {key, value} objects")
        if not properties and extra is not False and not at_root:
            raise StrictSchemaError(pointer, "is a free-form object (no properties declared), which strict mode "
                                             "cannot express; declare its properties")
        required = set(node.get("required") or [])
        undeclared = sorted(required - set(properties))
        if undeclared:
            raise StrictSchemaError(pointer, f"requires property {undeclared[0]!r}, which it does not declare; strict "
                                             "mode closes every object, so it could never be given")
        out_properties: dict[str, Any] = {}
        for name, schema in properties.items():
            where = child(pointer, "properties", name)
            converted = self.convert(schema, where)
            if name not in required:
                converted = self.optional(converted, schema, where)
            out_properties[name] = converted
        out: dict[str, Any] = {"type": "object", "properties": out_properties, "required": list(out_properties),
                               "additionalProperties": False}
        for key, word in (("minProperties", "At least"), ("maxProperties", "At most")):
            if key in node:
                notes.append(f"{word} {node[key]} of these properties must be non-null.")
        describe_unenforced(node, notes)
        if at_root:  # elsewhere `convert` writes the description
            description = join_description(node.get("description"), notes)
            if description:
                out["description"] = description
        return out

    def optional(self, converted: dict[str, Any], original: Any, pointer: str) -> dict[str, Any]:
        """An optional property made required and nullable (unless it already accepts null)."""
        has_default = isinstance(original, Mapping) and original.get("default") is not None
        note = "null: use the default." if has_default else "Optional: null leaves it out."
        if self.null_check.evolve(schema=original).is_valid(None):  # null is already one of its values
            null_default = isinstance(original, Mapping) and "default" in original and original["default"] is None
            if null_default and set(converted) != {"$ref"}:  # null and "not given" mean the same here
                converted["description"] = join_description(converted.get("description"), [note])
            return converted
        description = join_description(converted.pop("description", None), [note])
        kind = converted.get("type")
        if isinstance(kind, str) and kind not in ("object", "array") and not ({"enum", "const"} & set(converted)):
            out = {**converted, "type": [kind, "null"]}
        elif set(converted) == {"anyOf"}:
            out = {"anyOf": [*converted["anyOf"], {"type": "null"}]}
        else:
            out = {"anyOf": [converted, {"type": "null"}]}
        out["description"] = description
        return out

    def convert_array(self, node: Mapping[str, Any], pointer: str, notes: list[str]) -> dict[str, Any]:
        if "prefixItems" in node or isinstance(node.get("items"), list):
            raise StrictSchemaError(pointer, "is a tuple (prefixItems: a type per position), which strict mode cannot "
                                             "express; use an array of one item type or an object")
        if "items" not in node or node["items"] is True or node["items"] == {}:
            raise StrictSchemaError(
                pointer, "is an array of anything (no items schema); strict mode needs the item type"
            )
        out: dict[str, Any] = {"type": "array", "items": self.convert(node["items"], child(pointer, "items"))}
        out.update({k: node[k] for k in ARRAY_KEYWORDS if k in node})
        if node.get("uniqueItems"):
            notes.append("Items must be unique.")
        describe_unenforced(node, notes)
        return out

    @staticmethod
    def string_keywords(node: Mapping[str, Any], out: dict[str, Any], notes: list[str]) -> None:
        if "pattern" in node:
            out["pattern"] = node["pattern"]
        fmt = node.get("format")
        if fmt in SUPPORTED_FORMATS:
            out["format"] = fmt
        elif fmt:
            notes.append(f"Format: {fmt}.")
        low, high = node.get("minLength"), node.get("maxLength")
        if low is not None and high is not None:
            notes.append(f"{low} to {high} characters." if low != high else f"Exactly {low} characters.")
        elif low is not None:
            notes.append(f"At least {low} characters.")
        elif high is not None:
            notes.append(f"At most {high} characters.")


def describe_unenforced(node: Mapping[str, Any], notes: list[str]) -> None:
    if DESCRIBED_ONLY & set(node):
        notes.append("Further constraints apply (checked when the tool is called).")


# ---------------------------------------------------------------------- limits


def check_strict_limits(schema: Mapping[str, Any]) -> None:
    """Raise StrictSchemaError when a converted schema exceeds OpenAI's documented strict-mode limits."""
    counts = {"properties": 0, "enum": 0, "chars": sum(len(name) for name in schema.get("$defs", {}))}
    _walk_limits(schema, "", 0, counts)
    if counts["properties"] > MAX_PROPERTIES:
        raise StrictSchemaError("", f"has {counts['properties']} object properties in all; strict mode allows at "
                                    f"most {MAX_PROPERTIES}")
    if counts["enum"] > MAX_ENUM_VALUES:
        raise StrictSchemaError("", f"has {counts['enum']} enum values in all; strict mode allows at most "
                                    f"{MAX_ENUM_VALUES}")
    if counts["chars"] > MAX_TOTAL_CHARS:
        raise StrictSchemaError("", f"its property names, definition names and enum/const values add up to "
                                    f"{counts['chars']} characters; strict mode allows at most {MAX_TOTAL_CHARS}")


def _walk_limits(node: Any, pointer: str, depth: int, counts: dict[str, int]) -> None:
    if isinstance(node, list):
        for index, item in enumerate(node):
            _walk_limits(item, child(pointer, index), depth, counts)
        return
    if not isinstance(node, Mapping):
        return
    if "properties" in node:
        depth += 1
        if depth > MAX_NESTING:
            raise StrictSchemaError(pointer, f"nests objects {depth} levels deep; strict mode allows at most "
                                             f"{MAX_NESTING}")
        counts["properties"] += len(node["properties"])
        counts["chars"] += sum(len(name) for name in node["properties"])
    values = node["enum"] if isinstance(node.get("enum"), list) else []
    counts["enum"] += len(values)
    strings = [v for v in values if isinstance(v, str)]
    if "const" in node and isinstance(node["const"], str):
        strings.append(node["const"])
    counts["chars"] += sum(len(s) for s in strings)
    if len(values) > LARGE_ENUM and sum(len(s) for s in strings) > MAX_LARGE_ENUM_CHARS:
        raise StrictSchemaError(pointer, f"an enum of {len(values)} values whose strings add up to more than "
                                         f"{MAX_LARGE_ENUM_CHARS} characters; strict mode allows that only up to "
                                         f"{LARGE_ENUM} values")
    for key, value in node.items():
        if key == "properties":
            for name, schema in value.items():
                _walk_limits(schema, child(pointer, "properties", name), depth, counts)
        elif key == "$defs":
            for name, schema in value.items():
                _walk_limits(schema, child(pointer, "$defs", name), 0, counts)
        elif key in ("items", "anyOf"):
            _walk_limits(value, child(pointer, key), depth, counts)


__all__ = ["StrictSchemaError", "check_strict_limits", "to_strict_schema"]
