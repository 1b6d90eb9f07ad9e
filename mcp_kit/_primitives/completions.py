"""Completion providers for prompt arguments and resource-template variables."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .._execution.threads import run_in_worker
from .content import dump_model, is_protocol_model

MAX_VALUES = 100

CompletionKey = tuple[str, str, str]  # (ref type, prompt name or template URI, argument name)


def completion_key(ref: str, argument: str) -> CompletionKey:
    """`ref` is a prompt name or a resource template URI (anything containing '://')."""
    kind = "ref/resource" if "://" in ref or "{" in ref else "ref/prompt"
    return (kind, ref, argument)


class CompletionRegistry:
    """Completion functions keyed by what they complete."""

    def __init__(self) -> None:
        self.providers: dict[CompletionKey, Callable[..., Any]] = {}

    def add(self, ref: str, argument: str, fn: Callable[..., Any]) -> None:
        self.providers[completion_key(ref, argument)] = fn

    def __bool__(self) -> bool:
        return bool(self.providers)

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The `completion` object for a completion/complete request (empty when nothing is registered)."""
        kind = ref.get("type")
        target = ref.get("uri") if kind == "ref/resource" else ref.get("name")
        fn = self.providers.get((str(kind), str(target), str(argument.get("name"))))
        if fn is None:
            return {"values": [], "total": 0, "hasMore": False}
        args = (str(argument.get("value", "")), dict((context or {}).get("arguments") or {}))
        if inspect.iscoroutinefunction(fn):
            found = await fn(*args)
        else:
            found = await run_in_worker(fn, *args)
        if is_protocol_model(found, "Completion"):
            return dump_model(found)
        values = [str(v) for v in (found or [])]
        return {"values": values[:MAX_VALUES], "total": len(values), "hasMore": len(values) > MAX_VALUES}
