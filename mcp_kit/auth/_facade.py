"""`AuthorizationFacade`: the MCP server as its clients' OAuth 2.1 authorization server, signing users in
at an upstream identity provider that offers MCP clients no registration of their own.

    GET  /.well-known/oauth-authorization-server   RFC 8414 metadata naming this server as issuer
    POST /register                                  RFC 7591 dynamic client registration
    GET  /authorize                                 the client's authorization request -> the consent page
    POST /oauth/consent                             the person's decision -> the upstream sign-in
    GET  /oauth/callback                            back from the upstream provider -> the client's redirect URI
    POST /token                                     authorization_code (PKCE S256) and refresh_token grants
    POST /revoke                                    RFC 7009: revokes the whole grant a token belongs to
    GET  /oauth/jwks                                the public key of the facade's access tokens

A flow, step by step, each step free to land on another process (every record in the backend):
the client's request is checked (known client, a registered redirect URI, S256 PKCE, this
resource, supported scopes) before anything else; errors before the redirect URI is trusted are
shown as a page, never redirected. The consent page comes first (per client and user; skipped only
when this browser's signed user cookie names a user who approved this client for these scopes and
this redirect URI before, and that user is the one who then signs in upstream). Only after approval
is the upstream `state` created, stored server-side and set in a cookie, and the browser sent to
the provider with the server's own client and its own PKCE. The callback needs that cookie's
state, takes the upstream record once, exchanges the code (the client secret is sent only there),
learns who signed in, and stores a grant (the user, the client, the scopes, the upstream tokens).
The client gets a one-time code (`code_ttl`), and for it, with its PKCE verifier, a short-lived
access token (`_facade_tokens.py`) and a refresh token that rotates on every use. A redeemed code
presented again, or a rotated refresh token used again, revokes the grant: every token it gave
dies at once. Upstream tokens stay in the grant; a tool reaches the caller's with
`await ctx.upstream_token()` (`upstream_token_of`).

`FacadeGuard` puts the facade's endpoints in front of `OAuthGuard`, whose resource metadata names
the facade as the authorization server and whose validator accepts only the facade's tokens.
Imports nothing from mcp_kit but `auth.*`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import anyio

from .._errors import MCPKitError
from ._errors import UpstreamTokenUnavailable
from ._facade_clients import AUTH_METHODS, ClientRefused, Clients, client_secret_ok, redirect_matches
from ._facade_config import FacadeConfig
from ._facade_pages import PAGE_HEADERS, audit, consent_page, error_page
from ._facade_store import FacadeBackend, FacadeStore, digest
from ._facade_tokens import FacadeValidator, SigningKey, TokenIssuer
from ._facade_upstream import Upstream, UpstreamSignInError
from ._metadata import metadata_paths
from ._middleware import OAuthGuard
from ._principal import AccessToken
from ._resource_uri import canonical_resource
from ._scopes import parse_scopes

AS_METADATA = "/.well-known/oauth-authorization-server"
MAX_FORM_BYTES = 16384
MAX_PARAM_LENGTH = 2048
VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")
CHALLENGE = re.compile(r"^[A-Za-z0-9\-_]{43}$")
UPSTREAM_REFRESH_MARGIN = 60.0
JSON_HEADERS = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"), (b"pragma", b"no-cache")]
CORS = [(b"access-control-allow-origin", b"*"), (b"access-control-allow-methods", b"GET, POST, OPTIONS"),
        (b"access-control-allow-headers", b"authorization, content-type, mcp-protocol-version")]

logger = logging.getLogger("mcp_kit.auth.facade")
_FACADES: dict[str, AuthorizationFacade] = {}  # issuer -> the facade of this process, for `upstream_token_of`


class OAuthRefusal(MCPKitError):
    """An OAuth error answer: `error`, a description safe to show, and the HTTP status."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status


@dataclass(frozen=True)
class UpstreamToken:
    """The caller's token at the upstream provider, for a tool that calls the provider's API on their behalf."""

    access_token: str = field(repr=False)
    token_type: str
    expires_at: float | None
    scopes: tuple[str, ...]
    provider: str

    @property
    def authorization(self) -> str:
        """The value of an `Authorization` header for the provider's API."""
        return f"Bearer {self.access_token}"


@dataclass
class _Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    cookies: dict[str, str]
    body: bytes
    duplicate_params: bool = False


