"""Changing files: atomic writes, directory creation and no-clobber moves.

Every change names entries of directories the walk opened and verified, never a path
string. Writes go to a fresh temporary file created exclusively (no link followed) in the
target's own directory, get the old file's permissions, are flushed to disk and only then
renamed over the target. A failure at any step removes the temporary file and leaves the old
content untouched, and a link planted at the target name is replaced, never followed.
Directories are created one component at a time, each opened without following links
before the next is made inside it.

Must not import the tools.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat

from .. import native
from ..errors import AccessDenied, FilesystemError
from ..resolver import Location
from ..sandbox import SandboxedPath


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


DEFAULT_FILE_MODE = 0o666 & ~_current_umask()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _existing_entry(directory: native.Directory, name: str, label: str) -> os.stat_result | None:
    try:
        st = directory.lstat(name)
    except FileNotFoundError:
        return None
    if native.is_link_mode(st):
        raise AccessDenied(f"Access denied: {label} became a symbolic link while being written; nothing was written.")
    if not stat.S_ISREG(st.st_mode):
        raise FilesystemError(f"{label} exists and is not a regular file; nothing was written.")
    return st


def _entry_of(sp: SandboxedPath, location: Location, role: str = "") -> str:
    """The final name of a location that must be an entry of an existing directory."""
    if location.rest == ():
        if sp.is_root or len(location.chain) == 1:
            raise FilesystemError(f"{role}{sp.label} is an allowed directory itself, not a file.")
        raise FilesystemError(f"{role}{sp.label} is a directory, not a file.")
    if location.name is None:
        raise FilesystemError(f"Parent directory of {role.lower()}{sp.label} does not exist.")
    return location.name


def atomic_write(sp: SandboxedPath, data: bytes) -> bool:
    """Replace (or create) the file at `sp` with `data` atomically; True when it was created."""
    if sp.is_root:
        raise FilesystemError(f"{sp.label} is an allowed directory itself, not a file.")
    with sp.locate() as location:
        name = _entry_of(sp, location)
        directory = location.directory
        old = _existing_entry(directory, name, sp.label)
        temp_name = f".{name[:100]}.{secrets.token_hex(6)}.tmp"
        try:
            fd = directory.create_exclusive(temp_name)
        except native.LinkEncountered:
            raise AccessDenied(
                f"Access denied: {sp.label}: a link appeared at the temporary name; nothing was written."
            ) from None
        try:
            try:
                _write_all(fd, data)
                native.set_mode(fd, stat.S_IMODE(old.st_mode) if old else DEFAULT_FILE_MODE)
                if old is not None:
                    native.keep_owner(fd, old)
                os.fsync(fd)
            finally:
                os.close(fd)
            directory.replace(temp_name, directory, name)
        except BaseException:
            _remove_quietly(directory, temp_name)
            raise
    return old is None


def _remove_quietly(directory: native.Directory, name: str) -> None:
    try:
        directory.unlink(name)
    except OSError:
        pass


def create_directory(sp: SandboxedPath) -> bool:
    """Create a directory and its missing parents; True when something was created."""
    with sp.locate(create=True) as location:
        return location.created


def move(source: SandboxedPath, destination: SandboxedPath) -> None:
    """Move or rename `source` to `destination`, failing when the destination exists."""
    if source.is_root:
        raise FilesystemError(f"{source.label} is an allowed directory itself and cannot be moved.")
    with source.locate(follow_final=False) as src, destination.locate(follow_final=False) as dst:
        if src.rest == ():
            raise FilesystemError(f"{source.label} is an allowed directory itself and cannot be moved.")
        if src.name is None:
            raise FilesystemError(f"No such file or directory: {source.label}")
        try:
            src_stat = src.directory.lstat(src.name)
        except FileNotFoundError:
            raise FilesystemError(f"No such file or directory: {source.label}") from None
        if dst.rest == () or (dst.name is not None and _exists_at(dst.directory, dst.name)):
            raise FilesystemError(f"Destination {destination.label} already exists; nothing was moved.")
        dst_name = _entry_of(destination, dst, "Destination ")
        is_directory = stat.S_ISDIR(src_stat.st_mode)
        if is_directory and any(os.path.samestat(src_stat, held.stat_self()) for held in dst.chain):
            raise FilesystemError(f"Cannot move {source.label} into itself.")
        if not is_directory and _link_then_unlink(src.directory, src.name, dst.directory, dst_name):
            return
        try:
            src.directory.rename(src.name, dst.directory, dst_name)
        except OSError as exc:
            if exc.errno == errno.EXDEV:
                raise FilesystemError(
                    f"Cannot move {source.label} to {destination.label}: they are on different file systems."
                ) from None
            if exc.errno == errno.EINVAL and is_directory:
                raise FilesystemError(f"Cannot move {source.label} into itself.") from None
            raise


def _link_then_unlink(src_dir: native.Directory, src_name: str, dst_dir: native.Directory, dst_name: str) -> bool:
    """Move a non-directory without ever replacing an existing destination (a link is no-clobber)."""
    try:
        src_dir.hard_link(src_name, dst_dir, dst_name)
    except FileExistsError:
        raise FilesystemError("Destination already exists; nothing was moved.") from None
    except OSError:
        return False  # hard links unsupported here (other file system, FUSE...): fall back to rename
    src_dir.unlink(src_name)
    return True


def _exists_at(directory: native.Directory, name: str) -> bool:
    try:
        directory.lstat(name)
    except FileNotFoundError:
        return False
    return True
