"""Text edits: find `oldText`, replace it with `newText`, show a unified diff.

Each edit must match exactly one place. An exact match is tried first; failing
that, a line-by-line match that ignores differences in whitespace, in which
case `newText` is re-indented to the indentation found in the file. No match
and several matches are both errors that say what to do.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..errors import FilesystemError


class EditError(FilesystemError):
    """An edit could not be applied (not found, ambiguous, empty)."""


@dataclass(frozen=True)
class Edit:
    """One replacement: `old_text` must occur exactly once."""

    old_text: str
    new_text: str


@dataclass(frozen=True)
class EditPlan:
    """The result of applying edits in memory: new text and the diff to show."""

    original: str
    updated: str
    diff: str
    crlf: bool

    @property
    def changed(self) -> bool:
        """True when the edits change the file."""
        return self.original != self.updated

    def encoded(self) -> bytes:
        """The new content, with the file's original line endings restored."""
        text = self.updated.replace("\n", "\r\n") if self.crlf else self.updated
        return text.encode("utf-8")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _squash(line: str) -> str:
    return " ".join(line.split())


def _lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines


def _preview(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    return repr(first if len(first) <= 80 else first[:79] + "…")


def _line_numbers(content: str, needle: str) -> list[int]:
    numbers, start = [], content.find(needle)
    while start >= 0:
        numbers.append(content.count("\n", 0, start) + 1)
        start = content.find(needle, start + 1)
    return numbers


def _ambiguous(number: int, label: str, lines: list[int]) -> EditError:
    where = ", ".join(str(n) for n in lines[:10])
    return EditError(
        f"Edit #{number}: oldText matches {len(lines)} places in {label} (lines {where}); "
        "include more surrounding lines so it matches exactly one. Nothing was changed."
    )


def _reindent(new_lines: list[str], old_lines: list[str], file_lines: list[str]) -> list[str]:
    """Give each new line the file's indentation of the matched line at the same position."""
    result = []
    for index, line in enumerate(new_lines):
        pair = min(index, len(old_lines) - 1)
        old_base, file_base = _indent(old_lines[pair]), _indent(file_lines[pair])
        if not line.strip():
            result.append("")
        elif line.startswith(old_base):
            result.append(file_base + line[len(old_base) :])
        else:
            result.append(file_base + line.lstrip())
    return result


def apply_edit(content: str, edit: Edit, number: int, label: str) -> str:
    """Apply one edit to LF-normalised `content`."""
    old = edit.old_text.replace("\r\n", "\n")
    new = edit.new_text.replace("\r\n", "\n")
    if not old.strip():
        raise EditError(f"Edit #{number}: oldText is empty; give the text to replace. Nothing was changed.")
    exact = _line_numbers(content, old)
    if len(exact) == 1:
        return content.replace(old, new, 1)
    if len(exact) > 1:
        raise _ambiguous(number, label, exact)
    old_lines, content_lines = _lines_of(old), content.split("\n")
    wanted = [_squash(line) for line in old_lines]
    span = len(old_lines)
    starts = [
        i
        for i in range(len(content_lines) - span + 1)
        if all(_squash(content_lines[i + j]) == wanted[j] for j in range(span))
    ]
    if not starts:
        raise EditError(
            f"Edit #{number}: oldText was not found in {label}, neither exactly nor ignoring whitespace "
            f"(it starts with {_preview(old)}). Read the file again and copy the text exactly. Nothing was changed."
        )
    if len(starts) > 1:
        raise _ambiguous(number, label, [i + 1 for i in starts])
    first = starts[0]
    replacement = _reindent(_lines_of(new) if new else [], old_lines, content_lines[first : first + span])
    content_lines[first : first + span] = replacement
    return "\n".join(content_lines)


def _diff_lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified_diff(original: str, updated: str, name: str) -> str:
    """A unified diff between two texts, with `original` / `modified` as file dates."""
    return "".join(
        difflib.unified_diff(
            _diff_lines(original), _diff_lines(updated), fromfile=name, tofile=name,
            fromfiledate="original", tofiledate="modified",
        )
    )


def fenced(diff: str) -> str:
    """Wrap a diff in a ```diff block with more backticks than it contains."""
    ticks = 3
    while "`" * ticks in diff:
        ticks += 1
    fence = "`" * ticks
    return f"{fence}diff\n{diff}{fence}\n"


def plan_edits(text: str, edits: list[Edit], name: str, label: str) -> EditPlan:
    """Apply `edits` in order to `text` in memory and describe the change."""
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    original = text.replace("\r\n", "\n")
    updated = original
    for number, edit in enumerate(edits, start=1):
        updated = apply_edit(updated, edit, number, label)
    return EditPlan(original, updated, unified_diff(original, updated, name), crlf)
