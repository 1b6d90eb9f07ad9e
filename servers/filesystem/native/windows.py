"""Windows: directories as handles that pin them, every opened handle checked for where it really is.

Windows has no `openat`, so operations name paths; what makes those paths trustworthy is that
every directory on the way is held open by a handle that does not share delete access: while
the walk holds it, nobody can rename, delete or replace that directory. Each handle is opened
with `FILE_FLAG_OPEN_REPARSE_POINT`, so a symbolic link, junction or mount point is opened as
itself and refused (its attributes say `REPARSE_POINT`), never followed. What a handle really
names is read back with `GetFinalPathNameByHandleW` and must be exactly the requested entry of
the pinned parent: an 8.3 short name (`PROGRA~1`) reaching `Program Files`, or any other alias,
is refused. Names that only Windows can misread are refused before anything is opened
(`winpaths.py`).

Imported only where `sys.platform == "win32"` (see `native/__init__.py`); the rules it applies
are pure functions in `winpaths.py`, tested on every system. Must not import the sandbox or
the operations.
"""

from __future__ import annotations

import errno
import msvcrt
import os
import stat
import sys
from collections.abc import Iterator

from . import winpaths
from .base import Directory, EntryRefused, LinkEncountered, NotRegularFile

assert sys.platform == "win32"  # tells type checkers this module is Windows-only

import ctypes  # noqa: E402
from ctypes import wintypes  # noqa: E402

FOLLOWS_LINKS = False  # links and junctions are refused, never followed

GENERIC_READ = 0x80000000
GENERIC_WRITE = 0x40000000
FILE_READ_ATTRIBUTES = 0x80
FILE_LIST_DIRECTORY = 0x1
FILE_SHARE_READ = 0x1
FILE_SHARE_WRITE = 0x2
FILE_SHARE_DELETE = 0x4
OPEN_EXISTING = 3
CREATE_NEW = 1
FILE_ATTRIBUTE_DIRECTORY = 0x10
FILE_ATTRIBUTE_REPARSE_POINT = 0x400
FILE_ATTRIBUTE_NORMAL = 0x80
FILE_FLAG_BACKUP_SEMANTICS = 0x02000000
FILE_FLAG_OPEN_REPARSE_POINT = 0x00200000
FILE_TYPE_DISK = 0x1
INVALID_HANDLE_VALUE = wintypes.HANDLE(-1).value
PIN_SHARE = FILE_SHARE_READ | FILE_SHARE_WRITE  # no FILE_SHARE_DELETE: the directory cannot move while held


class _ByHandleFileInformation(ctypes.Structure):
    _fields_ = [
        ("dwFileAttributes", wintypes.DWORD),
        ("ftCreationTime", wintypes.FILETIME),
        ("ftLastAccessTime", wintypes.FILETIME),
        ("ftLastWriteTime", wintypes.FILETIME),
        ("dwVolumeSerialNumber", wintypes.DWORD),
        ("nFileSizeHigh", wintypes.DWORD),
        ("nFileSizeLow", wintypes.DWORD),
        ("nNumberOfLinks", wintypes.DWORD),
        ("nFileIndexHigh", wintypes.DWORD),
        ("nFileIndexLow", wintypes.DWORD),
    ]


_kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
_CreateFileW = _kernel32.CreateFileW
_CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, wintypes.LPVOID, wintypes.DWORD,
                         wintypes.DWORD, wintypes.HANDLE]
_CreateFileW.restype = wintypes.HANDLE
_CloseHandle = _kernel32.CloseHandle
_CloseHandle.argtypes = [wintypes.HANDLE]
_CloseHandle.restype = wintypes.BOOL
_GetFinalPathNameByHandleW = _kernel32.GetFinalPathNameByHandleW
_GetFinalPathNameByHandleW.argtypes = [wintypes.HANDLE, wintypes.LPWSTR, wintypes.DWORD, wintypes.DWORD]
_GetFinalPathNameByHandleW.restype = wintypes.DWORD
_GetFileInformationByHandle = _kernel32.GetFileInformationByHandle
_GetFileInformationByHandle.argtypes = [wintypes.HANDLE, ctypes.POINTER(_ByHandleFileInformation)]
_GetFileInformationByHandle.restype = wintypes.BOOL
_GetFileType = _kernel32.GetFileType
_GetFileType.argtypes = [wintypes.HANDLE]
_GetFileType.restype = wintypes.DWORD


def _error(name: str) -> OSError:
    code = ctypes.get_last_error()
    error = ctypes.WinError(code)
    error.filename = name
    return error


def _create(path: str, access: int, share: int, disposition: int, flags: int) -> int:
    handle = _CreateFileW(path, access, share, None, disposition, flags, None)
    if handle is None or handle == INVALID_HANDLE_VALUE:
        raise _error(path)
    return int(handle)


def _close(handle: int) -> None:
    _CloseHandle(handle)


def final_path(handle: int) -> str:
    """Where an open handle really is (`\\\\?\\C:\\...`), whatever name was used to open it."""
    size = 512
    while True:
        buffer = ctypes.create_unicode_buffer(size)
        length = _GetFinalPathNameByHandleW(handle, buffer, size, 0)
        if length == 0:
            raise _error("<handle>")
        if length < size:
            return buffer.value
        size = length + 1


def _information(handle: int) -> _ByHandleFileInformation:
    info = _ByHandleFileInformation()
    if not _GetFileInformationByHandle(handle, ctypes.byref(info)):
        raise _error("<handle>")
    return info


