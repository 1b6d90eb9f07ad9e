"""Reading a skills tree: both walks (descriptor-relative on POSIX, by path where that is unavailable)
read regular files only, leave out links, special files and hidden names, and stop at every limit with
a message naming it. The path walk is forced here too, so its refusals are checked on Linux as well.

Skipped where mcp_kit has no skills support.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

scan = pytest.importorskip("mcp_kit.skills._scan")

LIMITS = scan.ScanLimits(max_files=10, max_file_bytes=100, max_total_bytes=150)


@pytest.fixture(params=["descriptors", "paths"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "paths":
        monkeypatch.setattr(scan, "_DESCRIPTOR_WALK", False)
    elif not scan._DESCRIPTOR_WALK:
        pytest.skip("no descriptor-relative opening on this system")
    return str(request.param)


def test_only_regular_files_are_read_and_nothing_is_followed(tmp_path: Path, walk: str,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "skills"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "SKILL.md").write_text("x")
    (root / "a" / "b" / "f.txt").write_bytes(b"yy")
    (root / ".hidden").write_text("hidden")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "c.pyc").write_bytes(b"c")
    (tmp_path / "outside.txt").write_text("secret")
    os.symlink(tmp_path / "outside.txt", root / "link.txt")
    os.symlink(tmp_path, root / "linkdir")
    os.mkfifo(root / "pipe")
    os.close(os.open(os.fsencode(root) + b"/bad\xffname", os.O_CREAT | os.O_WRONLY, 0o600))
    with caplog.at_level(logging.WARNING, logger="mcp_kit.skills"):
        tree = scan.scan_tree(root, LIMITS)
    assert tree.files == {("a", "SKILL.md"): b"x", ("a", "b", "f.txt"): b"yy"}
    assert tree.directories == {(), ("a",), ("a", "b")} and tree.total_bytes == 3
    for left_out in ("link.txt", "linkdir", "pipe", "not valid UTF-8"):
        assert left_out in caplog.text, left_out


@pytest.mark.parametrize(("layout", "message"), [
    ({f"f{i}.txt": b"x" for i in range(11)}, "holds more than 10 files"),
    ({"big.txt": b"x" * 101}, "a file may hold at most 100 bytes"),
    ({"one.txt": b"x" * 80, "two.txt": b"y" * 80}, "all skills together may hold at most 150 bytes"),
])
def test_every_limit_stops_the_scan_naming_it(
    tmp_path: Path, walk: str, layout: dict[str, bytes], message: str
) -> None:
    root = tmp_path / "skills"
    root.mkdir()
    for name, data in layout.items():
        (root / name).write_bytes(data)
    with pytest.raises(scan.ScanError, match=message):
        scan.scan_tree(root, LIMITS)


def test_exactly_at_the_limits_is_fine(tmp_path: Path, walk: str) -> None:
    root = tmp_path / "skills"
    root.mkdir()
    (root / "a.txt").write_bytes(b"x" * 100)
    (root / "b.txt").write_bytes(b"y" * 50)
    assert scan.scan_tree(root, LIMITS).total_bytes == 150


def test_depth_and_a_missing_root_are_refused(tmp_path: Path, walk: str) -> None:
    deep = tmp_path / "skills"
    (deep.joinpath(*["d"] * (scan.MAX_DEPTH + 2))).mkdir(parents=True)
    with pytest.raises(scan.ScanError, match=f"nested more than {scan.MAX_DEPTH} directories deep"):
        scan.scan_tree(deep, LIMITS)
    with pytest.raises(scan.ScanError, match="skills directory"):
        scan.scan_tree(tmp_path / "absent", LIMITS)
