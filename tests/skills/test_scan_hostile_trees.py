"""Skills trees built to break the server at startup: each problem is a `SkillError` naming the file,
and `strict=False` leaves just the bad skill out (with a warning) and serves the rest.

- frontmatter nested 20,000 levels deep (PyYAML composes by recursion): refused at the nesting
  limit instead of a RecursionError;
- a file over SEP-2640's 16 MiB (a sparse file: nothing large is written or read): its skill is
  refused, the others are served, and the file's bytes count against nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mcp_kit import MCPServer
from mcp_kit.skills import EXTENSION_ID, SkillCatalog, SkillError
from mcp_kit.skills._catalog import MAX_BYTES_PER_SKILL, SkillLimits
from mcp_kit.skills._frontmatter import MAX_DEPTH
from tests.skills.test_catalog import write_skill

DEPTH = 20_000


def deep_skill(root: Path) -> Path:
    return write_skill(root, "deep", extra="metadata:\n  nested: " + "[" * DEPTH + "]" * DEPTH + "\n")


def test_frontmatter_nested_20000_levels_is_a_skill_error_naming_the_file(tmp_path: Path) -> None:
    deep_skill(tmp_path)
    write_skill(tmp_path, "fine")
    app = MCPServer("hostile")
    with pytest.raises(SkillError) as refused:
        app.add_skills(tmp_path)
    message = str(refused.value)
    assert str(tmp_path / "deep" / "SKILL.md") in message and f"nested more than {MAX_DEPTH} levels deep" in message


def test_frontmatter_nested_20000_levels_is_left_out_when_lenient(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    deep_skill(tmp_path)
    write_skill(tmp_path, "fine")
    with caplog.at_level(logging.WARNING, logger="mcp_kit.skills"):
        added = MCPServer("hostile").add_skills(tmp_path, strict=False)
    assert [skill.name for skill in added] == ["fine"]
    assert "deep" in caplog.text and "nested more than" in caplog.text


def oversized_skill(root: Path, file: str = "data.bin") -> Path:
    skill = write_skill(root, "huge") if file != "SKILL.md" else root / "huge"
    skill.mkdir(exist_ok=True)
    with open(skill / file, "wb") as sparse:
        sparse.truncate(MAX_BYTES_PER_SKILL + 1)
    return skill / file


@pytest.mark.parametrize("file", ["data.bin", "SKILL.md"])
def test_a_file_over_16_mib_leaves_only_its_skill_out_when_lenient(tmp_path: Path, file: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    big = oversized_skill(tmp_path, file)
    write_skill(tmp_path, "fine")
    write_skill(tmp_path, "other")
    app = MCPServer("hostile")
    with caplog.at_level(logging.WARNING, logger="mcp_kit.skills"):
        added = app.add_skills(tmp_path, strict=False)
    assert [skill.name for skill in added] == ["fine", "other"]
    assert str(big) in caplog.text and f"more than {MAX_BYTES_PER_SKILL} bytes" in caplog.text
    served = app.extension(EXTENSION_ID)
    assert served is not None and [skill.name for skill in served.catalog.skills] == ["fine", "other"]  # type: ignore[attr-defined]


def test_a_file_over_16_mib_is_a_skill_error_naming_it_when_strict(tmp_path: Path) -> None:
    big = oversized_skill(tmp_path)
    write_skill(tmp_path, "fine")
    with pytest.raises(SkillError) as refused:
        MCPServer("hostile").add_skills(tmp_path)
    assert str(tmp_path / "huge" / "SKILL.md") in str(refused.value) and str(big) in str(refused.value)


def test_an_oversized_file_counts_against_no_catalog_bound(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "big")
    (skill / "blob.bin").write_bytes(b"x" * 500)  # over the per-skill limit, and over the catalog's bytes
    fine = write_skill(tmp_path, "fine")
    (fine / "notes.txt").write_bytes(b"y" * 40)
    catalog = SkillCatalog(limits=SkillLimits(max_bytes_per_skill=100, max_total_bytes=200))
    assert [skill.name for skill in catalog.add_directory(tmp_path, strict=False)] == ["fine"]
