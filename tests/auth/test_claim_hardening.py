"""What a correctly signed token (or a positive introspection answer) still must not get away with.

Tokens are signed by keys made in the test (`Issuer` of test_auth_units, served through an
httpx.MockTransport), with claims a real authorization server would not issue: scope strings split
by other whitespace than U+0020, dates that are not finite numbers, audiences with userinfo or
characters URL parsers drop, and tokens that name no one. Owner identities are compared as typed
triples, in one process and through the shared session record.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import jwt
import pytest

from mcp_kit._transports.http_sessions import OWNER_KEY, _unpack
from mcp_kit.auth import AccessToken, AuthConfig, InvalidToken
from mcp_kit.auth._principal import may_use, owner_key, session_owner
from mcp_kit.auth._resource_uri import canonical_resource, same_resource
from mcp_kit.auth._scopes import parse_scopes
from mcp_kit.auth._validator import TokenValidator
from tests.auth.test_auth_units import ISSUER, RESOURCE, Issuer

pytestmark = pytest.mark.anyio
INTROSPECTION = f"{ISSUER}/introspect"


@pytest.fixture
def issuer() -> Issuer:
    return Issuer()


@pytest.fixture
def validator(issuer: Issuer) -> TokenValidator:
    http = httpx.AsyncClient(transport=httpx.MockTransport(issuer.handler))
    return TokenValidator(AuthConfig(issuer=ISSUER, resource=RESOURCE), http=http)


def signed_raw(issuer: Issuer, payload: str) -> str:
    """A JWT signed by the issuer's key over exactly `payload` (JSON text that json.dumps would never write)."""
    return jwt.api_jws.PyJWS().encode(payload.encode(), issuer.rsa, algorithm="RS256",
                                      headers={"typ": "at+jwt", "kid": "rsa-1"})


def claims_json(**replaced: str) -> str:
    """The JSON text of good claims, with some values replaced by raw JSON text."""
    now = int(time.time())
    values = {"iss": json.dumps(ISSUER), "aud": json.dumps(RESOURCE), "sub": '"alice"', "client_id": '"cli"',
              "scope": '"mcp:read"', "iat": str(now), "exp": str(now + 300), **replaced}
    return "{" + ",".join(f'"{name}":{text}' for name, text in values.items()) + "}"


# ---------------------------------------------------------------------------------------------- scopes


@pytest.mark.parametrize("separator", ["\u00a0", "\t", "\n", "\u2003", "\u3000", "\u001f", "\r", "\u2028"])
async def test_scope_tokens_are_separated_by_u0020_only(issuer: Issuer, validator: TokenValidator,
                                                        separator: str) -> None:
    principal = await validator.validate(issuer.token(scope=f"mcp:tools{separator}things:write mcp:read"))
    assert principal.scopes == {"mcp:read"}  # the invalid token grants nothing, the valid one beside it counts
    assert not principal.allows("things:write") and not principal.allows("mcp:tools")


def test_scope_lists_and_strings_keep_only_rfc_6749_tokens() -> None:
    assert parse_scopes("a  b") == {"a", "b"}  # an empty token between two spaces is no scope
    assert parse_scopes(["a", "b c", "d\u00a0e", 'q"uote', "back\\slash", "é", "", "ok:1"]) == {"a", "ok:1"}
    assert parse_scopes("files:write\n") == frozenset()


# ---------------------------------------------------------------------------------------------- dates


@pytest.mark.parametrize(("claim", "text"), [
    ("exp", "1e400"), ("exp", "NaN"), ("exp", "Infinity"), ("exp", "1" + "0" * 400),
    ("nbf", "NaN"), ("nbf", "-1e400"), ("iat", "NaN"), ("iat", "-Infinity"),
])
async def test_date_claims_must_be_finite_numbers(issuer: Issuer, validator: TokenValidator, claim: str,
                                                  text: str) -> None:
    token = signed_raw(issuer, claims_json(**{claim: text}))
    with pytest.raises(InvalidToken, match=f"{claim} claim is not a finite number"):
        await validator.validate(token)


def introspecting(answer_text: str) -> TokenValidator:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=answer_text.encode(), headers={"content-type": "application/json"})

    config = AuthConfig(issuer=ISSUER, resource=RESOURCE, introspection_url=INTROSPECTION,
                        introspection_client_id="rs", introspection_client_secret="s")
    return TokenValidator(config, http=httpx.AsyncClient(transport=httpx.MockTransport(handler)))


