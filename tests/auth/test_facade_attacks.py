"""Attacks on the OAuth facade, each refused with the right OAuth error (oidc-provider as the upstream).

A redirect URI one character off, a replayed code (which also revokes what the code gave), a code
stolen into another client, a missing or wrong PKCE verifier, a refresh token used twice (which
revokes the whole grant), and the ways to skip consent: a consent form posted from another browser,
without its CSRF token, from another site or followed as a link, a forged remembered-user cookie, a
callback whose state this browser never got (an attacker's sign-in link), and the confused deputy
itself (a malicious client registered after the user approved another one gets its own consent page,
not a silent redirect).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from mcp_kit._backends import MemoryBackend
from mcp_kit._backends import memory as memory_module
from mcp_kit.auth._facade import _FACADES
from tests.auth.test_facade import (  # noqa: F401  (fixtures)
    REDIRECT_URI,
    Facade,
    RawClient,
    call_tool_status,
    facade,
    pkce,
    raw,
    upstream,
)
from tests.helpers.facade_browser import consent_form

pytestmark = pytest.mark.anyio


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


@pytest.fixture
async def tokens(facade: Facade, raw: RawClient) -> AsyncIterator[dict[str, str]]:  # noqa: F811
    code, verifier = await raw.code(facade.browser("alice"))
    yield await raw.redeem(code, verifier)


# ---------------------------------------------------------------------------------------------- redirect URIs


@pytest.mark.parametrize("redirect_uri", [
    "http://127.0.0.1:33418/callbacK", "http://127.0.0.1:33418/callback/", "http://127.0.0.1:33418/callback?x=1",
    "http://127.0.0.2:33418/callback", "https://127.0.0.1:33418/callback", "http://localhost:33418/callback",
])
async def test_a_redirect_uri_one_character_off_is_refused_without_redirecting(
        facade: Facade, raw: RawClient, redirect_uri: str) -> None:  # noqa: F811
    verifier, challenge = pkce()
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(raw.authorization_url(challenge, redirect_uri=redirect_uri))
    assert answer.status_code == 400 and "location" not in answer.headers
    assert "invalid_request" in answer.text and "redirect_uri" in answer.text
    assert answer.headers["x-frame-options"] == "DENY"


async def test_a_loopback_redirect_uri_may_change_only_its_port(facade: Facade, raw: RawClient) -> None:  # noqa: F811
    other_port = REDIRECT_URI.replace("33418", "40001")
    raw.redirect_uri = other_port
    code, verifier = await raw.code(facade.browser("alice", redirect_uri=other_port))
    assert (await raw.redeem(code, verifier))["access_token"]


async def test_the_token_request_needs_the_authorization_requests_redirect_uri(
        facade: Facade, raw: RawClient) -> None:  # noqa: F811
    code, verifier = await raw.code(facade.browser("alice"))
    answer = await raw.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                             redirect_uri=REDIRECT_URI + "x")
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


# ---------------------------------------------------------------------------------------------- codes


async def test_a_replayed_code_is_refused_and_revokes_what_it_gave(
        facade: Facade, raw: RawClient) -> None:  # noqa: F811
    code, verifier = await raw.code(facade.browser("alice"))
    first = await raw.redeem(code, verifier)
    assert (await call_tool_status(facade, first["access_token"])).status_code == 200
    replay = await raw.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                             redirect_uri=REDIRECT_URI)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert "already used" in replay.json()["error_description"]
    assert (await call_tool_status(facade, first["access_token"])).status_code == 401
    refreshed = await raw.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert refreshed.json()["error"] == "invalid_grant"
    assert any(r["event"] == "oauth.grant_revoked" and r["reason"] == "code_replay" for r in facade.audit)


async def test_a_code_stolen_into_another_client_is_refused(facade: Facade, raw: RawClient) -> None:  # noqa: F811
    code, verifier = await raw.code(facade.browser("alice"))
    thief = RawClient(facade)
    await thief.register(client_name="thief")
    stolen = await thief.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                               redirect_uri=REDIRECT_URI)
    assert stolen.status_code == 400 and stolen.json() == {
        "error": "invalid_grant", "error_description": "the authorization code was issued to another client"}
    late = await raw.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                           redirect_uri=REDIRECT_URI)
    assert late.json()["error"] == "invalid_grant"  # the code is spent, and its grant revoked


async def test_an_unknown_client_or_a_wrong_secret_is_invalid_client(facade: Facade) -> None:  # noqa: F811
    confidential = RawClient(facade)
    await confidential.register(token_endpoint_auth_method="client_secret_post")
    async with httpx.AsyncClient(timeout=30) as http:
        unknown = await http.post(f"{facade.url}/token", data={"grant_type": "authorization_code", "code": "x",
                                                               "client_id": "mcp-nobody"})
        no_secret = await http.post(f"{facade.url}/token", data={"grant_type": "authorization_code", "code": "x",
                                                                 "client_id": confidential.client_id})
        wrong = await http.post(f"{facade.url}/token", data={"grant_type": "authorization_code", "code": "x",
                                                             "client_id": confidential.client_id,
                                                             "client_secret": "wrong"})
        basic = await http.post(f"{facade.url}/token", data={"grant_type": "authorization_code", "code": "x"},
                                auth=(confidential.client_id, "wrong"))
    for answer in (unknown, no_secret, wrong, basic):
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_client", answer.text
    assert basic.headers["www-authenticate"].startswith("Basic")


# ---------------------------------------------------------------------------------------------- PKCE


@pytest.mark.parametrize("verifier", [None, "", "short", "x" * 43, "é" * 50])
async def test_a_missing_or_wrong_pkce_verifier_is_refused(facade: Facade, raw: RawClient,  # noqa: F811
                                                           verifier: str | None) -> None:
    code, _ = await raw.code(facade.browser("alice"))
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI}
    if verifier is not None:
        form["code_verifier"] = verifier
    answer = await raw.token(**form)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"
    assert "PKCE" in answer.json()["error_description"]


@pytest.mark.parametrize(("overrides", "error"), [
    ({"code_challenge": None}, "invalid_request"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge_method": None}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"resource": "https://another.example/mcp"}, "invalid_target"),
    ({"scope": "notes:read admin:everything"}, "invalid_scope"),
])
async def test_a_bad_authorization_request_goes_back_to_the_client_with_its_error(
        facade: Facade, raw: RawClient, overrides: dict[str, str | None], error: str) -> None:  # noqa: F811
    verifier, challenge = pkce()
    scope = overrides.pop("scope", None) or "notes:read"
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(raw.authorization_url(challenge, scope=scope, **overrides))  # type: ignore[arg-type]
    assert answer.status_code == 303
    query = query_of(answer.headers["location"])
    assert answer.headers["location"].startswith(REDIRECT_URI + "?")
    assert query["error"] == error and query["state"] == "st-1" and query["iss"] == facade.config.issuer


# ---------------------------------------------------------------------------------------------- refresh tokens


async def test_a_refresh_token_used_twice_revokes_the_grant(facade: Facade, raw: RawClient,  # noqa: F811
                                                            tokens: dict[str, str]) -> None:
    rotated = await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert rotated.status_code == 200
    reused = await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert "already used" in reused.json()["error_description"]
    after = await raw.token(grant_type="refresh_token", refresh_token=rotated.json()["refresh_token"])
    assert after.json()["error"] == "invalid_grant"  # the rotated one dies with its family
    assert (await call_tool_status(facade, rotated.json()["access_token"])).status_code == 401
    assert any(r["event"] == "oauth.grant_revoked" and r["reason"] == "refresh_reuse" for r in facade.audit)


async def test_a_refresh_token_of_another_client_is_refused(facade: Facade, raw: RawClient,  # noqa: F811
                                                            tokens: dict[str, str]) -> None:
    thief = RawClient(facade)
    await thief.register()
    stolen = await thief.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"
    assert (await call_tool_status(facade, tokens["access_token"])).status_code == 401


# ---------------------------------------------------------------------------------------------- consent


async def consent_page_of(http: httpx.AsyncClient, url: str) -> tuple[str, dict[str, str]]:
    page = await http.get(url)
    assert page.status_code == 200, page.text
    form = consent_form(page.text)
    assert form is not None
    return form.action, form.fields


async def test_a_consent_form_posted_from_another_browser_is_refused(
        facade: Facade, raw: RawClient) -> None:  # noqa: F811
    verifier, challenge = pkce()
    async with httpx.AsyncClient(timeout=30) as attacker, httpx.AsyncClient(timeout=30) as victim:
        action, fields = await consent_page_of(attacker, raw.authorization_url(challenge))
        await victim.get(raw.authorization_url(challenge))  # the victim's browser has a cookie of its own
        forged = await victim.post(action, data={**fields, "decision": "approve"})
        assert forged.status_code == 403 and "did not come from this browser" in forged.text
        assert "<code>invalid_request</code>" in forged.text
        assert "location" not in forged.headers
        again = await attacker.post(action, data={**fields, "decision": "approve"})
        assert again.status_code == 400 and "already used" in again.text  # a consent form works once


async def test_a_consent_form_without_its_csrf_token_or_from_another_site_is_refused(
        facade: Facade, raw: RawClient) -> None:  # noqa: F811
    verifier, challenge = pkce()
    async with httpx.AsyncClient(timeout=30) as browser:
        action, fields = await consent_page_of(browser, raw.authorization_url(challenge))
        no_token = await browser.post(action, data={"pending": fields["pending"], "decision": "approve"})
        assert no_token.status_code == 403 and "<code>invalid_request</code>" in no_token.text
        action, fields = await consent_page_of(browser, raw.authorization_url(challenge))
        cross_site = await browser.post(action, data={**fields, "decision": "approve"},
                                        headers={"Origin": "https://evil.example"})
        assert cross_site.status_code == 403 and "another site" in cross_site.text
        assert "<code>invalid_request</code>" in cross_site.text
        skipped = await browser.post(action, data={"decision": "approve"})
        assert skipped.status_code == 400 and "<code>invalid_request</code>" in skipped.text
        linked = await browser.get(f"{action}?pending={fields['pending']}&csrf={fields['csrf']}&decision=approve")
        assert linked.status_code == 405 and "location" not in linked.headers  # a link cannot approve
    assert not any(r["event"] == "oauth.upstream_redirect" for r in facade.audit)


async def test_a_callback_this_browser_did_not_start_is_refused(facade: Facade, raw: RawClient) -> None:  # noqa: F811
    verifier, challenge = pkce()
    async with httpx.AsyncClient(timeout=30) as attacker, httpx.AsyncClient(timeout=30) as victim:
        action, fields = await consent_page_of(attacker, raw.authorization_url(challenge))
        to_upstream = await attacker.post(action, data={**fields, "decision": "approve"})
        assert to_upstream.status_code == 303
        upstream_url = to_upstream.headers["location"] + "&login_hint=victim"
        # The victim follows the attacker's sign-in link: the provider signs the victim in...
        url = upstream_url
        for _ in range(10):
            answer = await victim.get(url)
            url = urljoin(url, answer.headers["location"])
            if url.startswith(facade.url):
                break
        assert urlsplit(url).path == "/oauth/callback" and "code=" in url
        # ...but the callback lands in a browser that never approved this flow: no state cookie.
        landed = await victim.get(url)
        assert landed.status_code == 400 and "not started in this browser" in landed.text
        assert "<code>invalid_request</code>" in landed.text
        assert "location" not in landed.headers
        forged = await victim.get(f"{facade.url}/oauth/callback?code=x&state=made-up",
                                  headers={"Cookie": "mcp_oauth_state=made-up"})
        assert forged.status_code == 400 and "expired or was already completed" in forged.text
    assert not any(r["event"] == "oauth.code_issued" for r in facade.audit)


async def test_a_malicious_client_registered_later_gets_its_own_consent_page(
        facade: Facade, raw: RawClient) -> None:  # noqa: F811
    browser = facade.browser("alice")
    await raw.code(browser)  # alice approved the real client; her browser remembers her
    evil = RawClient(facade, redirect_uri="https://attacker.example/steal")
    await evil.register(client_name="Totally Legit", redirect_uris=["https://attacker.example/steal"])
    verifier, challenge = pkce()
    async with httpx.AsyncClient(timeout=30, cookies=browser.cookies) as victim:
        page = await victim.get(evil.authorization_url(challenge))
    assert page.status_code == 200 and "location" not in page.headers  # no silent redirect to the attacker
    assert "Totally Legit" in page.text and "not verified" in page.text
    assert "https://attacker.example/steal" in page.text
    assert re.search(r"frame-ancestors 'none'", page.headers["content-security-policy"])


async def test_a_remembered_approval_is_one_users_not_the_next_one_signing_in_in_that_browser(
        facade: Facade, raw: RawClient) -> None:  # noqa: F811
    browser = facade.browser("dave")
    await raw.code(browser)
    assert len(browser.pages) == 1
    for cookie in list(browser.cookies.jar):  # dave signs out at the provider; the facade's cookies stay
        if not cookie.name.startswith("mcp_oauth_"):
            browser.cookies.jar.clear(cookie.domain, cookie.path, cookie.name)
    browser.user = "zed"  # the same browser, someone else at the provider
    code, verifier = await raw.code(browser)
    assert len(browser.pages) == 2  # zed approved nothing: the consent page, after zed signed in
    assert (await raw.redeem(code, verifier))["access_token"]
    consents = [r for r in facade.audit if r["event"] == "oauth.consent" and r["outcome"] == "approved"]
    assert [r["phase"] for r in consents] == ["before", "after"] and consents[1]["user"] == "zed"


async def test_a_forged_remembered_user_cookie_does_not_skip_consent(
        facade: Facade, raw: RawClient) -> None:  # noqa: F811
    browser = facade.browser("dave")
    await raw.code(browser)  # dave approved this client; his browser holds a signed cookie naming him
    real = next(c for c in browser.cookies.jar if c.name == "mcp_oauth_user")
    payload, mac = real.value.rsplit(".", 1)
    until = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))[1]
    other = base64.urlsafe_b64encode(json.dumps(["dave", until + 1]).encode()).decode().rstrip("=")
    for forged in (f"{other}.{mac}", f"{payload}.{'0' * len(mac)}", "made-up"):  # a longer life, a made-up MAC
        verifier, challenge = pkce()
        async with httpx.AsyncClient(timeout=30, cookies={"mcp_oauth_user": forged}) as attacker:
            page = await attacker.get(raw.authorization_url(challenge))
        assert page.status_code == 200 and consent_form(page.text) is not None, forged  # asked, not redirected
        assert "location" not in page.headers
    asked = [r["consent"] for r in facade.audit if r["event"] == "oauth.authorize" and r["outcome"] == "ok"]
    assert asked == ["asked"] * 4


# ---------------------------------------------------------------------------------------------- the memory backend


def memory_backend_of(facade: Facade) -> MemoryBackend:  # noqa: F811  (the fixture's name)
    backend = _FACADES[str(facade.config.issuer)].backend
    assert isinstance(backend, MemoryBackend)
    return backend


async def test_a_flood_of_other_values_does_not_make_the_memory_backend_forget_a_used_refresh_token(
        facade: Facade, raw: RawClient, tokens: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    backend = memory_backend_of(facade)
    monkeypatch.setattr(memory_module, "MAX_ENTRIES", 50)
    rotated = await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert rotated.status_code == 200
    for index in range(200):  # what else the process keeps (a response cache, tool state) fills the store
        await backend.kv_set("cache", str(index), b"x" * 100, ttl=3600)
    reused = await raw.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert reused.json()["error"] == "invalid_grant" and "already used" in reused.json()["error_description"]
    assert (await call_tool_status(facade, rotated.json()["access_token"])).status_code == 401  # the grant is revoked


async def test_when_the_memory_backend_can_keep_no_more_records_the_facade_says_so(
        facade: Facade, raw: RawClient, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        caplog: pytest.LogCaptureFixture) -> None:
    backend = memory_backend_of(facade)
    monkeypatch.setattr(memory_module, "MAX_KEPT_ENTRIES", len(backend._kept))  # full from now on
    verifier, challenge = pkce()
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(raw.authorization_url(challenge))
    assert answer.status_code == 503 and answer.headers["retry-after"] == "2"
    assert answer.json()["error"] == "temporarily_unavailable"
    assert "never evicted" in caplog.text and "could not answer GET /authorize" in caplog.text
