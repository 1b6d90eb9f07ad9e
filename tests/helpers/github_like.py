"""A GitHub-shaped identity provider for the facade's tests: plain OAuth 2.0, no OIDC, no ID token.

It behaves as a GitHub OAuth app's provider does where the facade depends on it: one registered
client (id + secret, one callback URL), `GET /login/oauth/authorize` (here it signs in at once the
user named by a `login` parameter the test adds, `login=deny` refuses), `POST
/login/oauth/access_token` (form; JSON with `Accept: application/json`; the secret in the form;
errors as HTTP 200 with an `error` field, as GitHub answers; comma-separated `scope`), expiring
tokens with refresh tokens when `expires_in` is set, and `GET /user` naming the token's user
(`id` a number, `login`). Served with uvicorn in a thread (tests.helpers.uvicorn_thread).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

CLIENT_ID = "Iv1.facade-test"
CLIENT_SECRET = "github-upstream-secret"


@dataclass
class GitHubLike:
    """The provider's state: its client's callback, codes, tokens, users; what it was asked."""

    callback: str = ""
    expires_in: int | None = None  # expiring user tokens (with refresh tokens) when set
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # access token -> login
    refresh_tokens: dict[str, str] = field(default_factory=dict)
    users: dict[str, int] = field(default_factory=dict)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    user_requests: int = 0
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1001))

    def user_id(self, login: str) -> int:
        if login not in self.users:
            self.users[login] = next(self._ids)
        return self.users[login]

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/healthz", lambda request: PlainTextResponse("ok")),
            Route("/login/oauth/authorize", self.authorize),
            Route("/login/oauth/access_token", self.access_token, methods=["POST"]),
            Route("/user", self.user),
        ])

    async def authorize(self, request: Request) -> Response:
        query = request.query_params
        if query.get("client_id") != CLIENT_ID or query.get("redirect_uri") != self.callback:
            return PlainTextResponse("The redirect_uri MUST match the registered callback URL for this application.",
                                     status_code=400)
        login = query.get("login", "octocat")
        if login == "deny":
            return RedirectResponse(f"{self.callback}?{urlencode({'error': 'access_denied', 'state': query['state']})}",
                                    status_code=302)
        code = secrets.token_hex(10)
        self.codes[code] = {"login": login, "challenge": query.get("code_challenge"), "scope": query.get("scope", "")}
        back = urlencode({"code": code, "state": query["state"]})
        return RedirectResponse(f"{self.callback}?{back}", status_code=302)

    async def access_token(self, request: Request) -> Response:
        form = dict(await request.form())
        self.token_requests.append({k: str(v) for k, v in form.items()})
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return JSONResponse({"error": "incorrect_client_credentials"})
        if form.get("grant_type") == "refresh_token":
            login = self.refresh_tokens.pop(str(form.get("refresh_token")), None)
            if login is None:
                return JSONResponse({"error": "bad_refresh_token"})
            return JSONResponse(self._issue(login, "read:user"))
        grant = self.codes.pop(str(form.get("code")), None)
        if grant is None:
            return JSONResponse({"error": "bad_verification_code"})
        verifier = str(form.get("code_verifier", ""))
        if grant["challenge"]:
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if digest != grant["challenge"]:
                return JSONResponse({"error": "bad_verification_code"})
        return JSONResponse(self._issue(grant["login"], ",".join(grant["scope"].split())))

    def _issue(self, login: str, scope: str) -> dict[str, Any]:
        token = "gho_" + secrets.token_hex(16)
        self.tokens[token] = login
        answer: dict[str, Any] = {"access_token": token, "token_type": "bearer", "scope": scope}
        if self.expires_in is not None:
            refresh = "ghr_" + secrets.token_hex(16)
            self.refresh_tokens[refresh] = login
            answer.update(expires_in=self.expires_in, refresh_token=refresh)
        return answer

    async def user(self, request: Request) -> Response:
        self.user_requests += 1
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        login = self.tokens.get(token) if scheme.lower() in ("bearer", "token") else None
        if login is None:
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        return JSONResponse({"id": self.user_id(login), "login": login, "name": login.title()})
