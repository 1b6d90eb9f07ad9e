"""Attacks after validation: links, FIFOs and directories swapped in between the check and the use."""

from __future__ import annotations

import base64
import ctypes
import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.filesystem import operations as ops
from servers.filesystem.errors import AccessDenied, FilesystemError
from servers.filesystem.sandbox import Sandbox
from servers.filesystem.server import build_server
from servers.filesystem.uris import file_uri
from tests.helpers.fs_layout import SECRET, Layout

LIMIT = 1 << 20


def test_file_swapped_for_outside_link_is_not_read(layout: Layout) -> None:
    sp = Sandbox([layout.root]).resolve(str(layout.root / "ok.txt"))
    (layout.root / "ok.txt").unlink()
    os.symlink(layout.outside / "secret.txt", layout.root / "ok.txt")
    with pytest.raises(AccessDenied) as denied:
        ops.read_text(sp, LIMIT)
    assert SECRET not in str(denied.value)


def test_parent_swapped_for_outside_link_is_not_read(layout: Layout) -> None:
    sp = Sandbox([layout.root]).resolve(str(layout.root / "sub" / "inner.txt"))
    (layout.root / "sub").rename(layout.root / "sub_old")
    os.symlink(layout.outside / "sub", layout.root / "sub")
    with pytest.raises(AccessDenied) as denied:
        ops.read_text(sp, LIMIT)
    assert SECRET not in str(denied.value)


def test_parent_swapped_for_outside_link_is_not_written(layout: Layout) -> None:
    sp = Sandbox([layout.root]).resolve(str(layout.root / "sub" / "planted.txt"))
    (layout.root / "sub").rename(layout.root / "sub_old")
    os.symlink(layout.outside / "sub", layout.root / "sub")
    with pytest.raises(AccessDenied):
        ops.atomic_write(sp, b"pwned")
    assert not (layout.outside / "sub" / "planted.txt").exists()
    assert sorted(os.listdir(layout.outside / "sub")) == ["inner.txt"]  # no temporary file left either


def test_target_swapped_for_outside_link_is_not_followed_on_write(layout: Layout) -> None:
    sp = Sandbox([layout.root]).resolve(str(layout.root / "ok.txt"))
    (layout.root / "ok.txt").unlink()
    os.symlink(layout.outside / "secret.txt", layout.root / "ok.txt")
    with pytest.raises(AccessDenied):
        ops.atomic_write(sp, b"pwned")
    assert (layout.outside / "secret.txt").read_text() == SECRET


def test_dangling_link_planted_at_new_name_is_not_followed(layout: Layout) -> None:
    sp = Sandbox([layout.root]).resolve(str(layout.root / "fresh.txt"))
    os.symlink(layout.outside / "created_outside.txt", layout.root / "fresh.txt")
    with pytest.raises(AccessDenied):
        ops.atomic_write(sp, b"pwned")
    assert not (layout.outside / "created_outside.txt").exists()


def test_dangling_link_to_outside_cannot_be_written_through(layout: Layout) -> None:
    with pytest.raises(AccessDenied):
        Sandbox([layout.root]).resolve(str(layout.root / "dangling_out"))
    assert not (layout.outside / "new.txt").exists()


@pytest.mark.timeout(10)
def test_fifo_is_refused_without_blocking(layout: Layout) -> None:
    os.mkfifo(layout.root / "pipe")
    sp = Sandbox([layout.root]).resolve(str(layout.root / "pipe"))
    with pytest.raises(FilesystemError, match="FIFO"):
        ops.read_text(sp, LIMIT)
    with pytest.raises(FilesystemError, match="FIFO"):
        ops.read_bytes(sp, LIMIT)


@pytest.mark.timeout(10)
def test_file_swapped_for_fifo_after_check_does_not_hang(layout: Layout) -> None:
    sp = Sandbox([layout.root]).resolve(str(layout.root / "ok.txt"))
    (layout.root / "ok.txt").unlink()
    os.mkfifo(layout.root / "ok.txt")
    with pytest.raises(FilesystemError, match="FIFO"):
        ops.read_text(sp, LIMIT)


