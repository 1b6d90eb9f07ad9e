"""The skills catalog: entries and manifests, URIs, pages, directory reads, limits, unsafe files."""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import sys
from pathlib import Path

import pytest

from mcp_kit._protocol.errors import MCPError
from mcp_kit.skills import (
    DIRECTORY_MIME_TYPE,
    SkillCatalog,
    SkillError,
    SkillLimits,
    SkillNotFound,
)

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file types and links")


def write_skill(root: Path, relative: str, name: str | None = None, description: str = "Does a thing",
                extra: str = "", body: str = "# Body\n") -> Path:
    directory = root / relative
    directory.mkdir(parents=True, exist_ok=True)
    name = name or directory.name
    (directory / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}",
                                        encoding="utf-8")
    return directory


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """git-workflow (with references/ and an empty templates/) and acme/billing/refunds (with examples/)."""
    git = write_skill(tmp_path, "git-workflow", extra="license: MIT\nmetadata:\n  version: '1.0'\n")
    (git / "references").mkdir()
    (git / "references" / "GUIDE.md").write_text("# Guide\n", encoding="utf-8")
    (git / "references" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    (git / "templates").mkdir()
    refunds = write_skill(tmp_path, "acme/billing/refunds", description="Process refunds")
    (refunds / "examples").mkdir()
    (refunds / "examples" / "email.md").write_text("Dear customer\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("not part of any skill\n", encoding="utf-8")
    return tmp_path


def all_entries(catalog: SkillCatalog) -> list[dict]:
    entries, cursor = catalog.list_page()
    pages = 1
    while cursor is not None:
        page, cursor = catalog.list_page(cursor)
        entries += page
        pages += 1
        assert pages < 100
    return entries


def test_every_directory_with_a_skill_md_becomes_a_skill(tree: Path) -> None:
    catalog = SkillCatalog()
    added = catalog.add_directory(tree)
    assert [s.uri for s in added] == ["skill://acme/billing/refunds/SKILL.md", "skill://git-workflow/SKILL.md"]
    assert [s.name for s in catalog.skills] == ["refunds", "git-workflow"]
    assert catalog.get("skill://acme/billing/refunds/SKILL.md").root_uri == "skill://acme/billing/refunds"


def test_an_entry_carries_the_frontmatter_verbatim_and_a_complete_manifest(tree: Path) -> None:
    catalog = SkillCatalog()
    catalog.add_directory(tree)
    entry = catalog.get("skill://git-workflow/SKILL.md").entry()
    assert entry["uri"] == "skill://git-workflow/SKILL.md"
    assert entry["frontmatter"] == {"name": "git-workflow", "description": "Does a thing", "license": "MIT",
                                    "metadata": {"version": "1.0"}}
    manifest = {r["uri"]: r for r in entry["resources"]}
    assert entry["resources"][0]["uri"] == entry["uri"]  # SKILL.md first
    assert sorted(manifest) == ["skill://git-workflow/SKILL.md", "skill://git-workflow/references/GUIDE.md",
                                "skill://git-workflow/references/logo.png"]
    for relative in ("SKILL.md", "references/GUIDE.md", "references/logo.png"):
        raw = (tree / "git-workflow" / relative).read_bytes()
        listed = manifest[f"skill://git-workflow/{relative}"]
        assert listed["digest"] == "sha256:" + hashlib.sha256(raw).hexdigest()
        assert listed["size"] == len(raw)


def test_a_nested_skill_is_its_own_entry_and_part_of_the_enclosing_manifest(tmp_path: Path) -> None:
    outer = write_skill(tmp_path, "outer")
    write_skill(outer, "inner")
    catalog = SkillCatalog()
    catalog.add_directory(tmp_path)
    outer_files = [r["uri"] for r in catalog.get("skill://outer/SKILL.md").entry()["resources"]]
    assert "skill://outer/inner/SKILL.md" in outer_files
    assert catalog.get("skill://outer/inner/SKILL.md").name == "inner"


def test_a_directory_that_is_one_skill_and_a_prefix(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "refunds")
    catalog = SkillCatalog()
    catalog.add_directory(skill, prefix="acme/billing")
    assert [s.uri for s in catalog.skills] == ["skill://acme/billing/refunds/SKILL.md"]
    assert catalog.directory_page("skill://acme")[0] == [
        {"uri": "skill://acme/billing", "name": "billing", "mimeType": DIRECTORY_MIME_TYPE}]


@pytest.mark.parametrize("prefix", ["a b", "../x", "a/./b"])
def test_a_prefix_must_be_plain_uri_segments(tmp_path: Path, prefix: str) -> None:
    write_skill(tmp_path, "s")
    with pytest.raises(SkillError, match="prefix segment"):
        SkillCatalog().add_directory(tmp_path, prefix=prefix)


def test_resources_list_entries_come_from_the_frontmatter(tree: Path) -> None:
    catalog = SkillCatalog()
    catalog.add_directory(tree)
    skill_md = (tree / "acme" / "billing" / "refunds" / "SKILL.md").read_bytes()
    assert catalog.resources()[0] == {"uri": "skill://acme/billing/refunds/SKILL.md", "name": "refunds",
                                      "description": "Process refunds", "mimeType": "text/markdown",
                                      "size": len(skill_md)}


def test_files_read_back_as_text_or_base64(tree: Path) -> None:
    catalog = SkillCatalog()
    catalog.add_directory(tree)
    skill_md = catalog.file("skill://git-workflow/SKILL.md")
    assert skill_md is not None
    assert skill_md.contents() == [{"uri": "skill://git-workflow/SKILL.md", "mimeType": "text/markdown",
                                    "text": (tree / "git-workflow" / "SKILL.md").read_text(encoding="utf-8")}]
    logo = catalog.file("skill://git-workflow/references/logo.png")
    assert logo is not None and logo.mime_type == "image/png"
    [contents] = logo.contents()
    assert base64.b64decode(contents["blob"]) == (tree / "git-workflow" / "references" / "logo.png").read_bytes()
    assert catalog.file("skill://git-workflow/references") is None  # a directory is not a file
    assert catalog.file("skill://README.md") is None  # outside every skill: not served
    assert catalog.file("file:///etc/passwd") is None


def test_uris_are_matched_in_one_canonical_encoding(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "notes")
    (skill / "my notes.md").write_text("n\n", encoding="utf-8")
    catalog = SkillCatalog()
    catalog.add_directory(tmp_path)
    uris = [r["uri"] for r in catalog.get("skill://notes/SKILL.md").entry()["resources"]]
    assert "skill://notes/my%20notes.md" in uris
    assert catalog.file("skill://notes/my%20notes.md") is not None
    assert catalog.file("skill://notes/my notes.md") is not None
    assert catalog.get("skill://%6Eotes/SKILL.md").name == "notes"
    for escape in ("skill://notes/../notes/SKILL.md", "skill://notes//SKILL.md", "skill://notes/SKILL.md?x",
                   "skill://notes/%2e%2e/notes/SKILL.md", "skill://notes%2FSKILL.md"):
        assert catalog.file(escape) is None


def test_pages_walk_every_skill_once_in_uri_order(tmp_path: Path) -> None:
    for name in ("c", "a", "e", "b", "d"):
        write_skill(tmp_path, name)
    catalog = SkillCatalog(page_size=2)
    catalog.add_directory(tmp_path)
    first, cursor = catalog.list_page()
    assert [e["uri"] for e in first] == ["skill://a/SKILL.md", "skill://b/SKILL.md"]
    assert [e["uri"] for e in all_entries(catalog)] == [f"skill://{n}/SKILL.md" for n in "abcde"]


def test_a_page_boundary_survives_skills_added_between_pages(tmp_path: Path) -> None:
    first_batch, second_batch = tmp_path / "one", tmp_path / "two"
    for name in ("b", "d"):
        write_skill(first_batch, name)
    write_skill(second_batch, "a")
    write_skill(second_batch, "c")
    catalog = SkillCatalog(page_size=1)
    catalog.add_directory(first_batch)
    page, cursor = catalog.list_page()
    assert [e["uri"] for e in page] == ["skill://b/SKILL.md"]
    catalog.add_directory(second_batch)
    page, cursor = catalog.list_page(cursor)
    assert [e["uri"] for e in page] == ["skill://c/SKILL.md"]  # after b, nothing repeated


@pytest.mark.parametrize("cursor", ["garbage!", "", "eyJ4IjoxfQ", "x" * 5000])
def test_a_bad_cursor_is_invalid_params(tree: Path, cursor: str) -> None:
    catalog = SkillCatalog()
    catalog.add_directory(tree)
    with pytest.raises(MCPError) as raised:
        catalog.list_page(cursor)
    assert raised.value.code == -32602
    assert "nextCursor" in raised.value.message


def test_a_cursor_of_another_listing_is_refused(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "s")
    for index in range(3):
        (skill / f"f{index}.md").write_text("x", encoding="utf-8")
    catalog = SkillCatalog(page_size=1)
    catalog.add_directory(tmp_path)
    _, directory_cursor = catalog.directory_page("skill://s")
    assert directory_cursor is not None
    with pytest.raises(MCPError) as raised:
        catalog.list_page(directory_cursor)
    assert raised.value.code == -32602


def test_an_unknown_skill_is_invalid_params_naming_the_uri(tree: Path) -> None:
    catalog = SkillCatalog()
    catalog.add_directory(tree)
    for uri in ("skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md", "skill://git-workflow",
                "skill://git-workflow/references/GUIDE.md", "https://example.com/SKILL.md", ""):
        with pytest.raises(SkillNotFound) as raised:
            catalog.get(uri)
        assert raised.value.code == -32602
        assert raised.value.data == {"uri": uri}


def test_directory_reads_list_direct_children_with_directories_marked(tree: Path) -> None:
    catalog = SkillCatalog()
    catalog.add_directory(tree)
    children, cursor = catalog.directory_page("skill://git-workflow")
    assert cursor is None
    assert [(c["uri"], c["mimeType"]) for c in children] == [
        ("skill://git-workflow/SKILL.md", "text/markdown"),
        ("skill://git-workflow/references", DIRECTORY_MIME_TYPE),
        ("skill://git-workflow/templates", DIRECTORY_MIME_TYPE),
    ]
    assert catalog.directory_page("skill://git-workflow/templates") == ([], None)  # empty directory
    references, _ = catalog.directory_page("skill://git-workflow/references")
    assert [c["name"] for c in references] == ["GUIDE.md", "logo.png"]
    assert catalog.directory_page("skill://acme/billing")[0] == [
        {"uri": "skill://acme/billing/refunds", "name": "refunds", "mimeType": DIRECTORY_MIME_TYPE}]


@pytest.mark.parametrize("uri", ["skill://git-workflow/SKILL.md", "skill://nowhere", "skill://git-workflow/x"])
def test_a_directory_read_of_a_non_directory_is_invalid_params(tree: Path, uri: str) -> None:
    catalog = SkillCatalog()
    catalog.add_directory(tree)
    with pytest.raises(SkillNotFound) as raised:
        catalog.directory_page(uri)
    assert raised.value.code == -32602


def test_directory_pages_follow_the_cursor(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "many")
    for index in range(5):
        (skill / f"file{index}.txt").write_text(str(index), encoding="utf-8")
    catalog = SkillCatalog(page_size=2)
    catalog.add_directory(tmp_path)
    names: list[str] = []
    cursor: str | None = None
    for _ in range(10):
        page, cursor = catalog.directory_page("skill://many", cursor)
        names += [c["name"] for c in page]
        if cursor is None:
            break
    assert names == ["SKILL.md"] + [f"file{i}.txt" for i in range(5)]


def test_a_skill_over_the_file_count_limit_is_refused(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "big")
    for index in range(3):
        (skill / f"f{index}").write_text("x", encoding="utf-8")
    with pytest.raises(SkillError, match="the skill has 4 files; at most 3"):
        SkillCatalog(limits=SkillLimits(max_files_per_skill=3)).add_directory(tmp_path)


def test_a_skill_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "big")
    (skill / "a.bin").write_bytes(b"x" * 60)
    (skill / "b.bin").write_bytes(b"x" * 60)
    with pytest.raises(SkillError, match="at most 100"):
        SkillCatalog(limits=SkillLimits(max_bytes_per_skill=100)).add_directory(tmp_path)


def test_reading_stops_at_the_catalog_byte_limit(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "big")
    (skill / "huge.bin").write_bytes(b"x" * 4096)
    with pytest.raises(SkillError, match="too large: all skills together may hold at most 1000 bytes"):
        SkillCatalog(limits=SkillLimits(max_total_bytes=1000)).add_directory(tmp_path)


def test_the_number_of_skills_is_bounded(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        write_skill(tmp_path, name)
    with pytest.raises(SkillError, match="at most 2 skills"):
        SkillCatalog(limits=SkillLimits(max_skills=2)).add_directory(tmp_path)


def test_every_invalid_skill_is_reported_at_once(tmp_path: Path) -> None:
    write_skill(tmp_path, "good")
    write_skill(tmp_path, "bad-name", name="other")
    write_skill(tmp_path, "no-description", description="''")
    with pytest.raises(SkillError) as raised:
        SkillCatalog().add_directory(tmp_path)
    message = str(raised.value)
    assert "bad-name" in message and "must equal the skill's directory name" in message
    assert "no-description" in message and "'description' is required" in message


def test_lenient_mode_leaves_invalid_skills_out_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_skill(tmp_path, "good")
    write_skill(tmp_path, "bad", name="other")
    catalog = SkillCatalog()
    with caplog.at_level(logging.WARNING, logger="mcp_kit.skills"):
        added = catalog.add_directory(tmp_path, strict=False)
    assert [s.name for s in added] == ["good"]
    assert any("bad" in r.getMessage() for r in caplog.records)


def test_a_skill_md_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_bytes(b"---\nname: s\ndescription: \xff\n---\n")
    with pytest.raises(SkillError, match="not UTF-8"):
        SkillCatalog().add_directory(tmp_path)


def test_a_tree_without_skills_and_a_missing_directory_are_refused(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("x", encoding="utf-8")
    with pytest.raises(SkillError, match="holds no skill"):
        SkillCatalog().add_directory(tmp_path)
    with pytest.raises(SkillError, match="cannot"):
        SkillCatalog().add_directory(tmp_path / "missing")


def test_the_same_skill_cannot_be_served_twice(tmp_path: Path) -> None:
    write_skill(tmp_path, "s")
    catalog = SkillCatalog()
    catalog.add_directory(tmp_path)
    with pytest.raises(SkillError, match="already served"):
        catalog.add_directory(tmp_path)
    assert len(catalog) == 1


def test_hidden_files_are_left_out(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "s")
    (skill / ".env").write_text("SECRET=1", encoding="utf-8")
    (skill / ".git").mkdir()
    (skill / ".git" / "config").write_text("x", encoding="utf-8")
    (skill / "__pycache__").mkdir()
    (skill / "__pycache__" / "x.pyc").write_bytes(b"\0")
    catalog = SkillCatalog()
    catalog.add_directory(tmp_path)
    assert [r["uri"] for r in catalog.get("skill://s/SKILL.md").entry()["resources"]] == ["skill://s/SKILL.md"]


@POSIX
def test_links_are_never_followed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    skills = tmp_path / "skills"
    skill = write_skill(skills, "s")
    (skill / "file-link").symlink_to(outside / "secret.txt")
    (skill / "dir-link").symlink_to(outside, target_is_directory=True)
    catalog = SkillCatalog()
    with caplog.at_level(logging.WARNING, logger="mcp_kit.skills"):
        catalog.add_directory(skills)
    uris = [r["uri"] for r in catalog.get("skill://s/SKILL.md").entry()["resources"]]
    assert uris == ["skill://s/SKILL.md"]
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "file-link" in warned and "dir-link" in warned


@POSIX
def test_a_fifo_is_left_out_without_blocking_the_scan(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "s")
    os.mkfifo(skill / "pipe")  # opening it for reading would wait for a writer forever
    catalog = SkillCatalog()
    catalog.add_directory(tmp_path)
    assert catalog.file("skill://s/pipe") is None
    assert catalog.file("skill://s/SKILL.md") is not None
