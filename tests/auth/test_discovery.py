"""Authorization server metadata discovery: every candidate URL tried in order, and only a document about
the issuer asked for is trusted (RFC 8414 section 3.3), near misses of the issuer included.

Runs against recorded responses (httpx.MockTransport); skipped where mcp_kit has no OAuth support.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

discovery = pytest.importorskip("mcp_kit.auth._discovery")
pytestmark = pytest.mark.anyio

ISSUER = "https://auth.example.com/tenant1"


def serving(pages: dict[str, Any]) -> httpx.AsyncClient:
    """A client whose server answers each URL from `pages`: a document, an HTTP status, raw bytes or an error."""

    def answer(request: httpx.Request) -> httpx.Response:
        page = pages.get(str(request.url), 404)
        if isinstance(page, Exception):
            raise page
        if isinstance(page, int):
            return httpx.Response(page)
        if isinstance(page, bytes):
            return httpx.Response(200, content=page)
        return httpx.Response(200, content=json.dumps(page).encode(), headers={"content-type": "application/json"})

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


async def test_the_first_document_about_the_issuer_wins_after_every_unusable_one() -> None:
    oauth, openid_inserted, openid_appended = discovery.metadata_urls(ISSUER)
    good = {"issuer": ISSUER, "jwks_uri": "https://auth.example.com/tenant1/jwks"}
    async with serving({oauth: 503, openid_inserted: b"<html>not json</html>", openid_appended: good}) as http:
        assert await discovery.fetch_metadata(http, ISSUER) == good
    async with serving({oauth: good, openid_inserted: {"issuer": "https://evil.example"}}) as http:
        assert await discovery.fetch_metadata(http, ISSUER) == good  # the first usable one: later ones unread


@pytest.mark.parametrize("named", [ISSUER + "/", "https://auth.example.com/tenant", ISSUER + "2",
                                   "https://AUTH.example.com/tenant1", "http://auth.example.com/tenant1",
                                   "https://auth.example.com.evil.example/tenant1", None])
async def test_a_document_about_any_other_issuer_is_not_trusted(named: str | None) -> None:
    document = {"jwks_uri": "https://evil.example/jwks"} | ({} if named is None else {"issuer": named})
    pages = {url: document for url in discovery.metadata_urls(ISSUER)}
    async with serving(pages) as http:
        with pytest.raises(discovery.MetadataError) as refused:
            await discovery.fetch_metadata(http, ISSUER)
    assert f"names issuer {named!r}, not {ISSUER!r}" in str(refused.value)


async def test_the_error_says_what_each_candidate_gave() -> None:
    oauth, openid_inserted, openid_appended = discovery.metadata_urls(ISSUER)
    pages = {oauth: httpx.ConnectError("refused"), openid_inserted: b"[1, 2]", openid_appended: b"{not json"}
    async with serving(pages) as http:
        with pytest.raises(discovery.MetadataError) as failed:
            await discovery.fetch_metadata(http, ISSUER)
    message = str(failed.value)
    assert f"{oauth}: refused" in message
    assert f"{openid_inserted}: not a JSON object" in message and f"{openid_appended}: not JSON" in message
    root_issuer = "https://auth.example.com"
    async with serving({}) as http:
        with pytest.raises(discovery.MetadataError, match="HTTP 404.*HTTP 404"):
            await discovery.fetch_metadata(http, root_issuer)