class AuthorizationFacade:
    """The facade's endpoints over one backend (see the module docstring)."""

    def __init__(self, config: FacadeConfig, backend: FacadeBackend, *, upstream: Upstream | None = None) -> None:
        self.config = config
        self.backend = backend
        self.store = FacadeStore(backend)
        self.signing_key = SigningKey(self.store)
        self.tokens = TokenIssuer(config, self.signing_key)
        self.validator = FacadeValidator(config, self.store, self.signing_key)
        self.clients = Clients(config, self.store)
        self.upstream = upstream or Upstream(config)
        issuer = str(config.issuer)
        self.issuer = issuer
        base = urlsplit(issuer).path.rstrip("/")
        self.secure = issuer.startswith("https://")
        prefix = "__Host-" if self.secure else ""
        self.cookie_browser, self.cookie_state, self.cookie_user = (f"{prefix}mcp_oauth_{name}"
                                                                    for name in ("browser", "state", "user"))
        self.routes = {
            AS_METADATA + base: self._metadata, f"{base}/register": self._register,
            f"{base}/authorize": self._authorize, f"{base}/oauth/consent": self._consent,
            f"{base}/oauth/callback": self._callback, f"{base}/token": self._token,
            f"{base}/revoke": self._revoke, f"{base}/oauth/jwks": self._jwks,
        }
        self._cookie_key: bytes | None = None
        _FACADES[issuer] = self

    def endpoint(self, path: str) -> str:
        return f"{self.issuer}{path}"

    async def aclose(self) -> None:
        await self.clients.aclose()
        await self.upstream.aclose()
        await self.validator.aclose()
        if _FACADES.get(self.issuer) is self:
            del _FACADES[self.issuer]

    def audit(self, step: str, outcome: str = "ok", **fields: Any) -> None:
        audit(self.config.audit, step, outcome, **fields)

    # ------------------------------------------------------------------ ASGI

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> bool:
        """Answer `scope` when it is one of the facade's endpoints; False when it is not."""
        path = scope["path"]
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        handler = self.routes.get(path)
        if handler is None:
            return False
        if scope["method"] == "OPTIONS":
            await _respond(send, 204, CORS, b"")
            return True
        try:
            request = await _read_request(scope, receive, path)
        except OAuthRefusal as failure:
            await self._json_error(send, failure)
            return True
        try:
            await handler(request, send)
        except MCPKitError as exc:  # the backend (Redis) did not answer
            logger.warning("the OAuth facade could not answer %s %s: %s", scope["method"], path, exc)
            await _respond(send, 503, [*JSON_HEADERS, (b"retry-after", b"2")], json.dumps({
                "error": "temporarily_unavailable", "error_description": "try again shortly"}).encode())
        return True

    # ------------------------------------------------------------------ metadata

    def metadata(self) -> dict[str, Any]:
        return {"issuer": self.issuer, "authorization_endpoint": self.endpoint("/authorize"),
                "token_endpoint": self.endpoint("/token"), "registration_endpoint": self.endpoint("/register"),
                "revocation_endpoint": self.endpoint("/revoke"), "jwks_uri": self.endpoint("/oauth/jwks"),
                "response_types_supported": ["code"], "response_modes_supported": ["query"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
                "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
                "scopes_supported": list(self.config.published_scopes),
                "client_id_metadata_document_supported": True,
                "authorization_response_iss_parameter_supported": True}

    async def _metadata(self, request: _Request, send: Any) -> None:
        if request.method not in ("GET", "HEAD"):
            await _respond(send, 405, [(b"allow", b"GET, HEAD, OPTIONS")], b"")
            return
        await _respond(send, 200, [(b"content-type", b"application/json"), (b"cache-control", b"public, max-age=300"),
                                   *CORS], json.dumps(self.metadata()).encode(), head=request.method == "HEAD")

    async def _jwks(self, request: _Request, send: Any) -> None:
        await _respond(send, 200, [(b"content-type", b"application/json"), *CORS],
                       json.dumps(await self.signing_key.jwks()).encode())

    # ------------------------------------------------------------------ registration

    async def _register(self, request: _Request, send: Any) -> None:
        if request.method != "POST":
            await _respond(send, 405, [(b"allow", b"POST, OPTIONS")], b"")
            return
        try:
            body = json.loads(request.body or b"null")
        except ValueError:
            body = None
        try:
            answer = await self.clients.register(body)
        except ClientRefused as exc:
            self.audit("register", "refused", error=exc.error, reason=exc.description)
            await self._json_error(send, OAuthRefusal(exc.error, exc.description))
            return
        self.audit("register", client_id=answer["client_id"], client_name=answer["client_name"] or None,
                   redirect_uris=answer["redirect_uris"], auth_method=answer["token_endpoint_auth_method"])
        await _respond(send, 201, [*JSON_HEADERS, *CORS], json.dumps(answer).encode())

    # ------------------------------------------------------------------ the authorization request

    async def _authorize(self, request: _Request, send: Any) -> None:
        query = request.query
        client_id = query.get("client_id", "")
        redirect_uri = query.get("redirect_uri", "")
        if request.method != "GET":
            await self._page_error(send, "invalid_request", "the authorization request is a GET", 405)
            return
        try:
            client = await self.clients.find(client_id)
        except ClientRefused as exc:
            self.audit("authorize", "refused", client_id=client_id[:200], error=exc.error, reason=exc.description)
            await self._page_error(send, exc.error, exc.description)
            return
        if client is None:
            self.audit("authorize", "refused", client_id=client_id[:200] or None, error="invalid_client")
            await self._page_error(send, "invalid_client", "this client is not registered here (register it first)")
            return
        if request.duplicate_params:
            await self._page_error(send, "invalid_request", "a parameter was sent more than once")
            return
        if not redirect_uri or not redirect_matches(redirect_uri, client["redirect_uris"]):
            self.audit("authorize", "refused", client_id=client_id, error="invalid_request",
                       reason="redirect_uri not registered")
            await self._page_error(send, "invalid_request", "the redirect_uri is not one this client registered "
                                                            "(it must match exactly)")
            return
        state = query.get("state")
        try:
            scopes = self._check_authorization_request(query)
        except OAuthRefusal as failure:
            self.audit("authorize", "refused", client_id=client_id, error=failure.error, reason=failure.description)
            await self._redirect(send, redirect_uri, {"error": failure.error,
                                                      "error_description": failure.description, "state": state})
            return
        browser = request.cookies.get(self.cookie_browser) or secrets.token_urlsafe(24)
        pending = {"client_id": client_id, "redirect_uri": redirect_uri, "state": state,
                   "code_challenge": query["code_challenge"], "scopes": scopes, "browser": digest(browser),
                   "phase": "before"}
        remembered = await self._remembered_user(request)
        if remembered is not None and await self._consented(remembered, client_id, redirect_uri, scopes):
            pending["remembered"] = remembered
            self.audit("authorize", client_id=client_id, scopes=scopes, consent="remembered")
            await self._to_upstream(send, pending, approved=False)
            return
        self.audit("authorize", client_id=client_id, scopes=scopes, consent="asked")
        await self._show_consent(send, pending, client, browser)

    def _check_authorization_request(self, query: Mapping[str, str]) -> list[str]:
        if query.get("response_type") != "code":
            raise OAuthRefusal("unsupported_response_type", "only response_type=code is supported")
        if not query.get("code_challenge"):
            raise OAuthRefusal("invalid_request", "PKCE is required: send code_challenge, code_challenge_method=S256")
        if query.get("code_challenge_method") != "S256":
            raise OAuthRefusal("invalid_request", "only code_challenge_method=S256 is supported")
        if not CHALLENGE.match(query["code_challenge"]):
            raise OAuthRefusal("invalid_request", "code_challenge is the base64url SHA-256 of the verifier (43 chars)")
        if len(query.get("state") or "") > 1024:
            raise OAuthRefusal("invalid_request", "state is too long")
        self._check_resource(query.get("resource"))
        return self._check_scopes(query.get("scope"))

    def _check_resource(self, resource: str | None) -> None:
        if resource is None:
            return
        try:
            same = canonical_resource(resource) == self.config.resource
        except ValueError:
            same = False
        if not same:
            raise OAuthRefusal("invalid_target", f"this server issues tokens only for {self.config.resource}")

    def _check_scopes(self, scope: str | None) -> list[str]:
        requested = sorted(parse_scopes(scope)) if scope else []
        offered = set(self.config.published_scopes) | set(self.config.required_scopes)
        unknown = [s for s in requested if s not in offered and s != "offline_access"]
        if unknown:
            raise OAuthRefusal("invalid_scope", f"unknown scope(s): {' '.join(unknown)[:200]}; offered: "
                                                f"{' '.join(sorted(offered))}")
        scopes = [s for s in requested if s != "offline_access"]
        return list(dict.fromkeys([*self.config.required_scopes, *scopes]))

    # ------------------------------------------------------------------ consent

    async def _show_consent(self, send: Any, pending: dict[str, Any], client: dict[str, Any], browser: str) -> None:
        pending_id = secrets.token_urlsafe(24)
        csrf = secrets.token_urlsafe(24)
        await self.store.put("pending", pending_id, {**pending, "csrf": csrf}, self.config.pending_ttl)
        page = consent_page(client=client, redirect_uri=pending["redirect_uri"], scopes=pending["scopes"],
                            upstream_scopes=self.upstream.scopes_for(pending["scopes"]),
                            provider=self.config.upstream.name, server=self.config.resource_name or self.issuer,
                            pending_id=pending_id, csrf=csrf, action=self.endpoint("/oauth/consent"))
        self.audit("consent_shown", client_id=pending["client_id"], phase=pending["phase"])
        await _respond(send, 200, [*PAGE_HEADERS, self._cookie(self.cookie_browser, browser, None)], page)

    async def _consent(self, request: _Request, send: Any) -> None:
        if request.method != "POST":
            await self._page_error(send, "invalid_request", "the consent form is posted", 405)
            return
        origin = request.headers.get("origin")
        if origin is not None and origin != _origin(self.issuer):
            self.audit("consent", "refused", reason="cross-origin form")
            await self._page_error(send, "invalid_request", "the consent form came from another site", 403)
            return
        form = _form(request.body)
        pending = await self.store.take("pending", form.get("pending", "")[:100]) if form.get("pending") else None
        if pending is None:
            self.audit("consent", "refused", reason="unknown or used consent form")
            await self._page_error(send, "invalid_request", "this consent form has expired or was already used")
            return
        browser = request.cookies.get(self.cookie_browser, "")
        if not (secrets.compare_digest(form.get("csrf", ""), pending["csrf"])
                and secrets.compare_digest(digest(browser), pending["browser"])):
            self.audit("consent", "refused", client_id=pending["client_id"], reason="CSRF check failed")
            await self._page_error(send, "invalid_request", "the consent form did not come from this browser", 403)
            return
        if form.get("decision") != "approve":
            self.audit("consent", "denied", client_id=pending["client_id"], user=pending.get("sub"))
            await self._redirect(send, pending["redirect_uri"], {"error": "access_denied", "state": pending["state"],
                                                                 "error_description": "the user denied access"})
            return
        self.audit("consent", "approved", client_id=pending["client_id"], scopes=pending["scopes"],
                   phase=pending["phase"], user=pending.get("sub"))
        if pending["phase"] == "after":  # approved after signing in (the remembered user was someone else)
            await self._remember_consent(pending["sub"], pending["client_id"], pending["redirect_uri"],
                                         pending["scopes"])
            await self._finish(send, pending, pending["identity"], pending["upstream_tokens"], pending["scopes"])
            return
        await self._to_upstream(send, pending, approved=True)

    async def _to_upstream(self, send: Any, pending: dict[str, Any], *, approved: bool) -> None:
        """Send the browser to the provider; the state is stored and set in a cookie only now."""
        state = secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(48)
        nonce = secrets.token_urlsafe(24)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        await self.store.put("upstream", digest(state), {"pending": pending, "verifier": verifier, "nonce": nonce,
                                                         "approved": approved}, self.config.pending_ttl)
        try:
            url = await self.upstream.authorization_url(state=state, challenge=challenge, nonce=nonce,
                                                        mcp_scopes=pending["scopes"])
        except UpstreamSignInError as exc:
            self.audit("upstream_redirect", "failed", client_id=pending["client_id"], reason=exc.description)
            await self._redirect(send, pending["redirect_uri"], {"error": "temporarily_unavailable",
                                                                 "error_description": exc.description,
                                                                 "state": pending["state"]})
            return
        self.audit("upstream_redirect", client_id=pending["client_id"], provider=self.config.upstream.name)
        await _respond(send, 303, [(b"location", url.encode()), (b"cache-control", b"no-store"),
                                   self._cookie(self.cookie_state, state, self.config.pending_ttl)], b"")

    # ------------------------------------------------------------------ back from the provider

    async def _callback(self, request: _Request, send: Any) -> None:
        query = request.query
        state = query.get("state", "")
        cookie = request.cookies.get(self.cookie_state, "")
        if not state or not cookie or not secrets.compare_digest(state, cookie):
            self.audit("callback", "refused", reason="state does not match this browser's")
            await self._page_error(send, "invalid_request", "this sign-in was not started in this browser "
                                                            "(its state does not match)")
            return
        flow = await self.store.take("upstream", digest(state))
        if flow is None:
            self.audit("callback", "refused", reason="unknown, expired or used state")
            await self._page_error(send, "invalid_request", "this sign-in has expired or was already completed")
            return
        pending = flow["pending"]
        client_id = pending["client_id"]
        if "error" in query:
            code = re.sub(r"[^a-z_]", "", query["error"].lower())[:40] or "error"
            self.audit("callback", "denied", client_id=client_id, upstream_error=code)
            await self._redirect(send, pending["redirect_uri"], {
                "error": "access_denied", "state": pending["state"],
                "error_description": f"the identity provider refused the sign-in ({code})"}, clear_state=True)
            return
        try:
            if not query.get("code"):
                raise UpstreamSignInError("the identity provider sent no code")
            tokens, identity = await self.upstream.exchange(query["code"], flow["verifier"], flow["nonce"])
        except UpstreamSignInError as exc:
            self.audit("callback", "failed", client_id=client_id, reason=exc.description)
            await self._redirect(send, pending["redirect_uri"], {"error": exc.error, "state": pending["state"],
                                                                 "error_description": exc.description},
                                 clear_state=True)
            return
        scopes = self._granted(pending["scopes"], tokens.get("scope"))
        sub = identity["sub"]
        self.audit("callback", client_id=client_id, user=sub, scopes=scopes)
        if flow["approved"]:
            await self._remember_consent(sub, client_id, pending["redirect_uri"], scopes)
        elif pending.get("remembered") != sub or not await self._consented(sub, client_id, pending["redirect_uri"],
                                                                           scopes):
            client = await self.clients.find(client_id)
            if client is None:
                await self._page_error(send, "invalid_client", "this client is no longer registered")
                return
            after = {**pending, "phase": "after", "sub": sub, "identity": identity, "upstream_tokens": tokens,
                     "scopes": scopes}
            await self._show_consent(send, after, client, request.cookies.get(self.cookie_browser)
                                     or secrets.token_urlsafe(24))
            return
        await self._finish(send, pending, identity, tokens, scopes)

    def _granted(self, requested: list[str], upstream_granted: list[str] | None) -> list[str]:
        """The MCP scopes whose upstream scopes the provider granted (all, when it does not say)."""
        if upstream_granted is None:
            return requested
        granted = set(upstream_granted)
        return [s for s in requested if all(u in granted for u in self.config.scope_map.get(s, ()))]

    async def _finish(self, send: Any, pending: dict[str, Any], identity: dict[str, Any], tokens: dict[str, Any],
                      scopes: list[str]) -> None:
        grant_id = secrets.token_urlsafe(18)
        grant = {"client_id": pending["client_id"], "sub": identity["sub"], "profile": identity.get("profile", {}),
                 "scopes": scopes, "upstream": {k: v for k, v in tokens.items() if k != "id_token"},
                 "created": time.time()}
        await self.store.put("grant", grant_id, grant, self.config.pending_ttl)  # until its code is redeemed
        code = secrets.token_urlsafe(32)
        await self.store.put("code", digest(code), {
            "client_id": pending["client_id"], "redirect_uri": pending["redirect_uri"],
            "code_challenge": pending["code_challenge"], "scopes": scopes, "grant": grant_id}, self.config.code_ttl)
        self.audit("code_issued", client_id=pending["client_id"], user=identity["sub"], scopes=scopes,
                   grant=_short(grant_id))
        user_cookie = self._cookie(self.cookie_user, await self._sign_user(identity["sub"]), self.config.consent_ttl)
        await self._redirect(send, pending["redirect_uri"], {"code": code, "state": pending["state"]},
                             clear_state=True, extra=[user_cookie])

    # ------------------------------------------------------------------ the token endpoint

    async def _token(self, request: _Request, send: Any) -> None:
        try:
            if request.method != "POST":
                raise OAuthRefusal("invalid_request", "the token endpoint takes POST", 405)
            form = _form(request.body)
            client = await self._authenticate_client(request, form)
            grant_type = form.get("grant_type")
            if grant_type == "authorization_code":
                answer = await self._code_grant(client, form)
            elif grant_type == "refresh_token":
                answer = await self._refresh_grant(client, form)
            else:
                raise OAuthRefusal("unsupported_grant_type", "grant_type is authorization_code or refresh_token")
        except OAuthRefusal as failure:
            await self._json_error(send, failure, basic=failure.status == 401 and "authorization" in request.headers)
            return
        await _respond(send, 200, [*JSON_HEADERS, *CORS], json.dumps(answer).encode())

    async def _authenticate_client(self, request: _Request, form: dict[str, str]) -> dict[str, Any]:
        header = request.headers.get("authorization", "")
        secret: str | None = None
        method = "none"
        client_id = form.get("client_id", "")
        if header.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
                basic_id, _, basic_secret = decoded.partition(":")
            except (ValueError, UnicodeDecodeError):
                raise OAuthRefusal("invalid_client", "the Basic credentials are malformed", 401) from None
            if client_id and client_id != unquote(basic_id):
                raise OAuthRefusal("invalid_request", "two different client ids were sent")
            client_id, secret, method = unquote(basic_id), unquote(basic_secret), "client_secret_basic"
        elif "client_secret" in form:
            secret, method = form["client_secret"], "client_secret_post"
        if not client_id:
            raise OAuthRefusal("invalid_client", "the request names no client (client_id)", 401)
        try:
            client = await self.clients.find(client_id)
        except ClientRefused as exc:
            raise OAuthRefusal("invalid_client", exc.description, 401) from None
        registered = (client or {}).get("token_endpoint_auth_method", "none")
        if client is None or registered != method or (method != "none" and not client_secret_ok(client, secret)):
            self.audit("token", "refused", client_id=client_id[:200], error="invalid_client")
            raise OAuthRefusal("invalid_client", "client authentication failed", 401)
        return client

    async def _code_grant(self, client: dict[str, Any], form: dict[str, str]) -> dict[str, Any]:
        code = form.get("code", "")
        client_id = client["client_id"]
        record = await self._take_once("code", "code-used", code, client_id, what="authorization code",
                                       reuse="code_replay", step="token", param="code",
                                       grant_type="authorization_code")
        await self.store.put("code-used", digest(code), {"grant": record["grant"]},
                             max(600.0, 10 * self.config.code_ttl))
        problem = None
        if record["client_id"] != client_id:
            problem = "the authorization code was issued to another client"
        elif form.get("redirect_uri") != record["redirect_uri"]:
            problem = "redirect_uri differs from the authorization request's"
        elif not VERIFIER.match(form.get("code_verifier", "")):
            problem = "code_verifier is missing or malformed (PKCE)"
        elif not secrets.compare_digest(_s256(form["code_verifier"]), record["code_challenge"]):
            problem = "code_verifier does not match the code_challenge (PKCE)"
        if problem is not None:
            await self._revoke_grant(record["grant"], "code_refused", client_id=client_id, problem=problem)
            raise OAuthRefusal("invalid_grant", problem)
        return await self._tokens_for(record["grant"], client, record["scopes"], form, "token",
                                      grant_type="authorization_code")

    async def _refresh_grant(self, client: dict[str, Any], form: dict[str, str]) -> dict[str, Any]:
        client_id = client["client_id"]
        record = await self._take_once("refresh", "refresh-family", form.get("refresh_token", ""), client_id,
                                       what="refresh token", reuse="refresh_reuse", step="refresh",
                                       param="refresh_token")
        if record["client_id"] != client_id:
            await self._revoke_grant(record["grant"], "refresh_other_client", client_id=client_id)
            raise OAuthRefusal("invalid_grant", "the refresh token was issued to another client")
        scopes = record["scopes"]
        if form.get("scope"):
            asked = sorted(parse_scopes(form["scope"]))
            if any(s not in scopes for s in asked):
                raise OAuthRefusal("invalid_scope", "a refresh can only narrow the scopes granted")
            scopes = [s for s in scopes if s in asked]
        return await self._tokens_for(record["grant"], client, scopes, form, "refresh")

    async def _take_once(self, kind: str, spent_kind: str, secret: str, client_id: str, *, what: str, reuse: str,
                         step: str, param: str, **fields: Any) -> dict[str, Any]:
        """The one-time record (a code, a refresh token) `secret` names, taken so it serves once.

        One presented again (its `spent_kind` record is still there) revokes the grant it belongs to:
        whoever presents it second, the legitimate client or a thief, every token of that grant dies.
        """
        if not secret:
            raise OAuthRefusal("invalid_request", f"{param} is missing")
        key = digest(secret)
        record = await self.store.take(kind, key)
        if record is not None:
            return record
        spent = await self.store.get(spent_kind, key)
        if spent is not None:
            await self._revoke_grant(spent["grant"], reuse, client_id=client_id)
            raise OAuthRefusal("invalid_grant", f"this {what} was already used; every token of the authorization "
                                                "it belongs to is revoked")
        self.audit(step, "refused", client_id=client_id, error="invalid_grant", reason=f"unknown or expired {what}",
                   **fields)
        raise OAuthRefusal("invalid_grant", f"the {what} is unknown or expired")

    async def _tokens_for(self, grant_id: str, client: dict[str, Any], scopes: list[str], form: dict[str, str],
                          step: str, **fields: Any) -> dict[str, Any]:
        """New tokens of a live grant, which then lives as long as a refresh token (both grant types end here)."""
        self._check_resource(form.get("resource"))
        grant = await self.store.get("grant", grant_id)
        if grant is None:
            raise OAuthRefusal("invalid_grant", "the authorization was revoked")
        await self.store.put("grant", grant_id, grant, self.config.refresh_token_ttl)
        answer = await self._issue(grant_id, grant, scopes, client)
        self.audit(step, client_id=client["client_id"], user=grant["sub"], scopes=scopes, grant=_short(grant_id),
                   **fields)
        return answer

    async def _issue(self, grant_id: str, grant: dict[str, Any], scopes: list[str],
                     client: dict[str, Any]) -> dict[str, Any]:
        access, ttl = await self.tokens.access_token(grant_id, grant, scopes)
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer", "expires_in": ttl,
                                  "scope": " ".join(scopes)}
        if "refresh_token" in client.get("grant_types", ()):
            refresh = secrets.token_urlsafe(32)
            ttl_refresh = self.config.refresh_token_ttl
            await self.store.put("refresh", digest(refresh), {"grant": grant_id, "client_id": client["client_id"],
                                                              "scopes": scopes}, ttl_refresh)
            await self.store.put("refresh-family", digest(refresh), {"grant": grant_id}, ttl_refresh)
            answer["refresh_token"] = refresh
        return answer

    async def _revoke_grant(self, grant_id: str, why: str, **fields: Any) -> None:
        await self.store.delete("grant", grant_id)
        self.audit("grant_revoked", "revoked", reason=why, grant=_short(grant_id), **fields)

    # ------------------------------------------------------------------ RFC 7009

    async def _revoke(self, request: _Request, send: Any) -> None:
        try:
            if request.method != "POST":
                raise OAuthRefusal("invalid_request", "the revocation endpoint takes POST", 405)
            form = _form(request.body)
            client = await self._authenticate_client(request, form)
        except OAuthRefusal as failure:
            await self._json_error(send, failure)
            return
        token = form.get("token", "")
        grant_id: str | None = None
        owner: str | None = None
        record = await self.store.get("refresh", digest(token)) if token else None
        family = await self.store.get("refresh-family", digest(token)) if token and record is None else None
        if record is not None:
            grant_id, owner = record["grant"], record["client_id"]
        elif family is not None:
            grant_id = family["grant"]
            grant = await self.store.get("grant", grant_id)
            owner = grant["client_id"] if grant else None
        elif token:
            claims = await self.validator.claims_of(token)
            if claims is not None and isinstance(claims.get("gid"), str):
                grant_id, owner = claims["gid"], claims.get("client_id")
        if grant_id is not None and owner == client["client_id"]:
            await self._revoke_grant(grant_id, "revocation_request", client_id=client["client_id"])
        else:
            self.audit("revoke", "ignored", client_id=client["client_id"], reason="not a live token of this client")
        await _respond(send, 200, [*JSON_HEADERS, *CORS], b"{}")

    # ------------------------------------------------------------------ upstream tokens for tools

    async def upstream_token(self, principal: AccessToken) -> UpstreamToken:
        grant_id = principal.claims.get("gid")
        grant = await self.store.get("grant", grant_id) if isinstance(grant_id, str) else None
        if grant is None:
            raise UpstreamTokenUnavailable("the caller's authorization was revoked; they must authorize again")
        upstream = grant["upstream"]
        expires_at = upstream.get("expires_at")
        if isinstance(expires_at, (int, float)) and expires_at - UPSTREAM_REFRESH_MARGIN < time.time():
            upstream = await self._refresh_upstream(str(grant_id), grant)
        self.audit("upstream_token", client_id=grant["client_id"], user=grant["sub"], grant=_short(str(grant_id)))
        return UpstreamToken(access_token=upstream["access_token"], token_type=upstream.get("token_type") or "Bearer",
                             expires_at=upstream.get("expires_at"), scopes=tuple(upstream.get("scope") or ()),
                             provider=self.config.upstream.name)

    async def _refresh_upstream(self, grant_id: str, grant: dict[str, Any]) -> dict[str, Any]:
        refresh_token = grant["upstream"].get("refresh_token")
        if not refresh_token:
            raise UpstreamTokenUnavailable(f"the caller's {self.config.upstream.name} token expired and cannot be "
                                           "refreshed; they must authorize again")
        lock_ns, lock = self.store.kind("upstream-refresh"), grant_id
        taken = await self.backend.kv_set(lock_ns, lock, b"1", 30.0, only_new=True, evictable=False)
        if not taken:  # another process refreshes it
            for _ in range(50):
                await anyio.sleep(0.1)
                fresh = await self.store.get("grant", grant_id)
                if fresh is not None and fresh["upstream"].get("access_token") != grant["upstream"]["access_token"]:
                    return dict(fresh["upstream"])
            raise UpstreamTokenUnavailable("the upstream token is being refreshed; try again shortly")
        try:
            tokens = await self.upstream.refresh(refresh_token)
        except UpstreamSignInError as exc:
            self.audit("upstream_refresh", "failed", user=grant["sub"], reason=exc.description)
            raise UpstreamTokenUnavailable(f"the caller's {self.config.upstream.name} token could not be refreshed "
                                           f"({exc.description}); they must authorize again") from None
        finally:
            await self.backend.kv_delete(lock_ns, lock)
        upstream = {**{k: v for k, v in tokens.items() if k != "id_token"},
                    "refresh_token": tokens.get("refresh_token") or refresh_token}
        await self.store.put("grant", grant_id, {**grant, "upstream": upstream}, self.config.refresh_token_ttl)
        self.audit("upstream_refresh", user=grant["sub"], grant=_short(grant_id))
        return upstream

    # ------------------------------------------------------------------ remembered users and consents

    async def _key(self) -> bytes:
        if self._cookie_key is None:
            secret = await self.backend.shared_secret()
            self._cookie_key = hmac.new(secret, b"mcp_kit oauth facade cookies", hashlib.sha256).digest()
        return self._cookie_key

    async def _sign_user(self, sub: str) -> str:
        payload = base64.urlsafe_b64encode(json.dumps([sub, int(time.time() + self.config.consent_ttl)]).encode())
        mac = hmac.new(await self._key(), payload, hashlib.sha256).hexdigest()
        return f"{payload.decode().rstrip('=')}.{mac}"

    async def _remembered_user(self, request: _Request) -> str | None:
        value = request.cookies.get(self.cookie_user, "")
        payload, _, mac = value.rpartition(".")
        if not payload or not mac:
            return None
        padded = payload + "=" * (-len(payload) % 4)
        expected = hmac.new(await self._key(), padded.encode(), hashlib.sha256).hexdigest()
        if not secrets.compare_digest(mac, expected):
            return None
        try:
            sub, until = json.loads(base64.urlsafe_b64decode(padded))
        except (ValueError, TypeError):
            return None
        return sub if isinstance(sub, str) and isinstance(until, int) and until > time.time() else None

    def _consent_key(self, sub: str, client_id: str) -> str:
        return digest(json.dumps([sub, client_id]))

    async def _consented(self, sub: str, client_id: str, redirect_uri: str, scopes: list[str]) -> bool:
        record = await self.store.get("consent", self._consent_key(sub, client_id))
        return record is not None and _redirect_key(redirect_uri) in record["redirects"] \
            and set(scopes) <= set(record["scopes"])

    async def _remember_consent(self, sub: str, client_id: str, redirect_uri: str, scopes: list[str]) -> None:
        key = self._consent_key(sub, client_id)
        record = await self.store.get("consent", key) or {"scopes": [], "redirects": []}
        record = {"scopes": sorted({*record["scopes"], *scopes}),
                  "redirects": sorted({*record["redirects"], _redirect_key(redirect_uri)})}
        await self.store.put("consent", key, record, self.config.consent_ttl)

    # ------------------------------------------------------------------ answers

    def _cookie(self, name: str, value: str, max_age: float | None) -> tuple[bytes, bytes]:
        parts = [f"{name}={value}", "Path=/", "HttpOnly", "SameSite=Lax"]
        if self.secure:
            parts.append("Secure")
        if max_age is not None:
            parts.append(f"Max-Age={int(max_age)}")
        return (b"set-cookie", "; ".join(parts).encode())

    async def _redirect(self, send: Any, redirect_uri: str, params: dict[str, Any], *, clear_state: bool = False,
                        extra: list[tuple[bytes, bytes]] | None = None) -> None:
        query = urlencode({**{k: v for k, v in params.items() if v is not None}, "iss": self.issuer})
        location = redirect_uri + ("&" if "?" in redirect_uri else "?") + query
        headers = [(b"location", location.encode()), (b"cache-control", b"no-store"), *(extra or [])]
        if clear_state:
            headers.append(self._cookie(self.cookie_state, "", 0))
        await _respond(send, 303, headers, b"")

    async def _page_error(self, send: Any, error: str, description: str, status: int = 400) -> None:
        await _respond(send, status, PAGE_HEADERS, error_page(error, description))

    async def _json_error(self, send: Any, failure: OAuthRefusal, *, basic: bool = False) -> None:
        headers = [*JSON_HEADERS, *CORS]
        if basic:
            headers.append((b"www-authenticate", b'Basic realm="token"'))
        body = json.dumps({"error": failure.error, "error_description": failure.description}).encode()
        await _respond(send, failure.status, headers, body)


