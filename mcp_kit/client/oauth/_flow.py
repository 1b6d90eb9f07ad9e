"""The MCP client's OAuth 2.1 flow, step by step, for one MCP server URL.

On a 401 (or a 403 `insufficient_scope`), `OAuthFlow.reauthorize` runs:

1. Protected Resource Metadata (RFC 9728): the challenge's `resource_metadata`, else the well-known
   URLs (path-suffixed, then root). Its `resource` must be this server (same origin, a prefix of
   its path), else the flow stops: a server must not send us to get tokens for something else.
   No metadata at all: the 2025-03-26 behaviour (the server's origin is the authorization server).
2. Authorization server metadata (RFC 8414 / OpenID, the spec's order, `issuer` checked); PKCE S256
   must be advertised.
3. A client id, in the spec's order: pre-registered, a Client ID Metadata Document URL when the
   server supports them, dynamic registration (RFC 7591), remembered per authorization server.
4. Scopes: the challenge's `scope` joined with those asked for before (step-up keeps what was
   granted), else the metadata's `scopes_supported`, else none; `offline_access` when the
   authorization server offers it (for a refresh token).
5. Authorization code with PKCE and `resource` (RFC 8707) through the redirect handler; `state`
   and `iss` (RFC 9207, simple string comparison) checked before the code is used.
6. The token request (`resource` again, the client authentication the server supports).

Tokens are refreshed before they expire and after a 401 when a refresh token is at hand. A step-up
to a scope set already tried once is not repeated. Tokens are never logged.
Imports nothing from mcp_kit but `auth.challenge`, `auth.discovery`, `auth.resource_uri`, `client.oauth.*`.
"""

from __future__ import annotations

import base64
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

import anyio
import httpx

from ...auth._challenge import parse_bearer_challenge
from ...auth._discovery import MetadataError, fetch_metadata
from ...auth._resource_uri import canonical_resource
from ._errors import OAuthError
from ._pkce import PKCE
from ._redirects import LoopbackRedirect, RedirectHandler
from ._store import MemoryTokenStore, TokenStore

logger = logging.getLogger("mcp_kit.client.oauth")

EXPIRY_MARGIN = 30.0


@dataclass
class OAuthClientConfig:
    """How the client obtains tokens. The defaults suit a person at a terminal (browser, loopback redirect)."""

    redirect: RedirectHandler = field(default_factory=LoopbackRedirect)
    client_id: str | None = None  # pre-registered at the authorization server
    client_secret: str | None = field(default=None, repr=False)
    client_metadata_url: str | None = None  # an https URL hosting this client's metadata (CIMD)
    client_name: str = "mcp-kit"
    scopes: tuple[str, ...] = ()  # asked for in addition to what the server's challenge names
    store: TokenStore = field(default_factory=MemoryTokenStore)
    offline_access: bool = True  # ask for a refresh token where the authorization server offers one
    max_authorizations_per_request: int = 3
    timeout: float = 30.0


@dataclass
class _Server:
    """What discovery found: the resource, the authorization server and its metadata."""

    resource: str
    issuer: str
    metadata: dict[str, Any]
    scopes_supported: list[str]
    legacy: bool = False  # no metadata published: endpoints by convention (2025-03-26)


