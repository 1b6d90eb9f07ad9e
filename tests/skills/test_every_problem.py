"""A skill that breaks several rules is refused with every one of them, not only the first."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_kit.skills import SkillCatalog, SkillError
from mcp_kit.skills._frontmatter import frontmatter_problems


def test_every_frontmatter_problem_of_one_file_is_named(tmp_path: Path) -> None:
    skill = tmp_path / "pdf-tools"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: Other_Name\nlicense: 3\nmetadata: [x]\n---\nbody\n", encoding="utf-8")
    with pytest.raises(SkillError) as refused:
        SkillCatalog().add_directory(tmp_path)
    message = str(refused.value)
    assert f"{skill / 'SKILL.md'}: " in message
    for piece in ("'name' 'Other_Name' breaks the Agent Skills naming rule", "'description' is required",
                  "'license' must be a string", "'metadata' must be a mapping"):
        assert piece in message, message


def test_frontmatter_problems_lists_each_rule_broken() -> None:
    assert len(frontmatter_problems({"name": "a", "description": "", "compatibility": 5}, "b")) == 3
    assert frontmatter_problems({"name": "b", "description": "d"}, "b") == []
