"""How far the bridge follows a tool input schema a server sent: local references only, bounded, cycle-safe.

One walker for every reader of a schema (the strict and Gemini converters, argument checking):

- `inspect_schema(root, error)` checks a whole document before anything else reads it, without recursion:
  at most MAX_NODES JSON values and MAX_JSON_DEPTH levels of nesting; a valid JSON Schema; every `$ref` a
  JSON Pointer into this document that lands on a schema (nothing is ever fetched or read from a file);
  no `$dynamicRef`/`$recursiveRef` and no `$id` below the root (both would change what a reference means);
  no cycle of references that never moves on to a nested value (`a: {"$ref": b}`, `b: {"allOf": [a]}`),
  which describes nothing; and at most MAX_UNFOLDED subschemas applied to one value once references are
  followed (a reference graph whose unfolding doubles at every level is refused, not expanded).
- `local_validator(schema)` builds a jsonschema Validator whose registry refuses to retrieve anything.
- `SchemaWalker` is the dispatch skeleton both converters share: `convert(node, pointer)` counts every step
  and level of nesting against a budget (MAX_CONVERT_STEPS, MAX_CONVERT_DEPTH) and hands each node to
  `convert_any`, `convert_reference`, the `allOf` merge, `convert_union` or `convert_typed`.

Every refusal is the caller's `SchemaConversionError` subclass, naming the JSON Pointer of the part.
Must not import anything from mcp_kit but `_schema_document` and `_metaschema`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped]
from referencing import Registry
from referencing.exceptions import NoSuchResource

from ._metaschema import checker_for
from ._schema_document import (
    ANNOTATIONS,
    SchemaConversionError,
    SchemaDocument,
    annotation_notes,
    child,
    join_description,
)

MAX_NODES = 50_000  # JSON values in one input schema
MAX_JSON_DEPTH = 100  # levels of JSON nesting (an object property is two: "properties", then its name)
MAX_UNFOLDED = 5_000  # subschemas applied to one value, references followed
MAX_CONVERT_STEPS = 20_000  # subschemas one conversion visits, inlined references included
MAX_CONVERT_DEPTH = 64  # nested subschemas one conversion follows, inlined references included

# Keywords whose value is one subschema, a list of them, or a map of names to them (every draft since 4).
ONE_SCHEMA = ("additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else",
              "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions")
# Of those, the ones applied to the same value as the schema holding them (the rest apply to a nested value).
SAME_VALUE = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies"})
UNSUPPORTED_REFERENCES = ("$dynamicRef", "$recursiveRef")


def refuse_retrieval(uri: str) -> NoReturn:
    """The registry's retrieve function: no reference outside the document is ever fetched or read."""
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


NO_RETRIEVAL: Registry[Any] = Registry(retrieve=refuse_retrieval)  # type: ignore[call-arg]


def local_validator(schema: Mapping[str, Any], *, check_formats: bool = False) -> Any:
    """A jsonschema Validator for `schema` (its `$schema` draft, else 2020-12) that resolves local references only."""
    cls = validators.validator_for(schema, default=Draft202012Validator)
    if check_formats:
        return cls(dict(schema), registry=NO_RETRIEVAL, format_checker=cls.FORMAT_CHECKER)
    return cls(dict(schema), registry=NO_RETRIEVAL)


# ---------------------------------------------------------------------- inspecting a document


def inspect_schema(root: Any, error: type[SchemaConversionError] = SchemaConversionError) -> None:
    """Raise `error` unless `root` is a tool input schema the bridge can read safely (see the module docstring)."""
    if not isinstance(root, Mapping):
        raise error("", "the input schema is not a JSON object")
    _check_size(root, error)
    checker = checker_for(validators.validator_for(root, default=Draft202012Validator))
    try:
        problem = best_match(checker.iter_errors(dict(root)))
    except RecursionError:
        raise error("", "nests too deeply to be checked") from None
    if problem is not None:
        raise error(_pointer(problem.absolute_path), f"is not a valid JSON Schema: {problem.message}")
    doc = SchemaDocument(root, error)
    edges = _schema_graph(doc, error)
    _check_same_value_cycles(edges, error)


