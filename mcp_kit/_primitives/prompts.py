"""The prompt registry: typed functions become prompt templates with declared arguments."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from .._execution.threads import run_in_worker
from .._protocol.errors import invalid_params
from ..auth._scopes import scope_list
from .content import dump_model, is_protocol_model, prompt_message
from .signature import (
    DefinitionError,
    Signature,
    check_signature,
    describe_validation_error,
    inspect_function,
    parse_docstring,
    where,
)


@dataclass(slots=True)
class PromptEntry:
    """A registered prompt."""

    name: str
    fn: Callable[..., Any]
    signature: Signature
    title: str | None = None
    description: str | None = None
    icons: list[dict[str, Any]] | None = None
    scopes: tuple[str, ...] = ()  # OAuth scopes a caller's token must grant (HTTP with OAuth only)
    owner: Any = None  # a mounted prompt: the app whose lifespan state its function sees (_app/mounts.py)
    source: Any = None  # a mounted prompt: the mounted app's own entry it mirrors

    def definition(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.title:
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        arguments = []
        for name in self.signature.field_names:
            argument: dict[str, Any] = {"name": name, "required": name in self.signature.required}
            if self.signature.descriptions.get(name):
                argument["description"] = self.signature.descriptions[name]
            arguments.append(argument)
        out["arguments"] = arguments
        if self.icons:
            out["icons"] = self.icons
        return out


def make_prompt(fn: Callable[..., Any], context_type: type, *, name: str | None = None, title: str | None = None,
                description: str | None = None, icons: list[dict[str, Any]] | None = None,
                scopes: str | list[str] | tuple[str, ...] | None = None) -> PromptEntry:
    docs = parse_docstring(fn)
    label = f"prompt {name or fn.__name__!r}"
    check_signature(fn, context_type, label)
    try:
        signature = inspect_function(fn, context_type, docs)
    except DefinitionError:
        raise
    except Exception as exc:
        raise DefinitionError(f"{where(fn)}: {label}: cannot build its arguments from the function's signature: "
                              f"{type(exc).__name__}: {exc}") from None
    return PromptEntry(name=name or fn.__name__, fn=fn, signature=signature,
                       title=title, description=description or docs.description or None, icons=icons,
                       scopes=scope_list(scopes, f"prompt {name or fn.__name__!r}"))


async def render_prompt(entry: PromptEntry, arguments: dict[str, Any] | None, context: Any) -> dict[str, Any]:
    """Run a prompt function; missing or invalid arguments raise -32602 naming them."""
    arguments = arguments or {}
    missing = [n for n in entry.signature.required if n not in arguments]
    if missing:
        raise invalid_params(
            f"Prompt '{entry.name}' is missing required argument(s): {', '.join(missing)}",
            {"missing": missing},
        )
    try:
        kwargs = entry.signature.validate(arguments)
    except ValidationError as exc:
        lines = describe_validation_error(exc, entry.signature.input_schema)
        raise invalid_params(f"Invalid arguments for prompt '{entry.name}':\n" + "\n".join(lines)) from None
    if entry.signature.context_param:
        kwargs[entry.signature.context_param] = context.for_owner(entry.owner) if entry.owner is not None else context
    if inspect.iscoroutinefunction(entry.fn):
        value = await entry.fn(**kwargs)
    else:
        value = await run_in_worker(entry.fn, **kwargs)
    result: dict[str, Any]
    if is_protocol_model(value, "GetPromptResult"):
        result = dump_model(value)
        result.pop("resultType", None)
        return result
    items = value if isinstance(value, (list, tuple)) else [value]
    result = {"messages": [prompt_message(item) for item in items]}
    if entry.description:
        result["description"] = entry.description
    return result
