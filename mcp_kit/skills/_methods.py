"""Skills on the wire (SEP-2640): `skills/list`, `skills/get`, `resources/directory/read`, and
`resources/read` of `skill://` URIs, answered from the application's `SkillCatalog`.

`Skills` is the extension (`_app/extension.py`) serving them; `app.add_skills` adds it, so without skills
the methods do not exist (-32601). In 2026-07-28 the three listing methods carry cache hints.

Imports the context, the extension base and the skills package; never the application, the session or a
transport.
"""

from __future__ import annotations

import functools
from typing import Any

from .._app.context import Context
from .._app.extension import Extension
from .._protocol.errors import ResourceNotFound, invalid_params
from .._protocol.versions import is_stateless
from . import EXTENSION_ID, SkillCatalog


def _cursor(params: dict[str, Any]) -> str | None:
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise invalid_params("'cursor' must be the nextCursor string of a previous page")
    return cursor


def _uri(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise invalid_params("'uri' is required (a string)")
    return uri


async def _skills_list(catalog: SkillCatalog, params: dict[str, Any], ctx: Context) -> Any:
    entries, next_cursor = catalog.list_page(_cursor(params))
    result: dict[str, Any] = {"skills": entries}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def _skills_get(catalog: SkillCatalog, params: dict[str, Any], ctx: Context) -> Any:
    return {"skill": catalog.get(_uri(params)).entry()}


async def _directory_read(catalog: SkillCatalog, params: dict[str, Any], ctx: Context) -> Any:
    children, next_cursor = catalog.directory_page(_uri(params), _cursor(params))
    result: dict[str, Any] = {"resources": children}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def read_skill_file(catalog: SkillCatalog, uri: str, ctx: Context) -> dict[str, Any]:
    """`resources/read` of a `skill://` URI: the file from memory (so it always matches its digest)."""
    found = catalog.file(uri)
    if found is None:
        raise ResourceNotFound(uri, f"Resource not found: {uri} is no file of a skill this server serves; "
                                    "skills/list names every file")
    return {"contents": found.contents()}


SKILL_ROUTES = {
    "skills/list": _skills_list,
    "skills/get": _skills_get,
    "resources/directory/read": _directory_read,
}


class Skills(Extension):
    """Agent Skills as an extension: declared in 2025-11-25 and 2026-07-28 (`directoryRead`), the three
    listing methods, `skill://` reads, and the resources capability (each file is a resource)."""

    id = EXTENSION_ID
    cacheable = frozenset(SKILL_ROUTES)

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog

    def bind(self, app: Any) -> None:
        super().bind(app)
        app.resources.listers.append(self.catalog.resources)

    def settings(self, version: str) -> dict[str, Any] | None:
        return {"directoryRead": True} if version == "2025-11-25" or is_stateless(version) else None

    def server_capabilities(self, version: str) -> dict[str, Any]:
        return {"resources": {"subscribe": True, "listChanged": True}}

    def methods(self) -> dict[str, Any]:
        return {name: functools.partial(route, self.catalog) for name, route in SKILL_ROUTES.items()}

    def owns_uri(self, uri: str) -> bool:
        return uri.startswith("skill://")

    async def read_resource(self, uri: str, ctx: Context) -> dict[str, Any] | None:
        return read_skill_file(self.catalog, uri, ctx) if uri.startswith("skill://") else None
