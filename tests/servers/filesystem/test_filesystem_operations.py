"""File operations on sandboxed paths: reads with limits, atomic writes, moves, edits, walks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from servers.filesystem import operations as ops
from servers.filesystem.errors import FilesystemError
from servers.filesystem.formatting import format_size, listing_text, sized_listing_text
from servers.filesystem.operations import writing
from servers.filesystem.sandbox import Sandbox
from tests.helpers.fs_layout import SECRET, Layout

LIMIT = 1 << 20


def resolve(layout: Layout, relative: str, **kwargs):
    return Sandbox([layout.root]).resolve(str(layout.root / relative), **kwargs)


# ---- reading ------------------------------------------------------------------


def test_read_text_whole_head_and_tail(layout: Layout) -> None:
    (layout.root / "lines.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    sp = resolve(layout, "lines.txt")
    assert ops.read_text(sp, LIMIT).text.startswith("line 1\nline 2\n")
    assert ops.read_text(sp, LIMIT, head=3).text == "line 1\nline 2\nline 3"
    assert ops.read_text(sp, LIMIT, tail=2).text == "line 9\nline 10"
    assert ops.read_text(sp, LIMIT, tail=50).text == "".join(f"line {n}\n" for n in range(1, 11))[:-1]
    with pytest.raises(FilesystemError, match="head and tail"):
        ops.read_text(sp, LIMIT, head=1, tail=1)


def test_read_text_is_cut_at_the_byte_limit_with_a_note(layout: Layout) -> None:
    (layout.root / "big.txt").write_text("é" * 100)  # 200 bytes of two-byte characters
    read = ops.read_text(resolve(layout, "big.txt"), 51)
    assert read.truncated and read.text == "é" * 25  # the half character at the cut is dropped
    assert "[truncated at 51 bytes: the file has 200 bytes" in read.with_note()
    tail = ops.read_text(resolve(layout, "big.txt"), 51, tail=1)
    assert tail.truncated and tail.text == "é" * 25


def test_binary_and_non_utf8_files_point_to_read_media_file(layout: Layout) -> None:
    (layout.root / "latin1.txt").write_bytes("café".encode("latin-1"))
    (layout.root / "nul.bin").write_bytes(b"abc\x00def")
    for name in ("latin1.txt", "nul.bin"):
        with pytest.raises(ops.BinaryFileError, match="read_media_file"):
            ops.read_text(resolve(layout, name), LIMIT)


def test_read_bytes_refuses_files_over_the_limit(layout: Layout) -> None:
    (layout.root / "img.png").write_bytes(b"\x89PNG" + bytes(100))
    assert ops.read_bytes(resolve(layout, "img.png"), 1000)[:4] == b"\x89PNG"
    with pytest.raises(FilesystemError, match="too large"):
        ops.read_bytes(resolve(layout, "img.png"), 50)
    assert ops.guess_mime_type(Path("a.PNG")) == "image/png"
    assert ops.guess_mime_type(Path("a.flac")) == "audio/flac"
    assert ops.guess_mime_type(Path("a.unknownext")) == "application/octet-stream"


def test_reading_a_directory_or_missing_file_is_a_clear_error(layout: Layout) -> None:
    with pytest.raises(FilesystemError, match="is a directory"):
        ops.read_text(resolve(layout, "sub"), LIMIT)
    with pytest.raises(FilesystemError, match="No such file"):
        ops.read_text(resolve(layout, "missing.txt"), LIMIT)


def test_file_info(layout: Layout) -> None:
    os.chmod(layout.root / "ok.txt", 0o640)
    info = ops.file_info(resolve(layout, "ok.txt"))
    assert info["size"] == 12 and info["isFile"] is True and info["isDirectory"] is False
    assert info["permissions"] == "640" and info["type"] == "regular file"
    assert ops.file_info(resolve(layout, "sub"))["isDirectory"] is True


# ---- writing ------------------------------------------------------------------


def test_atomic_write_creates_and_overwrites_keeping_permissions(layout: Layout) -> None:
    target = layout.root / "ok.txt"
    os.chmod(target, 0o604)
    inode_before = target.stat().st_ino
    assert ops.atomic_write(resolve(layout, "ok.txt"), b"new content") is False
    assert target.read_bytes() == b"new content"
    assert target.stat().st_mode & 0o777 == 0o604
    assert target.stat().st_ino != inode_before  # replaced by rename, not rewritten in place
    assert ops.atomic_write(resolve(layout, "created.txt"), b"x") is True
    assert (layout.root / "created.txt").read_bytes() == b"x"
    assert [p.name for p in layout.root.iterdir() if p.name.endswith(".tmp")] == []


def test_failed_write_leaves_the_old_file_intact(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail_midway(fd: int, data: bytes) -> None:
        os.write(fd, data[:3])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writing, "_write_all", fail_midway)
    with pytest.raises(OSError, match="No space left"):
        ops.atomic_write(resolve(layout, "ok.txt"), b"replacement that fails")
    assert (layout.root / "ok.txt").read_text() == "hello\nworld\n"
    assert [p.name for p in layout.root.iterdir() if p.name.endswith(".tmp")] == []


def test_write_refuses_directories_and_roots(layout: Layout) -> None:
    with pytest.raises(FilesystemError, match="not a regular file"):
        ops.atomic_write(resolve(layout, "sub"), b"x")
    with pytest.raises(FilesystemError, match="allowed directory itself"):
        ops.atomic_write(Sandbox([layout.root]).resolve(str(layout.root)), b"x")
    with pytest.raises(FilesystemError, match="does not exist"):
        ops.atomic_write(resolve(layout, "no/such/dir/file.txt"), b"x")


def test_create_directory(layout: Layout) -> None:
    assert ops.create_directory(resolve(layout, "a/b/c")) is True
    assert (layout.root / "a" / "b" / "c").is_dir()
    assert ops.create_directory(resolve(layout, "a/b/c")) is False
    with pytest.raises(FilesystemError, match="not a directory"):
        ops.create_directory(resolve(layout, "ok.txt"))


def test_move_renames_and_never_overwrites(layout: Layout) -> None:
    ops.move(resolve(layout, "ok.txt"), resolve(layout, "sub/moved.txt"))
    assert (layout.root / "sub" / "moved.txt").read_text() == "hello\nworld\n"
    assert not (layout.root / "ok.txt").exists()
    with pytest.raises(FilesystemError, match="already exists"):
        ops.move(resolve(layout, "sub/moved.txt"), resolve(layout, "sub/inner.txt"))
    assert (layout.root / "sub" / "inner.txt").read_text() == "inner\n"
    ops.move(resolve(layout, "sub"), resolve(layout, "renamed"))
    assert (layout.root / "renamed" / "moved.txt").exists()
    with pytest.raises(FilesystemError, match="into itself"):
        ops.move(resolve(layout, "renamed"), resolve(layout, "renamed/inside"))
    with pytest.raises(FilesystemError, match="cannot be moved"):
        ops.move(Sandbox([layout.root]).resolve(str(layout.root)), resolve(layout, "x"))


def test_move_of_a_link_moves_the_link_not_its_target(layout: Layout) -> None:
    ops.move(resolve(layout, "link_in", follow_final=False), resolve(layout, "link_moved", follow_final=False))
    assert (layout.root / "link_moved").is_symlink()
    assert (layout.root / "ok.txt").read_text() == "hello\nworld\n"


# ---- editing ------------------------------------------------------------------

SOURCE = "def f():\n    if x:\n        return 1\n    return 2\n"


def test_exact_edit_with_diff() -> None:
    plan = ops.plan_edits(SOURCE, [ops.Edit("return 2", "return 3")], "f.py", "'f.py'")
    assert plan.updated == SOURCE.replace("return 2", "return 3")
    assert "--- f.py\toriginal\n+++ f.py\tmodified\n" in plan.diff
    assert "-    return 2\n+    return 3\n" in plan.diff
    assert ops.fenced("```x```").startswith("````diff\n")


def test_whitespace_tolerant_edit_reindents_new_text() -> None:
    edit = ops.Edit("if x:\n    return 1", "if y:\n    return 10")
    plan = ops.plan_edits(SOURCE, [edit], "f.py", "'f.py'")
    assert plan.updated == "def f():\n    if y:\n        return 10\n    return 2\n"


def test_whitespace_tolerant_edit_keeps_each_line_indentation() -> None:
    text = "class A:\n    def f(self):\n        pass\n"
    plan = ops.plan_edits(text, [ops.Edit("def f(self):\npass", "def f(self):\nreturn 1\nreturn 2")], "a.py", "'a.py'")
    assert plan.updated == "class A:\n    def f(self):\n        return 1\n        return 2\n"


def test_edits_apply_in_order_and_keep_crlf() -> None:
    text = "a = 1\r\nb = 2\r\n"
    plan = ops.plan_edits(text, [ops.Edit("a = 1", "a = 5"), ops.Edit("a = 5\nb = 2", "c = 3")], "f", "'f'")
    assert plan.encoded() == b"c = 3\r\n"


def test_edit_not_found_and_ambiguous_errors() -> None:
    with pytest.raises(ops.EditError, match="was not found"):
        ops.plan_edits(SOURCE, [ops.Edit("return 99", "x")], "f.py", "'f.py'")
    with pytest.raises(ops.EditError, match=r"matches 2 places in 'f.py' \(lines 3, 4\)"):
        ops.plan_edits(SOURCE, [ops.Edit("return", "yield")], "f.py", "'f.py'")
    with pytest.raises(ops.EditError, match="matches 2 places"):
        ops.plan_edits("  x = 1\nx  =  1\n", [ops.Edit("x = 1 ", "y")], "f", "'f'")
    with pytest.raises(ops.EditError, match="empty"):
        ops.plan_edits(SOURCE, [ops.Edit("  ", "x")], "f.py", "'f.py'")


def test_diff_marks_missing_final_newline() -> None:
    plan = ops.plan_edits("a\nb", [ops.Edit("b", "c")], "f", "'f'")
    assert "\\ No newline at end of file" in plan.diff


# ---- walks --------------------------------------------------------------------


def test_listing_marks_dirs_files_and_outside_links(layout: Layout) -> None:
    text = listing_text(ops.list_directory(resolve(layout, ""), 100))
    lines = text.splitlines()
    assert "[DIR] sub" in lines and "[FILE] ok.txt" in lines and "[FILE] link_in" in lines
    assert "[LINK] linkdir_out (symbolic link to a location outside the allowed directories)" in lines
    assert SECRET not in text


def test_listing_with_sizes_and_truncation(layout: Layout) -> None:
    (layout.root / "big.bin").write_bytes(bytes(3000))
    sized = sized_listing_text(ops.list_directory(resolve(layout, ""), 100), "size")
    assert sized.splitlines()[0].startswith("[FILE] big.bin") and sized.splitlines()[0].endswith("2.93 KB")
    assert "Total: 3 files, 1 directories" in sized  # big.bin, ok.txt, link_in
    small = listing_text(ops.list_directory(resolve(layout, ""), 2))
    assert len(small.splitlines()) == 3 and small.endswith("[truncated at 2 entries]")
    assert format_size(0) == "0 B" and format_size(1536) == "1.50 KB"


def test_tree_excludes_and_never_follows_links_out(layout: Layout) -> None:
    (layout.root / "sub" / "deep").mkdir()
    (layout.root / "sub" / "deep" / "x.py").write_text("")
    (layout.root / "node_modules").mkdir()
    os.symlink(layout.root, layout.root / "sub" / "loop")
    walk = ops.directory_tree(resolve(layout, ""), ["node_modules"], 100)
    names = [node["name"] for node in walk.entries]
    assert "node_modules" not in names and "linkdir_out" not in names and "link_out" not in names
    sub = next(node for node in walk.entries if node["name"] == "sub")
    loop = next(node for node in sub["children"] if node["name"] == "loop")
    assert loop == {"name": "loop", "type": "directory", "children": [], "symlink": True}
    assert {"name": "x.py", "type": "file"} in next(n for n in sub["children"] if n["name"] == "deep")["children"]
    assert SECRET not in repr(walk.entries)
    limited = ops.directory_tree(resolve(layout, ""), [], 3)
    assert limited.truncated and limited.note() == "[truncated at 3 entries]"


def test_search_globs_relative_paths_and_names(layout: Layout) -> None:
    (layout.root / "sub" / "deep").mkdir()
    for name in ("a.py", "sub/b.py", "sub/deep/c.py", "sub/deep/d.txt"):
        (layout.root / name).write_text("")
    root = resolve(layout, "")

    def found(*args) -> list[str]:
        return ops.search(root, *args).entries

    assert found("*.py", [], 100) == [str(layout.root / "a.py"), str(layout.root / "sub" / "b.py"),
                                      str(layout.root / "sub" / "deep" / "c.py")]
    assert found("sub/*.py", [], 100) == [str(layout.root / "sub" / "b.py")]
    assert found("**/deep/*", [], 100) == [str(layout.root / "sub" / "deep" / "c.py"),
                                           str(layout.root / "sub" / "deep" / "d.txt")]
    assert found("*.py", ["deep"], 100) == [str(layout.root / "a.py"), str(layout.root / "sub" / "b.py")]
    assert all(str(layout.outside) not in p for p in found("**", [], 1000))
    assert ops.search(root, "*.py", [], 1).note() == "[truncated at 1 entries]"


def test_search_stops_after_a_bounded_number_of_visits(layout: Layout) -> None:
    for n in range(12):
        (layout.root / "sub" / f"d{n}").mkdir()
        for m in range(12):
            (layout.root / "sub" / f"d{n}" / f"f{m}.txt").write_text("")
    walk = ops.search(resolve(layout, ""), "*.nothing", [], 1)  # budget: 100 visits
    assert walk.visits_exhausted and walk.entries == []
    assert walk.note() == "[search stopped after visiting 100 entries; narrow the path or pattern]"