def _check_size(root: Mapping[str, Any], error: type[SchemaConversionError]) -> None:
    stack: list[tuple[Any, int, str]] = [(root, 1, "")]
    count = 0
    while stack:
        node, depth, pointer = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise error("", f"has more than {MAX_NODES} JSON values; at most {MAX_NODES} are read")
        if depth > MAX_JSON_DEPTH:
            raise error(pointer, f"nests more than {MAX_JSON_DEPTH} levels deep; at most {MAX_JSON_DEPTH} are read")
        if isinstance(node, Mapping):
            stack.extend((value, depth + 1, child(pointer, key)) for key, value in node.items())
        elif isinstance(node, list | tuple):
            stack.extend((value, depth + 1, child(pointer, index)) for index, value in enumerate(node))


def _subschemas(node: Mapping[str, Any], pointer: str) -> Iterator[tuple[str, str, Any]]:
    """(keyword, pointer, subschema) for every subschema `node` holds directly."""
    for key in ONE_SCHEMA:
        if key in node and isinstance(node[key], Mapping | bool):
            yield key, child(pointer, key), node[key]
    for key in SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            for index, item in enumerate(node[key]):
                yield key, child(pointer, key, index), item
    for key in SCHEMA_MAPS:
        if isinstance(node.get(key), Mapping):
            for name, item in node[key].items():
                if key == "dependencies" and not isinstance(item, Mapping | bool):
                    continue  # a list of property names (draft 7's dependentRequired)
                yield key, child(pointer, key, name), item


def _schema_graph(doc: SchemaDocument, error: type[SchemaConversionError]) -> dict[str, list[str]]:
    """Every schema reachable from the root, by pointer, with the pointers of the schemas it applies to the same
    value (its `$ref` target, its allOf/anyOf/... branches); checks each reference on the way."""
    same_value: dict[str, list[str]] = {}
    pending = [""]
    while pending:
        pointer = pending.pop()
        if pointer in same_value:
            continue
        node = doc.at(pointer)
        same_value[pointer] = []
        if isinstance(node, bool):
            continue
        if not isinstance(node, Mapping):
            raise error(pointer, "is not a schema (a JSON object or true/false)")
        for keyword in UNSUPPORTED_REFERENCES:
            if keyword in node:
                raise error(pointer, f"uses {keyword}, which the bridge does not follow; use $ref to #/$defs/...")
        if pointer and "$id" in node:
            raise error(pointer, "declares its own $id (an embedded schema resource), which the bridge does not "
                                 "support; move it under $defs without $id")
        if "$ref" in node:
            target = doc.ref_target(node["$ref"], pointer)
            if not isinstance(doc.at(target), Mapping | bool):
                raise error(pointer, f"$ref {node['$ref']!r} points to something that is not a schema")
            same_value[pointer].append(target)
            pending.append(target)
        for keyword, where, _ in _subschemas(node, pointer):
            if keyword in ("$defs", "definitions"):
                continue  # definitions are read where something refers to them
            if keyword in SAME_VALUE:
                same_value[pointer].append(where)
            pending.append(where)
    return same_value


def _check_same_value_cycles(edges: Mapping[str, list[str]], error: type[SchemaConversionError]) -> None:
    """Refuse a cycle of schemas applied to one value, and an unfolding of more than MAX_UNFOLDED of them."""
    unfolded: dict[str, int] = {}
    on_path: set[str] = set()
    for start in edges:
        if start in unfolded:
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        on_path.add(start)
        while stack:
            pointer, next_index = stack[-1]
            targets = edges[pointer]
            if next_index < len(targets):
                stack[-1] = (pointer, next_index + 1)
                target = targets[next_index]
                if target in on_path:
                    raise error(pointer, f"refers back to #{target} without moving on to a nested value, so it "
                                         "never says what a value must be (a reference cycle)")
                if target not in unfolded:
                    on_path.add(target)
                    stack.append((target, 0))
                continue
            stack.pop()
            on_path.discard(pointer)
            size = 1 + sum(unfolded[target] for target in targets)
            if size > MAX_UNFOLDED:
                raise error(pointer, f"applies more than {MAX_UNFOLDED} subschemas to one value once its references "
                                     "are followed; the bridge does not expand it")
            unfolded[pointer] = size


