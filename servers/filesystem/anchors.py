"""The allowed directories as the sandbox holds them: open handles, and how paths are compared.

Each command-line root is opened once at start-up (`Root`); every walk starts from a fresh
handle on it, never from its path string, so renaming a root or planting a link at its path
later changes nothing. An `Anchor` is one allowed directory: a root, or a directory below a
root when the client's roots narrowed access (`below` names the components to it).

Names compare the way the root's file system compares them: exactly on Linux, ignoring case
on Windows and on case-insensitive volumes (macOS by default), and in Unicode normal form C
on macOS, whose file systems treat composed and decomposed names alike.

Must not import the resolver, the sandbox or the operations.
"""

from __future__ import annotations

import os
import sys
import unicodedata
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from . import native

Fold = Callable[[str], str]


def split_components(path: str) -> list[str]:
    """The components of a path, separators of this system (both `\\` and `/` on Windows)."""
    if os.altsep:
        path = path.replace(os.altsep, os.sep)
    return [part for part in path.split(os.sep) if part]


def _exact(name: str) -> str:
    return name


def _nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def _nfc_casefold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def _casefold(name: str) -> str:
    return name.casefold()


def case_insensitive_volume(path: str) -> bool:
    """True when the directory at `path` is also found under a case-swapped name (probed once)."""
    head, tail = os.path.split(path.rstrip(os.sep) or path)
    while tail and tail.swapcase() == tail:
        head, tail = os.path.split(head)
    if not tail:
        return sys.platform in ("win32", "darwin")  # nothing to probe with: assume the system default
    swapped = os.path.join(head, tail.swapcase())
    try:
        return os.path.samestat(os.stat(path), os.stat(swapped))
    except OSError:
        return False


def fold_for(path: str) -> Fold:
    """How names compare on the file system holding `path`."""
    if sys.platform == "win32":
        return _casefold
    insensitive = case_insensitive_volume(path)
    if sys.platform == "darwin":
        return _nfc_casefold if insensitive else _nfc
    return _casefold if insensitive else _exact


class Root:
    """A command-line root: its real path and an open handle, held as long as anything refers to the root."""

    def __init__(self, path: str, handle: native.Directory, fold: Fold = _exact) -> None:
        self.path = path
        self.handle = handle
        self.fold = fold
        self._finalizer = weakref.finalize(self, handle.close)

    @classmethod
    def open(cls, path: str) -> Root:
        return cls(path, native.open_root(path), fold_for(path))

    def close(self) -> None:
        self._finalizer()


@dataclass(frozen=True)
class Anchor:
    """One allowed directory: `root` itself, or the directory `below` it (narrowed by client roots)."""

    root: Root
    below: tuple[str, ...] = ()
    path: str = field(default="")

    def __post_init__(self) -> None:
        if not self.path:
            object.__setattr__(self, "path", os.path.join(self.root.path, *self.below))

    @property
    def fold(self) -> Fold:
        return self.root.fold

    def open(self) -> native.Directory:
        """A fresh handle on this allowed directory, reached from the root without following links."""
        directory = self.root.handle.reopen()
        for name in self.below:
            try:
                child = directory.open_directory(name)
            finally:
                directory.close()
            directory = child
        return directory

    def parts_of(self, path: str) -> tuple[str, ...] | None:
        """The components of the absolute `path` below this directory, or None when it is not below it."""
        mine, theirs = split_components(self.path), split_components(path)
        if len(theirs) < len(mine):
            return None
        fold = self.fold
        if any(fold(a) != fold(b) for a, b in zip(mine, theirs, strict=False)):
            return None
        return tuple(theirs[len(mine):])


def anchor_of(path: str, anchors: Iterable[Anchor]) -> tuple[Anchor, tuple[str, ...]] | None:
    """The deepest allowed directory holding the absolute `path` (compared by name), and the rest of it."""
    best: tuple[Anchor, tuple[str, ...]] | None = None
    for anchor in anchors:
        parts = anchor.parts_of(path)
        if parts is not None and (best is None or len(parts) < len(best[1])):
            best = (anchor, parts)
    return best
