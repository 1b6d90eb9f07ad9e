"""Mounting one application inside another: its primitives served by the parent, live, to any depth.

`Application.mount(child, namespace="weather")` makes the parent serve what the child registers.
The naming rule, one for every depth:

- tools and prompts are renamed `{namespace}_{name}` (`weather_get_forecast`); a mount in a mount
  prefixes again (`travel_weather_get_forecast`); without a namespace the names stay as they are;
- resource URIs and templates keep their URIs: a URI already names its server by its scheme and
  authority, so rewriting it would break the links that tools and resources hand out;
- completions follow their prompt's new name or their template's URI.

A name or URI that is already taken in the parent (by its own registration or another mount) is
refused with `MountCollision` naming both sources, at mount time and whenever the child registers
later. The mirror is live: what the child adds or removes afterwards appears or goes in the parent
at once, and the parent's clients hear `list_changed`. Mirrored entries share the child's functions
and executors; their `owner` is the child, so `ctx.lifespan_state` inside them is the child's, and
the parent's `running()` enters the child's lifespan. Resource updates the child announces and its
watchers reach the parent's subscribers. The child's skills are added to the parent's catalog (a skill
URI served twice is refused), its MCP Apps views and tool links to the parent's Apps extension; other
extensions cannot be mounted. Calls go through the parent's middleware; an app with middleware of its
own cannot be mounted (they would not run).

A proxy (`MCPServer.proxy`) mounts by the same naming rule, but nothing of it is mirrored: its upstream's
lists are known only at run time, so the parent's routes add them to its own lists and route requests
for them down to the proxy's source per request (`sourced.py`); there a name the parent serves itself
wins over a proxied one (logged once) instead of being refused. A proxy cannot be a parent: mount it and
the other apps in a plain server.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

from .._errors import MCPKitError
from ..skills import EXTENSION_ID as SKILLS
from ..tasks._wire import TASKS_EXTENSION as TASKS

APPS = "io.modelcontextprotocol/ui"  # MCP Apps (`mcp_kit.apps`): its views and tool links are mirrored too

Application = Any  # `application.Application`, which imports this module

KINDS = ("tools", "prompts", "resources")
_NAMESPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]*$")


class MountCollision(MCPKitError, ValueError):
    """Two sources would serve the same tool or prompt name, resource URI or template in one application."""


def check_mountable(parent: Application, child: Application, namespace: str | None) -> None:
    """ValueError naming the fix unless `child` can be mounted in `parent` under `namespace`."""
    if namespace is not None and not _NAMESPACE.match(namespace):
        raise ValueError(f"namespace {namespace!r}: letters, digits, '.' and '-' (it becomes the '{namespace}_' "
                         "prefix of tool and prompt names), starting with a letter or digit; or None for no prefix")
    if child is parent or parent in _ancestors_and_self(child) or child in _ancestors_and_self(parent):
        raise ValueError(f"cannot mount {child.name!r} in {parent.name!r}: one would contain itself")
    if parent.source is not None:
        raise ValueError(f"cannot mount {child.name!r} in {parent.name!r}: a proxy serves its upstream's primitives "
                         "only; mount both in a plain server instead: hub = MCPServer('hub'); "
                         "hub.mount(the_proxy, namespace=...); hub.mount(the_other, namespace=...)")
    others = sorted(set(child.extensions) - {SKILLS, TASKS, APPS})
    if others:
        raise ValueError(f"cannot mount {child.name!r}: it serves the extension {others[0]!r}, whose methods would "
                         "not be served through the parent; add the extension to the parent instead")
    if child.middleware or child.builtin_middleware:
        raise ValueError(f"cannot mount {child.name!r}: it has middleware of its own, which would not run for calls "
                         "arriving through the parent; add them to the parent (parent.add_middleware) instead")


def _ancestors_and_self(app: Application) -> list[Application]:
    seen, todo = [], [app]
    while todo:
        each = todo.pop()
        if each not in seen:
            seen.append(each)
            todo.extend(mount.parent for mount in each.mounted_in)
    return seen


class Mount:
    """`child` served inside `parent` under `namespace`: what of the child's the parent mirrors."""

    def __init__(self, parent: Application, child: Application, namespace: str | None) -> None:
        self.parent = parent
        self.child = child
        self.namespace = namespace
        self.mirrored: dict[str, set[str]] = {kind: set() for kind in KINDS}
        self.completions: set[tuple[str, str, str]] = set()
        self.placed: dict[str, str] = {}  # a mirrored tool's name -> its name in the parent's registry
        self.views: set[str] = set()  # MCP Apps views mirrored into the parent's extension (by URI)
        self.links: set[str] = set()  # ... and the tool links, by the tools' names in the parent

    def __repr__(self) -> str:
        return f"mounted {self.child.name!r}" + (f" (namespace {self.namespace!r})" if self.namespace else "")

    def name_in_parent(self, name: str) -> str:
        return f"{self.namespace}_{name}" if self.namespace else name

    # ------------------------------------------------------------------ what the parent would hold

    def _wanted(self, kind: str, extra: str | None = None) -> dict[str, Any]:
        """The entries of `kind` the parent should mirror now, by their key there (`extra`: one more child name)."""
        child = self.child
        if child.source is not None:  # a proxy: what it serves is its upstream's, listed per request (sourced.py)
            return {}
        if kind == "tools":
            wanted = {self.name_in_parent(tool.name): tool for tool in child.tools}
        elif kind == "prompts":
            wanted = {self.name_in_parent(name): entry for name, entry in child.prompts.items()}
        else:
            wanted = {**child.resources.fixed, **child.resources.templates}
        if extra is not None:
            wanted.setdefault(extra if kind == "resources" else self.name_in_parent(extra), None)
        return wanted

    def _taken(self, kind: str) -> dict[str, str]:
        """Keys of `kind` the parent holds from elsewhere, with who holds them."""
        parent = self.parent
        if kind == "tools":
            keys: list[str] = [tool.name for tool in parent.tools]
        elif kind == "prompts":
            keys = list(parent.prompts)
        else:
            keys = [*parent.resources.fixed, *parent.resources.templates]
        owners: dict[str, str] = {}
        own = set(self.placed.values()) if kind == "tools" else self.mirrored[kind]
        for key in keys:
            if key in own:
                continue
            other = next((m for m in parent.mounts if m is not self
                          and key in (m.placed.values() if kind == "tools" else m.mirrored[kind])), None)
            owners[key] = repr(other) if other is not None else f"{parent.name!r} itself"
        return owners

    def check(self, kind: str, extra: str | None = None) -> dict[str, Any]:
        """The entries to mirror; MountCollision naming both sources when one is taken (checked up the tree)."""
        wanted = self._wanted(kind, extra)
        taken = self._taken(kind)
        word = {"tools": "tool", "prompts": "prompt", "resources": "resource"}[kind]
        for key in wanted:
            if key in taken:
                raise MountCollision(
                    f"{word} {key!r} of {self!r} in {self.parent.name!r} collides with the {word} of the same name "
                    f"from {taken[key]}; rename one of them, or mount {self.child.name!r} under another namespace")
        for mount in self.parent.mounted_in:  # the parent's new names must fit its own parents too
            for key in wanted:
                if key not in self.mirrored[kind]:
                    mount.check(kind, key)
        return wanted

    # ------------------------------------------------------------------ mirroring

    def sync(self, kind: str) -> bool:
        """Bring the parent's mirror of `kind` up to date; whether anything changed."""
        wanted = self.check(kind)
        before = self.mirrored[kind]
        if kind == "tools":
            changed = self._sync_tools(wanted, before)
        elif kind == "prompts":
            changed = self._sync_prompts(wanted, before)
        else:
            changed = self._sync_resources(wanted, before)
        self.mirrored[kind] = set(wanted)
        if kind in ("prompts", "resources"):
            self.sync_completions()
        if kind in ("tools", "resources"):
            changed = self.sync_views() or changed
        return changed

    def sync_views(self) -> bool:
        """Mirror the child's MCP Apps views (by URI) and tool links (under the tools' names here)."""
        child_apps = self.child.extensions.get(APPS)
        if child_apps is None:
            return False
        parent_apps = self.parent.extensions.get(APPS)
        if parent_apps is None:  # the parent serves the extension from now on
            parent_apps = self.parent.add_extension(type(child_apps)())
        for uri in self.views:
            parent_apps.views.pop(uri, None)
        for name in self.links:
            parent_apps.links.pop(name, None)
        parent_apps.views.update(child_apps.views)
        self.views = set(child_apps.views)
        self.links = set()
        for name, meta in child_apps.links.items():
            placed = self.placed.get(self.name_in_parent(name))
            if placed is not None:
                parent_apps.links[placed] = meta
                self.links.add(placed)
        return bool(self.views or self.links)

    def _sync_tools(self, wanted: dict[str, Any], before: set[str]) -> bool:
        tools = self.parent.tools
        changed = False
        for name in before - set(wanted):
            placed = self.placed.pop(name, None)
            if placed is not None:
                tools.remove(placed)
                changed = True
        for name, tool in wanted.items():
            placed = self.placed.get(name)
            current = tools.get(placed) if placed is not None else None
            if current is not None and current.source is tool:
                continue
            if placed is not None:
                tools.remove(placed)
            mirrored = self._tool_copy(tool, name)
            if mirrored is None:  # hidden by the parent
                self.placed.pop(name, None)
            else:
                tools.add(mirrored)
                self.placed[name] = mirrored.name  # a transform in the parent may have renamed it
            changed = True
        return changed

    def _tool_copy(self, tool: Any, name: str) -> Any:
        mirrored = copy.copy(tool)
        mirrored.name = name
        mirrored._wire = None  # the wire definition names the tool
        mirrored.source = tool
        mirrored.untransformed = None  # a transform in the parent starts from the tool as the child serves it
        mirrored.owner = tool.owner if tool.owner is not None else self.child
        return self.parent.transformed(mirrored)

    def _sync_prompts(self, wanted: dict[str, Any], before: set[str]) -> bool:
        prompts = self.parent.prompts
        changed = False
        for name in before - set(wanted):
            prompts.pop(name, None)
            changed = True
        for name, entry in wanted.items():
            current = prompts.get(name)
            if current is not None and current.source is entry:
                continue
            prompts[name] = dataclasses.replace(entry, name=name, source=entry,
                                                owner=entry.owner if entry.owner is not None else self.child)
            changed = True
        return changed

    def _sync_resources(self, wanted: dict[str, Any], before: set[str]) -> bool:
        registry = self.parent.resources
        changed = False
        for uri in before - set(wanted):
            registry.remove(uri)
            changed = True
        for uri, entry in wanted.items():
            current = registry.fixed.get(uri) or registry.templates.get(uri)
            if current is entry:
                continue
            if entry.owner is None:  # read with the child's lifespan state, wherever it is served from
                entry.owner = self.child
            registry.add(entry)
            changed = True
        return changed

    def sync_completions(self) -> None:
        """Mirror the child's completions: a prompt's under its new name, a template's under its URI."""
        providers = self.parent.completions.providers
        for key in self.completions:
            providers.pop(key, None)
        self.completions = set()
        for (kind, ref, argument), fn in self.child.completions.providers.items():
            key = (kind, self.name_in_parent(ref) if kind == "ref/prompt" else ref, argument)
            providers[key] = fn
            self.completions.add(key)

    def list_resources(self) -> Any:
        """The child's dynamic resources (its listers), for the parent's `resources/list`."""

        async def listed() -> list[dict[str, Any]]:
            # its skills are served by the parent's own catalog (see `Application.mount`), not listed here
            skills = self.child.extensions.get(SKILLS)
            catalog = getattr(skills, "catalog", None)
            result: list[dict[str, Any]] = await self.child.resources.dynamic(
                skip=catalog.resources if catalog is not None else None)
            return result

        return listed


__all__ = ["Mount", "MountCollision", "check_mountable"]
