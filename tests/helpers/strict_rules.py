"""OpenAI strict mode's rules, checked independently of the converter (from OpenAI's structured outputs
documentation: supported keywords, objects closed with every property required, no keyword beside $ref,
a root object that is not a union, and the documented size limits)."""

from __future__ import annotations

from typing import Any

ALLOWED = {"type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
           "description", "$ref", "$defs", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
           "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}


def strict_violations(schema: dict[str, Any]) -> list[str]:
    """Every way `schema` breaks strict mode's rules (empty when it follows them)."""
    problems: list[str] = []
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("root: must be an object, not a union")
    defs = schema.get("$defs", {})
    totals = {"properties": 0, "enum": 0}

    def walk(node: Any, path: str, depth: int) -> None:
        if not isinstance(node, dict):
            problems.append(f"{path}: not a schema object")
            return
        for key in node:
            if key not in ALLOWED:
                problems.append(f"{path}: keyword {key!r} is not supported")
        if "$ref" in node:
            if set(node) != {"$ref"}:
                problems.append(f"{path}: keywords beside $ref")
            ref = node["$ref"]
            if ref != "#" and not (ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in defs):
                problems.append(f"{path}: $ref {ref} does not resolve")
            return
        kinds = node.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds or []
        if "anyOf" not in node and not kinds:
            problems.append(f"{path}: no type")
        for kind in kinds:
            if kind not in TYPES:
                problems.append(f"{path}: unknown type {kind}")
        if "format" in node and node["format"] not in FORMATS:
            problems.append(f"{path}: format {node['format']} unsupported")
        if "object" in kinds:
            depth += 1
            properties = node.get("properties")
            if not isinstance(properties, dict):
                problems.append(f"{path}: object without properties")
                properties = {}
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties must be false")
            if sorted(node.get("required", [])) != sorted(properties):
                problems.append(f"{path}: every property must be required")
            totals["properties"] += len(properties)
            for name, sub in properties.items():
                walk(sub, f"{path}/properties/{name}", depth)
        if depth > 10:
            problems.append(f"{path}: more than 10 levels of nesting")
        if "array" in kinds:
            if "items" not in node:
                problems.append(f"{path}: array without items")
            else:
                walk(node["items"], f"{path}/items", depth)
        totals["enum"] += len(node.get("enum", []))
        for index, branch in enumerate(node.get("anyOf", [])):
            walk(branch, f"{path}/anyOf/{index}", depth)

    walk(schema, "", 0)
    for name, sub in defs.items():
        walk(sub, f"/$defs/{name}", 0)
    if totals["properties"] > 5000:
        problems.append("more than 5000 properties")
    if totals["enum"] > 1000:
        problems.append("more than 1000 enum values")
    return problems