def _identity(info: _ByHandleFileInformation) -> tuple[int, int, int]:
    return info.dwVolumeSerialNumber, info.nFileIndexHigh, info.nFileIndexLow


def _check_name(name: str) -> None:
    problem = winpaths.component_problem(name)
    if problem:
        raise EntryRefused(problem)


class HandleDirectory:
    """A directory pinned by a handle (no delete sharing), with the final path it was verified at."""

    __slots__ = ("_handle", "_final", "_identity")

    def __init__(self, handle: int, final: str) -> None:
        self._handle = handle
        self._final = final
        self._identity = _identity(_information(handle))

    @property
    def path(self) -> str:
        return winpaths.plain_final_path(self._final)

    def _child(self, name: str) -> str:
        _check_name(name)
        return os.path.join(self.path, name)

    def _verify_child(self, handle: int, name: str) -> _ByHandleFileInformation:
        """Refuse a handle that is not exactly the entry `name` of this directory, or that is a reparse point."""
        problem = winpaths.final_path_is_child(final_path(handle), self._final, name)
        if problem:
            raise EntryRefused(problem)
        info = _information(handle)
        if info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT:
            raise LinkEncountered(errno.ELOOP, "is a link, junction or mount point", name)
        return info

    def _open_entry(self, name: str, access: int, share: int, disposition: int = OPEN_EXISTING,
                    flags: int = 0) -> tuple[int, _ByHandleFileInformation]:
        handle = _create(self._child(name), access, share, disposition,
                         flags | FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        try:
            return handle, self._verify_child(handle, name)
        except BaseException:
            _close(handle)
            raise

    def reopen(self) -> HandleDirectory:
        handle = _create(self._final, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES, PIN_SHARE, OPEN_EXISTING,
                         FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        try:
            again = HandleDirectory(handle, final_path(handle))
        except BaseException:
            _close(handle)
            raise
        if again._identity != self._identity:
            again.close()
            raise EntryRefused(f"{self.path!r} was replaced since it was opened")
        return again

    def close(self) -> None:
        if self._handle:
            handle, self._handle = self._handle, 0
            _close(handle)

    def stat_self(self) -> os.stat_result:
        return os.stat(self.path, follow_symlinks=False)  # pinned: the path names this very directory

    def lstat(self, name: str) -> os.stat_result:
        handle, _ = self._open_entry(name, FILE_READ_ATTRIBUTES, PIN_SHARE | FILE_SHARE_DELETE)
        fd = msvcrt.open_osfhandle(handle, os.O_RDONLY)
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)

    def readlink(self, name: str) -> str:
        raise LinkEncountered(errno.ELOOP, "links are not followed on Windows", name)

    def open_directory(self, name: str) -> HandleDirectory:
        handle, info = self._open_entry(name, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES, PIN_SHARE)
        if not info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY:
            _close(handle)
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", name)
        try:
            return HandleDirectory(handle, final_path(handle))
        except BaseException:
            _close(handle)
            raise

    def open_file(self, name: str) -> int:
        handle, info = self._open_entry(name, GENERIC_READ, PIN_SHARE | FILE_SHARE_DELETE)
        if info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY:
            _close(handle)
            raise NotRegularFile(stat.S_IFDIR)
        if _GetFileType(handle) != FILE_TYPE_DISK:
            _close(handle)
            raise NotRegularFile(stat.S_IFCHR)
        return msvcrt.open_osfhandle(handle, os.O_RDONLY | os.O_BINARY)

    def create_exclusive(self, name: str) -> int:
        handle, _ = self._open_entry(name, GENERIC_WRITE, 0, CREATE_NEW, FILE_ATTRIBUTE_NORMAL)
        return msvcrt.open_osfhandle(handle, os.O_WRONLY | os.O_BINARY)

    def make_directory(self, name: str) -> None:
        os.mkdir(self._child(name))  # an existing link or junction at `name` makes this fail, never followed

    def replace(self, name: str, target: Directory, target_name: str) -> None:
        os.replace(self._child(name), _pinned(target)._child(target_name))

    def rename(self, name: str, target: Directory, target_name: str) -> None:
        os.rename(self._child(name), _pinned(target)._child(target_name))

    def hard_link(self, name: str, target: Directory, target_name: str) -> None:
        os.link(self._child(name), _pinned(target)._child(target_name))

    def unlink(self, name: str) -> None:
        os.unlink(self._child(name))

    def scan(self) -> Iterator[os.DirEntry[str]]:
        with os.scandir(self.path) as entries:
            yield from entries


def _pinned(directory: Directory) -> HandleDirectory:
    if not isinstance(directory, HandleDirectory):
        raise TypeError("both directories must come from the same platform layer")
    return directory


def open_root(path: str) -> HandleDirectory:
    """Open an allowed directory (chosen by whoever started the server), refusing a link or junction in its place."""
    handle = _create(path, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES, PIN_SHARE, OPEN_EXISTING,
                     FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
    try:
        if _information(handle).dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT:
            raise LinkEncountered(errno.ELOOP, "an allowed directory must not be a link or junction", path)
        return HandleDirectory(handle, final_path(handle))
    except BaseException:
        _close(handle)
        raise


def set_mode(fd: int, mode: int) -> None:
    """Windows keeps permissions in ACLs, inherited from the directory: nothing to copy."""


def keep_owner(fd: int, st: os.stat_result) -> None:
    """Ownership follows the directory's ACLs on Windows: nothing to copy."""
