"""Fixtures for the OAuth tests: one real authorization server (oidc-provider) for the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.authorization_server import AuthorizationServer, start_authorization_server


@pytest.fixture(scope="session")
def authorization_server() -> Iterator[AuthorizationServer]:
    with start_authorization_server() as server:
        yield server


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "auth(**options): AuthConfig options for the `protected` fixture")
