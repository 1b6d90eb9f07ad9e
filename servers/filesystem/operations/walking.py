"""Directory walks: listings, trees and glob searches, bounded and confined to the roots.

Walks never descend into a symbolically linked directory (so they can neither
leave the roots nor loop), leave out links that point outside the roots, and
stop after `max_entries` results with a flag the caller turns into a
"truncated at N" note. Searches also stop after visiting a bounded number of
entries, so a huge tree cannot make a call run for ever.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FilesystemError
from ..globmatch import GlobPattern, any_match
from ..sandbox import SandboxedPath, is_within
from .opening import kind_of, lstat_existing

VISITS_PER_RESULT = 100


@dataclass(frozen=True)
class Entry:
    """One directory entry as seen by a walk."""

    name: str
    path: Path
    kind: str  # "file" | "directory" | "outside"
    size: int
    is_link: bool


@dataclass
class Walk:
    """The entries a walk produced and whether it stopped early."""

    entries: list[Any] = field(default_factory=list)
    truncated: bool = False
    limit: int = 0
    visits_exhausted: bool = False

    def note(self) -> str | None:
        """The "truncated" note for the client, or None when the walk was complete."""
        if self.visits_exhausted:
            return f"[search stopped after visiting {self.limit * VISITS_PER_RESULT} entries; narrow the path or pattern]"
        if self.truncated:
            return f"[truncated at {self.limit} entries]"
        return None


def _describe_entry(entry: os.DirEntry[str], directory: Path, roots: tuple[Path, ...]) -> Entry:
    path = directory / entry.name
    if entry.is_symlink():
        target = Path(os.path.realpath(path))
        if not is_within(target, roots):
            return Entry(entry.name, path, "outside", 0, True)
        try:
            st = os.stat(target)
        except OSError:
            return Entry(entry.name, path, "file", 0, True)
        return Entry(entry.name, path, "directory" if stat.S_ISDIR(st.st_mode) else "file", st.st_size, True)
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return Entry(entry.name, path, "file", 0, False)
    return Entry(entry.name, path, "directory" if stat.S_ISDIR(st.st_mode) else "file", st.st_size, False)


def scan(owner: SandboxedPath, directory: Path | None = None) -> list[Entry]:
    """Entries of one directory (default: `owner` itself), read through a verified descriptor."""
    path = owner.path if directory is None else directory
    with owner.open_directory(path) as dir_fd, os.scandir(dir_fd) as iterator:
        return [_describe_entry(entry, path, owner.roots) for entry in iterator]


def _scan_below(owner: SandboxedPath, directory: Path) -> list[Entry]:
    """Like `scan`, but a subdirectory that vanished or moved out of the roots is skipped."""
    if directory == owner.path:
        return scan(owner)
    try:
        return scan(owner, directory)
    except (FilesystemError, OSError):
        return []


def _require_directory(sp: SandboxedPath) -> None:
    mode = lstat_existing(sp).st_mode
    if not stat.S_ISDIR(mode):
        raise FilesystemError(f"{sp.label} is {kind_of(mode)}, not a directory.")


def list_directory(sp: SandboxedPath, max_entries: int) -> Walk:
    """The entries of one directory sorted by name, at most `max_entries`."""
    _require_directory(sp)
    entries = sorted(scan(sp), key=lambda e: e.name)
    return Walk(entries=entries[:max_entries], truncated=len(entries) > max_entries, limit=max_entries)


def directory_tree(sp: SandboxedPath, excludes: list[str], max_entries: int) -> Walk:
    """A nested tree (`name`, `type`, `children`) of the directory, at most `max_entries` nodes."""
    _require_directory(sp)
    patterns = [GlobPattern(p) for p in excludes]
    walk = Walk(limit=max_entries)
    pending: list[tuple[Path, str, list]] = [(sp.path, "", walk.entries)]
    count = 0
    while pending and not walk.truncated:
        directory, prefix, children = pending.pop()
        for entry in sorted(_scan_below(sp, directory), key=lambda e: e.name):
            relative = prefix + entry.name
            if entry.kind == "outside" or any_match(patterns, relative):
                continue
            if count >= max_entries:
                walk.truncated = True
                break
            count += 1
            node: dict = {"name": entry.name, "type": entry.kind}
            if entry.kind == "directory":
                node["children"] = []
                if entry.is_link:
                    node["symlink"] = True
                else:
                    pending.append((entry.path, relative + "/", node["children"]))
            children.append(node)
    return walk


def search(sp: SandboxedPath, pattern: str, excludes: list[str], max_entries: int) -> Walk:
    """Paths below `sp` whose relative path (or name) matches the glob `pattern`."""
    _require_directory(sp)
    wanted = GlobPattern(pattern)
    patterns = [GlobPattern(p) for p in excludes]
    walk = Walk(limit=max_entries)
    budget = max_entries * VISITS_PER_RESULT
    pending: deque[tuple[Path, str]] = deque([(sp.path, "")])
    while pending and not walk.truncated:
        directory, prefix = pending.popleft()
        for entry in sorted(_scan_below(sp, directory), key=lambda e: e.name):
            budget -= 1
            relative = prefix + entry.name
            if entry.kind == "outside" or any_match(patterns, relative):
                continue
            if wanted.matches(relative):
                if len(walk.entries) >= max_entries:
                    walk.truncated = True
                    break
                walk.entries.append(entry.path)
            if entry.kind == "directory" and not entry.is_link:
                pending.append((entry.path, relative + "/"))
        if budget <= 0 and pending:
            walk.visits_exhausted = True
            break
    return walk
