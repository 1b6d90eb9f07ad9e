"""Function signatures as JSON Schema: parameters -> an argument model, docstrings -> descriptions.

Built once at registration, never per call. Parameters annotated with `Context` are injected,
not described. `check_signature` is what registration checks at once (cheaply: no model is built
for ordinary types); `DefinitionError` names the function's file and line; inside `collecting_problems()`
(what `mcp-kit check` uses) registration records each problem instead of raising the first.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
import decimal
import enum
import inspect
import pathlib
import re
import types
import typing
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from .._errors import MCPKitError
from .content import is_content_type

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_SECTION_HEADER = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


class DefinitionError(MCPKitError, TypeError):
    """A function that cannot be served as it is declared (a bug in the server's code); the message begins
    with the function's `file:line`."""


_problems: contextvars.ContextVar[list[DefinitionError] | None] = contextvars.ContextVar("problems", default=None)


@contextlib.contextmanager
def collecting_problems() -> Iterator[list[DefinitionError]]:
    """While inside, registration records each `DefinitionError` in the yielded list (and leaves that
    function out) instead of raising it: how `mcp-kit check` reports every problem of a server at once."""
    found: list[DefinitionError] = []
    token = _problems.set(found)
    try:
        yield found
    finally:
        _problems.reset(token)


def report(problem: DefinitionError) -> None:
    """Raise `problem`, or record it when inside `collecting_problems()`."""
    found = _problems.get()
    if found is None:
        raise problem
    found.append(problem)


def where(fn: Callable[..., Any]) -> str:
    """`path/to/file.py:LINE` of the function `fn` (unwrapped), or its qualified name when it has no source."""
    target = inspect.unwrap(fn) if callable(fn) else fn
    code = getattr(target, "__code__", None)
    if code is None:
        code = getattr(vars(type(target)).get("__call__"), "__code__", None)  # a callable object
    if code is None:
        return getattr(target, "__qualname__", repr(target))
    return f"{code.co_filename}:{code.co_firstlineno}"


_PLAIN_TYPES: tuple[Any, ...] = (Any, str, int, float, bool, bytes, type(None), None, dict, list, tuple, set,
                                 frozenset)
_PLAIN_CLASSES = (BaseModel, enum.Enum, datetime.date, datetime.time, datetime.timedelta, decimal.Decimal,
                  uuid.UUID, pathlib.PurePath)
_PLAIN_ORIGINS: tuple[Any, ...] = (Union, types.UnionType, list, dict, tuple, set, frozenset, typing.Sequence,
                                   typing.Mapping, typing.Iterable, typing.MutableSequence, typing.MutableMapping)


def _plainly_describable(annotation: Any, depth: int = 0) -> bool:
    """True when `annotation` surely becomes a JSON Schema (JSON types, models, enums, dates, their unions and
    containers); False means "ask pydantic" (which then builds a model for this one parameter)."""
    if depth > 20:
        return False
    if any(annotation is plain for plain in _PLAIN_TYPES) or annotation is Ellipsis:
        return True
    if isinstance(annotation, type) and issubclass(annotation, _PLAIN_CLASSES):
        return True
    origin = get_origin(annotation)
    if origin is Literal:
        return True
    if origin is Annotated:
        return _plainly_describable(get_args(annotation)[0], depth + 1)
    if origin is not None and any(origin is plain for plain in _PLAIN_ORIGINS):
        return all(_plainly_describable(arg, depth + 1) for arg in get_args(annotation))
    return False


def _returns_content(annotation: Any) -> bool:
    """Whether a return annotation (maybe `Annotated`) is content (`Image`, `EmbeddedResource`, ...), not data."""
    return is_content_type(get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation)


def check_signature(fn: Callable[..., Any], context_type: type, label: str, *, structured: bool | None = None) -> None:
    """What registration checks at once: no `*args`/`**kwargs` (MCP arguments are named, one schema property
    each), every parameter's type can become JSON Schema, and with `structured=True` (a tool's
    structured_output) the return type is data, not content. Raises `DefinitionError` naming `file:line`.
    Annotations that do not resolve yet (a forward reference to a class defined later) are checked when
    the schema is first built."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError) as exc:
        raise DefinitionError(f"{where(fn)}: {label}: cannot read the function's signature: {exc}") from None
    for param in parameters:
        if param.kind is param.VAR_POSITIONAL:
            raise DefinitionError(f"{where(fn)}: {label}: *{param.name} cannot be passed by an MCP client (arguments "
                                  f"are named); take a list instead, e.g. `{param.name}: list[str]`")
        if param.kind is param.VAR_KEYWORD:
            raise DefinitionError(f"{where(fn)}: {label}: **{param.name} has no JSON Schema (a client sees no "
                                  f"argument); name each parameter, or take one `{param.name}: dict[str, Any]`")
        if param.kind is param.POSITIONAL_ONLY:
            raise DefinitionError(f"{where(fn)}: {label}: {param.name} is positional-only (before `/`); MCP "
                                  "arguments are passed by name")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # a forward reference not defined yet: the first schema build says what is wrong
        return
    if structured and _returns_content(hints.get("return")):
        raise DefinitionError(f"{where(fn)}: {label}: structured_output=True, but the return type is content (sent "
                              "as content blocks), which no output schema describes; return data (a model, a "
                              "TypedDict, a dict) or leave structured_output out")
    for param in parameters:
        annotation = hints.get(param.name, Any)
        if is_context_annotation(annotation, context_type) or _plainly_describable(annotation):
            continue
        try:
            field = _field(annotation, ... if param.default is inspect.Parameter.empty else param.default, None)
            fields: dict[str, Any] = {param.name: (annotation, field)}
            create_model("probe", __base__=_Arguments, **fields).model_json_schema()
        except Exception as exc:
            shown = getattr(annotation, "__qualname__", None) or repr(annotation)
            module = getattr(annotation, "__module__", "")
            if module and module != "builtins" and isinstance(annotation, type):
                shown = f"{module}.{shown}"
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DefinitionError(
                f"{where(fn)}: {label}: parameter {param.name!r} is typed {shown}, which has no JSON Schema "
                f"({reason}); use a JSON type (str, int, float, bool, list, dict), a pydantic model, a dataclass "
                "or a TypedDict") from None


@dataclass(slots=True)
class Docstring:
    """A docstring split into its description and per-argument texts."""

    description: str
    params: dict[str, str]


def parse_docstring(fn: Callable[..., Any]) -> Docstring:
    """Split a Google-style docstring into the description and the `Args:` entries."""
    doc = inspect.getdoc(fn) or ""
    description: list[str] = []
    params: dict[str, str] = {}
    section = "description"
    current: str | None = None
    for line in doc.splitlines():
        if _ARGS_HEADER.match(line):
            section, current = "args", None
            continue
        if _SECTION_HEADER.match(line):
            section = "other"
            continue
        if section == "description":
            description.append(line)
        elif section == "args":
            match = _ARG_LINE.match(line)
            if match and (not line.startswith(" " * 8) or current is None):
                current = match.group(1).lstrip("*")
                params[current] = match.group(3).strip()
            elif current and line.strip():
                params[current] = f"{params[current]} {line.strip()}".strip()
    return Docstring("\n".join(description).strip(), params)


def is_context_annotation(annotation: Any, context_type: type) -> bool:
    """True when a parameter's annotation is the Context type (optionally Optional/Annotated)."""
    if annotation is context_type:
        return True
    if isinstance(annotation, type) and issubclass(annotation, context_type):
        return True
    return any(is_context_annotation(arg, context_type) for arg in get_args(annotation) if arg is not type(None))


@dataclass(slots=True)
class Signature:
    """What registration learned from a function: its argument model and schema."""

    model: type[BaseModel]
    field_names: tuple[str, ...]
    context_param: str | None
    input_schema: dict[str, Any]
    required: tuple[str, ...]
    descriptions: dict[str, str | None]

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments for the function; raises pydantic.ValidationError."""
        parsed = self.model.model_validate(arguments)
        return {name: getattr(parsed, name) for name in self.field_names}


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


def inspect_function(fn: Callable[..., Any], context_type: type, docs: Docstring | None = None) -> Signature:
    """Build the argument model and JSON Schema of `fn` (Context parameters excluded)."""
    docs = docs or parse_docstring(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    context_param = None
    for param in inspect.signature(fn).parameters.values():
        annotation = hints.get(param.name, Any)
        if is_context_annotation(annotation, context_type):
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise DefinitionError(f"{where(fn)}: {'*' if param.kind is param.VAR_POSITIONAL else '**'}{param.name} "
                                  "cannot be described as a named argument (see check_signature)")
        default = ... if param.default is inspect.Parameter.empty else param.default
        field = _field(annotation, default, docs.params.get(param.name))
        fields[param.name] = (annotation, field)
    model = create_model(f"{fn.__name__}_arguments", __base__=_Arguments, **fields)
    schema = clean_schema(model.model_json_schema())
    schema.pop("title", None)
    schema.setdefault("properties", {})
    return Signature(
        model=model,
        field_names=tuple(fields),
        context_param=context_param,
        input_schema=schema,
        required=tuple(schema.get("required", ())),
        descriptions={name: schema["properties"].get(name, {}).get("description") for name in fields},
    )


def inspect_variables(fn: Callable[..., Any], names: list[str], docs: Docstring | None = None) -> Signature:
    """The argument model of a resource template's URI variables `names`, from `fn`'s annotations.

    The same machinery as tool arguments: `Annotated[str, Field(max_length=..., pattern=...)]` on a
    parameter constrains the variable exactly as it would constrain a tool argument, so one annotated
    type can serve both. A variable without an annotation (or without a parameter) is a plain string.
    """
    docs = docs or parse_docstring(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {name: (hints.get(name, str), _field(hints.get(name, str), ..., docs.params.get(name)))
                              for name in names}
    model = create_model(f"{fn.__name__}_uri_variables", __base__=_Arguments, **fields)
    schema = clean_schema(model.model_json_schema())
    schema.pop("title", None)
    schema.setdefault("properties", {})
    return Signature(model=model, field_names=tuple(fields), context_param=None, input_schema=schema,
                     required=tuple(schema.get("required", ())),
                     descriptions={name: schema["properties"].get(name, {}).get("description") for name in fields})


def _field(annotation: Any, default: Any, doc: str | None) -> FieldInfo:
    """A Field carrying the docstring text unless Annotated[..., Field(description=...)] gave one."""
    has_description = get_origin(annotation) is Annotated and any(
        isinstance(meta, FieldInfo) and meta.description for meta in get_args(annotation)[1:]
    )
    if doc and not has_description:
        return Field(default, description=doc)
    return Field(default)


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's generated `title` keys from properties (noise for a model reading the schema)."""
    if isinstance(schema.get("properties"), dict):
        for prop in schema["properties"].values():
            if isinstance(prop, dict):
                prop.pop("title", None)
    for definition in schema.get("$defs", {}).values():
        if isinstance(definition, dict):
            clean_schema(definition)
    return schema


def output_schema(fn: Callable[..., Any], structured: bool | None) -> tuple[dict[str, Any] | None, bool]:
    """The output JSON Schema of `fn` and whether results are wrapped in {"result": ...}.

    `structured=None` means automatic: object-shaped return types (models, TypedDicts,
    dataclasses, dicts) get an output schema; other types only when `structured=True`.
    """
    if structured is False:
        return None, False
    annotation = typing.get_type_hints(fn, include_extras=True).get("return", inspect.Signature.empty)
    if annotation in (inspect.Signature.empty, None, type(None), Any):
        return None, False
    if _returns_content(annotation):  # sent as content blocks: an output schema would promise structured content
        return None, False
    try:
        schema = clean_schema(TypeAdapter(annotation).json_schema(mode="serialization"))
    except Exception:
        return None, False
    if schema.get("type") == "object":
        return schema, False
    if structured:
        return {"type": "object", "properties": {"result": schema}, "required": ["result"]}, True
    return None, False


def describe_validation_error(error: ValidationError, schema: dict[str, Any]) -> list[str]:
    """One line per bad field: where, what was given, what is expected."""
    lines = []
    properties = schema.get("properties", {})
    for item in error.errors(include_url=False):
        loc = ".".join(str(part) for part in item["loc"]) or "(arguments)"
        top = str(item["loc"][0]) if item["loc"] else ""
        given = item.get("input")
        if item["type"] == "missing":
            lines.append(f"- '{loc}' is required but was not given{_expected(properties.get(top))}")
        elif item["type"] == "extra_forbidden":
            allowed = ", ".join(sorted(properties)) or "none"
            lines.append(f"- '{loc}' is not a known argument (known arguments: {allowed})")
        else:
            lines.append(f"- '{loc}': {item['msg']} (given: {_short(given)}){_expected(properties.get(top))}")
    return lines


def _expected(prop: dict[str, Any] | None) -> str:
    if not prop:
        return ""
    parts = []
    if "enum" in prop:
        parts.append("one of " + ", ".join(repr(v) for v in prop["enum"]))
    elif "type" in prop:
        parts.append(str(prop["type"]))
    elif "anyOf" in prop:
        parts.append(" or ".join(str(p.get("type", p.get("$ref", "?"))).split("/")[-1] for p in prop["anyOf"]))
    for key, word in (("minimum", ">="), ("maximum", "<="), ("minLength", "min length"), ("maxLength", "max length"),
                      ("minItems", "min items"), ("maxItems", "max items"), ("pattern", "pattern")):
        if key in prop:
            parts.append(f"{word} {prop[key]}")
    if prop.get("description"):
        parts.append(prop["description"])
    return "; expected " + ", ".join(parts) if parts else ""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
