"""The path policy: which paths the server may touch, and the walk every operation starts with.

A requested path is checked for NUL bytes and length, its names are turned back from their
display form (see `names.py`), it is made absolute (a relative path is anchored in an
allowed directory) and normalised, and matched by name against the allowed directories.
A path outside them is refused at once; `/root_evil` is never inside `/root`.

Nothing is decided on the path string beyond that. `SandboxedPath.locate()` walks the path
from the allowed directory's open handle, component by component, without following any
link blindly (see `resolver.py`), and every operation acts on the directories that walk
opened. `Sandbox.resolve` walks once up front to refuse early with a clear message and to
learn the real path for results; the operation walks again when it runs, so a directory
swapped for a link in between leads nowhere outside.

Must not import the operations or the tools.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import native
from .anchors import Anchor, Root, anchor_of, split_components
from .errors import AccessDenied, FilesystemError, describe
from .names import display_path, parse_name
from .native import winpaths
from .resolver import Escape, Location, locate
from .uris import path_from_file_uri

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


def _name_bytes(name: str) -> int:
    return len(name) if native.IS_WINDOWS else len(os.fsencode(name))


@dataclass(frozen=True)
class SandboxedPath:
    """A requested path that passed the policy, and where it led when it was checked."""

    requested: str
    anchor: Anchor
    parts: tuple[str, ...]
    anchors: tuple[Anchor, ...]
    real: str
    is_root: bool = False
    follow_final: bool = True

    @property
    def path(self) -> Path:
        """The real path when checked (for results, MIME types and messages; never for I/O)."""
        return Path(self.real)

    @property
    def display(self) -> str:
        """The real path in display form (undecodable names escaped)."""
        return display_path(self.real, os.sep)

    @property
    def label(self) -> str:
        """The requested path, quoted for messages."""
        return describe(display_path(self.requested, os.sep))

    @property
    def roots(self) -> tuple[Path, ...]:
        return tuple(Path(anchor.path) for anchor in self.anchors)

    def locate(self, *, create: bool = False, follow_final: bool | None = None) -> Location:
        """Walk the path now, from the allowed directory's handle; close the result when done."""
        follow = self.follow_final if follow_final is None else follow_final
        return locate(self.anchor, self.parts, self.anchors, label=self.label, follow_final=follow, create=create)

    def exists(self) -> bool:
        """True when something (even a link) is at the path now."""
        try:
            with self.locate() as location:
                if location.rest == ():
                    return True
                if location.name is None:
                    return False
                location.directory.lstat(location.name)
                return True
        except (FilesystemError, OSError):
            return False


