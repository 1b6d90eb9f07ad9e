"""mcp_kit.auth piece by piece: resource URIs, challenges, scopes, metadata, options, and JWT validation
against keys made in the test (the issuer's metadata and JWKS served by an httpx.MockTransport).

The attacks a resource server must refuse are built here by hand, since a real authorization server
never issues them: `alg: none`, an HMAC signature keyed with the public key, a foreign `typ`,
critical headers, a token not valid yet, a published private key.
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from mcp_kit.auth import AuthConfig, AuthServerUnavailable, InvalidToken
from mcp_kit.auth._challenge import bearer_challenge, parse_bearer_challenge
from mcp_kit.auth._discovery import metadata_urls
from mcp_kit.auth._metadata import metadata_document, metadata_paths, metadata_url
from mcp_kit.auth._options import add_oauth_arguments, auth_config_from_args
from mcp_kit.auth._resource_uri import canonical_resource, same_resource
from mcp_kit.auth._scopes import missing_scopes, parse_scopes
from mcp_kit.auth._validator import TokenValidator

pytestmark = pytest.mark.anyio
ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"


# ---------------------------------------------------------------------------------------------- pieces


@pytest.mark.parametrize(("given", "canonical"), [
    ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"),
    ("HTTPS://MCP.Example.COM/mcp/", "https://mcp.example.com/mcp"),
    ("https://mcp.example.com:443/", "https://mcp.example.com"),
    ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
    ("https://[::1]:8443/a/b", "https://[::1]:8443/a/b"),
])
def test_canonical_resource(given: str, canonical: str) -> None:
    assert canonical_resource(given) == canonical


@pytest.mark.parametrize("bad", ["mcp.example.com", "ftp://x/y", "https://mcp.example.com/mcp#frag", "https:///x"])
def test_invalid_resource_uris(bad: str) -> None:
    with pytest.raises(ValueError):
        canonical_resource(bad)


def test_same_resource_forgives_spelling_only() -> None:
    assert same_resource("https://MCP.example.com/mcp/", RESOURCE)
    assert not same_resource("https://mcp.example.com/mcp2", RESOURCE)
    assert not same_resource("https://mcp.example.com", RESOURCE)
    assert not same_resource("https://mcp.example.com:8443/mcp", RESOURCE)
    assert not same_resource("not a url", RESOURCE)


def test_challenge_round_trip_and_parsing_among_other_schemes() -> None:
    header = bearer_challenge(resource_metadata="https://m/.well-known/x", scopes=["a", "b", "a"],
                              error="insufficient_scope", error_description='needs "b"')
    assert parse_bearer_challenge(header) == {"error": "insufficient_scope", "error_description": 'needs "b"',
                                              "scope": "a b", "resource_metadata": "https://m/.well-known/x"}
    assert parse_bearer_challenge('Basic realm="x", Bearer scope="s"') == {"scope": "s"}
    assert parse_bearer_challenge('Digest realm="x"') is None
    assert parse_bearer_challenge("Bearer") == {}


def test_scopes_from_strings_lists_and_hierarchies() -> None:
    assert parse_scopes("a  b") == {"a", "b"}
    assert parse_scopes(["a", 3, "b"]) == {"a", "b"}
    assert parse_scopes(None) == frozenset()
    implies = {"admin": ("write",), "write": ("read",)}
    assert missing_scopes({"admin"}, ["read", "write"], implies) == ()
    assert missing_scopes({"read"}, ["read", "write", "write"], implies) == ("write",)


def test_metadata_document_and_paths() -> None:
    config = AuthConfig(issuer=ISSUER, resource=RESOURCE, required_scopes=("mcp:tools",), resource_name="Demo")
    assert metadata_document(config) == {"resource": RESOURCE, "authorization_servers": [ISSUER],
                                         "bearer_methods_supported": ["header"], "scopes_supported": ["mcp:tools"],
                                         "resource_name": "Demo"}
    assert metadata_paths(config) == (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    )
    assert metadata_url(config) == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    root = AuthConfig(issuer=ISSUER, resource="https://mcp.example.com/")
    assert metadata_paths(root) == ("/.well-known/oauth-protected-resource",)


def test_authorization_server_metadata_urls_in_the_specs_order() -> None:
    assert metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration"]
    assert metadata_urls("https://auth.example.com/") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration"]


def test_config_refuses_symmetric_algorithms() -> None:
    with pytest.raises(ValueError, match="asymmetric"):
        AuthConfig(issuer=ISSUER, resource=RESOURCE, algorithms=("RS256", "HS256"))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--auth-token")
    add_oauth_arguments(parser.add_argument_group("oauth"))
    return parser.parse_args(argv)


def test_options_make_an_auth_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_OAUTH_CLIENT_SECRET", "s3cret")
    config = auth_config_from_args(parse(["--oauth-issuer", ISSUER, "--oauth-resource", RESOURCE + "/",
                                          "--oauth-scopes", "a", "b,c", "--oauth-audience", "api://x",
                                          "--oauth-client-id", "rs"]))
    assert config is not None
    assert (config.resource, config.required_scopes, config.audiences) == (RESOURCE, ("a", "b", "c"), ("api://x",))
    assert config.introspection_client_secret == "s3cret" and "s3cret" not in repr(config)
    assert auth_config_from_args(parse([])) is None


def test_options_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_OAUTH_ISSUER", ISSUER)
    monkeypatch.setenv("MCP_OAUTH_RESOURCE", RESOURCE)
    monkeypatch.setenv("MCP_OAUTH_SCOPES", "x y")
    config = auth_config_from_args(parse([]))
    assert config is not None and config.required_scopes == ("x", "y")


@pytest.mark.parametrize(("argv", "message"), [
    (["--oauth-issuer", ISSUER], "needs --oauth-resource"),
    (["--oauth-resource", RESOURCE], "needs --oauth-issuer"),
    (["--oauth-issuer", ISSUER, "--oauth-resource", RESOURCE, "--auth-token", "t"], "choose one"),
    (["--oauth-issuer", ISSUER, "--oauth-resource", "mcp.example.com"], "absolute http"),
])
def test_option_mistakes_are_explained(argv: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        auth_config_from_args(parse(argv))


# ---------------------------------------------------------------------------------------------- JWTs


class Issuer:
    """Keys, a JWKS and signed tokens, served to the validator through an httpx.MockTransport."""

    def __init__(self) -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.jwks: list[dict[str, Any]] = [
            self.public_jwk(self.rsa, "rsa-1", "RS256"),
            self.public_jwk(self.ec, "ec-1", "ES256"),
        ]
        self.fetches = 0
        self.fail = False

    @staticmethod
    def public_jwk(key: Any, kid: str, alg: str) -> dict[str, Any]:
        algorithm = jwt.algorithms.RSAAlgorithm if alg.startswith(("RS", "PS")) else jwt.algorithms.ECAlgorithm
        return {**json.loads(algorithm.to_jwk(key.public_key())), "kid": kid, "alg": alg, "use": "sig"}

    def handler(self, request: httpx.Request) -> httpx.Response:
        if self.fail:
            return httpx.Response(500)
        if request.url.path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, json={"issuer": ISSUER, "jwks_uri": f"{ISSUER}/jwks"})
        if request.url.path == "/jwks":
            self.fetches += 1
            return httpx.Response(200, json={"keys": self.jwks})
        return httpx.Response(404)

    def token(
        self,
        *,
        key: Any = None,
        alg: str = "RS256",
        kid: str | None = "rsa-1",
        header: dict[str, Any] | None = None,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "client_id": "cli", "scope": "mcp:read",
                   "iat": now, "exp": now + 300, **claims}
        payload = {k: v for k, v in payload.items() if v is not None}
        headers = {"typ": "at+jwt", **({"kid": kid} if kid else {}), **(header or {})}
        return jwt.encode(payload, key if key is not None else self.rsa, algorithm=alg, headers=headers)


@pytest.fixture
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture
def validator(issuer: Issuer) -> Iterator[TokenValidator]:
    http = httpx.AsyncClient(transport=httpx.MockTransport(issuer.handler))
    yield TokenValidator(AuthConfig(issuer=ISSUER, resource=RESOURCE, audiences=("api://mcp",)), http=http)


def unsigned(claims: dict[str, Any], header: dict[str, Any]) -> str:
    encode = lambda data: base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()  # noqa: E731
    return f"{encode(header)}.{encode(claims)}."


async def test_a_good_token_becomes_an_access_token(issuer: Issuer, validator: TokenValidator) -> None:
    principal = await validator.validate(issuer.token(scope="mcp:read mcp:write"))
    assert (principal.subject, principal.client_id, principal.scopes) == ("alice", "cli", {"mcp:read", "mcp:write"})
    assert principal.audience == (RESOURCE,) and principal.source == "jwt"
    es = await validator.validate(issuer.token(key=issuer.ec, alg="ES256", kid="ec-1", aud=["x", "api://mcp"],
                                               scope=None, scp=["a", "b"], client_id=None, azp="app"))
    assert es.scopes == {"a", "b"} and es.client_id == "app"
    assert issuer.fetches == 1  # the key set is cached


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (
            lambda i: unsigned(
                {"iss": ISSUER, "aud": RESOURCE, "exp": int(time.time()) + 60}, {"alg": "none", "typ": "at+jwt"}
            ),
            "'none' are not accepted",
        ),
        (
            lambda i: jwt.encode(
                {"iss": ISSUER, "aud": RESOURCE, "exp": int(time.time()) + 60},
                "attacker-chosen-secret-long-enough-for-hs256",
                algorithm="HS256",
                headers={"kid": "rsa-1"},
            ),
            "'HS256' are not accepted",
        ),
        (lambda i: i.token(header={"typ": "JWT+other"}), "not an access token"),
        (lambda i: i.token(header={"typ": "dpop+jwt"}), "not an access token"),
        (lambda i: i.token(header={"crit": ["exp"]}), "critical"),
        (lambda i: i.token(kid="rsa-unknown"), "key the issuer does not publish"),
        (lambda i: i.token(alg="PS256"), "key the issuer does not publish"),  # the key is published for RS256 only
        (lambda i: i.token(key=rsa.generate_private_key(public_exponent=65537, key_size=2048)), "signature"),
        (lambda i: i.token(iss="https://evil.example.com"), "another authorization server"),
        (lambda i: i.token(aud="https://mcp.example.com/other"), "another resource"),
        (lambda i: i.token(aud=None), "no aud claim"),
        (lambda i: i.token(exp=int(time.time()) - 120), "expired"),
        (lambda i: i.token(nbf=int(time.time()) + 120), "not valid yet"),
        (lambda i: i.token(iat=int(time.time()) + 120), "issued in the future"),
        (lambda i: i.token()[:-4] + "AAAA", "signature"),
        (lambda i: "a.b.c", "not a JWT, and this server has no introspection"),
    ],
)
async def test_tokens_that_must_be_refused(issuer: Issuer, validator: TokenValidator, make: Any, reason: str) -> None:
    with pytest.raises(InvalidToken, match=reason):
        await validator.validate(make(issuer))


async def test_hmac_keyed_with_the_public_key_is_refused_even_if_hs256_were_asked_for(issuer: Issuer) -> None:
    public_pem = issuer.rsa.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo)
    with pytest.raises(jwt.InvalidKeyError):  # PyJWT itself will not use an asymmetric key as an HMAC secret
        jwt.encode({"iss": ISSUER}, public_pem, algorithm="HS256")


async def test_leeway_tolerates_small_clock_skew(issuer: Issuer, validator: TokenValidator) -> None:
    now = int(time.time())
    assert await validator.validate(issuer.token(exp=now - 10, nbf=now + 10, iat=now + 10))


async def test_published_private_or_symmetric_keys_are_ignored(issuer: Issuer, validator: TokenValidator) -> None:
    private = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(issuer.rsa))
    issuer.jwks = [{**private, "kid": "rsa-1", "alg": "RS256"}, {"kty": "oct", "k": "c2VjcmV0", "kid": "hs"}]
    with pytest.raises(AuthServerUnavailable, match="not available"):
        await validator.validate(issuer.token())


async def test_an_unreachable_issuer_is_a_503_not_a_401(issuer: Issuer, validator: TokenValidator) -> None:
    issuer.fail = True
    with pytest.raises(AuthServerUnavailable):
        await validator.validate(issuer.token())


async def test_keys_survive_a_failed_refresh(issuer: Issuer) -> None:
    clock = [0.0]
    http = httpx.AsyncClient(transport=httpx.MockTransport(issuer.handler))
    validator = TokenValidator(AuthConfig(issuer=ISSUER, resource=RESOURCE, jwks_refresh_interval=10, jwks_max_age=100),
                               http=http, monotonic=lambda: clock[0])
    assert await validator.validate(issuer.token())
    issuer.fail = True
    clock[0] = 150  # past max_age: the refresh fails, the known keys stay
    assert await validator.validate(issuer.token())
    with pytest.raises(InvalidToken, match="does not publish"):
        await validator.validate(issuer.token(kid="new"))
