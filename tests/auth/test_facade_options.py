"""The --oauth-upstream options: each preset in a few flags, and the refusals that name what is missing.

The Entra ID preset also shows the `resource`/`scope` difference: v2 refuses RFC 8707 `resource`, so a
provider-side API is asked for as the scope `<resource>/.default` and no `resource` parameter is sent.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from mcp_kit.auth import FacadeConfig, UpstreamProvider
from mcp_kit.auth._facade_upstream import Upstream
from mcp_kit.auth._options import add_oauth_arguments, auth_config_from_args

pytestmark = pytest.mark.anyio
RESOURCE = "https://mcp.example.com/mcp"


def parse(tmp_path: Path, *argv: str) -> FacadeConfig:
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    parser = argparse.ArgumentParser()
    add_oauth_arguments(parser.add_argument_group("oauth"))
    args = parser.parse_args(["--oauth-resource", RESOURCE, "--oauth-client-id", "the-app",
                              "--oauth-client-secret-file", str(secret), *argv])
    config = auth_config_from_args(args)
    assert isinstance(config, FacadeConfig)
    return config


def test_each_preset_in_a_few_flags(tmp_path: Path) -> None:
    entra = parse(tmp_path, "--oauth-upstream", "entra", "--oauth-tenant", "contoso.onmicrosoft.com",
                  "--oauth-upstream-resource", "api://1234", "--oauth-scopes", "mcp:tools")
    assert entra.upstream.discovery_url == ("https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0/"
                                            ".well-known/openid-configuration")
    assert entra.client_secret == "s3cret" and "s3cret" not in repr(entra)
    assert entra.issuer == "https://mcp.example.com" and entra.callback_url == "https://mcp.example.com/oauth/callback"
    assert entra.required_scopes == ("mcp:tools",)
    assert parse(tmp_path, "--oauth-upstream", "google").upstream.authorize_params["access_type"] == "offline"
    github = parse(tmp_path, "--oauth-upstream", "github", "--oauth-scope-map", "repo:write=repo,workflow")
    assert github.upstream.identity == "userinfo" and github.upstream.userinfo_endpoint == "https://api.github.com/user"
    assert github.scope_map == {"repo:write": ("repo", "workflow")}
    auth0 = parse(tmp_path, "--oauth-upstream", "auth0", "--oauth-domain", "acme.eu.auth0.com",
                  "--oauth-upstream-resource", "https://api.acme.test")
    assert auth0.upstream.discovery_url == "https://acme.eu.auth0.com/.well-known/openid-configuration"
    assert (auth0.upstream.resource, auth0.upstream.resource_style) == ("https://api.acme.test", "audience")
    okta = parse(tmp_path, "--oauth-upstream", "okta", "--oauth-domain", "acme.okta.com")
    assert okta.upstream.discovery_url == "https://acme.okta.com/oauth2/default/.well-known/openid-configuration"
    keycloak = parse(tmp_path, "--oauth-upstream", "keycloak", "--oauth-domain", "https://sso.acme.test",
                     "--oauth-realm", "staff", "--oauth-public-url", "https://tools.acme.test")
    assert keycloak.upstream.discovery_url == "https://sso.acme.test/realms/staff/.well-known/openid-configuration"
    assert keycloak.issuer == "https://tools.acme.test"
    oidc = parse(tmp_path, "--oauth-upstream", "oidc", "--oauth-discovery-url", "https://id.acme.test")
    assert oidc.upstream.discovery_url == "https://id.acme.test/.well-known/openid-configuration"


async def test_entra_asks_for_an_api_as_a_default_scope_and_never_sends_resource(tmp_path: Path) -> None:
    config = parse(tmp_path, "--oauth-upstream", "entra", "--oauth-tenant", "organizations",
                   "--oauth-upstream-resource", "api://1234", "--oauth-scope-map", "mail:read=Mail.Read")
    upstream = Upstream(config)
    upstream._endpoints = {"authorization_endpoint": "https://login.microsoftonline.com/organizations/oauth2/v2.0/"
                                                     "authorize"}
    url = await upstream.authorization_url(state="st", challenge="c" * 43, nonce="n", mcp_scopes=["mail:read"])
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert "resource" not in query and query["client_id"] == "the-app"
    assert query["scope"].split() == ["openid", "profile", "email", "offline_access", "Mail.Read",
                                      "api://1234/.default"]
    assert query["redirect_uri"] == "https://mcp.example.com/oauth/callback"
    assert query["code_challenge_method"] == "S256"
    assert "s3cret" not in url
    await upstream.aclose()


def test_a_provider_with_rfc_8707_gets_resource_and_auth0_gets_audience() -> None:
    assert UpstreamProvider.oidc("https://id.example", resource="https://api.example").resource_style == "indicator"
    assert UpstreamProvider.auth0("acme.auth0.com", audience="https://api").resource_style == "audience"


@pytest.mark.parametrize(("argv", "message"), [
    (["--oauth-upstream", "entra"], "--oauth-upstream entra needs --oauth-tenant"),
    (["--oauth-upstream", "keycloak", "--oauth-domain", "https://kc"], "needs --oauth-realm"),
    (["--oauth-upstream", "oidc"], "needs --oauth-discovery-url"),
    (["--oauth-upstream", "github", "--oauth-issuer", "https://as.example"], "choose one"),
    (["--oauth-upstream", "github", "--oauth-scope-map", "nonsense"], "--oauth-scope-map takes"),
])
def test_what_is_missing_is_named(tmp_path: Path, argv: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(tmp_path, *argv)


def test_the_secret_never_comes_from_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_OAUTH_CLIENT_SECRET", raising=False)
    parser = argparse.ArgumentParser()
    add_oauth_arguments(parser.add_argument_group("oauth"))
    args = parser.parse_args(["--oauth-upstream", "github", "--oauth-resource", RESOURCE, "--oauth-client-id", "x"])
    with pytest.raises(ValueError, match="never on the command line"):
        auth_config_from_args(args)
    monkeypatch.setenv("MCP_OAUTH_CLIENT_SECRET", "from-env")
    config = auth_config_from_args(args)
    assert isinstance(config, FacadeConfig) and config.client_secret == "from-env"
