"""The YAML 1.2 core-schema loader a `SKILL.md`'s frontmatter is parsed with (see `_frontmatter`).

PyYAML's *safe* loader (no Python objects, ever) with the implicit types of the YAML 1.2 core
schema instead of 1.1's, refusing anchors and aliases, duplicate and non-string keys, infinities,
and nesting deeper than the caller allows, each as a `FrontmatterError`: PyYAML's own errors never
leave this module. A module of its own so that PyYAML is imported only when a frontmatter is
parsed: a server without skills never loads it.

Must not import: session, server, dispatcher, transports.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from ._errors import FrontmatterError


class _TooDeep(yaml.composer.ComposerError):
    """The document nests deeper than `load` was told to allow (where: `mark`)."""

    def __init__(self, mark: Any, max_depth: int) -> None:
        super().__init__(None, None, f"nested more than {max_depth} levels deep", mark)
        self.mark = mark


class _CoreSchemaLoader(yaml.SafeLoader):
    """PyYAML's safe loader resolving plain scalars by the YAML 1.2 core schema, refusing aliases.

    PyYAML composes (and constructs) nested collections by recursion, so the nesting is bounded
    here, as each node is composed: a document nested thousands of levels deep is refused with a
    message instead of exhausting the interpreter's stack (a RecursionError).
    """

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}
    _depth = 0
    max_depth = 0  # set by `load`

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "anchors and aliases are not allowed in SKILL.md frontmatter", event.start_mark)
        if self._depth > self.max_depth:
            raise _TooDeep(self.peek_event().start_mark, self.max_depth)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(None, None, "expected a mapping", node.start_mark)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                raise yaml.constructor.ConstructorError(
                    None, None, f"keys must be strings, found {key!r}", key_node.start_mark)
            if key in mapping:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


def _construct_int(loader: _CoreSchemaLoader, node: Any) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text)


def _construct_float(loader: _CoreSchemaLoader, node: Any) -> float:
    text = str(loader.construct_scalar(node)).lower()
    if text.lstrip("+-") in (".inf", ".nan"):
        raise yaml.constructor.ConstructorError(
            None, None, f"{text} has no JSON form; quote it to keep it as text", node.start_mark)
    return float(text)


_CoreSchemaLoader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])
_CoreSchemaLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_CoreSchemaLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789"))
_CoreSchemaLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)
_CoreSchemaLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_CoreSchemaLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def load(yaml_text: str, max_depth: int) -> Any:
    """The document, by the core schema; FrontmatterError saying why when it cannot be read."""
    loader = _CoreSchemaLoader(yaml_text)  # what yaml.load does, with the depth bound set on the loader
    loader.max_depth = max_depth
    try:
        return loader.get_single_data()
    except _TooDeep as exc:
        raise FrontmatterError(f"the frontmatter is nested more than {max_depth} levels deep (at its line "
                               f"{exc.mark.line + 1}); flatten it") from None
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"the frontmatter is not valid YAML: {' '.join(str(exc).split())}") from None
    finally:
        loader.dispose()
