"""Shared pytest configuration: async tests run on anyio's asyncio backend; coverage reaches SDK-started servers;
one real Redis per test module that asks for `redis` (skipped, or failed under MCP_KIT_REQUIRE_REDIS=1, without it)."""

import os
from collections.abc import Iterator

import pytest

from tests.helpers.redis_support import STARTED_WORKDIRS, RedisProcess, redis_server, require_redis
from tests.helpers.support import COVERAGE_VARIABLES


def pytest_configure(config: pytest.Config) -> None:
    # The SDK's stdio client hands the servers it starts only an allow-list of variables; under bin/test's
    # coverage run, let coverage's own two through so those servers are measured like every other subprocess.
    if os.environ.get("COVERAGE_PROCESS_START"):
        from mcp.client import stdio

        stdio.DEFAULT_INHERITED_ENV_VARS.extend(
            v for v in COVERAGE_VARIABLES if v not in stdio.DEFAULT_INHERITED_ENV_VARS
        )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisProcess]:
    require_redis()
    with redis_server() as server:
        yield server


@pytest.fixture(scope="session", autouse=True)
def redis_directories_removed() -> Iterator[None]:
    """Every Redis a test started has had its working directory (/tmp/mcp-kit-redis-*) removed by the end."""
    yield
    left = [str(path) for path in STARTED_WORKDIRS if path.exists()]
    assert not left, f"Redis working directories left behind: {left}"