def _pointer(path: Any) -> str:
    return child("", *path)


# ---------------------------------------------------------------------- the converters' skeleton


class SchemaWalker:
    """One conversion of one document: the dispatch every converter shares, within the budgets.

    Subclasses implement `convert_reference`, `convert_union` and `convert_typed` (and may override
    `convert_any` and `describe`); the skeleton merges `allOf` itself and refuses what has no meaning.
    """

    error: type[SchemaConversionError] = SchemaConversionError

    def __init__(self, root: Any) -> None:
        inspect_schema(root, self.error)
        self.doc = SchemaDocument(root, self.error)
        self.steps = 0
        self.depth = 0

    def convert(self, node: Any, pointer: str) -> dict[str, Any]:
        """`node` (found at `pointer`) in the target dialect; raises `self.error` naming what cannot be."""
        self.steps += 1
        if self.steps > MAX_CONVERT_STEPS:
            raise self.error(pointer, f"expands to more than {MAX_CONVERT_STEPS} subschemas once its references are "
                                      "inlined; the bridge does not convert a schema that large")
        if self.depth >= MAX_CONVERT_DEPTH:
            raise self.error(pointer, f"nests more than {MAX_CONVERT_DEPTH} subschemas deep once its references are "
                                      "followed; the bridge does not convert a schema that deep")
        self.depth += 1
        try:
            return self._dispatch(node, pointer)
        finally:
            self.depth -= 1

    def _dispatch(self, node: Any, pointer: str) -> dict[str, Any]:
        if node is False:
            raise self.error(pointer, "accepts no value at all")
        if node is True or (isinstance(node, Mapping) and set(node) <= ANNOTATIONS):
            out = self.convert_any(node, pointer)
            notes = annotation_notes(node) if isinstance(node, Mapping) else []
        elif not isinstance(node, Mapping):
            raise self.error(pointer, "is not a schema")
        elif "$ref" in node:
            notes = annotation_notes(node)
            out = self.convert_reference(node, pointer)
        elif "allOf" in node:
            return self.convert(self.doc.merge_all_of(node, pointer), pointer)
        elif "anyOf" in node and "oneOf" in node:
            raise self.error(pointer, "combines anyOf and oneOf (two unions that must both hold), which cannot be "
                                      "written as one union")
        elif "anyOf" in node or "oneOf" in node:
            notes = annotation_notes(node)
            out = self.convert_union(node, pointer)
        else:
            notes = annotation_notes(node)
            out = self.convert_typed(node, pointer, notes)
        inherited = out.pop("description", None)  # of an inlined definition or a lone union branch
        description = node.get("description") if isinstance(node, Mapping) else None
        return self.describe(out, join_description(description, [inherited, *notes] if inherited else notes))

    # ------------------------------------------------------------------ what a converter provides

    def convert_any(self, node: Any, pointer: str) -> dict[str, Any]:
        """A schema that accepts any value (`true`, `{}`, or annotations only)."""
        return {}

    def convert_reference(self, node: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        raise NotImplementedError

    def convert_union(self, node: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        raise NotImplementedError

    def convert_typed(self, node: Mapping[str, Any], pointer: str, notes: list[str]) -> dict[str, Any]:
        raise NotImplementedError

    def with_shared(self, shared: Mapping[str, Any], branch: Mapping[str, Any], pointer: str) -> dict[str, Any]:
        """A union branch with the keywords beside the union (which hold for every branch) merged in."""
        if set(shared) & set(branch) or "$ref" in branch or "allOf" in branch:
            return self.doc.merge_all_of({"allOf": [dict(shared), dict(branch)]}, pointer)
        return {**shared, **branch}

    def describe(self, out: dict[str, Any], description: str | None) -> dict[str, Any]:
        """`out` with its description (None: none)."""
        if description:
            out["description"] = description
        return out