class FacadeGuard:
    """The facade's endpoints, then `OAuthGuard` (accepting only the facade's tokens) before the MCP app."""

    def __init__(self, app: Any, config: FacadeConfig, backend: FacadeBackend) -> None:
        self.app = app
        self.facade = AuthorizationFacade(config, backend)
        self.guard = OAuthGuard(app, self.facade.validator)
        paths = set(metadata_paths(self.guard.config))
        if not paths:
            raise ValueError("no protected resource metadata path")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.guard(scope, self._closing_on_shutdown(receive), send)
            return
        if scope["type"] == "http" and await self.facade.handle(scope, receive, send):
            return
        await self.guard(scope, receive, send)

    def _closing_on_shutdown(self, receive: Any) -> Any:
        async def wrapped() -> Any:
            message = await receive()
            if message.get("type") == "lifespan.shutdown":
                await self.facade.aclose()
            return message

        return wrapped


async def upstream_token_of(principal: object) -> UpstreamToken:
    """The caller's upstream token (`ctx.upstream_token()`); UpstreamTokenUnavailable when there is none."""
    if not isinstance(principal, AccessToken):
        raise UpstreamTokenUnavailable("this request was not authorized through an identity provider sign-in")
    facade = _FACADES.get(principal.issuer)
    if facade is None:
        raise UpstreamTokenUnavailable("this server signs nobody in at an identity provider (no OAuth facade), so "
                                       "there is no upstream token")
    return await facade.upstream_token(principal)


