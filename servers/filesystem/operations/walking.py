"""Directory walks: listings, trees and glob searches, bounded, cancellable, confined to the roots.

Walks open every directory from its parent's handle without following links, so they can
neither leave the roots nor loop; a linked entry is shown by where it leads (checked by a
walk of its own) but never descended into, and a link leading outside the roots is marked
as such without a word about its target. Every walk is bounded three ways, each with a note
the client sees: results (`max_entries`), entries visited (`VISITS_PER_RESULT` per allowed
result, also while reading one huge directory), and depth for trees (a result nested deeper
than `MAX_TREE_DEPTH` could not be encoded). Walks check their `Cancellation` as they go, so
a cancelled request stops its worker within a few entries.

Names appear in their display form (see `names.py`); glob patterns are matched against it.

Must not import the tools.
"""

from __future__ import annotations

import heapq
import os
import stat
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from .. import names, native
from ..errors import FilesystemError
from ..globmatch import GlobPattern, any_match
from ..resolver import Escape
from ..sandbox import SandboxedPath
from .opening import open_directory

VISITS_PER_RESULT = 100
MAX_TREE_DEPTH = 48
CHECK_EVERY = 64
OPEN_DIRECTORIES_PER_WALK = 16
MAX_WALK_PATH_CHARS = 4096  # deeper than the longest path a client may give: not descended into


class WalkCancelled(Exception):
    """The request that started the walk was cancelled."""


