"""The Windows path rules, as pure functions of strings (tested on every system through `ntpath`).

Windows paths can say things POSIX paths cannot, and each is a way around a sandbox that
compares names: a drive-relative path (`C:foo`, relative to that drive's current directory),
UNC and device paths (`\\\\server\\share`, `\\\\?\\C:\\...`, `\\\\.\\PhysicalDrive0`), alternate
data streams (`notes.txt:hidden`), reserved device names (`CON`, `NUL`, `COM1`, `LPT1`, with
any extension and trailing spaces or dots), names Windows silently trims (`secret.txt.`,
`secret.txt `), and 8.3 short names (`PROGRA~1`) that alias a long name. Requests using any
of these are refused; a short name is only known for what it is once opened, so
`short_name_problem` compares the requested name with the name the file system reports for
the handle. Final paths (what `GetFinalPathNameByHandleW` returns, `\\\\?\\C:\\...`) are compared
with the roots case-insensitively, component by component.

Must not import anything but the standard library (no Windows-only modules).
"""

from __future__ import annotations

import ntpath
import re

RESERVED_DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"}
    | {f"COM{n}" for n in [*"123456789", "\u00b9", "\u00b2", "\u00b3"]}
    | {f"LPT{n}" for n in [*"123456789", "\u00b9", "\u00b2", "\u00b3"]}
)
INVALID_CHARACTERS = re.compile(r'[<>"|?*\x00-\x1f]')
SHORT_NAME = re.compile(r"^[^.~\s]{1,6}~[0-9]{1,6}(\.[^.]{0,3})?$")
DEVICE_PREFIXES = ("\\\\?\\", "\\\\.\\", "\\??\\")


def _backslashed(path: str) -> str:
    return path.replace("/", "\\")


def request_problem(path: str) -> str | None:
    """Why a requested Windows path is refused before anything is opened, or None."""
    text = _backslashed(path)
    if text.startswith(DEVICE_PREFIXES):
        return ("device and namespace paths (\\\\?\\..., \\\\.\\...) are not accepted; "
                "give a plain path such as C:\\dir\\file")
    if text.startswith("\\\\"):
        return "network (UNC) paths (\\\\server\\share\\...) are not accepted"
    drive, rest = ntpath.splitdrive(text)
    if drive and not rest.startswith("\\"):
        return f"drive-relative paths ({drive}file) are not accepted; give the full path ({drive}\\...)"
    if not drive and text.startswith("\\"):
        return "a path starting with \\ has no drive; give the full path (C:\\...)"
    for part in rest.split("\\"):
        if part in ("", ".", ".."):
            continue
        problem = component_problem(part)
        if problem:
            return problem
    return None


def component_problem(name: str) -> str | None:
    """Why a single Windows name is refused, or None."""
    if name in (".", ".."):
        return None
    if ":" in name:
        return f"{name!r} names an alternate data stream (name:stream); only plain file names are accepted"
    if INVALID_CHARACTERS.search(name):
        return f"{name!r} contains a character Windows does not allow in names (< > \" | ? * or a control character)"
    if name != name.rstrip(". "):
        return f"{name!r} ends with a dot or a space, which Windows drops (it would name {name.rstrip('. ')!r})"
    if is_reserved_device_name(name):
        return (f"{name!r} is a reserved device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9), "
                "whatever its extension")
    return None


def is_reserved_device_name(name: str) -> bool:
    """True for CON, NUL, COM1, LPT1... alone or with any extension, and with trailing spaces or dots."""
    stem = name.split(".", 1)[0].rstrip(" ").upper()
    return stem in RESERVED_DEVICE_NAMES or name.rstrip(". ").upper() in RESERVED_DEVICE_NAMES


def looks_like_short_name(name: str) -> bool:
    """True for names in the 8.3 short form Windows generates (`PROGRA~1`, `LONGFI~2.TXT`)."""
    return SHORT_NAME.match(name) is not None


def same_name(a: str, b: str) -> bool:
    """Whether two names are the same to NTFS (which ignores case)."""
    return a.casefold() == b.casefold()


def short_name_problem(requested: str, on_disk: str) -> str | None:
    """Refuse a name that reached an entry whose real name differs (an 8.3 alias or similar)."""
    if same_name(requested, on_disk):
        return None
    return f"{requested!r} is another name (an 8.3 short name) for {on_disk!r}; use the full name"


def plain_final_path(final: str) -> str:
    """A final path as `GetFinalPathNameByHandleW` gives it (`\\\\?\\C:\\x`, `\\\\?\\UNC\\srv\\share`), as a plain
    path."""
    text = _backslashed(final)
    if text.upper().startswith("\\\\?\\UNC\\"):
        return "\\\\" + text[8:]
    if text.startswith("\\\\?\\"):
        return text[4:]
    return text


def final_path_components(final: str) -> list[str]:
    drive, rest = ntpath.splitdrive(plain_final_path(final))
    return [drive.casefold(), *(part.casefold() for part in rest.split("\\") if part)]


def final_path_inside(final: str, root: str) -> bool:
    """True when the final path `final` is `root` or below it (case-insensitive, by component)."""
    mine, base = final_path_components(final), final_path_components(root)
    return len(mine) >= len(base) and mine[: len(base)] == base


def final_path_is_child(final: str, parent: str, name: str) -> str | None:
    """Why the handle opened as `name` inside `parent` is not that entry, or None when it is."""
    mine, base = final_path_components(final), final_path_components(parent)
    if len(mine) != len(base) + 1 or mine[: len(base)] != base:
        return f"{name!r} led somewhere else than {parent!r} (a link, junction or mount point); refused"
    on_disk = ntpath.basename(plain_final_path(final).rstrip("\\"))
    return short_name_problem(name, on_disk)
