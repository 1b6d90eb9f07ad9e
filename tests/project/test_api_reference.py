"""docs/API.md lists the public surface as it is: every name in the `__all__` of `mcp_kit` and of each public
module (a path without a leading underscore in any part), each in its module's section, and nothing else."""

from __future__ import annotations

import importlib
import pkgutil
import re

import mcp_kit
from tests.helpers.support import ROOT

API = ROOT / "docs" / "API.md"


def public_modules() -> list[str]:
    found = ["mcp_kit"]
    for info in pkgutil.walk_packages(mcp_kit.__path__, "mcp_kit."):
        parts = info.name.split(".")[1:]
        if info.name != "mcp_kit.__main__" and not any(part.startswith("_") for part in parts):
            found.append(info.name)
    return found


def sections(text: str) -> dict[str, str]:
    """Module name -> the text of its `## `module`` section."""
    return dict(re.findall(r"^## `([a-z_.]+)`\n(.*?)(?=^## |\Z)", text, re.S | re.M))


def documented_names(section: str) -> list[str]:
    """The names of a section's table: the first cell of each row."""
    return re.findall(r"^\| `([A-Za-z_][A-Za-z0-9_]*)` \|", section, re.M)


def test_every_public_module_has_a_section() -> None:
    modules = public_modules()
    assert {"mcp_kit.testing", "mcp_kit.client", "mcp_kit.auth", "mcp_kit.middleware", "mcp_kit.telemetry",
            "mcp_kit.extensions", "mcp_kit.apps"} <= set(modules)
    assert sorted(sections(API.read_text(encoding="utf-8"))) == sorted(modules)


def test_every_exported_name_is_listed_in_its_modules_section_and_nothing_else() -> None:
    found = sections(API.read_text(encoding="utf-8"))
    problems = []
    for module in public_modules():
        exported = list(importlib.import_module(module).__all__)
        listed = documented_names(found.get(module, ""))
        problems += [f"{module}.{name}: in __all__, missing from docs/API.md" for name in exported
                     if name not in listed]
        problems += [f"{module}.{name}: in docs/API.md, not in __all__" for name in listed if name not in exported]
        problems += [f"{module}.{name}: listed twice" for name in set(listed) if listed.count(name) > 1]
    assert problems == []


def test_every_listed_name_says_what_it_is() -> None:
    for module, section in sections(API.read_text(encoding="utf-8")).items():
        for row in re.findall(r"^\| `[^`]+` \|.*$", section, re.M):
            cells = [cell.strip() for cell in row.strip("|").split(" | ")]
            assert len(cells) == 3 and cells[1] and len(cells[2]) > 15, (module, row)


def test_the_check_reads_the_tables_it_looks_at() -> None:
    text = "## `mcp_kit.x`\n\nWhat.\n\n| name | kind | what it is |\n| --- | --- | --- |\n| `A` | class | An A. |\n"
    assert documented_names(sections(text)["mcp_kit.x"]) == ["A"]