@pytest.mark.timeout(10)
def test_device_file_is_refused(layout: Layout) -> None:
    try:
        os.mknod(layout.root / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except (PermissionError, OSError):
        pytest.skip("cannot create device nodes here")
    sp = Sandbox([layout.root]).resolve(str(layout.root / "zero"))
    with pytest.raises(FilesystemError, match="device"):
        ops.read_text(sp, LIMIT)


def test_symlink_loop_fails_cleanly(layout: Layout) -> None:
    os.symlink(layout.root / "loop_b", layout.root / "loop_a")
    os.symlink(layout.root / "loop_a", layout.root / "loop_b")
    with pytest.raises(FilesystemError, match="too many levels of symbolic links"):
        Sandbox([layout.root]).resolve(str(layout.root / "loop_a"))
    sp = Sandbox([layout.root]).resolve(str(layout.root / "ok.txt"))
    (layout.root / "ok.txt").unlink()
    os.symlink(layout.root / "loop_a", layout.root / "ok.txt")  # a loop appears after the check
    with pytest.raises(FilesystemError, match="symbolic links"):
        ops.read_text(sp, LIMIT)


# ---- a directory swapped for an outside link while every tool runs --------------------------

RENAME_EXCHANGE = 2
AT_FDCWD = -100
OUTSIDE_SIZE = 4321  # the outside twin of sub/inner.txt has this size: finding it in a result is a leak


class Swapper(threading.Thread):
    """Exchanges `root/sub` (a directory) and `root/swap` (a link to an outside directory) atomically, in a loop."""

    def __init__(self, root: Path, limit: int = 2_000_000) -> None:
        super().__init__(daemon=True)
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.a, self.b = bytes(root / "sub"), bytes(root / "swap")
        self.limit = limit
        self.swaps = 0
        self.stop = threading.Event()

    def exchange(self) -> None:
        if self.libc.renameat2(AT_FDCWD, self.a, AT_FDCWD, self.b, RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2(RENAME_EXCHANGE) failed")

    def run(self) -> None:
        while not self.stop.is_set() and self.swaps < self.limit:
            self.exchange()
            self.swaps += 1
        if self.swaps % 2:
            self.exchange()  # leave the real directory at `sub`
            self.swaps += 1


def _snapshot(top: Path) -> dict[str, tuple[int, int, int, bytes]]:
    found = {}
    for path in sorted(top.rglob("*")):
        st = path.lstat()
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        found[str(path.relative_to(top))] = (st.st_mode, st.st_size, st.st_mtime_ns, data)
    return found


@pytest.fixture
def race(layout: Layout) -> Path:
    """root/sub (the real directory) and root/swap (a link to outside/target, which mirrors sub's names)."""
    if not hasattr(ctypes.CDLL(None), "renameat2"):
        pytest.skip("renameat2 is not available (glibc 2.28+ on Linux)")
    target = layout.outside / "target"
    target.mkdir()
    (target / "inner.txt").write_text(SECRET + "x" * (OUTSIDE_SIZE - len(SECRET)))
    (target / "outside_only_marker.txt").write_text(SECRET)
    (target / "edit.txt").write_text("alpha\n")
    (layout.root / "sub" / "edit.txt").write_text("alpha\n")
    for n in range(MOVES):
        (target / f"m{n}.txt").write_text(SECRET)
        (layout.root / "sub" / f"m{n}.txt").write_text("movable\n")
        (layout.root / f"in{n}.txt").write_text("to move in\n")
    os.symlink(target, layout.root / "swap")
    swapper = Swapper(layout.root)
    try:
        swapper.exchange()
        swapper.exchange()
    except OSError as exc:
        pytest.skip(f"this file system cannot exchange entries: {exc}")
    return target


MOVES = 40


def _calls(root: Path) -> list[tuple[str, dict[str, Any]]]:
    uri = file_uri(root / "sub")
    calls: list[tuple[str, dict[str, Any]]] = []
    for n in range(MOVES):
        calls += [
            ("read_text_file", {"path": "sub/inner.txt"}),
            ("read_file", {"path": "sub/inner.txt"}),
            ("read_media_file", {"path": "sub/inner.txt"}),
            ("read_multiple_files", {"paths": ["sub/inner.txt", "sub/edit.txt"]}),
            ("list_directory", {"path": "sub"}),
            ("list_directory_with_sizes", {"path": "sub"}),
            ("directory_tree", {"path": "sub"}),
            ("directory_tree", {"path": "."}),
            ("search_files", {"path": "sub", "pattern": "*"}),
            ("search_files", {"path": ".", "pattern": "**"}),
            ("get_file_info", {"path": "sub/inner.txt"}),
            ("get_file_info", {"path": "sub"}),
            ("write_file", {"path": f"sub/w{n}.txt", "content": "written"}),
            ("write_file", {"path": "sub/inner.txt", "content": "inner\n"}),
            ("edit_file", {"path": "sub/edit.txt", "edits": [{"oldText": "alpha", "newText": "beta"}]}),
            ("edit_file", {"path": "sub/edit.txt", "edits": [{"oldText": "beta", "newText": "alpha"}]}),
            ("create_directory", {"path": f"sub/c{n}/deeper"}),
            ("create_directory", {"path": f"sub/d{n}"}),
            ("move_file", {"source": f"sub/m{n}.txt", "destination": f"sub/moved{n}.txt"}),
            ("move_file", {"source": f"in{n}.txt", "destination": f"sub/in{n}.txt"}),
            ("resources/read", {"uri": uri + "/inner.txt"}),
            ("resources/read", {"uri": uri}),
        ]
    return calls


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_directory_swapped_for_an_outside_link_during_every_tool(layout: Layout, race: Path) -> None:
    """The attack run's race: nothing outside the root is created, read, changed or described."""
    before = _snapshot(layout.outside)
    swapper = Swapper(layout.root)
    outcomes: dict[str, list[bool]] = {}
    texts: list[str] = []
    async with connect(build_server([layout.root])) as client:
        swapper.start()
        try:
            for name, arguments in _calls(layout.root):
                if name == "resources/read":
                    try:
                        contents = await client.read_resource(arguments["uri"])
                        texts.append(json.dumps(contents))
                        outcomes.setdefault(name, []).append(True)
                    except MCPError as exc:
                        texts.append(str(exc))
                        outcomes.setdefault(name, []).append(False)
                    continue
                result = await client.call_tool(name, arguments)
                texts.append(json.dumps(result))
                outcomes.setdefault(name, []).append(not result["isError"])
        finally:
            swapper.stop.set()
            swapper.join(timeout=30)
    assert not swapper.is_alive() and swapper.swaps > 100
    # the race was real: the same calls both succeeded and were refused
    assert True in outcomes["read_text_file"] and False in outcomes["read_text_file"], outcomes["read_text_file"]
    assert _snapshot(layout.outside) == before  # nothing created, changed, moved or removed outside
    for text in texts:
        assert SECRET not in text
        assert "outside_only_marker" not in text  # an outside entry is never listed
        assert f'"size": {OUTSIDE_SIZE}' not in text and f'"size":{OUTSIDE_SIZE}' not in text
        assert str(layout.outside) not in text
        assert base64.b64encode(SECRET.encode()[:24]).decode()[:24] not in text
