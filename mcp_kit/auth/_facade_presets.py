"""The upstream providers a facade knows by name: Microsoft Entra ID, Google, GitHub, Auth0, Okta, Keycloak,
and any OpenID Connect provider by its discovery URL.

Each returns the keyword arguments of an `UpstreamProvider` (its class methods call these) with the
endpoints, default scopes and quirks of that provider:

- Entra ID (v2): the tenant's discovery document; a provider-side API is asked for as the scope
  `<resource>/.default` (v2 refuses the RFC 8707 `resource` parameter). With `common` or
  `organizations` the ID token's issuer names the user's tenant, which the facade accepts.
- Google: offline access needs `access_type=offline` and `prompt=consent`, not `offline_access`.
- GitHub (an OAuth app): no OIDC; the user is `GET https://api.github.com/user` (`id`, `login`).
- Auth0: an API is asked for with `audience`; Okta: the `default` custom authorization server
  unless told otherwise (None: the org server); Keycloak: one realm.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

from typing import Any

OIDC_SCOPES = ("openid", "profile", "email", "offline_access")


def entra(tenant: str, *, resource: str | None = None, cloud: str = "https://login.microsoftonline.com",
          **options: Any) -> dict[str, Any]:
    tenant = tenant.strip().strip("/")
    if not tenant:
        raise ValueError("Entra ID needs a tenant: its id, a domain, 'organizations' or 'common'")
    base = f"{cloud.rstrip('/')}/{tenant}/v2.0"
    return {"name": "entra", "discovery_url": f"{base}/.well-known/openid-configuration",
                               "scopes": OIDC_SCOPES, "resource": resource, "resource_style": "default_scope",
                               "token_auth": "client_secret_post", **options}


def google(**options: Any) -> dict[str, Any]:
    return {"name": "google",
                               "discovery_url": "https://accounts.google.com/.well-known/openid-configuration",
                               "scopes": ("openid", "profile", "email"), "resource_style": "none",
                               "authorize_params": {"access_type": "offline", "prompt": "consent"},
                               "subject_claim": "sub", "username_claim": "email",
                               "token_auth": "client_secret_post", **options}


def github(*, base_url: str = "https://github.com", api_url: str = "https://api.github.com",
           **options: Any) -> dict[str, Any]:
    base, api = base_url.rstrip("/"), api_url.rstrip("/")
    return {"name": "github", "authorization_endpoint": f"{base}/login/oauth/authorize",
                               "token_endpoint": f"{base}/login/oauth/access_token",
                               "userinfo_endpoint": f"{api}/user", "identity": "userinfo", "scopes": ("read:user",),
                               "subject_claim": "id", "username_claim": "login", "resource_style": "none",
                               "token_auth": "client_secret_post",
                               "api_headers": {"Accept": "application/vnd.github+json",
                                               "X-GitHub-Api-Version": "2022-11-28"}, **options}


def auth0(domain: str, *, audience: str | None = None, **options: Any) -> dict[str, Any]:
    base = _https(domain)
    return {"name": "auth0", "discovery_url": f"{base}/.well-known/openid-configuration",
                               "scopes": OIDC_SCOPES, "resource": audience, "resource_style": "audience",
                               "token_auth": "client_secret_post", **options}


def okta(domain: str, authorization_server: str | None = "default", **options: Any) -> dict[str, Any]:
    base = _https(domain) + (f"/oauth2/{authorization_server}" if authorization_server else "")
    return {"name": "okta", "discovery_url": f"{base}/.well-known/openid-configuration",
                               "scopes": OIDC_SCOPES, "resource_style": "none", **options}


def keycloak(base_url: str, realm: str, **options: Any) -> dict[str, Any]:
    base = f"{_https(base_url)}/realms/{realm}"
    return {"name": "keycloak", "discovery_url": f"{base}/.well-known/openid-configuration",
                               "scopes": OIDC_SCOPES, "resource_style": "none", **options}


def oidc(discovery_url: str, **options: Any) -> dict[str, Any]:
    url = discovery_url.strip()
    if "/.well-known/" not in url:
        url = url.rstrip("/") + "/.well-known/openid-configuration"
    return {"name": "oidc", "discovery_url": url, "scopes": OIDC_SCOPES, **options}


PRESETS = {"entra": entra, "google": google, "github": github, "auth0": auth0, "okta": okta, "keycloak": keycloak,
           "oidc": oidc}


def _https(domain: str) -> str:
    domain = domain.strip().rstrip("/")
    return domain if domain.startswith(("https://", "http://")) else f"https://{domain}"
