"""Tool transforms: a tool shown under another name or description, with arguments hidden, fixed or given
new defaults, and the schema and validation following the change.

A transform never touches the function: the transformed tool is a copy of the registered one whose
schema is derived from the original's, and whose calls have their arguments rewritten before the
original's validation runs. So a hidden argument cannot be sent (a call naming it is refused as an
argument the tool does not have), a fixed one always has its value, one filled from the request
(`Arg(from_context=lambda ctx: ctx.principal.subject)`) is computed per call, and the function
receives exactly what it received before. A proxied tool, known only by its wire definition, gets the
same schema rewrite (`transformed_definition`) and the same argument rewrite (`rewriter`) before its call
goes upstream (`_app/sourced.py`).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._protocol.errors import ToolError

logger = logging.getLogger("mcp_kit.tools")
_UNSET: Any = object()


@dataclass(frozen=True, slots=True)
class Arg:
    """How a transform changes one argument.

    `Arg(hidden=True)`: not shown; the function's own default applies (it must have one).
    `Arg(value=v)`: not shown; always `v`. `Arg(from_context=fn)`: not shown; `fn(ctx)` per call.
    `Arg(default=v)`: shown, no longer required, `v` when the call leaves it out.
    `description=`: the schema's description of a shown argument.
    """

    hidden: bool = False
    value: Any = _UNSET
    from_context: Callable[[Any], Any] | None = None
    default: Any = _UNSET
    description: str | None = None

    @property
    def is_hidden(self) -> bool:
        return self.hidden or self.value is not _UNSET or self.from_context is not None


@dataclass(slots=True)
class ToolTransform:
    """What one `transform_tool` call changes: the name, the description, arguments."""

    name: str | None = None
    description: str | None = None
    arguments: Mapping[str, Arg] = field(default_factory=dict)


def check_arguments(tool: str, arguments: Mapping[str, Any]) -> None:
    """TypeError or ValueError naming the argument unless each `Arg` is one and consistent in itself (what can be
    checked without the tool's schema, e.g. before a proxy's upstream lists its tools)."""
    for name, arg in arguments.items():
        if not isinstance(arg, Arg):
            raise TypeError(f"transform of tool {tool!r}: arguments[{name!r}] must be an mcp_kit.Arg")
        if arg.is_hidden and (arg.default is not _UNSET or arg.description is not None):
            raise ValueError(f"transform of tool {tool!r}: {name!r} is hidden, so it takes no default or "
                             "description")


def check_transform(tool: Any, transform: ToolTransform) -> None:
    """ValueError naming the argument unless each `Arg` fits the tool's schema."""
    _check_schema(tool.name, tool.input_schema, transform)


def _check_schema(tool: str, schema: Mapping[str, Any], transform: ToolTransform) -> None:
    check_arguments(tool, transform.arguments)
    properties, required = _shapes(tool, schema)
    for name, arg in transform.arguments.items():
        if name not in properties:
            known = ", ".join(properties) or "(none)"
            raise ValueError(f"transform of tool {tool!r}: it has no argument {name!r} (it has: {known})")
        if arg.hidden and arg.value is _UNSET and arg.from_context is None and name in required:
            raise ValueError(f"transform of tool {tool!r}: {name!r} is required, so hiding it needs a value: "
                             f"Arg(value=...) or Arg(from_context=...)")


def _shapes(tool: str, schema: Any) -> tuple[dict[str, Any], list[str]]:
    """The `properties` (an object of schemas: objects or booleans) and `required` (an array of strings) of
    `schema`; ValueError naming what is wrong otherwise (a proxied tool's schema is the upstream's, so anything
    may come)."""
    if not isinstance(schema, Mapping):
        raise ValueError(f"tool {tool!r}: its inputSchema is not an object")
    properties = schema.get("properties")
    if properties is None:
        properties = {}
    if not isinstance(properties, Mapping):
        raise ValueError(f"tool {tool!r}: the 'properties' of its inputSchema is not an object")
    wrong = next((name for name, spec in properties.items() if not isinstance(name, str)
                  or not isinstance(spec, (Mapping, bool))), None)  # true and false are schemas too
    if wrong is not None:
        raise ValueError(f"tool {tool!r}: property {str(wrong)[:80]!r} of its inputSchema is not a schema")
    required = schema.get("required")
    if required is None:
        required = []
    if not isinstance(required, list) or not all(isinstance(each, str) for each in required):
        raise ValueError(f"tool {tool!r}: the 'required' of its inputSchema is not an array of strings")
    return dict(properties), list(required)


