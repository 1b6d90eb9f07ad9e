"""Shared test data for the filesystem server tests: an allowed root beside things that must stay out of reach."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SECRET = "TOP SECRET CONTENT - must never be shown"


@dataclass
class Layout:
    """An allowed root, a sibling whose name extends the root's, and an outside directory."""

    base: Path
    root: Path
    sibling: Path
    outside: Path


def make_layout(tmp_path: Path) -> Layout:
    """Create the layout under `tmp_path`."""
    base = tmp_path.resolve()
    root, sibling, outside = base / "root", base / "root_evil", base / "outside"
    for directory in (root / "sub", sibling, outside / "sub"):
        directory.mkdir(parents=True)
    (root / "ok.txt").write_text("hello\nworld\n")
    (root / "sub" / "inner.txt").write_text("inner\n")
    (sibling / "evil.txt").write_text(SECRET)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "sub" / "inner.txt").write_text(SECRET)
    os.symlink(outside / "secret.txt", root / "link_out")
    os.symlink(outside, root / "linkdir_out")
    os.symlink(root / "ok.txt", root / "link_in")
    os.symlink(outside / "new.txt", root / "dangling_out")
    return Layout(base, root, sibling, outside)