class Cancellation:
    """Set from the event loop when the request is cancelled; checked by the walk in its thread."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise WalkCancelled("the request was cancelled")


NEVER_CANCELLED = Cancellation()


@dataclass(frozen=True)
class Entry:
    """One directory entry as seen by a walk."""

    name: str  # the OS name
    parent: str  # real path of its directory, OS form
    kind: str  # "file" | "directory" | "outside" (a link leading out) | "link" (a link not followed here)
    size: int
    is_link: bool

    @property
    def path(self) -> str:
        return os.path.join(self.parent, self.name)

    @property
    def display(self) -> str:
        """The name in its display form."""
        return names.display_name(self.name)

    @property
    def display_path(self) -> str:
        """The real path in its display form."""
        return names.display_path(self.path, os.sep)


@dataclass
class Walk:
    """The entries a walk produced and whether, and why, it stopped early."""

    entries: list[Any] = field(default_factory=list)
    truncated: bool = False
    limit: int = 0
    visits_exhausted: bool = False
    visit_limit: int = 0
    depth_limited: bool = False
    kind: str = "search"

    def note(self) -> str | None:
        """The note for the client saying how the result is incomplete, or None when it is complete."""
        notes = []
        if self.visits_exhausted:
            notes.append(f"[{self.kind} stopped after visiting {self.visit_limit} entries; narrow the path or pattern]")
        if self.truncated:
            notes.append(f"[truncated at {self.limit} entries]")
        if self.depth_limited and self.kind == "tree":
            notes.append(f"[directories marked truncated (deeper than {MAX_TREE_DEPTH} levels, or with a path longer "
                         f"than {MAX_WALK_PATH_CHARS} characters) are shown without their entries]")
        elif self.depth_limited:
            notes.append(f"[directories whose path is longer than {MAX_WALK_PATH_CHARS} characters were not searched]")
        return " ".join(notes) or None

    @property
    def incomplete(self) -> bool:
        return self.truncated or self.visits_exhausted or self.depth_limited


class _Budget:
    """Entries a walk may still visit, with the cancellation check folded in."""

    def __init__(self, visits: int, cancellation: Cancellation) -> None:
        self.left = visits
        self.cancellation = cancellation
        self._until_check = CHECK_EVERY

    def spend(self) -> bool:
        """Count one visit; False when the budget is gone."""
        self._until_check -= 1
        if self._until_check <= 0:
            self._until_check = CHECK_EVERY
            self.cancellation.check()
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def _read_entries(directory: native.Directory, budget: _Budget) -> tuple[list[os.DirEntry[str]], bool]:
    """The entries of one directory sorted by name, as many as the budget allows; True when cut short."""
    entries: list[os.DirEntry[str]] = []
    for entry in directory.scan():
        if not budget.spend():
            entries.sort(key=lambda e: e.name)
            return entries, True
        entries.append(entry)
    entries.sort(key=lambda e: e.name)
    return entries, False


def _describe(entry: os.DirEntry[str], directory: native.Directory, owner: SandboxedPath,
              relative: tuple[str, ...], sized: bool = True) -> Entry:
    """What `entry` is; a link is described by where a walk of its own leads, never by its target string.

    Sizes cost a `stat` per entry and only listings show them (`sized`); the type comes from the
    directory entry itself where the file system records it.
    """
    parent = directory.path
    if native.is_link_entry(entry):
        linked = SandboxedPath(owner.requested, owner.anchor, (*owner.parts, *relative, entry.name), owner.anchors,
                               owner.real)
        try:
            with linked.locate() as location:
                if location.rest == ():
                    st = location.directory.stat_self()
                elif location.name is not None:
                    st = location.directory.lstat(location.name)
                else:
                    return Entry(entry.name, parent, "file", 0, True)
        except Escape:
            return Entry(entry.name, parent, "outside", 0, True)
        except FilesystemError:
            return Entry(entry.name, parent, "link", 0, True)
        except OSError:
            return Entry(entry.name, parent, "file", 0, True)  # dangling or unreadable: shown, not followed
        kind = "directory" if stat.S_ISDIR(st.st_mode) else "file"
        return Entry(entry.name, parent, kind, st.st_size, True)
    try:
        if not sized:
            return Entry(entry.name, parent, "directory" if entry.is_dir(follow_symlinks=False) else "file", 0, False)
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return Entry(entry.name, parent, "file", 0, False)
    return Entry(entry.name, parent, "directory" if stat.S_ISDIR(st.st_mode) else "file", st.st_size, False)


def list_directory(sp: SandboxedPath, max_entries: int, cancellation: Cancellation = NEVER_CANCELLED) -> Walk:
    """The entries of one directory sorted by name, at most `max_entries`, reading a bounded number."""
    visit_limit = max_entries * VISITS_PER_RESULT
    budget = _Budget(visit_limit, cancellation)
    walk = Walk(limit=max_entries, visit_limit=visit_limit, kind="listing")
    with open_directory(sp) as directory:
        def counted() -> Any:
            for entry in directory.scan():
                if not budget.spend():
                    walk.visits_exhausted = True
                    return
                yield entry

        kept = heapq.nsmallest(max_entries + 1, counted(), key=lambda e: e.name)
        walk.truncated = len(kept) > max_entries
        walk.entries = [_describe(entry, directory, sp, ()) for entry in kept[:max_entries]]
    return walk


@dataclass(frozen=True, eq=False)
class _Pending:
    """A directory a walk still has to read: its parent, its name, its depth and its slot in the result.

    Only the name is stored, so a deep tree costs memory in proportion to its entries, not to
    the sum of their path lengths; the relative path is rebuilt once, when the directory is read.
    """

    parent: _Pending | None
    name: str
    depth: int
    children: list[Any] | None = None
    node: dict[str, Any] | None = None  # the tree node of this directory, when building a tree

    def relative(self) -> tuple[str, ...]:
        names: list[str] = []
        node: _Pending | None = self
        while node is not None and node.parent is not None:
            names.append(node.name)
            node = node.parent
        return tuple(reversed(names))


class _OpenDirectories:
    """The few directories a walk keeps open, each reopened from its nearest open ancestor when needed."""

    def __init__(self, top: native.Directory) -> None:
        self.top = top
        self.cache: OrderedDict[_Pending, native.Directory] = OrderedDict()

    def open(self, node: _Pending) -> native.Directory:
        if node.parent is None:
            return self.top
        chain: list[_Pending] = []
        current: _Pending | None = node
        while current is not None and current.parent is not None and current not in self.cache:
            chain.append(current)
            current = current.parent
        directory = self.top if current is None or current.parent is None else self.cache[current]
        for step in reversed(chain):
            directory = directory.open_directory(step.name)  # never follows a link: a swapped entry fails here
            self._keep(step, directory)
        self.cache.move_to_end(node)
        return directory

    def _keep(self, node: _Pending, directory: native.Directory) -> None:
        self.cache[node] = directory
        while len(self.cache) > OPEN_DIRECTORIES_PER_WALK:
            _, oldest = self.cache.popitem(last=False)
            oldest.close()

    def close(self) -> None:
        while self.cache:
            self.cache.popitem()[1].close()


def _walk(sp: SandboxedPath, walk: Walk, budget: _Budget, visit: Any) -> None:
    """Breadth first below `sp`: `visit(node, entry, relative_display)` decides, returning whether to descend."""
    with open_directory(sp) as top:
        handles = _OpenDirectories(top)
        try:
            pending: deque[_Pending] = deque([_Pending(None, "", 0, walk.entries)])
            while pending and not walk.truncated:
                node = pending.popleft()
                try:
                    directory = handles.open(node)
                except (OSError, FilesystemError):
                    continue  # vanished, or swapped for a link, since it was listed: skip it
                try:
                    entries, cut = _read_entries(directory, budget)
                except OSError:
                    continue
                relative = node.relative()
                prefix = "".join(names.display_name(part) + "/" for part in relative)
                for entry in entries:
                    budget.cancellation.check()
                    described = _describe(entry, directory, sp, relative, sized=False)
                    child = visit(node, described, prefix + described.display)
                    if walk.truncated:
                        break
                    if child is not None and len(prefix) + len(described.display) < MAX_WALK_PATH_CHARS:
                        pending.append(child)
                    elif child is not None:
                        walk.depth_limited = True
                        if child.node is not None:
                            child.node["truncated"] = True
                if cut or (budget.left <= 0 and pending):
                    walk.visits_exhausted = True
                    break
        finally:
            handles.close()


def directory_tree(sp: SandboxedPath, excludes: list[str], max_entries: int,
                   cancellation: Cancellation = NEVER_CANCELLED) -> Walk:
    """A nested tree (`name`, `type`, `children`) of the directory, at most `max_entries` nodes."""
    fold = sp.anchor.fold
    patterns = [GlobPattern(p, fold) for p in excludes]
    visit_limit = max_entries * VISITS_PER_RESULT
    walk = Walk(limit=max_entries, visit_limit=visit_limit, kind="tree")
    count = 0

    def visit(node: _Pending, entry: Entry, relative: str) -> _Pending | None:
        nonlocal count
        if entry.kind in ("outside", "link") or any_match(patterns, relative):
            return None
        if count >= max_entries:
            walk.truncated = True
            return None
        count += 1
        result: dict[str, Any] = {"name": entry.display, "type": entry.kind}
        assert node.children is not None
        node.children.append(result)
        if entry.kind != "directory":
            return None
        result["children"] = []
        if entry.is_link:
            result["symlink"] = True
            return None
        if node.depth + 1 >= MAX_TREE_DEPTH:
            result["truncated"] = True
            walk.depth_limited = True
            return None
        return _Pending(node, entry.name, node.depth + 1, result["children"], result)

    _walk(sp, walk, _Budget(visit_limit, cancellation), visit)
    return walk


def search(sp: SandboxedPath, pattern: str, excludes: list[str], max_entries: int,
           cancellation: Cancellation = NEVER_CANCELLED) -> Walk:
    """Paths below `sp` whose relative path (or name) matches the glob `pattern`, shallowest first."""
    fold = sp.anchor.fold
    wanted = GlobPattern(pattern, fold)
    patterns = [GlobPattern(p, fold) for p in excludes]
    visit_limit = max_entries * VISITS_PER_RESULT
    walk = Walk(limit=max_entries, visit_limit=visit_limit, kind="search")

    def visit(node: _Pending, entry: Entry, relative: str) -> _Pending | None:
        if entry.kind in ("outside", "link") or any_match(patterns, relative):
            return None
        if wanted.matches(relative):
            if len(walk.entries) >= max_entries:
                walk.truncated = True
                return None
            walk.entries.append(entry.display_path)
        if entry.kind == "directory" and not entry.is_link:
            return _Pending(node, entry.name, node.depth + 1)
        return None

    _walk(sp, walk, _Budget(visit_limit, cancellation), visit)
    return walk
