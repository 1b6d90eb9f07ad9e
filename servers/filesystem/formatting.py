"""Text renderings of walk results, in the formats of the reference filesystem server.

Names are shown in their display form (see `names.py`), one entry a line.
"""

from __future__ import annotations

from .operations import Entry, Walk

UNITS = ("B", "KB", "MB", "GB", "TB")


def format_size(size: int) -> str:
    """A size in bytes as `512 B` or `1.50 KB` (powers of 1024)."""
    value, unit = float(size), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value /= 1024
        unit += 1
    return f"{size} B" if unit == 0 else f"{value:.2f} {UNITS[unit]}"


def _tag(entry: Entry) -> str:
    if entry.kind in ("outside", "link"):
        return "[LINK]"
    return "[DIR]" if entry.kind == "directory" else "[FILE]"


def _name(entry: Entry) -> str:
    if entry.kind == "outside":
        return f"{entry.display} (symbolic link to a location outside the allowed directories)"
    if entry.kind == "link":
        return f"{entry.display} (link or junction; not followed)"
    return entry.display


def _with_note(lines: list[str], walk: Walk) -> str:
    note = walk.note()
    return "\n".join(lines + ([note] if note else []))


def listing_text(walk: Walk) -> str:
    """`[DIR] name` / `[FILE] name` lines."""
    return _with_note([f"{_tag(e)} {_name(e)}" for e in walk.entries], walk)


def sized_listing_text(walk: Walk, sort_by: str) -> str:
    """Entries with sizes, sorted by name or by size (largest first), then totals."""
    entries = list(walk.entries)
    if sort_by == "size":
        entries.sort(key=lambda e: (-e.size if e.kind == "file" else 1, e.name))
    lines = [
        f"{_tag(e)} {_name(e):<30} {format_size(e.size) if e.kind == 'file' else '':>10}".rstrip()
        for e in entries
    ]
    files = [e for e in walk.entries if e.kind == "file"]
    directories = [e for e in walk.entries if e.kind == "directory"]
    lines += [
        "",
        f"Total: {len(files)} files, {len(directories)} directories",
        f"Combined size: {format_size(sum(e.size for e in files))}",
    ]
    return _with_note(lines, walk)