class Sandbox:
    """The allowed directories and the check every requested path goes through."""

    anchors: tuple[Anchor, ...]
    _owned: tuple[Root, ...] = ()

    def __init__(self, roots: Iterable[str | os.PathLike[str]]) -> None:
        opened: dict[str, Root] = {}
        try:
            for root in roots:
                real = os.path.realpath(os.path.expanduser(os.fspath(root)))
                if not os.path.isdir(real):
                    raise ValueError(f"Allowed directory does not exist or is not a directory: {root}")
                if real not in opened:
                    opened[real] = Root.open(real)
        except BaseException:
            _close_roots(list(opened.values()))
            raise
        if not opened:
            raise ValueError("At least one allowed directory is required.")
        self.anchors = tuple(Anchor(root) for root in opened.values())
        self._owned = tuple(opened.values())

    @classmethod
    def _of_anchors(cls, anchors: Iterable[Anchor]) -> Sandbox:
        sandbox = cls.__new__(cls)
        sandbox.anchors = tuple(dict.fromkeys(anchors))
        return sandbox

    def close(self) -> None:
        """Close the allowed directories' handles now (only the sandbox built from the command line owns them)."""
        _close_roots(list(self._owned))

    @property
    def roots(self) -> tuple[Path, ...]:
        """The allowed directories, by real path."""
        return tuple(Path(anchor.path) for anchor in self.anchors)

    def narrowed(self, client_dirs: Iterable[str]) -> Sandbox:
        """The intersection of these directories with directories offered by the client.

        A client directory inside an allowed one is allowed as is; an allowed directory inside
        a client directory stays as it is; anything else is ignored. Narrowing never widens.
        """
        allowed: list[Anchor] = []
        for client_dir in client_dirs:
            if "\x00" in client_dir:
                continue
            real = os.path.realpath(client_dir)
            if not os.path.isdir(real):
                continue
            for anchor in self.anchors:
                below = anchor.parts_of(real)
                if below is not None:
                    allowed.append(Anchor(anchor.root, anchor.below + below))
                elif Anchor(anchor.root, (), real).parts_of(anchor.path) is not None:
                    allowed.append(anchor)
        return Sandbox._of_anchors(allowed)

    def contains(self, path: Path) -> bool:
        """True when an already resolved path lies within the allowed directories (by name)."""
        return anchor_of(str(path), self.anchors) is not None

    def resolve(self, requested: str, *, follow_final: bool = True) -> SandboxedPath:
        """Check `requested` against the policy, walking it once, and return where it leads.

        With `follow_final=False` a final link is kept as the entry itself (to move the link,
        not its target); a link leading outside is refused all the same.
        """
        absolute = self._absolute(requested)
        found = anchor_of(absolute, self.anchors)
        if found is None:
            found = anchor_of(os.path.realpath(absolute), self.anchors)
        if found is None:
            allowed = ", ".join(anchor.path for anchor in self.anchors)
            raise AccessDenied(f"Access denied: {describe(display_path(requested, os.sep))} is outside "
                               f"the allowed directories ({allowed}).")
        anchor, parts = found
        if native.IS_WINDOWS:
            for part in parts:
                problem = winpaths.component_problem(part)
                if problem:
                    raise AccessDenied(f"Access denied: {describe(requested)}: {problem}")
        sp = SandboxedPath(requested, anchor, parts, self.anchors, anchor.path, follow_final=follow_final)
        if not follow_final:
            try:
                sp.locate(follow_final=True).close()
            except Escape:
                raise
            except (FilesystemError, OSError):
                pass  # a broken link or a missing file may still be moved or created
        with sp.locate() as location:
            real, is_root = location.path, location.rest == () and len(location.chain) == 1
        return SandboxedPath(requested, anchor, parts, self.anchors, real, is_root, follow_final)

    def _absolute(self, requested: str) -> str:
        """The requested path as an absolute, normalised OS path (names parsed from their display form)."""
        if not isinstance(requested, str):
            raise AccessDenied("Path must be a string.")
        if "\x00" in requested:
            raise AccessDenied("Access denied: the path contains a NUL byte.")
        if not requested.strip():
            raise AccessDenied("Access denied: the path is empty.")
        if len(requested) > MAX_PATH_CHARS:
            raise AccessDenied(
                f"Access denied: the path is too long ({len(requested)} characters; the limit is {MAX_PATH_CHARS})."
            )
        if not self.anchors:
            raise AccessDenied(
                "Access denied: no allowed directories (the client's roots do not overlap the server's directories)."
            )
        path = requested
        if path.startswith("file://"):
            path = path_from_file_uri(path) or path
        if native.IS_WINDOWS:
            problem = winpaths.request_problem(path)
            if problem:
                raise AccessDenied(f"Access denied: {describe(requested)}: {problem}")
        else:
            path = "/".join(parse_name(part) for part in path.split("/"))
            if "\x00" in path:
                raise AccessDenied("Access denied: the path contains a NUL byte.")
            try:
                os.fsencode(path)
            except UnicodeEncodeError:
                raise AccessDenied("Access denied: the path contains a lone surrogate, which no file name can hold; "
                                   "write a byte that is not UTF-8 as \\xHH (for example bad\\xff.txt).") from None
        if path.startswith("~"):
            path = os.path.expanduser(path)
        if not os.path.isabs(path):
            path = self._anchor_relative(path)
        for part in split_components(path):
            if _name_bytes(part) > MAX_NAME_BYTES:
                raise AccessDenied(
                    f"Access denied: a component of {describe(display_path(requested, os.sep))} is longer than "
                    f"{MAX_NAME_BYTES} bytes."
                )
        return os.path.normpath(path)

    def _anchor_relative(self, relative: str) -> str:
        """Anchor a relative path in the first allowed directory where it exists (else the first one)."""
        if len(self.anchors) > 1:
            for anchor in self.anchors:
                candidate = os.path.normpath(os.path.join(anchor.path, relative))
                parts = anchor.parts_of(candidate)
                if parts is None:
                    continue
                probe = SandboxedPath(relative, anchor, parts, self.anchors, anchor.path)
                if probe.exists():
                    return candidate
        return os.path.join(self.anchors[0].path, relative)


def _close_roots(roots: list[Root]) -> None:
    for root in roots:
        root.close()


__all__ = ["MAX_NAME_BYTES", "MAX_PATH_CHARS", "Location", "Sandbox", "SandboxedPath"]
