"""The facade's pages for a person in a browser: the consent screen and the error page, and the audit trail.

The consent screen names the MCP client (and says when its name is only what it registered with),
where its tokens will be sent (the redirect URI), the scopes it asks for, and what this server will
ask the identity provider for. Its form carries a CSRF token bound to this browser and this
authorization. Every page is HTML-escaped, forbids framing (`frame-ancestors 'none'`,
`X-Frame-Options: DENY`) and caching, and loads nothing.

`audit(...)` writes one structured record per flow step to the `mcp_kit.auth.facade` logger
(the JSON record as the message, and as `record.oauth_audit`) and to the configured sink. Records
name steps, clients, users, scopes and outcomes, never a token, code, state, verifier or secret.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

logger = logging.getLogger("mcp_kit.auth.facade")

PAGE_HEADERS = [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-store"),
                (b"pragma", b"no-cache"), (b"x-frame-options", b"DENY"),
                (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
                (b"referrer-policy", b"no-referrer"), (b"x-content-type-options", b"nosniff")]

_STYLE = ("body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}"
          "code{background:#f3f3f3;padding:0 .2rem}button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}"
          ".note{color:#666;font-size:.9rem}")


def _page(title: str, body: str) -> bytes:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<meta name=viewport content='width=device-width'><style>{_STYLE}</style></head>"
            f"<body>{body}</body></html>").encode()


def consent_page(*, client: dict[str, Any], redirect_uri: str, scopes: list[str], upstream_scopes: list[str],
                 provider: str, server: str, pending_id: str, csrf: str, action: str) -> bytes:
    e = html.escape
    name = client.get("client_name") or ""
    if client.get("metadata_document"):
        who = f"<b>{e(name or urlsplit(client['client_id']).hostname or '')}</b> " \
              f"<span class=note>(described at {e(client['client_id'])})</span>"
    else:
        who = (f"<b>{e(name)}</b> <span class=note>(the name it registered with; not verified)</span>" if name
               else f"an MCP client that gave no name (<code>{e(client['client_id'])}</code>)")
    scope_list = "".join(f"<li><code>{e(s)}</code></li>" for s in scopes) or "<li>no particular scope</li>"
    upstream = " ".join(upstream_scopes)
    body = (f"<h1>Allow access to {e(server)}?</h1>"
            f"<p>{who} wants to use {e(server)} on your behalf.</p>"
            f"<p>It asks for:</p><ul>{scope_list}</ul>"
            f"<p>You will sign in with <b>{e(provider)}</b>, which this server asks for "
            f"<code>{e(upstream) or '(no scopes)'}</code>.</p>"
            f"<p>Tokens will be sent to <code>{e(redirect_uri)}</code>.</p>"
            f"<p class=note>Approve only if you started this from an application you trust.</p>"
            f"<form method=post action='{e(action)}'>"
            f"<input type=hidden name=pending value='{e(pending_id)}'>"
            f"<input type=hidden name=csrf value='{e(csrf)}'>"
            f"<button type=submit name=decision value=approve>Approve</button>"
            f"<button type=submit name=decision value=deny>Deny</button></form>")
    return _page("Authorize an MCP client", body)


def error_page(error: str, description: str) -> bytes:
    body = (f"<h1>This authorization cannot continue</h1><p><code>{html.escape(error)}</code>: "
            f"{html.escape(description)}</p><p class=note>Go back to the application and start again.</p>")
    return _page("Authorization error", body)


def audit(sink: Callable[[dict[str, Any]], None] | None, step: str, outcome: str = "ok", **fields: Any) -> None:
    """One audit record for one step of a flow (never pass a secret in `fields`)."""
    record = {"event": f"oauth.{step}", "outcome": outcome,
              **{key: value for key, value in fields.items() if value is not None}}
    logger.info("%s", json.dumps(record, sort_keys=True, default=str), extra={"oauth_audit": record})
    if sink is not None:
        try:
            sink(record)
        except Exception:
            logger.exception("the OAuth audit sink failed on a %s record", step)
