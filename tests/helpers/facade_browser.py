"""A headless browser for the OAuth facade's flow: follows redirects with its own cookies, answers the
consent page, and signs in at the upstream provider as a chosen user.

`Browser.authorize(url)` goes from an authorization URL to the URL the flow finally redirects to
(the MCP client's redirect URI, with `code` or `error`). On the facade's consent page it submits
the form with `approve` (or `deny`); on the way to the upstream provider it adds the parameter
that test providers read to choose who signs in (`login_hint` for oidc-provider, `login` for the
GitHub-shaped one). `pages` keeps every consent page seen; `steps` every URL visited. `event_hooks`
go to its HTTP client (a test spreading every request over several server processes rewrites them there).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import httpx

from mcp_kit.client.oauth import CallbackRedirect

_INPUT = re.compile(r"<input type=hidden name=(\w+) value='([^']*)'>")
_ACTION = re.compile(r"<form method=post action='([^']*)'>")


@dataclass
class ConsentForm:
    action: str
    fields: dict[str, str]
    text: str


def consent_form(page: str) -> ConsentForm | None:
    action = _ACTION.search(page)
    if action is None:
        return None
    fields = {name: html.unescape(value) for name, value in _INPUT.findall(page)}
    return ConsentForm(html.unescape(action.group(1)), fields, page)


@dataclass
class Browser:
    redirect_uri: str = "http://127.0.0.1:33418/callback"
    user: str = "alice"
    upstream: str = ""  # the upstream authorization endpoint: who signs in is added to the URL on the way there
    hint_param: str = "login_hint"
    decision: str = "approve"
    cookies: httpx.Cookies = field(default_factory=httpx.Cookies)  # kept from one authorization to the next
    pages: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    event_hooks: dict[str, list[Any]] | None = None

    def redirect(self) -> CallbackRedirect:
        """This browser as mcp_kit's client's redirect handler."""
        return CallbackRedirect(self.redirect_uri, self.authorize)

    async def authorize(self, url: str, max_hops: int = 30) -> str:
        async with httpx.AsyncClient(timeout=30, follow_redirects=False, cookies=self.cookies,
                                     event_hooks=self.event_hooks) as http:
            try:
                return await self._walk(http, url, max_hops)
            finally:
                self.cookies = http.cookies

    async def _walk(self, http: httpx.AsyncClient, url: str, max_hops: int) -> str:
        response = await http.get(self._signing_in(url))
        for _ in range(max_hops):
            self.steps.append(str(response.url))
            if response.status_code in (301, 302, 303, 307, 308):
                target = urljoin(str(response.url), response.headers["location"])
                if _same_endpoint(target, self.redirect_uri):
                    return target
                response = await http.get(self._signing_in(target))
                continue
            form = consent_form(response.text) if response.status_code == 200 else None
            if form is None:
                raise AssertionError(f"the flow stopped at HTTP {response.status_code} ({response.url}): "
                                     f"{response.text[:500]}")
            self.pages.append(response.text)
            response = await http.post(form.action, data={**form.fields, "decision": self.decision})
        raise AssertionError("the flow did not come back to the redirect URI")

    def _signing_in(self, url: str) -> str:
        if self.upstream and url.startswith(self.upstream + "?") and f"{self.hint_param}=" not in url:
            return url + ("&" if "?" in url else "?") + urlencode({self.hint_param: self.user})
        return url


def _same_endpoint(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.hostname, a.port, a.path) == (b.scheme, b.hostname, b.port, b.path)
