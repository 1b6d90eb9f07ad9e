"""Whether a document is a valid JSON Schema of its draft: the check `inspect_schema` makes first, made fast.

The 2020-12 metaschema is eight documents: a root applying seven vocabulary metaschemas (an `allOf` of
references), each of which reaches every subschema through `$dynamicRef: "#meta"`. jsonschema resolves those
references again for every subschema of the document it checks (about a dozen lookups, each a URL join), and
that was most of the time the bridge spent on a tool schema: 20 ms for a small one.

The vocabularies describe disjoint keywords, and a checked document's `$dynamicRef` always lands on the 2020-12
root (nothing extends the metaschema here). So one document with the union of their `properties` and
`$defs`, recursing with `$ref: "#"`, accepts and refuses exactly what the published metaschema does, with
the same errors at the same places. `checker_for` builds that union once, from the copy jsonschema ships
(nothing is fetched); any other draft is checked against its own published metaschema.

Must not import anything from mcp_kit.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema_specifications import REGISTRY as SPECIFICATIONS  # type: ignore[import-untyped]
from referencing import Registry

NOTHING: Registry[Any] = Registry()  # the union's references are all local: it needs no other document

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_VOCABULARY_PREFIX = "https://json-schema.org/draft/2020-12/"


def checker_for(cls: Any) -> Any:
    """A validator of documents of `cls`'s draft (a jsonschema Validator class) against its metaschema."""
    if cls is Draft202012Validator:
        union = _union_checker()
        if union is not None:
            return union
    meta = validators.validator_for(cls.META_SCHEMA, default=cls)
    return meta(cls.META_SCHEMA, registry=SPECIFICATIONS, format_checker=meta.FORMAT_CHECKER)


@functools.cache
def _union_checker() -> Any:
    union = union_metaschema()
    if union is None:
        return None
    return Draft202012Validator(union, registry=NOTHING, format_checker=Draft202012Validator.FORMAT_CHECKER)


def union_metaschema() -> dict[str, Any] | None:
    """The 2020-12 metaschema as one document (see the module docstring); None if the shipped copy is shaped
    otherwise than the union relies on (then the published documents are used as they are)."""
    root = SPECIFICATIONS.contents(DRAFT_2020_12)
    documents = [root, *(SPECIFICATIONS.contents(_VOCABULARY_PREFIX + part["$ref"]) for part in root["allOf"])]
    union: dict[str, Any] = {"type": ["object", "boolean"], "properties": {}, "$defs": {}}
    for document in documents:
        if document.get("type") != ["object", "boolean"] or set(document) - _CARRIED - {"properties", "$defs"}:
            return None
        for key in ("properties", "$defs"):
            part = document.get(key, {})
            if set(part) & set(union[key]):
                return None
            static = _static(part)
            if static is None:
                return None
            union[key].update(static)
    return union


_CARRIED = frozenset({"$schema", "$id", "$vocabulary", "$dynamicAnchor", "$comment", "title", "type", "allOf"})


def _static(node: Any) -> Any:
    """`node` with `$dynamicRef: "#meta"` as `$ref: "#"` and references into a vocabulary's `$defs` made local;
    None if it holds another kind of reference."""
    if isinstance(node, list):
        items = [_static(item) for item in node]
        return None if any(item is None for item in items) else items
    if not isinstance(node, Mapping):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$dynamicRef" and value == "#meta":
            result["$ref"] = "#"
        elif key == "$ref" and isinstance(value, str):
            local = "#" + value.partition("#")[2]
            if not local.startswith("#/$defs/"):
                return None
            result["$ref"] = local
        elif isinstance(key, str) and key.startswith("$dynamic") and isinstance(value, str):
            return None
        else:
            converted = _static(value)
            if converted is None:
                return None
            result[key] = converted
    return result
