"""The facade as a client of the upstream identity provider: one registered client, the code flow with PKCE.

- `endpoints()`: the provider's endpoints, from the preset or its OpenID discovery document (read
  once; the document must be about the issuer it is published under, so one provider's document
  cannot send the facade to another's endpoints).
- `authorization_url(...)`: where the browser goes to sign in, with this server's client id, the
  callback URL, `state`, an S256 challenge, a `nonce` (OIDC), the upstream scopes the MCP scopes map
  to, and the provider-side `resource` in the form the provider wants (`resource_style`).
- `exchange(code, ...)`: the code for tokens (the client secret goes only to the token endpoint),
  then who signed in: the ID token, verified with the provider's keys (issuer, audience = this
  client, nonce, expiry), or the provider's user endpoint (GitHub).
- `refresh(...)`: a new upstream access token with the upstream refresh token.

Errors are `UpstreamSignInError` with a description safe to show (the provider's error code and a
shortened description, never a token or the secret). Every response is bounded in size.
Imports nothing from mcp_kit but `auth.*`.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx
import jwt

from .._errors import MCPKitError
from ._config import ASYMMETRIC_ALGORITHMS
from ._errors import AuthError
from ._facade_config import FacadeConfig
from ._jwks import KeySet

MAX_RESPONSE_BYTES = 1 << 20
ID_TOKEN_LEEWAY = 60


class UpstreamSignInError(MCPKitError):
    """The upstream provider refused or could not be reached; `description` is safe to show and log."""

    def __init__(self, description: str, error: str = "server_error") -> None:
        super().__init__(description)
        self.description = description
        self.error = error


def split_scopes(value: Any) -> list[str]:
    """Scopes as a provider returns them: space-separated (RFC 6749) or comma-separated (GitHub)."""
    return [part for part in re.split(r"[\s,]+", value) if part] if isinstance(value, str) else []


class Upstream:
    """The facade's client at one upstream provider."""

    def __init__(self, config: FacadeConfig, http: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.provider = config.upstream
        self._http = http
        self._endpoints: dict[str, Any] | None = None
        self._lock = anyio.Lock()
        self.keys = KeySet(self._fetch_jwks, refresh_interval=30.0, max_age=3600.0)

    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.config.http_timeout, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # ------------------------------------------------------------------ endpoints

    async def endpoints(self) -> dict[str, Any]:
        async with self._lock:
            if self._endpoints is None:
                found: dict[str, Any] = {}
                provider = self.provider
                if provider.discovery_url:
                    found = await self._discover(provider.discovery_url)
                for name in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "issuer", "jwks_uri"):
                    if getattr(provider, name):
                        found[name] = getattr(provider, name)
                self._endpoints = found
            return self._endpoints

    async def _discover(self, url: str) -> dict[str, Any]:
        document = await self._json("GET", url, headers={"Accept": "application/json"})
        issuer = document.get("issuer")
        if not isinstance(issuer, str):
            raise UpstreamSignInError(f"the provider's discovery document at {url} names no issuer")
        if "{tenantid}" not in issuer and url.rstrip("/") != issuer.rstrip("/") + "/.well-known/openid-configuration":
            raise UpstreamSignInError(f"the discovery document at {url} is about the issuer {issuer}, "
                                      "not the one it is published under")
        for name in ("authorization_endpoint", "token_endpoint"):
            if not isinstance(document.get(name), str):
                raise UpstreamSignInError(f"the provider's discovery document has no {name}")
        names = ("issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri")
        return {name: document[name] for name in names if isinstance(document.get(name), str)}

    # ------------------------------------------------------------------ the authorization request

    def scopes_for(self, mcp_scopes: list[str]) -> list[str]:
        """The upstream scopes to ask for: the provider's base scopes and those the MCP scopes map to."""
        scopes = list(self.provider.scopes)
        for scope in mcp_scopes:
            scopes.extend(self.config.scope_map.get(scope, ()))
        if self.provider.resource and self.provider.resource_style == "default_scope":
            scopes.append(self.provider.resource.rstrip("/") + "/.default")
        return list(dict.fromkeys(scopes))

    async def authorization_url(self, *, state: str, challenge: str, nonce: str, mcp_scopes: list[str]) -> str:
        endpoint = (await self.endpoints())["authorization_endpoint"]
        params: dict[str, str] = {"response_type": "code", "client_id": self.config.client_id,
                                  "redirect_uri": self.config.callback_url, "state": state,
                                  "code_challenge": challenge, "code_challenge_method": "S256"}
        scopes = self.scopes_for(mcp_scopes)
        if scopes:
            params["scope"] = " ".join(scopes)
        if self.provider.identity == "id_token":
            params["nonce"] = nonce
        resource = self.provider.resource
        if resource and self.provider.resource_style == "indicator":
            params["resource"] = resource
        elif resource and self.provider.resource_style == "audience":
            params["audience"] = resource
        params.update(self.provider.authorize_params)
        return endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)

    # ------------------------------------------------------------------ tokens and identity

    async def exchange(self, code: str, verifier: str, nonce: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """(upstream tokens, the user's identity) for an authorization code."""
        tokens = await self._token_request({"grant_type": "authorization_code", "code": code,
                                            "redirect_uri": self.config.callback_url, "code_verifier": verifier})
        if self.provider.identity == "id_token" and isinstance(tokens.get("id_token"), str):
            identity = await self._id_token_identity(tokens["id_token"], nonce)
            if "preferred_username" not in identity["profile"] and (await self.endpoints()).get("userinfo_endpoint"):
                # many providers put profile claims only in userinfo; its sub must be the ID token's (OIDC Core 5.3.2)
                try:
                    described = await self._userinfo_identity(tokens["access_token"])
                except UpstreamSignInError:
                    described = None
                if described is not None and described["sub"] == identity["sub"]:
                    identity = {**identity, "profile": {**described["profile"], **identity["profile"]}}
        elif self.provider.identity == "id_token" and not (await self.endpoints()).get("userinfo_endpoint"):
            raise UpstreamSignInError("the provider returned no ID token, so who signed in is unknown")
        else:
            identity = await self._userinfo_identity(tokens["access_token"])
        return tokens, identity

    async def refresh(self, refresh_token: str) -> dict[str, Any]:
        return await self._token_request({"grant_type": "refresh_token", "refresh_token": refresh_token})

    async def _token_request(self, data: dict[str, str]) -> dict[str, Any]:
        endpoint = (await self.endpoints())["token_endpoint"]
        headers = {"Accept": "application/json"}
        auth: tuple[str, str] | None = None
        if self.provider.token_auth == "client_secret_basic":
            auth = (self.config.client_id, self.config.client_secret)
        else:
            data = {**data, "client_id": self.config.client_id, "client_secret": self.config.client_secret}
        answer = await self._json("POST", endpoint, data=data, headers=headers, auth=auth, accept_errors=True)
        if not isinstance(answer.get("access_token"), str) or not answer["access_token"]:
            error = str(answer.get("error") or "no access token")[:80]
            description = str(answer.get("error_description") or "")[:200]
            raise UpstreamSignInError(f"the provider's token endpoint refused: {error}"
                                f"{' (' + description + ')' if description else ''}", "access_denied")
        token_type = str(answer.get("token_type") or "Bearer")
        expires_in = answer.get("expires_in")
        return {"access_token": answer["access_token"], "token_type": token_type,
                "refresh_token": answer.get("refresh_token") if isinstance(answer.get("refresh_token"), str) else None,
                "expires_at": time.time() + float(expires_in) if isinstance(expires_in, (int, float))
                and not isinstance(expires_in, bool) else None,
                "scope": split_scopes(answer.get("scope")) if "scope" in answer else None,
                "id_token": answer.get("id_token") if isinstance(answer.get("id_token"), str) else None}

    async def _id_token_identity(self, id_token: str, nonce: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(id_token)
        except jwt.PyJWTError:
            raise UpstreamSignInError("the provider's ID token is malformed") from None
        alg = header.get("alg")
        if alg not in ASYMMETRIC_ALGORITHMS:
            raise UpstreamSignInError(f"the provider's ID token is signed with {alg!r}, which is not accepted")
        try:
            key = await self.keys.key(header.get("kid") if isinstance(header.get("kid"), str) else None, alg)
        except AuthError as exc:
            raise UpstreamSignInError(f"the provider's ID token cannot be verified: {exc.description}") from None
        try:
            claims = jwt.decode(id_token, key=key, algorithms=[alg], audience=self.config.client_id,
                                leeway=ID_TOKEN_LEEWAY, options={"verify_iss": False,
                                                                 "require": ["iss", "sub", "aud", "exp", "iat"]})
        except jwt.PyJWTError as exc:
            raise UpstreamSignInError(f"the provider's ID token does not verify ({type(exc).__name__})") from None
        expected = self.provider.issuer or (await self.endpoints()).get("issuer")
        if isinstance(expected, str) and "{tenantid}" in expected:  # Entra ID common / organizations
            expected = expected.replace("{tenantid}", str(claims.get("tid", "")))
        if claims.get("iss") != expected:
            raise UpstreamSignInError("the provider's ID token was issued by another issuer")
        if claims.get("nonce") != nonce:
            raise UpstreamSignInError("the provider's ID token does not carry this sign-in's nonce")
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.config.client_id:
            raise UpstreamSignInError("the provider's ID token was issued to another party (azp)")
        return self._identity(claims)

    async def _userinfo_identity(self, access_token: str) -> dict[str, Any]:
        endpoint = (await self.endpoints()).get("userinfo_endpoint")
        if not isinstance(endpoint, str):
            raise UpstreamSignInError("the provider has no user endpoint to say who signed in")
        headers = {"Accept": "application/json", **self.provider.api_headers, "Authorization": f"Bearer {access_token}"}
        return self._identity(await self._json("GET", endpoint, headers=headers))

    def _identity(self, claims: dict[str, Any]) -> dict[str, Any]:
        subject = claims.get(self.provider.subject_claim)
        if isinstance(subject, bool) or not isinstance(subject, (str, int)) or str(subject) == "":
            raise UpstreamSignInError(f"the provider did not say who signed in (no {self.provider.subject_claim})")
        profile = {"preferred_username": claims.get(self.provider.username_claim) or claims.get("preferred_username"),
                   "email": claims.get("email"), "name": claims.get("name")}
        return {"sub": str(subject)[:255],
                "profile": {k: v[:255] for k, v in profile.items() if isinstance(v, str) and v}}

    async def _fetch_jwks(self) -> dict[str, Any]:
        uri = (await self.endpoints()).get("jwks_uri")
        if not isinstance(uri, str):
            raise UpstreamSignInError("the provider publishes no jwks_uri to verify its ID tokens")
        return await self._json("GET", uri, headers={"Accept": "application/json"})

    async def _json(self, method: str, url: str, *, accept_errors: bool = False, **options: Any) -> dict[str, Any]:
        try:
            async with self.http().stream(method, url, **options) as response:
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise UpstreamSignInError(f"the provider's answer from {url} is too large")
                status = response.status_code
        except httpx.HTTPError as exc:
            raise UpstreamSignInError(f"the provider at {url} could not be reached ({type(exc).__name__})") from None
        if status != 200 and not (accept_errors and 400 <= status < 500):
            raise UpstreamSignInError(f"the provider answered HTTP {status} at {url}")
        try:
            document = json.loads(body)
        except ValueError:
            raise UpstreamSignInError(f"the provider's answer from {url} is not JSON") from None
        if not isinstance(document, dict):
            raise UpstreamSignInError(f"the provider's answer from {url} is not a JSON object")
        return document