@pytest.mark.parametrize(("claim", "text"), [("exp", "1e400"), ("exp", "NaN"), ("nbf", "NaN"), ("iat", "NaN")])
async def test_introspected_dates_must_be_finite_numbers_too(claim: str, text: str) -> None:
    answer = claims_json(**{claim: text}).replace("{", '{"active":true,', 1)
    with pytest.raises(InvalidToken, match=f"{claim} claim is not a finite number"):
        await introspecting(answer).validate("opaque-token")
    without_dates = json.dumps({"active": True, "aud": RESOURCE, "sub": "alice", "scope": "mcp:read"})
    assert (await introspecting(without_dates).validate("opaque-token")).expires_at is None  # exp is optional there


# ---------------------------------------------------------------------------------------------- audiences


@pytest.mark.parametrize("audience", [
    "https://x@mcp.example.com/mcp", "https://user:pw@mcp.example.com/mcp", "https://@mcp.example.com/mcp",
    "https://mcp.example.com/m\tcp", "https://mcp.exa\nmple.com/mcp", " https://mcp.example.com/mcp",
    "https://mcp.example.com:+443/mcp", "https://mcp.example.com/mcp//",
])
async def test_an_audience_that_only_parses_like_this_resource_is_another_one(
        issuer: Issuer, validator: TokenValidator, audience: str) -> None:
    assert not same_resource(audience, RESOURCE)
    with pytest.raises(InvalidToken, match="another resource"):
        await validator.validate(issuer.token(aud=audience))


def test_canonical_resources_refuse_userinfo() -> None:
    with pytest.raises(ValueError, match="userinfo"):
        canonical_resource("http://x@127.0.0.1:8000/mcp")
    with pytest.raises(ValueError, match="userinfo"):
        AuthConfig(issuer=ISSUER, resource="https://me@mcp.example.com/mcp")
    assert same_resource("HTTPS://MCP.example.com:443/mcp/", RESOURCE)  # what canonical spelling forgives


async def test_introspected_audiences_are_compared_the_same_way() -> None:
    answer = json.dumps({"active": True, "aud": "https://x@mcp.example.com/mcp", "sub": "alice"})
    with pytest.raises(InvalidToken, match="another resource"):
        await introspecting(answer).validate("opaque-token")


# ---------------------------------------------------------------------------------------------- identity


async def test_a_token_that_names_no_one_is_refused(issuer: Issuer, validator: TokenValidator) -> None:
    for missing in ({"sub": None, "client_id": None}, {"sub": "", "client_id": None}):
        with pytest.raises(InvalidToken, match="names no one"):
            await validator.validate(issuer.token(**missing))
    with pytest.raises(InvalidToken, match="names no one"):
        await introspecting(json.dumps({"active": True, "aud": RESOURCE})).validate("opaque-token")


async def test_owners_are_typed_so_a_subject_never_equals_a_client(issuer: Issuer, validator: TokenValidator) -> None:
    user = await validator.validate(issuer.token(sub="client:svc", client_id="app"))
    service = await validator.validate(issuer.token(sub=None, client_id="svc"))
    assert session_owner(user) == (ISSUER, "sub", "client:svc")
    assert session_owner(service) == (ISSUER, "client", "svc")
    assert not may_use(session_owner(service), user) and not may_use(session_owner(user), service)
    assert may_use(session_owner(service), service) and may_use(None, user)  # None: a session opened without OAuth
    assert owner_key(session_owner(user)) != owner_key(session_owner(service))


def unidentified() -> AccessToken:
    return AccessToken(subject=None, client_id=None, scopes=frozenset(), expires_at=None, issuer=ISSUER,
                       audience=(RESOURCE,), source="jwt")


def test_an_owner_is_never_shared_by_tokens_naming_no_one() -> None:
    first, second = unidentified(), unidentified()
    assert not may_use(session_owner(first), second) and not may_use(session_owner(first), first)


def test_the_shared_record_keeps_the_typed_owner_and_a_damaged_one_matches_nobody() -> None:
    owner = (ISSUER, "client", "svc")
    service = AccessToken(subject=None, client_id="svc", scopes=frozenset(), expires_at=None, issuer=ISSUER,
                          audience=(RESOURCE,), source="jwt")
    user = AccessToken(subject="client:svc", client_id=None, scopes=frozenset(), expires_at=None, issuer=ISSUER,
                       audience=(RESOURCE,), source="jwt")
    state, unpacked = _unpack(json.dumps({"x": 1, OWNER_KEY: list(owner)}).encode())
    assert state == {"x": 1} and unpacked == owner and may_use(unpacked, service) and not may_use(unpacked, user)
    damaged: Any
    for damaged in ([ISSUER, "client:svc"], [ISSUER, "client", 3], "svc", {}):
        _, unpacked = _unpack(json.dumps({OWNER_KEY: damaged}).encode())
        assert unpacked is not None and not may_use(unpacked, service) and not may_use(unpacked, user)
