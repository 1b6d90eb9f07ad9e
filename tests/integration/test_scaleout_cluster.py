"""The session-continuity proof on a 3-node Redis Cluster on loopback (`redis+cluster://`): each
session's keys share one hash tag, so they live on one node; pub/sub reaches every process."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.helpers.redis_support import RedisProcess, redis_cluster
from tests.helpers.scaleout_client import Session, servers
from tests.helpers.support import ServerURL


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[RedisProcess]]:
    with redis_cluster(3) as nodes:
        yield nodes


@pytest.fixture(scope="module")
def three(cluster: list[RedisProcess]) -> Iterator[list[ServerURL]]:
    with servers(f"redis+cluster://127.0.0.1:{cluster[0].port}") as bases:
        yield bases


def test_sessions_continue_across_processes_on_a_redis_cluster(three: list[ServerURL]) -> None:
    p1, p2, p3 = three
    with httpx.Client(timeout=20) as client:
        sessions = []
        for index in range(6):  # several sessions: their ids hash to different nodes of the cluster
            session = Session(client)
            session.open(three[index % 3])
            session.notify(three[(index + 1) % 3], "notifications/initialized")
            sessions.append(session)
        for session in sessions:
            answered = {session.tool(base, "whoami") for base in (p1, p2, p3)}
            assert answered == {str(p1.process.pid), str(p2.process.pid), str(p3.process.pid)}
        assert client.delete(f"{p3}/mcp", headers=sessions[0].headers()).status_code == 200
        assert sessions[0].post(p1, "tools/list").status_code == 404


def test_the_keys_of_a_session_share_one_hash_tag(three: list[ServerURL], cluster: list[RedisProcess]) -> None:
    import subprocess

    from tests.helpers.redis_support import REDIS_CLI

    with httpx.Client(timeout=20) as client:
        session = Session(client)
        session.open(three[0])
        session.notify(three[1], "notifications/initialized")
    slot = subprocess.run([REDIS_CLI or "redis-cli", "-p", str(cluster[0].port), "cluster", "keyslot",
                           f"mcp:{{{session.id}}}:state"], capture_output=True, text=True, check=True).stdout.strip()
    found = [
        subprocess.run(
            [REDIS_CLI or "redis-cli", "-p", str(node.port), "--scan", "--pattern", f"mcp:{{{session.id}}}:*"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for node in cluster
    ]
    holders = [keys for keys in found if keys]
    assert len(holders) == 1 and f"mcp:{{{session.id}}}:state" in holders[0]  # all on one node
    assert slot.isdigit()
