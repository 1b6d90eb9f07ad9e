"""`OAuthGuard`: ASGI middleware that makes the MCP endpoints an OAuth 2.1 resource server.

    app = OAuthGuard(mcp_http_app, AuthConfig(issuer=..., resource="https://mcp.example.com/mcp"))

- Serves Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource` and its
  path-suffixed form (`.../oauth-protected-resource/mcp`), to anyone (it is public, CORS-open).
- In front of `/mcp`, `/sse` and `/messages` it requires `Authorization: Bearer <token>`, validates
  the token (`validator.py`) and the server-wide required scopes, and answers 401 (with
  `resource_metadata` and `scope`), 403 `insufficient_scope`, 400 `invalid_request` or 503 otherwise.
- An authorized request continues with the caller's `AccessToken` in `scope["state"]["access_token"]`
  (`request.state.access_token`; `principal.access_token_of(scope)`), the server's `StepUp` (for a
  transport's 403 on a per-tool scope, `step_up.py`) in `scope["state"]["oauth_step_up"]`, and
  with its Authorization header removed, so nothing behind the guard can see, log or forward the token.
- Every other path (`/healthz`, ...) passes untouched. Tokens are never logged: rejections log a
  short SHA-256 fingerprint.

Attributes of the wrapped app (`router`, `state`, `session_table`) are reachable through the guard.
Imports nothing from mcp_kit but `auth.*`; knows nothing of MCP messages.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable
from typing import Any

import anyio

from ._challenge import bearer_challenge
from ._config import AuthConfig
from ._errors import AuthError, AuthServerUnavailable, InvalidRequest, InvalidToken, StepUpRequired
from ._metadata import metadata_document, metadata_paths, metadata_url
from ._principal import STATE_KEY, AccessToken
from ._step_up import STATE_KEY as STEP_UP_KEY
from ._step_up import StepUp
from ._validator import TokenValidator

logger = logging.getLogger("mcp_kit.auth")
STARTUP_CHECK_SECONDS = 5.0  # how long the startup look at the issuer may hold the start

PROTECTED_PATHS = ("/mcp", "/sse", "/messages", "/messages/")
_B64TOKEN = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")
ASGIApp = Any


class OAuthGuard:
    """The resource-server guard around an ASGI app (usually `MCPServer.asgi()`'s)."""

    def __init__(self, app: ASGIApp, auth: AuthConfig | TokenValidator, *,
                 protected_paths: Iterable[str] = PROTECTED_PATHS) -> None:
        self.app = app
        self.validator = auth if isinstance(auth, TokenValidator) else TokenValidator(auth)
        self.config = self.validator.config
        self.protected = frozenset(protected_paths)
        self._metadata_paths = frozenset(metadata_paths(self.config))
        self._metadata_body = json.dumps(metadata_document(self.config)).encode()
        self.resource_metadata = metadata_url(self.config)
        self.step_up = StepUp(self.resource_metadata, self.config.required_scopes)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, self._closing_on_shutdown(receive), send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = _app_path(scope)
        if path in self._metadata_paths or scope["path"] in self._metadata_paths:
            await self._serve_metadata(scope, send)
            return
        if path not in self.protected or scope["method"] == "OPTIONS":  # CORS preflights carry no credentials
            await self.app(scope, receive, send)
            return
        try:
            principal = await self.authorize(scope)
        except AuthError as error:
            await self._reject(scope, send, error)
            return
        state = dict(scope.get("state") or {})
        state[STATE_KEY] = principal
        state[STEP_UP_KEY] = self.step_up
        inner = {**scope, "state": state, "headers": [(k, v) for k, v in scope["headers"] if k != b"authorization"]}
        await self.app(inner, receive, send)

    async def authorize(self, scope: dict[str, Any]) -> AccessToken:
        """The caller's AccessToken, checked against the server-wide required scopes; AuthError otherwise."""
        token = bearer_token(scope)
        if token is None:
            raise _NoCredentials("send 'Authorization: Bearer <access token>'; the Protected Resource Metadata "
                                 f"at {self.resource_metadata} names the authorization server")
        try:
            principal = await self.validator.validate(token)
        except AuthError as error:
            logger.info("refused a token (sha256 %s…) on %s %s: %s", _fingerprint(token), scope["method"],
                        scope["path"], error.description)
            raise
        missing = principal.missing(self.config.required_scopes, self.config.scope_implies)
        if missing:
            raise StepUpRequired(f"this server requires the scope(s) {' '.join(missing)}",
                                    self.config.required_scopes)
        return principal

    # ------------------------------------------------------------------ answers

    async def _serve_metadata(self, scope: dict[str, Any], send: Any) -> None:
        cors = [(b"access-control-allow-origin", b"*"), (b"access-control-allow-methods", b"GET, OPTIONS"),
                (b"access-control-allow-headers", b"*")]
        if scope["method"] == "OPTIONS":
            await _respond(send, 204, cors, b"")
        elif scope["method"] in ("GET", "HEAD"):
            headers = [(b"content-type", b"application/json"), (b"cache-control", b"public, max-age=300"), *cors]
            await _respond(send, 200, headers, self._metadata_body, head=scope["method"] == "HEAD")
        else:
            await _respond(send, 405, [(b"allow", b"GET, HEAD, OPTIONS")], b"")

    async def _reject(self, scope: dict[str, Any], send: Any, error: AuthError) -> None:
        headers: list[tuple[bytes, bytes]] = [(b"content-type", b"application/json")]
        if isinstance(error, AuthServerUnavailable):
            logger.warning(
                "could not check credentials on %s %s: %s", scope["method"], scope["path"], error.description
            )
            headers.append((b"retry-after", b"5"))
        else:
            scopes = error.scopes if isinstance(error, StepUpRequired) else self.config.required_scopes
            challenge = bearer_challenge(
                resource_metadata=self.resource_metadata,
                scopes=scopes,
                error=error.error,
                error_description=error.description if error.error else None,
            )
            headers.append((b"www-authenticate", challenge.encode("latin-1", "replace")))
        message = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable"}[error.status]
        body = json.dumps({"jsonrpc": "2.0", "id": None,
                           "error": {"code": -32600, "message": f"{message}: {error.description}",
                                     "data": {"error": error.error} if error.error else None}}).encode()
        await _respond(send, error.status, headers, body)

    async def check_issuer(self) -> bool:
        """At startup: fetch the issuer's metadata as the first request would (and keep it), so that a wrong or
        unreachable `--oauth-issuer` is logged when the server starts, not at its first client. The server
        still starts (the authorization server may come up later); True when the issuer answered."""
        config = self.config
        if config.jwks_uri and (config.introspection_url or not config.introspection_client_id):
            return True  # nothing is looked up in the metadata
        try:
            with anyio.fail_after(STARTUP_CHECK_SECONDS):
                await self.validator.metadata()
        except Exception as exc:  # any failure is reported, none stops the server
            reason = getattr(exc, "description", None) or str(exc) or type(exc).__name__
            logger.error("OAuth: the issuer %s cannot be used: %s; every access token is refused until it answers "
                         "(check --oauth-issuer / MCP_OAUTH_ISSUER)", config.issuer, reason)
            return False
        return True

    def _closing_on_shutdown(self, receive: Any) -> Any:
        async def wrapped() -> Any:
            message = await receive()
            if message.get("type") == "lifespan.startup":
                await self.check_issuer()
            if message.get("type") == "lifespan.shutdown":
                await self.validator.aclose()
            return message

        return wrapped


class _NoCredentials(InvalidToken):
    """No bearer token at all: a 401 without an error code (RFC 6750 section 3.1)."""

    error = None


def bearer_token(scope: dict[str, Any]) -> str | None:
    """The bearer token of a request (None when it sends none); InvalidRequest / InvalidToken when malformed."""
    if b"access_token=" in scope.get("query_string", b""):
        raise InvalidRequest("access tokens must be sent in the Authorization header, never in the URL")
    values = [v for k, v in scope["headers"] if k == b"authorization"]
    if len(values) > 1:
        raise InvalidRequest("send exactly one Authorization header")
    if not values:
        return None
    scheme, _, token = values[0].decode("latin-1").strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    if not token:
        raise InvalidRequest("the Authorization header has the Bearer scheme but no token")
    if not _B64TOKEN.match(token):
        raise InvalidToken("the access token is malformed")
    return token


def _app_path(scope: dict[str, Any]) -> str:
    root = scope.get("root_path", "")
    path: str = scope["path"]
    return path[len(root):] if root and path.startswith(root) else path


def _fingerprint(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()[:12]


async def _respond(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes, head: bool = False) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})
