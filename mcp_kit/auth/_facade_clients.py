"""The facade's MCP clients: dynamic registration (RFC 7591), client ID metadata documents, redirect URIs.

- Registration checks what a client asks for and keeps a record (`client:<id>`); a confidential
  client's secret is returned once and stored only as its SHA-256.
- A client whose `client_id` is an https URL is described by the JSON document at that URL (the
  MCP authorization spec's client ID metadata documents). It is fetched without following
  redirects, within `client_metadata_timeout` seconds and `client_metadata_max_bytes` bytes, and
  only from a host whose every address is public (no loopback, private, link-local or reserved
  address: the fetch must not become a way into the server's network); the connection goes to the
  address that was checked. `allow_loopback_client_metadata` (tests only) also allows
  http://127.0.0.1 and http://localhost. The document must name itself as `client_id`, hold no
  shared secret, and is cached for a few minutes.
- Redirect URIs are https, http on a loopback host, or a private-use scheme (`com.example.app:/cb`,
  RFC 8252 section 7.1). An authorization request's `redirect_uri` must equal a registered one
  exactly; for a loopback one only the port may differ (RFC 8252 section 7.3).

Imports nothing from mcp_kit but `auth.*`.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import secrets
import socket
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx

from .._errors import MCPKitError
from ._facade_config import FacadeConfig
from ._facade_store import FacadeStore, digest

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
GRANT_TYPES = ("authorization_code", "refresh_token")
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
METADATA_CACHE_SECONDS = 300.0
FORBIDDEN_SCHEMES = ("javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss")


class ClientRefused(MCPKitError):
    """A registration or a client lookup that fails, as an OAuth error code and a description."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def check_redirect_uri(uri: Any) -> str:
    """`uri` when it is an acceptable redirect URI; ClientRefused(invalid_redirect_uri) otherwise."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        raise ClientRefused("invalid_redirect_uri", "every redirect URI is a string of at most 2000 characters")
    try:
        parts = urlsplit(uri)
        _ = parts.port  # a port that is not a number is not a URL
    except ValueError:
        raise ClientRefused("invalid_redirect_uri", f"{uri!r} is not a URL") from None
    scheme = parts.scheme.lower()
    if parts.fragment or "#" in uri:
        raise ClientRefused("invalid_redirect_uri", f"a redirect URI has no fragment: {uri!r}")
    if any(ord(ch) < 0x21 or ord(ch) > 0x7e for ch in uri):
        raise ClientRefused("invalid_redirect_uri", "a redirect URI is printable ASCII without spaces")
    if scheme == "https" and parts.hostname:
        return uri
    if scheme == "http" and parts.hostname in LOOPBACK_HOSTS:
        return uri
    if "." in scheme and scheme not in FORBIDDEN_SCHEMES and not parts.netloc:  # RFC 8252 private-use scheme
        return uri
    raise ClientRefused("invalid_redirect_uri", f"{uri!r} is not https, http on a loopback host, or a private-use "
                                              "scheme such as com.example.app:/callback")


def redirect_matches(requested: str, registered: list[str]) -> bool:
    """Exact match, or a loopback redirect URI that differs from a registered one only by its port."""
    if requested in registered:
        return True
    try:
        asked = urlsplit(requested)
        _ = asked.port
    except ValueError:
        return False
    if asked.scheme != "http" or asked.hostname not in LOOPBACK_HOSTS:
        return False
    for uri in registered:
        known = urlsplit(uri)
        if (known.scheme, known.hostname, known.path, known.query) == (asked.scheme, asked.hostname, asked.path,
                                                                       asked.query) and known.username is None \
                and asked.username is None:
            return True
    return False


def is_metadata_url(client_id: str) -> bool:
    return client_id.startswith(("https://", "http://"))


class Clients:
    """Registers clients and finds them again, registered or described by a metadata document."""

    def __init__(self, config: FacadeConfig, store: FacadeStore) -> None:
        self.config = config
        self.store = store
        self._http: httpx.AsyncClient | None = None

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # ------------------------------------------------------------------ RFC 7591

    async def register(self, request: Any) -> dict[str, Any]:
        """The registration response for `request` (the client's JSON); ClientRefused when it cannot be accepted."""
        if not isinstance(request, dict):
            raise ClientRefused("invalid_client_metadata", "the registration request is a JSON object")
        uris = request.get("redirect_uris")
        if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
            raise ClientRefused("invalid_redirect_uri", "redirect_uris is a list of 1 to 10 redirect URIs")
        uris = [check_redirect_uri(uri) for uri in uris]
        method = request.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in AUTH_METHODS:
            raise ClientRefused("invalid_client_metadata",
                                f"token_endpoint_auth_method is one of {', '.join(AUTH_METHODS)}")
        grants = request.get("grant_types", ["authorization_code", "refresh_token"])
        if not isinstance(grants, list) or not grants or any(g not in GRANT_TYPES for g in grants) \
                or "authorization_code" not in grants:
            raise ClientRefused("invalid_client_metadata",
                                "grant_types is authorization_code, optionally refresh_token")
        responses = request.get("response_types", ["code"])
        if responses != ["code"]:
            raise ClientRefused("invalid_client_metadata",
                                "response_types is [\"code\"]: only the code flow is offered")
        name = request.get("client_name", "")
        if not isinstance(name, str) or len(name) > 200:
            raise ClientRefused("invalid_client_metadata", "client_name is a string of at most 200 characters")
        client_id = "mcp-" + secrets.token_urlsafe(18)
        now = int(time.time())
        record: dict[str, Any] = {"client_id": client_id, "client_name": name.strip(), "redirect_uris": uris,
                                  "grant_types": grants, "response_types": ["code"],
                                  "token_endpoint_auth_method": method, "client_id_issued_at": now,
                                  "registered": True}
        response = {key: value for key, value in record.items() if key != "registered"}
        if method != "none":
            secret = secrets.token_urlsafe(32)
            record["secret_sha256"] = digest(secret)
            response["client_secret"] = secret
            response["client_secret_expires_at"] = 0
        await self.store.put("client", client_id, record, self.config.client_ttl)
        return response

    # ------------------------------------------------------------------ lookups

    async def find(self, client_id: str) -> dict[str, Any] | None:
        """The client's record (registered, or from its metadata document); None when unknown.

        ClientRefused when a metadata document cannot be fetched or is unacceptable.
        """
        if not client_id or len(client_id) > MAX_URI_LENGTH:
            return None
        if is_metadata_url(client_id):
            return await self._metadata_client(client_id)
        return await self.store.get("client", client_id)

    async def _metadata_client(self, url: str) -> dict[str, Any]:
        key = hashlib.sha256(url.encode()).hexdigest()
        cached = await self.store.get("cimd", key)
        if cached is not None:
            return cached
        document = await self._fetch_document(url)
        if document.get("client_id") != url:
            raise ClientRefused("invalid_client", "the client metadata document does not name its own URL as client_id")
        if any(name in document for name in ("client_secret", "client_secret_expires_at")):
            raise ClientRefused("invalid_client", "a client metadata document holds no shared secret")
        method = document.get("token_endpoint_auth_method", "none")
        if method != "none":
            raise ClientRefused("invalid_client", "a client described by a metadata document authenticates with "
                                                "token_endpoint_auth_method none (and PKCE) here")
        uris = document.get("redirect_uris")
        if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
            raise ClientRefused("invalid_client", "the client metadata document lists no redirect_uris")
        try:
            uris = [check_redirect_uri(uri) for uri in uris]
        except ClientRefused as exc:
            raise ClientRefused("invalid_client", exc.description) from None
        name = document.get("client_name")
        record = {"client_id": url, "client_name": name[:200].strip() if isinstance(name, str) else "",
                  "redirect_uris": uris, "grant_types": ["authorization_code", "refresh_token"],
                  "token_endpoint_auth_method": "none", "metadata_document": True}
        await self.store.put("cimd", key, record, METADATA_CACHE_SECONDS)
        return record

    async def _fetch_document(self, url: str) -> dict[str, Any]:
        parts = urlsplit(url)
        loopback_ok = self.config.allow_loopback_client_metadata
        try:
            port = parts.port
        except ValueError:
            raise ClientRefused("invalid_client", "the client_id is not a valid URL") from None
        if parts.scheme == "http" and not (loopback_ok and parts.hostname in LOOPBACK_HOSTS):
            raise ClientRefused("invalid_client", "a client metadata document is fetched only from an https URL")
        if parts.scheme not in ("https", "http") or not parts.hostname or parts.username or parts.password \
                or parts.path in ("", "/") or parts.fragment:
            raise ClientRefused("invalid_client",
                                "a client_id URL is https://host/path, without credentials or fragment")
        address = await self._public_address(parts.hostname, port or (443 if parts.scheme == "https" else 80),
                                             loopback_ok)
        host = f"[{address}]" if ":" in address else address
        netloc = f"{host}:{port}" if port else host
        pinned = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
        headers = {"Accept": "application/json", "Host": parts.netloc}
        try:
            with anyio.fail_after(self.config.client_metadata_timeout):
                async with self._client().stream("GET", pinned, headers=headers,
                                                 extensions={"sni_hostname": parts.hostname}) as response:
                    if response.status_code != 200:
                        raise ClientRefused("invalid_client", f"the client metadata document answered HTTP "
                                                            f"{response.status_code}")
                    body = b""
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > self.config.client_metadata_max_bytes:
                            raise ClientRefused("invalid_client", "the client metadata document is larger than "
                                                                f"{self.config.client_metadata_max_bytes} bytes")
        except TimeoutError:
            raise ClientRefused("invalid_client", "the client metadata document did not arrive in time") from None
        except httpx.HTTPError as exc:
            raise ClientRefused("invalid_client", f"the client metadata document could not be fetched "
                                                f"({type(exc).__name__})") from None
        try:
            document = json.loads(body)
        except ValueError:
            raise ClientRefused("invalid_client", "the client metadata document is not JSON") from None
        if not isinstance(document, dict):
            raise ClientRefused("invalid_client", "the client metadata document is not a JSON object")
        return document

    async def _public_address(self, host: str, port: int, loopback_ok: bool) -> str:
        """An address of `host` to connect to, when every address it has may be fetched from."""
        try:
            with anyio.fail_after(self.config.client_metadata_timeout):
                infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, TimeoutError):
            raise ClientRefused("invalid_client", f"the client metadata host {host!r} does not resolve") from None
        addresses = [str(info[4][0]) for info in infos]
        for address in addresses:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
            if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
                ip = ip.ipv4_mapped
            if not (ip.is_global or (loopback_ok and ip.is_loopback)):
                raise ClientRefused("invalid_client", "the client metadata host resolves to a non-public address; "
                                                    "it is not fetched")
        if not addresses:
            raise ClientRefused("invalid_client", f"the client metadata host {host!r} has no address")
        return addresses[0]

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.config.client_metadata_timeout, follow_redirects=False,
                                           trust_env=False)
        return self._http


def client_secret_ok(client: dict[str, Any], secret: str | None) -> bool:
    expected = client.get("secret_sha256")
    if not isinstance(expected, str) or not secret:
        return False
    return secrets.compare_digest(expected, digest(secret))