# ---------------------------------------------------------------------- helpers


async def _read_request(scope: dict[str, Any], receive: Any, path: str) -> _Request:
    headers: dict[str, str] = {}
    for key, value in scope["headers"]:
        name = key.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers[name] = text if name not in headers else f"{headers[name]}, {text}"
    body = b""
    if scope["method"] in ("POST", "PUT", "PATCH"):
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_FORM_BYTES):
            raise OAuthRefusal("invalid_request", "the request body is too large", 413)
        with anyio.move_on_after(30) as waited:
            while True:
                message = await receive()
                body += message.get("body", b"")
                if len(body) > MAX_FORM_BYTES:
                    raise OAuthRefusal("invalid_request", "the request body is too large", 413)
                if not message.get("more_body"):
                    break
        if waited.cancelled_caught:
            raise OAuthRefusal("invalid_request", "the request body did not arrive in time", 408)
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True, max_num_fields=50)
    query: dict[str, str] = {}
    duplicate = False
    for name, value in pairs:
        duplicate = duplicate or name in query
        query[name] = value[:MAX_PARAM_LENGTH * 2]
    return _Request(scope["method"], path, query, headers, _cookies(headers.get("cookie", "")), body, duplicate)


def _form(body: bytes) -> dict[str, str]:
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        raise OAuthRefusal("invalid_request", "the body is not an application/x-www-form-urlencoded form") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise OAuthRefusal("invalid_request", f"the parameter {name[:40]} was sent more than once")
        form[name] = value
    return form


def _cookies(header: str) -> dict[str, str]:
    cookies: dict[str, str] = {}
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name and name not in cookies:
            cookies[name] = value.strip().strip('"')
    return cookies


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _redirect_key(uri: str) -> str:
    """A redirect URI as consent remembers it: a loopback one without its port (which may vary)."""
    parts = urlsplit(uri)
    if parts.scheme == "http" and parts.hostname in ("127.0.0.1", "::1", "localhost"):
        return f"http://{parts.hostname}{parts.path}?{parts.query}"
    return uri


def _short(grant_id: str) -> str:
    """A grant's id as the audit trail names it."""
    return hashlib.sha256(grant_id.encode()).hexdigest()[:12]


async def _respond(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes, head: bool = False) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})
