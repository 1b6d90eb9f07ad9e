"""Attacks after validation: links, FIFOs and directories swapped in between the check and the use."""

from __future__ import annotations

import os
import stat

import pytest
from fs_layout import SECRET, Layout

from servers.filesystem import operations as ops
from servers.filesystem.errors import AccessDenied, FilesystemError
from servers.filesystem.sandbox import Sandbox

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
    sp = Sandbox([layout.root]).resolve(str(layout.root / "loop_a"))
    with pytest.raises(FilesystemError, match="symbolic link"):
        ops.read_text(sp, LIMIT)
