"""Resources and resource templates: registration, URI matching, reading.

Templates follow RFC 6570 as far as MCP servers use it: `{var}` matches one path segment
(percent-decoded), `{+var}` matches the rest including slashes. The decoded variables are
validated against the template function's parameter annotations exactly as tool arguments are
(`Annotated[str, Field(max_length=..., pattern=...)]`), before the function runs: a bad value is
-32602 naming the variable, what was given and what is expected.
"""

from __future__ import annotations

import base64
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, ValidationError

from .._execution.threads import run_in_worker
from .._protocol.errors import InsufficientScopeError, ResourceNotFound, invalid_params
from ..auth._scopes import scope_list
from .content import dump_model, is_protocol_model, json_text, to_jsonable
from .signature import (
    DefinitionError,
    Signature,
    describe_validation_error,
    inspect_variables,
    is_context_annotation,
    where,
)

_VARIABLE = re.compile(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}")


def compile_template(template: str) -> tuple[re.Pattern[str], list[str]]:
    """A regex matching URIs of `template`, and its variable names in order."""
    names: list[str] = []
    pattern = ""
    last = 0
    for match in _VARIABLE.finditer(template):
        pattern += re.escape(template[last:match.start()])
        reserved, name = match.groups()
        names.append(name)
        pattern += f"(?P<{name}>.+)" if reserved else f"(?P<{name}>[^/?#]+)"
        last = match.end()
    pattern += re.escape(template[last:])
    return re.compile(f"^{pattern}$"), names


def is_template(uri: str) -> bool:
    return _VARIABLE.search(uri) is not None


@dataclass(slots=True)
class ResourceEntry:
    """A fixed resource or a template, with its handler."""

    uri: str
    name: str
    fn: Callable[..., Any]
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    icons: list[dict[str, Any]] | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    pattern: re.Pattern[str] | None = None
    variables: tuple[str, ...] = ()
    context_param: str | None = None
    signature: Signature | None = None  # the URI variables' argument model (templates only)
    validator: Callable[..., Any] | None = None  # checks a URI without reading it (see `bind_resource`)
    validator_context_param: str | None = None
    scopes: tuple[str, ...] = ()  # OAuth scopes a caller's token must grant to read it (HTTP with OAuth only)
    owner: Any = None  # a mounted resource: the app whose lifespan state its function sees (_app/mounts.py)

    def definition(self) -> dict[str, Any]:
        key = "uriTemplate" if self.pattern is not None else "uri"
        out: dict[str, Any] = {key: self.uri, "name": self.name}
        for wire_key, value in (("title", self.title), ("description", self.description), ("mimeType", self.mime_type),
                                ("icons", self.icons), ("annotations", self.annotations), ("_meta", self.meta)):
            if value:
                out[wire_key] = value
        return out


def make_resource(fn: Callable[..., Any], uri: str, context_type: type, **options: Any) -> ResourceEntry:
    """Build a resource entry; a URI with `{variables}` makes a template."""
    doc = inspect.getdoc(fn) or None
    scopes = scope_list(options.pop("scopes", None), f"resource {uri!r}")
    entry = ResourceEntry(uri=uri, name=options.pop("name", None) or fn.__name__, fn=fn,
                          description=options.pop("description", None) or doc, scopes=scopes, **options)
    label = f"resource template {uri!r}" if is_template(uri) else f"resource {uri!r}"
    try:
        hints = inspect.get_annotations(fn, eval_str=True)
    except Exception as exc:
        raise DefinitionError(f"{where(fn)}: {label}: cannot read the annotations of {fn.__name__}(): "
                              f"{type(exc).__name__}: {exc}") from None
    parameters = inspect.signature(fn).parameters
    for param in parameters.values():
        if is_context_annotation(hints.get(param.name), context_type):
            entry.context_param = param.name
    names = compile_template(uri)[1] if is_template(uri) else []
    _check_parameters(fn, label, names, parameters, entry.context_param)
    if names:
        entry.pattern, _ = compile_template(uri)
        entry.variables = tuple(names)
        try:
            entry.signature = inspect_variables(fn, names)
        except Exception as exc:
            raise DefinitionError(f"{where(fn)}: {label}: cannot build the model of its variables from "
                                  f"{fn.__name__}()'s annotations: {type(exc).__name__}: {exc}") from None
    return entry


