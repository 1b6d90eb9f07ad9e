"""Skills served (SEP-2640): `app.add_skills`, `skills/list`, `skills/get`, `resources/directory/read`,
`skill://` reads and listings, the capability in both eras, cache hints in 2026-07-28; and the
reference servers serving their skills (weather's trip-planning pairs with `plan-vacation`)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from mcp_kit import MCPServer
from mcp_kit._protocol.errors import MCPError
from mcp_kit.skills import SkillError
from mcp_kit.testing import connect
from servers.stock.sample_provider import SampleProvider as StockSample
from servers.stock.server import build_server as build_stock
from servers.weather.sample_provider import SampleProvider as WeatherSample
from servers.weather.server import build_server as build_weather

pytestmark = pytest.mark.anyio

SKILLS = "io.modelcontextprotocol/skills"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def write_skill(root: Path, name: str, files: dict[str, str]) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n")
    for relative, text in files.items():
        path = root / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def app(tmp_path: Path) -> MCPServer:
    write_skill(tmp_path, "alpha", {"docs/guide.md": "# Guide\n", "run.sh": "echo hi\n"})
    write_skill(tmp_path, "beta", {})
    server = MCPServer("skills-test")
    added = server.add_skills(tmp_path)
    assert [skill.name for skill in added] == ["alpha", "beta"]
    return server


async def test_skills_are_listed_fetched_read_and_browsed(app: MCPServer, tmp_path: Path) -> None:
    async with connect(app) as client:
        assert client.initialize_result["capabilities"]["extensions"] == {SKILLS: {"directoryRead": True}}
        assert "resources" in client.initialize_result["capabilities"]
        listed = await client.request("skills/list", {})
        entry = listed["skills"][0]
        assert entry["uri"] == "skill://alpha/SKILL.md" and entry["frontmatter"]["name"] == "alpha"
        manifest = {item["uri"]: item for item in entry["resources"]}
        guide = (tmp_path / "alpha" / "docs" / "guide.md").read_bytes()
        assert manifest["skill://alpha/docs/guide.md"] == {
            "uri": "skill://alpha/docs/guide.md", "size": len(guide),
            "digest": "sha256:" + hashlib.sha256(guide).hexdigest()}
        assert (await client.request("skills/get", {"uri": "skill://alpha/SKILL.md"}))["skill"] == entry
        with pytest.raises(MCPError) as unknown:
            await client.request("skills/get", {"uri": "skill://nope/SKILL.md"})
        assert unknown.value.code == -32602
        resources = {r["uri"]: r for r in await client.list_resources()}
        assert resources["skill://alpha/SKILL.md"]["mimeType"] == "text/markdown"
        assert resources["skill://alpha/SKILL.md"]["description"] == "The alpha skill."
        assert (await client.read_resource("skill://alpha/docs/guide.md"))[0]["text"] == "# Guide\n"
        with pytest.raises(MCPError) as missing:
            await client.read_resource("skill://alpha/absent.md")
        assert missing.value.code == -32002
        children = (await client.request("resources/directory/read", {"uri": "skill://alpha"}))["resources"]
        kinds = {child["uri"]: child["mimeType"] for child in children}
        assert kinds["skill://alpha/docs"] == "inode/directory" and kinds["skill://alpha/SKILL.md"] == "text/markdown"
        with pytest.raises(MCPError) as not_a_directory:
            await client.request("resources/directory/read", {"uri": "skill://alpha/SKILL.md"})
        assert not_a_directory.value.code == -32602


async def test_the_stateless_era_adds_cache_hints_and_the_capability(app: MCPServer) -> None:
    async with connect(app) as client:
        discovered = await client.request("server/discover", {"_meta": META})
        assert discovered["capabilities"]["extensions"][SKILLS] == {"directoryRead": True}
        for method, params in (("skills/list", {}), ("skills/get", {"uri": "skill://beta/SKILL.md"}),
                               ("resources/directory/read", {"uri": "skill://beta"})):
            result = await client.request(method, {**params, "_meta": META})
            assert result["resultType"] == "complete" and result["ttlMs"] > 0 and result["cacheScope"], method
        with pytest.raises(MCPError) as unknown:
            await client.request("resources/read", {"uri": "skill://alpha/absent.md", "_meta": META})
        assert unknown.value.code == -32602


async def test_without_skills_the_methods_do_not_exist_and_nothing_is_declared() -> None:
    server = MCPServer("no-skills")
    async with connect(server) as client:
        assert "extensions" not in client.initialize_result["capabilities"]
        with pytest.raises(MCPError) as absent:
            await client.request("skills/list", {})
        assert absent.value.code == -32601
    async with connect(server, protocol_version="2025-06-18") as old:
        assert "extensions" not in old.initialize_result["capabilities"]


def test_invalid_skills_are_refused_with_every_problem(tmp_path: Path) -> None:
    (tmp_path / "Bad_Name").mkdir()
    (tmp_path / "Bad_Name" / "SKILL.md").write_text("---\nname: Bad_Name\n---\n")
    with pytest.raises(SkillError) as refused:
        MCPServer("x").add_skills(tmp_path)
    assert "Bad_Name" in str(refused.value)


async def test_adding_skills_while_connected_announces_a_resource_list_change(tmp_path: Path) -> None:
    server = MCPServer("late")
    write_skill(tmp_path, "late-skill", {})
    async with connect(server) as client:
        server.add_skills(tmp_path)
        await client.wait_notification("notifications/resources/list_changed")
        assert [s["uri"] for s in (await client.request("skills/list", {}))["skills"]] == [
            "skill://late-skill/SKILL.md"
        ]


@pytest.mark.parametrize(("build", "skill", "partner"), [
    (lambda: build_stock(StockSample()), "skill://valuation-analysis/SKILL.md", "valuation_report"),
    (lambda: build_weather(WeatherSample()), "skill://trip-planning/SKILL.md", "plan-vacation"),
])
async def test_reference_servers_serve_their_skills(build: Any, skill: str, partner: str) -> None:
    async with connect(build()) as client:
        listed = [entry["uri"] for entry in (await client.request("skills/list", {}))["skills"]]
        assert listed == [skill]
        text = (await client.read_resource(skill))[0]["text"]
        prompts = [p["name"] for p in await client.list_prompts()]
        tools = [t["name"] for t in await client.list_tools()]
        assert partner in prompts + tools
        if partner == "plan-vacation":
            assert "plan-vacation" in text  # the skill names the prompt it pairs with