def transformed_schema(tool: str, schema: Mapping[str, Any], transform: ToolTransform) -> dict[str, Any]:
    """`schema` (a tool's inputSchema) as `transform` shows it: hidden arguments gone from `properties` and
    `required`, defaults and descriptions written in. ValueError unless the transform fits (`check_transform`)
    and the schema has the shape a transform works on: `properties` an object of objects, `required` an array
    of strings. What the transform leaves alone is shared with `schema`, not copied."""
    _check_schema(tool, schema, transform)
    properties, required = _shapes(tool, schema)
    out = dict(schema)
    out["properties"] = properties
    for name, arg in transform.arguments.items():
        if arg.is_hidden:
            properties.pop(name, None)
            required = [each for each in required if each != name]
            continue
        given = properties[name]
        if given is False:  # a property no value satisfies: a default or description cannot make it one
            raise ValueError(f"transform of tool {tool!r}: argument {name!r} accepts no value (its schema is false)")
        spec = properties[name] = {} if given is True else dict(given)
        if arg.default is not _UNSET:
            spec["default"] = arg.default
            required = [each for each in required if each != name]
        if arg.description is not None:
            spec["description"] = arg.description
    if required:
        out["required"] = required
    else:
        out.pop("required", None)
    return out


def transformed_tool(tool: Any, transform: ToolTransform) -> Any:
    """A copy of `tool` showing `transform`'s changes (the registry keeps it under its new name)."""
    schema = transformed_schema(tool.name, tool.input_schema, transform)
    out = copy.copy(tool)
    out.untransformed = getattr(tool, "untransformed", None) or tool
    out.name = transform.name or tool.name
    out._description = transform.description or tool.description
    out._input_schema = schema
    out._schema = out._call = out._wire = None
    outer = rewriter(out.name, transform.arguments) if transform.arguments else None
    inner = tool.rewrite  # a mounted tool its own app transformed keeps that transform underneath
    if outer is not None and inner is not None:
        out.rewrite = lambda given, ctx: inner(outer(given, ctx), ctx)
    else:
        out.rewrite = outer or inner
    return out


def transformed_definition(definition: Mapping[str, Any], transform: ToolTransform) -> dict[str, Any]:
    """A tool's wire definition (as `tools/list` shows it, e.g. a proxied tool's) with `transform`'s changes:
    name, description and `inputSchema` (`transformed_schema`); the rest as it is."""
    name = str(definition.get("name"))
    out = dict(definition)
    schema = definition.get("inputSchema")
    out["inputSchema"] = transformed_schema(name, {} if schema is None else schema, transform)
    if transform.name:
        out["name"] = transform.name
    if transform.description:
        out["description"] = transform.description
    return out


def rewriter(tool: str, arguments: Mapping[str, Arg]) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """`rewrite(given, ctx)`: a call's arguments as the original tool takes them (ToolError for a hidden one sent)."""
    hidden = {name: arg for name, arg in arguments.items() if arg.is_hidden}
    defaults = {name: arg.default for name, arg in arguments.items() if arg.default is not _UNSET}

    def rewrite(given: dict[str, Any], ctx: Any) -> dict[str, Any]:
        sent = sorted(name for name in given if name in hidden)
        if sent:
            raise ToolError(f"Invalid arguments for tool '{tool}': it has no argument {', '.join(map(repr, sent))}; "
                            "leave it out (see the tool's inputSchema)")
        out = {**{name: value for name, value in defaults.items() if name not in given}, **given}
        for name, arg in hidden.items():
            if arg.value is not _UNSET:
                out[name] = arg.value
            elif arg.from_context is not None:
                try:
                    out[name] = arg.from_context(ctx)
                except Exception:
                    logger.exception("tool %s: filling argument %s from the request failed", tool, name)
                    raise ToolError(f"Tool '{tool}' could not be called for this request: the server could not fill "
                                    f"in its argument {name!r} (for example, the caller is not signed in)") from None
        return out

    return rewrite


__all__ = ["Arg", "ToolTransform", "check_arguments", "check_transform", "rewriter", "transformed_definition",
           "transformed_schema", "transformed_tool"]