class OAuthFlow:
    """Obtains, refreshes and re-obtains access tokens for one MCP server URL."""

    def __init__(self, server_url: str, config: OAuthClientConfig | None = None) -> None:
        self.server_url = server_url
        self.config = config or OAuthClientConfig()
        self.key = canonical_resource(server_url)
        self._http: httpx.AsyncClient | None = None
        self._lock = anyio.Lock()
        self._tried: dict[frozenset[str], int] = {}
        self._refreshed_after_401: str | None = None
        self.authorizations = 0

    # ------------------------------------------------------------------ tokens for requests

    async def token(self) -> str | None:
        """A usable access token (refreshed when it expired), or None before the first authorization."""
        record = self.config.store.tokens(self.key)
        if record is None:
            return None
        if _fresh(record):
            return str(record["access_token"])
        async with self._lock:
            record = self.config.store.tokens(self.key)
            if record is not None and not _fresh(record):
                record = await self._refresh(record)
            return str(record["access_token"]) if record is not None else None

    async def reauthorize(self, status: int, www_authenticate: str | None, failed: str | None) -> str:
        """A new access token after the server refused `failed` with `status` and this challenge."""
        async with self._lock:
            record = self.config.store.tokens(self.key)
            if record is not None and record.get("access_token") != failed and _fresh(record):
                return str(record["access_token"])  # another request already got a new one
            challenge = parse_bearer_challenge(www_authenticate) or {}
            if (status == 401 and record is not None and record.get("refresh_token") and failed is not None
                    and failed != self._refreshed_after_401):  # a refreshed token refused again: authorize anew
                refreshed = await self._refresh(record)
                if refreshed is not None:
                    self._refreshed_after_401 = str(refreshed["access_token"])
                    return self._refreshed_after_401
            return await self._authorize(challenge, step_up=status == 403, prior=record)

    def succeeded(self) -> None:
        """A request went through: later refusals may authorize the same scopes again."""
        self._tried.clear()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.config.timeout, follow_redirects=False)
        return self._http

    # ------------------------------------------------------------------ the authorization code flow

    async def _authorize(self, challenge: dict[str, str], *, step_up: bool, prior: dict[str, Any] | None) -> str:
        server = await self._discover(challenge)
        scopes = self._scopes(challenge, server, prior)
        attempt = frozenset([server.issuer, *(scopes or ())])
        self._tried[attempt] = self._tried.get(attempt, 0) + 1
        if self._tried[attempt] > 1:
            wanted = " ".join(scopes or ()) or "(no particular scope)"
            raise OAuthError(f"the server at {self.server_url} still refuses after authorizing {wanted}"
                             f"{' (insufficient_scope)' if step_up else ''}; giving up")
        redirect = self.config.redirect
        prepare = getattr(redirect, "prepare", None)  # a loopback redirect listens first: its port is in the URI
        if prepare is not None:
            await prepare()
        try:
            client = await self._client(server, redirect.redirect_uri)
            pkce = PKCE()
            params = {"response_type": "code", "client_id": client["client_id"],
                      "redirect_uri": redirect.redirect_uri, "state": pkce.state, "code_challenge": pkce.challenge,
                      "code_challenge_method": "S256", "resource": server.resource}
            if scopes:
                params["scope"] = " ".join(scopes)
            endpoint = str(server.metadata["authorization_endpoint"])
            self.authorizations += 1
            logger.info("authorizing at %s for %s (scope: %s)", server.issuer, server.resource,
                        params.get("scope", "-"))
            callback = await redirect.authorize(endpoint + ("&" if "?" in endpoint else "?") + urlencode(params))
        finally:  # however the flow ended (a refused registration, too), nothing stays listening
            release = getattr(redirect, "release", None)
            if release is not None:
                await release()
        code = self._code_from(callback, server, pkce)
        tokens = await self._token_request(server, client, {
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect.redirect_uri,
            "code_verifier": pkce.verifier, "resource": server.resource})
        record = self._record(tokens, server, scopes)
        self.config.store.save_tokens(self.key, record)
        return str(record["access_token"])

    def _code_from(self, callback: str, server: _Server, pkce: PKCE) -> str:
        query = {name: values[0] for name, values in parse_qs(urlsplit(callback).query).items()}
        iss = query.get("iss")
        if iss is not None and iss != server.issuer:  # RFC 9207: simple string comparison, no normalization
            raise OAuthError(f"the authorization response came from issuer {iss!r}, not {server.issuer!r} "
                             "(a mix-up attack?); its code was not used")
        if iss is None and server.metadata.get("authorization_response_iss_parameter_supported") is True:
            raise OAuthError("the authorization response lacks the iss parameter its server promised (RFC 9207); "
                             "its code was not used")
        if query.get("state") != pkce.state:
            raise OAuthError("the authorization response does not carry the state this client sent; ignored")
        if "error" in query:
            description = query.get("error_description")
            raise OAuthError(f"the authorization server refused: {query['error']}"
                             f"{': ' + description if description else ''}")
        if not query.get("code"):
            raise OAuthError("the authorization response has no code")
        return query["code"]

    def _scopes(self, challenge: dict[str, str], server: _Server, prior: dict[str, Any] | None) -> list[str] | None:
        scopes = list(self.config.scopes)
        if prior is not None:
            scopes += str(prior.get("requested_scope") or "").split()
        challenged = challenge.get("scope", "").split()
        if challenged:
            scopes += challenged
        elif not scopes:
            scopes += server.scopes_supported
        if not scopes:
            return None
        offered = server.metadata.get("scopes_supported")
        if self.config.offline_access and isinstance(offered, list) and "offline_access" in offered:
            scopes.append("offline_access")
        return list(dict.fromkeys(scopes))

    # ------------------------------------------------------------------ discovery

    async def _discover(self, challenge: dict[str, str]) -> _Server:
        prm = await self._resource_metadata(challenge.get("resource_metadata"))
        if prm is None:  # 2025-03-26 servers: the MCP server's origin is the authorization server
            parts = urlsplit(self.server_url)
            origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
            try:
                metadata = await fetch_metadata(self.http, origin)
            except MetadataError:
                metadata = {"authorization_endpoint": f"{origin}/authorize", "token_endpoint": f"{origin}/token",
                            "registration_endpoint": f"{origin}/register"}
                return _Server(self.key, origin, metadata, [], legacy=True)
            return _Server(self.key, origin, self._check_pkce(metadata), [], legacy=True)
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise OAuthError(f"the server's Protected Resource Metadata names no authorization server: {prm}")
        issuer = servers[0]
        try:
            metadata = await fetch_metadata(self.http, issuer)
        except MetadataError as exc:
            raise OAuthError(str(exc)) from None
        supported = prm.get("scopes_supported")
        return _Server(canonical_resource(prm["resource"]), issuer, self._check_pkce(metadata),
                       [s for s in supported if isinstance(s, str)] if isinstance(supported, list) else [])

    async def _resource_metadata(self, announced: str | None) -> dict[str, Any] | None:
        parts = urlsplit(self.server_url)
        path = parts.path.rstrip("/")
        candidates = [announced] if announced else []
        for suffix in ([path] if path else []) + [""]:
            candidates.append(urlunsplit((parts.scheme, parts.netloc, "/.well-known/oauth-protected-resource" + suffix,
                                          "", "")))
        for url in dict.fromkeys(candidates):
            try:
                response = await self.http.get(url, headers={"Accept": "application/json"})
            except httpx.HTTPError as exc:
                logger.debug("no resource metadata at %s: %s", url, exc)
                continue
            if response.status_code != 200:
                continue
            try:
                document = response.json()
            except ValueError:
                continue
            if isinstance(document, dict) and "resource" in document:
                self._check_resource(document["resource"])
                return document
        return None

    def _check_resource(self, resource: Any) -> None:
        try:
            named, ours = urlsplit(canonical_resource(str(resource))), urlsplit(self.key)
        except ValueError:
            raise OAuthError(f"the server's Protected Resource Metadata has an invalid resource {resource!r}") from None
        same_origin = (named.scheme, named.netloc) == (ours.scheme, ours.netloc)
        covers = ours.path == named.path or ours.path.startswith(named.path.rstrip("/") + "/")
        if not covers and ours.path.endswith("/sse"):  # a legacy SSE endpoint shares its server's resource
            base = ours.path[: -len("/sse")]
            covers = named.path.startswith(base + "/") and "/" not in named.path[len(base) + 1:]
        if not (same_origin and covers):
            raise OAuthError(f"the server's Protected Resource Metadata is for {resource}, not {self.server_url}; "
                             "refusing to obtain a token for another resource")

    @staticmethod
    def _check_pkce(metadata: dict[str, Any]) -> dict[str, Any]:
        methods = metadata.get("code_challenge_methods_supported")
        if not isinstance(methods, list) or "S256" not in methods:
            raise OAuthError(f"the authorization server {metadata.get('issuer')} does not advertise PKCE S256 "
                             "(code_challenge_methods_supported); refusing to authorize without it")
        for name in ("authorization_endpoint", "token_endpoint"):
            if not isinstance(metadata.get(name), str):
                raise OAuthError(f"the authorization server metadata has no {name}")
        return metadata

    # ------------------------------------------------------------------ the client id

    async def _client(self, server: _Server, redirect_uri: str) -> dict[str, Any]:
        config = self.config
        if config.client_id:
            return {"client_id": config.client_id, "client_secret": config.client_secret}
        stored = config.store.client(server.issuer)
        if stored is not None and redirect_uri in stored.get("redirect_uris", [redirect_uri]):
            return stored
        if config.client_metadata_url and server.metadata.get("client_id_metadata_document_supported") is True:
            return {"client_id": config.client_metadata_url, "token_endpoint_auth_method": "none"}
        endpoint = server.metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise OAuthError(f"the authorization server {server.issuer} offers no dynamic client registration: "
                             "register a client there and pass its id (--oauth-client-id)")
        supported = server.metadata.get("token_endpoint_auth_methods_supported")
        method = "none"
        if isinstance(supported, list) and "none" not in supported:
            method = next((m for m in ("client_secret_basic", "client_secret_post") if m in supported), "none")
        request = {"client_name": config.client_name, "redirect_uris": [redirect_uri], "application_type": "native",
                   "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                   "token_endpoint_auth_method": method}
        try:
            response = await self.http.post(endpoint, json=request)
        except httpx.HTTPError as exc:
            raise OAuthError(f"client registration at {endpoint} failed: {exc}") from None
        if response.status_code not in (200, 201):
            raise OAuthError(f"client registration at {endpoint} answered HTTP {response.status_code}: "
                             f"{response.text[:300]}")
        answer = response.json()
        if not isinstance(answer, dict) or not isinstance(answer.get("client_id"), str):
            raise OAuthError(f"client registration at {endpoint} returned no client_id")
        record = {"client_id": answer["client_id"], "client_secret": answer.get("client_secret"),
                  "token_endpoint_auth_method": answer.get("token_endpoint_auth_method") or method,
                  "redirect_uris": answer.get("redirect_uris") or [redirect_uri]}
        config.store.save_client(server.issuer, record)
        return record

    def _client_authentication(self, server: _Server, client: dict[str, Any], data: dict[str, str]) -> dict[str, str]:
        """Adds the client's credentials to `data` as the server wants them; returns extra headers."""
        secret = client.get("client_secret")
        method = client.get("token_endpoint_auth_method")
        if secret and method is None:
            supported = server.metadata.get("token_endpoint_auth_methods_supported")
            if not isinstance(supported, list):
                method = "client_secret_basic"  # RFC 8414's default
            else:
                method = next((m for m in ("client_secret_basic", "client_secret_post", "none") if m in supported),
                              "client_secret_basic")
        if secret and method == "client_secret_basic":
            pair = f"{quote(client['client_id'], safe='')}:{quote(secret, safe='')}"
            return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
        data["client_id"] = client["client_id"]
        if secret and method == "client_secret_post":
            data["client_secret"] = secret
        return {}

    # ------------------------------------------------------------------ the token endpoint

    async def _token_request(self, server: _Server, client: dict[str, Any], data: dict[str, str]) -> dict[str, Any]:
        headers = {"Accept": "application/json", **self._client_authentication(server, client, data)}
        endpoint = str(server.metadata["token_endpoint"])
        try:
            response = await self.http.post(endpoint, data=data, headers=headers)
        except httpx.HTTPError as exc:
            raise OAuthError(f"the token endpoint {endpoint} could not be reached: {exc}") from None
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        if response.status_code != 200 or not isinstance(answer, dict) or not answer.get("access_token"):
            error = answer.get("error") if isinstance(answer, dict) else None
            description = answer.get("error_description") if isinstance(answer, dict) else None
            raise OAuthError(
                f"the token endpoint answered HTTP {response.status_code}"
                f"{': ' + str(error) if error else ''}{' (' + str(description) + ')' if description else ''}"
            )
        token_type = str(answer.get("token_type", "Bearer"))
        if token_type.lower() != "bearer":
            raise OAuthError(f"the authorization server issued a {token_type} token; this client sends Bearer tokens")
        answer["_client"] = client
        return answer

    def _record(self, tokens: dict[str, Any], server: _Server, scopes: list[str] | None,
                previous: dict[str, Any] | None = None) -> dict[str, Any]:
        expires_in = tokens.get("expires_in")
        return {
            "access_token": tokens["access_token"],
            "refresh_token": tokens.get("refresh_token") or (previous or {}).get("refresh_token"),
            "expires_at": time.time() + float(expires_in) if isinstance(expires_in, (int, float)) else None,
            "scope": tokens.get("scope") or " ".join(scopes or ()),
            "requested_scope": " ".join(scopes or ()),
            "resource": server.resource,
            "issuer": server.issuer,
            "token_endpoint": server.metadata["token_endpoint"],
            "token_endpoint_auth_methods_supported": server.metadata.get("token_endpoint_auth_methods_supported"),
            "client": tokens["_client"],
        }

    async def _refresh(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """Use the refresh token; the new record, or None (and the old one forgotten) when it was refused."""
        refresh_token = record.get("refresh_token")
        if not refresh_token or not record.get("token_endpoint"):
            return None
        metadata = {"token_endpoint": record["token_endpoint"],
                    "token_endpoint_auth_methods_supported": record.get("token_endpoint_auth_methods_supported")}
        server = _Server(record["resource"], record["issuer"], metadata, [])
        try:
            tokens = await self._token_request(server, dict(record["client"]), {
                "grant_type": "refresh_token", "refresh_token": refresh_token, "resource": record["resource"]})
        except OAuthError as exc:
            logger.info("the refresh token was not accepted (%s); authorizing again", exc)
            self.config.store.save_tokens(self.key, None)
            return None
        scopes = str(record.get("requested_scope") or "").split() or None
        new = self._record(tokens, server, scopes, previous=record)
        self.config.store.save_tokens(self.key, new)
        return new


def _fresh(record: dict[str, Any]) -> bool:
    expires_at = record.get("expires_at")
    return expires_at is None or time.time() < float(expires_at) - EXPIRY_MARGIN
