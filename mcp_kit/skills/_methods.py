"""Skills on the wire (SEP-2640): `skills/list`, `skills/get`, `resources/directory/read`, and
`resources/read` of `skill://` URIs, answered from the application's `SkillCatalog`.

The routes exist only when the server serves skills (`app.add_skills`); otherwise -32601. In
2026-07-28 the three listing methods carry cache hints (`methods.CACHEABLE`).

Imports the application, the context and the skills package; never the session or a transport.
"""

from __future__ import annotations

from typing import Any

from .._app.application import Application
from .._app.context import Context
from .._protocol.errors import MCPError, ResourceNotFound, invalid_params
from .._protocol.jsonrpc import METHOD_NOT_FOUND
from . import SkillCatalog


def _catalog(app: Application, method: str) -> SkillCatalog:
    if app.skills is None:
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method} (this server serves no skills)")
    return app.skills


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


async def _skills_list(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    entries, next_cursor = _catalog(app, "skills/list").list_page(_cursor(params))
    result: dict[str, Any] = {"skills": entries}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def _skills_get(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    return {"skill": _catalog(app, "skills/get").get(_uri(params)).entry()}


async def _directory_read(app: Application, params: dict[str, Any], ctx: Context) -> Any:
    children, next_cursor = _catalog(app, "resources/directory/read").directory_page(_uri(params), _cursor(params))
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