def _check_parameters(fn: Callable[..., Any], label: str, names: list[str],
                      parameters: Any, context_param: str | None) -> None:
    """Every `{variable}` is a parameter of `fn`, and every parameter without a default is a variable (or the
    Context): otherwise each read would fail calling `fn`. DefinitionError naming the function's file:line."""
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    named = [p.name for p in parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unmatched = [name for name in names if name not in named and not takes_any]
    if unmatched:
        listed = ", ".join(n for n in named if n != context_param) or "none"
        raise DefinitionError(f"{where(fn)}: {label}: {', '.join('{' + n + '}' for n in unmatched)} matches no "
                              f"parameter of {fn.__name__}() (its parameters: {listed}); name them alike")
    needed = [p.name for p in parameters.values()
              if p.default is p.empty and p.name != context_param and p.name not in names
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if needed:
        what = "the URI has no variable" if names else "a fixed resource is read without arguments"
        raise DefinitionError(f"{where(fn)}: {label}: {fn.__name__}() requires {', '.join(needed)}, for which {what};"
                              " give it a default or add {" + needed[0] + "} to the URI")


class ResourceRegistry:
    """Fixed resources by URI and templates in registration order."""

    def __init__(self) -> None:
        self.fixed: dict[str, ResourceEntry] = {}
        self.templates: dict[str, ResourceEntry] = {}
        self.listers: list[Callable[[], Any]] = []

    def add(self, entry: ResourceEntry) -> None:
        (self.templates if entry.pattern is not None else self.fixed)[entry.uri] = entry

    def remove(self, uri: str) -> bool:
        return (self.fixed.pop(uri, None) or self.templates.pop(uri, None)) is not None

    def __bool__(self) -> bool:
        return bool(self.fixed or self.templates or self.listers)

    def find(self, uri: str) -> tuple[ResourceEntry, dict[str, str]] | None:
        """The entry serving `uri` and the template variables it bound."""
        entry = self.fixed.get(uri)
        if entry is not None:
            return entry, {}
        for template in self.templates.values():
            assert template.pattern is not None
            match = template.pattern.match(uri)
            if match:
                return template, {k: unquote(v) for k, v in match.groupdict().items()}
        return None

    def scopes_for(self, uri: str) -> tuple[str, ...]:
        """The OAuth scopes reading `uri` needs: its resource's or template's (() when nothing serves it)."""
        found = self.find(uri)
        return found[0].scopes if found is not None else ()

    def resolve(self, uri: str) -> tuple[ResourceEntry, dict[str, Any]]:
        """The entry serving `uri` and its validated variables; ResourceNotFound or -32602 (invalid variables)."""
        found = self.find(uri)
        if found is None:
            raise ResourceNotFound(uri)
        entry, variables = found
        return entry, validate_variables(entry, uri, variables)

    async def listed(self) -> list[dict[str, Any]]:
        """Fixed resources plus whatever the dynamic listers report now."""
        return [*(entry.definition() for entry in self.fixed.values()), *await self.dynamic()]

    async def dynamic(self, skip: Callable[[], Any] | None = None) -> list[dict[str, Any]]:
        """What the dynamic listers report now (but `skip`)."""
        items: list[dict[str, Any]] = []
        for lister in self.listers:
            if skip is not None and lister == skip:
                continue
            found = lister()
            if inspect.isawaitable(found):
                found = await found
            for item in found or ():
                items.append(dump_model(item) if isinstance(item, BaseModel) else dict(item))
        return items


def set_validator(entry: ResourceEntry, fn: Callable[..., Any], context_type: type) -> None:
    """Give `entry` a validator: `fn(**variables[, ctx])` raises (ResourceNotFound, MCPError) to refuse a URI."""
    hints = inspect.get_annotations(fn, eval_str=True)
    entry.validator = fn
    entry.validator_context_param = next(
        (name for name in inspect.signature(fn).parameters if is_context_annotation(hints.get(name), context_type)),
        None,
    )


async def bind_resource(registry: ResourceRegistry, uri: str, context: Any) -> tuple[ResourceEntry, dict[str, Any]]:
    """The entry serving `uri` and its handler's arguments, checked as a read checks them.

    Raises what a read of `uri` would raise before reading: ResourceNotFound for a URI no
    resource or template serves, InsufficientScopeError (-31002) when the caller's OAuth token
    lacks a scope the entry declares (checked before its variables or validator run), -32602 for
    a variable its type refuses, and whatever the entry's validator raises. Subscriptions call
    this without reading.
    """
    found = registry.find(uri)
    if found is None:
        raise ResourceNotFound(uri)
    entry, variables = found
    if entry.owner is not None:  # a mounted resource sees its own app's lifespan state
        context = context.for_owner(entry.owner)
    if entry.scopes:
        principal = getattr(context, "principal", None)
        missing = principal.missing(entry.scopes) if principal is not None else ()
        if missing:
            raise InsufficientScopeError(f"Resource {uri!r}", entry.scopes, missing)
    kwargs = validate_variables(entry, uri, variables)
    if entry.validator is not None:
        checks = dict(kwargs)
        if entry.validator_context_param:
            checks[entry.validator_context_param] = context
        if inspect.iscoroutinefunction(entry.validator):
            await entry.validator(**checks)
        else:
            await run_in_worker(entry.validator, **checks)
    return entry, kwargs


async def read_resource(registry: ResourceRegistry, uri: str, context: Any) -> list[dict[str, Any]]:
    """Read `uri`; raises ResourceNotFound (unknown URI) or MCPError."""
    entry, kwargs = await bind_resource(registry, uri, context)
    if entry.context_param:
        kwargs[entry.context_param] = context.for_owner(entry.owner) if entry.owner is not None else context
    if inspect.iscoroutinefunction(entry.fn):
        value = await entry.fn(**kwargs)
    else:
        value = await run_in_worker(entry.fn, **kwargs)
    return resource_contents(value, uri, entry.mime_type)


def validate_variables(entry: ResourceEntry, uri: str, variables: dict[str, str]) -> dict[str, Any]:
    """Template variables validated like tool arguments; -32602 naming each bad one and what it expects."""
    if entry.signature is None:
        return dict(variables)
    try:
        return entry.signature.validate(variables)
    except ValidationError as exc:
        schema = entry.signature.input_schema
        lines = describe_validation_error(exc, schema)
        names = [str(error["loc"][0]) for error in exc.errors(include_url=False) if error["loc"]]
        shown = uri if len(uri) <= 200 else uri[:197] + "..."
        raise invalid_params(
            f"Invalid resource URI {shown} (template {entry.uri}):\n" + "\n".join(lines),
            {"uri": shown, "template": entry.uri,
             "invalid": {name: schema["properties"].get(name, {}) for name in dict.fromkeys(names)}},
        ) from None


def resource_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """Normalise a handler's return value into resource contents."""
    if is_protocol_model(value, "ResourceContents"):
        return [dump_model(value)]
    if isinstance(value, list) and value and all(is_protocol_model(v, "ResourceContents") for v in value):
        return [dump_model(v) for v in value]
    if isinstance(value, str):
        return [{"uri": uri, "mimeType": mime_type or "text/plain", "text": value}]
    if isinstance(value, (bytes, bytearray)):
        return [
            {"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": base64.b64encode(value).decode()}
        ]
    return [{"uri": uri, "mimeType": mime_type or "application/json", "text": json_text(to_jsonable(value))}]


__all__ = ["ResourceEntry", "ResourceRegistry", "bind_resource", "compile_template", "make_resource", "read_resource",
           "set_validator"]
