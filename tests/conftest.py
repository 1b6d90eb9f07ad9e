"""Shared pytest configuration: async tests run on anyio's asyncio backend."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
