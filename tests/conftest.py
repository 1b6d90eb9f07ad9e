"""Shared pytest configuration: async tests run on anyio's asyncio backend; coverage reaches SDK-started servers;
one real Redis per test module that asks for `redis` (skipped, or failed under MCP_KIT_REQUIRE_REDIS=1, without it);
the longest files run first."""

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


# The files that take longest (40 s or more of one pytest process each, measured with --durations on two cores):
# they run first, so that with a file's tests kept on one process (bin/test's --dist loadfile) none of them is
# left running alone at the end. Every other file, and the order within each file, stays as collected.
LONGEST_FIRST = (
    "tests/cli/test_main.py",
    "tests/proxy/test_proxy_ts_sdk.py",
    "tests/interop/test_sdk_matrix.py",
    "tests/project/test_readme.py",
    "tests/transports/test_stdio_raw.py",
    "tests/auth/test_facade_sdk_scaleout.py",
    "tests/functions/test_function_turns.py",
    "tests/servers/filesystem/test_filesystem_adversarial.py",
    "tests/functions/test_schema_conversion_properties.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: place for place, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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
