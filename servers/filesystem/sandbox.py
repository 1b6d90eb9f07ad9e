"""The path policy: which paths the server may touch, decided on resolved paths.

A requested path is made absolute (relative paths are anchored in an allowed
root), checked for NUL bytes and length, resolved with every symbolic link
followed (for a path that does not exist yet, its nearest existing ancestor is
resolved and the rest appended), and only then compared, component by
component, with the resolved roots. `/root_evil` is therefore never inside
`/root`, and a link inside a root that points elsewhere never passes.

Checking a path and then opening it leaves a window in which a directory could
be swapped for a symbolic link, so `SandboxedPath` also checks where an opened
descriptor really lives (`verify_fd`) and file operations open directories
once and work relative to that descriptor.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import AccessDenied, describe
from .uris import path_from_file_uri

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


def is_within(path: Path, roots: Iterable[Path]) -> bool:
    """True when `path` equals or lies below one of `roots` (component-wise, not by string prefix)."""
    return any(path == root or path.is_relative_to(root) for root in roots)


def fd_location(fd: int) -> Path | None:
    """Where an open descriptor really points, from /proc (None where /proc is unavailable)."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return Path(target) if target.startswith("/") else None


@dataclass(frozen=True)
class SandboxedPath:
    """A path that passed the policy: `path` is absolute and symlink-resolved."""

    requested: str
    path: Path
    roots: tuple[Path, ...]

    @property
    def label(self) -> str:
        """The requested path, quoted for messages."""
        return describe(self.requested)

    @property
    def is_root(self) -> bool:
        """True when this path is one of the allowed roots itself."""
        return self.path in self.roots

    def exists(self) -> bool:
        """True when something (even a dangling link) is at the path now."""
        return os.path.lexists(self.path)

    def verify_fd(self, fd: int, expected: Path | None = None) -> None:
        """Refuse a descriptor that ended up outside the roots (a link swapped in after the check)."""
        location = fd_location(fd)
        if location is not None:
            inside = is_within(location, self.roots)
        else:
            opened, named = os.fstat(fd), os.stat(expected or self.path)
            inside = (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)
        if not inside:
            raise AccessDenied(
                f"Access denied: {self.label} changed while it was being opened and now leads "
                "outside the allowed directories."
            )

    @contextmanager
    def open_directory(self, directory: Path | None = None) -> Iterator[int]:
        """Open `directory` (default: the parent of this path) and verify where it really is."""
        target = self.path.parent if directory is None else directory
        try:
            fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise AccessDenied(f"Parent directory of {self.label} does not exist.") from None
        except NotADirectoryError:
            raise AccessDenied(f"A parent of {self.label} is not a directory.") from None
        try:
            self.verify_fd(fd, target)
            yield fd
        finally:
            os.close(fd)


class Sandbox:
    """The allowed roots and the check every requested path goes through."""

    def __init__(self, roots: Iterable[str | os.PathLike[str]]) -> None:
        resolved: list[Path] = []
        for root in roots:
            real = Path(os.path.realpath(os.path.expanduser(os.fspath(root))))
            if not real.is_dir():
                raise ValueError(f"Allowed directory does not exist or is not a directory: {root}")
            resolved.append(real)
        if not resolved:
            raise ValueError("At least one allowed directory is required.")
        self.roots: tuple[Path, ...] = tuple(dict.fromkeys(resolved))

    @classmethod
    def _of_resolved(cls, roots: Iterable[Path]) -> Sandbox:
        sandbox = cls.__new__(cls)
        sandbox.roots = tuple(dict.fromkeys(roots))
        return sandbox

    def narrowed(self, client_dirs: Iterable[str]) -> Sandbox:
        """The intersection of these roots with directories offered by the client.

        A client directory inside a root is allowed as is; a root inside a client
        directory stays as it is; anything else is ignored. The command-line roots
        are the outer bound: narrowing never widens access.
        """
        allowed: list[Path] = []
        for client_dir in client_dirs:
            if "\x00" in client_dir:
                continue
            real = Path(os.path.realpath(client_dir))
            if not real.is_dir():
                continue
            for root in self.roots:
                if real.is_relative_to(root):
                    allowed.append(real)
                elif root.is_relative_to(real):
                    allowed.append(root)
        return Sandbox._of_resolved(allowed)

    def contains(self, path: Path) -> bool:
        """True when an already resolved path lies within the roots."""
        return is_within(path, self.roots)

    def resolve(self, requested: str, *, follow_final: bool = True) -> SandboxedPath:
        """Check `requested` against the policy and return its resolved form.

        With `follow_final=False` a final symbolic link is kept as the entry itself
        (for moving the link rather than its target); its target must still be inside.
        """
        candidate = self._absolute(requested)
        if follow_final:
            real = Path(os.path.realpath(candidate))
        else:
            head, name = os.path.split(candidate.rstrip("/") or "/")
            if name in ("", ".", ".."):
                real = Path(os.path.realpath(candidate))
            else:
                real = Path(os.path.realpath(head or "/")) / name
        if not self.contains(real) or not self.contains(Path(os.path.realpath(real))):
            raise self._denial(requested, candidate)
        return SandboxedPath(requested=requested, path=real, roots=self.roots)

    def _absolute(self, requested: str) -> str:
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
        if not self.roots:
            raise AccessDenied(
                "Access denied: no allowed directories (the client's roots do not overlap the server's directories)."
            )
        path = requested
        if path.startswith("file://"):
            path = path_from_file_uri(path) or path
        if path.startswith("~"):
            path = os.path.expanduser(path)
        if not os.path.isabs(path):
            path = str(self._anchor(path))
        for part in path.split("/"):
            if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
                raise AccessDenied(
                    f"Access denied: a component of {describe(requested)} is longer than {MAX_NAME_BYTES} bytes."
                )
        return path

    def _anchor(self, relative: str) -> Path:
        """Anchor a relative path in the first root where it exists (else the first root)."""
        for root in self.roots:
            if os.path.lexists(root / relative):
                return root / relative
        return self.roots[0] / relative

    def _denial(self, requested: str, candidate: str) -> AccessDenied:
        allowed = ", ".join(str(root) for root in self.roots)
        if self.contains(Path(os.path.normpath(candidate))):
            return AccessDenied(
                f"Access denied: {describe(requested)} leads through a symbolic link to a location "
                f"outside the allowed directories ({allowed})."
            )
        return AccessDenied(f"Access denied: {describe(requested)} is outside the allowed directories ({allowed}).")
