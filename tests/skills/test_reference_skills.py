"""The skills the reference servers ship: valid SEP-2640 skills, consistent with the tools they teach, packaged."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from mcp_kit import MCPServer
from mcp_kit.skills import SkillCatalog
from mcp_kit.testing import connect
from servers.stock.sample_provider import SampleProvider
from servers.stock.sample_statements import STATEMENT_LINES
from servers.stock.sec import LINES
from servers.stock.server import build_server as build_stock
from servers.weather.sample_provider import SampleProvider as WeatherSample
from servers.weather.server import build_server as build_weather
from tests.helpers.support import ROOT

BACKTICKED = re.compile(r"`([a-z][a-z0-9_-]*)`")
LINK = re.compile(r"\]\(([^)#]+)\)")


def skills_dir(package: str) -> Path:
    return Path(str(files(package) / "skills"))


def catalog_of(package: str) -> SkillCatalog:
    catalog = SkillCatalog()
    catalog.add_directory(skills_dir(package))
    return catalog


def texts(catalog: SkillCatalog) -> dict[str, str]:
    return {f.uri: f.data.decode("utf-8") for skill in catalog.skills for f in skill.files}


def schema_words(schema: Any) -> set[str]:
    """Property names and enum values anywhere in a JSON Schema."""
    words: set[str] = set()
    if isinstance(schema, dict):
        words |= set((schema.get("properties") or {}).keys())
        words |= {v for v in schema.get("enum", []) if isinstance(v, str)}
        if isinstance(schema.get("const"), str):
            words.add(schema["const"])
        for value in schema.values():
            words |= schema_words(value)
    elif isinstance(schema, list):
        for value in schema:
            words |= schema_words(value)
    return words


async def vocabulary(app: MCPServer) -> set[str]:
    """Every tool and prompt name, argument, result field and enum value the server exposes."""
    async with connect(app) as client:
        tools = await client.list_tools()
        prompts = (await client.request("prompts/list", {}))["prompts"]
    words = {t["name"] for t in tools} | {p["name"] for p in prompts}
    words |= {a["name"] for p in prompts for a in p.get("arguments", [])}
    for tool in tools:
        words |= schema_words(tool["inputSchema"]) | schema_words(tool.get("outputSchema"))
    return words


def test_the_stock_server_ships_a_valid_valuation_skill() -> None:
    catalog = catalog_of("servers.stock")
    [skill] = catalog.skills
    assert skill.uri == "skill://valuation-analysis/SKILL.md"
    assert "P/E" in skill.description and "negative earnings" in skill.description
    assert [f.uri.removeprefix("skill://valuation-analysis/") for f in skill.files] == [
        "SKILL.md", "references/pitfalls.md", "references/statements.md", "templates/comparison-table.md"]
    assert catalog.directory_page("skill://valuation-analysis")[0][1]["mimeType"] == "inode/directory"


def test_the_weather_server_ships_a_valid_trip_planning_skill() -> None:
    catalog = catalog_of("servers.weather")
    [skill] = catalog.skills
    assert skill.uri == "skill://trip-planning/SKILL.md"
    assert "plan-vacation" in skill.description
    assert [f.uri.removeprefix("skill://trip-planning/") for f in skill.files] == [
        "SKILL.md", "references/activity-weather.md", "references/packing.md", "templates/itinerary.md"]


@pytest.mark.parametrize("package", ["servers.stock", "servers.weather"])
def test_every_relative_link_of_a_skill_resolves_to_one_of_its_files(package: str) -> None:
    catalog = catalog_of(package)
    for skill in catalog.skills:
        served = {f.uri for f in skill.files}
        for skill_file in skill.files:
            base = skill_file.uri.rsplit("/", 1)[0]
            for target in LINK.findall(skill_file.data.decode("utf-8")):
                assert f"{base}/{target}" in served, (
                    f"{skill_file.uri} links to {target}, which is not a file of the skill"
                )


@pytest.mark.anyio
async def test_the_valuation_skill_names_only_what_the_stock_server_has() -> None:
    known = await vocabulary(build_stock(SampleProvider()))
    known |= {line[0] for lines in LINES.values() for line in lines}
    known |= {line[0] for lines in STATEMENT_LINES.values() for line in lines}
    known |= {line[2] for lines in STATEMENT_LINES.values() for line in lines}  # units, e.g. shares
    known |= {"sample"}  # the value of `source` on sample data
    for uri, text in texts(catalog_of("servers.stock")).items():
        unknown = sorted(set(BACKTICKED.findall(text)) - known)
        assert unknown == [], f"{uri} mentions {unknown}, which the stock server does not have"


@pytest.mark.anyio
async def test_the_trip_planning_skill_names_only_what_the_weather_server_has() -> None:
    known = await vocabulary(build_weather(WeatherSample()))
    for uri, text in texts(catalog_of("servers.weather")).items():
        unknown = sorted(set(BACKTICKED.findall(text)) - known)
        assert unknown == [], f"{uri} mentions {unknown}, which the weather server does not have"


def test_the_wheel_carries_the_skills(tmp_path: Path) -> None:
    """Built from a clean copy of the sources: a build/ left in the checkout would hide a missing pattern."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(ROOT / name, source / name)
    for package in ("mcp_kit", "servers"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    build = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", build, str(tmp_path)], cwd=source, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    with zipfile.ZipFile(tmp_path / done.stdout.strip().splitlines()[-1]) as wheel:
        names = set(wheel.namelist())
    for package in ("stock", "weather"):
        shipped = {p.relative_to(ROOT).as_posix() for p in (ROOT / "servers" / package / "skills").rglob("*")
                   if p.is_file()}
        assert shipped and shipped <= names, sorted(shipped - names)
