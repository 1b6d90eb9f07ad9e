"""Glob patterns for search_files and excludePatterns: `*`, `?`, `[...]`, `{a,b}` and `**`.

`*` stays within one path component, `**` spans any number of them, and dot
files are matched like any other. A pattern without a `/` is matched against
the entry's name (so `*.py` finds Python files at any depth); a pattern with a
`/` is matched against the path relative to the directory searched.
"""

from __future__ import annotations

import re


def _split_braces(body: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in body:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += char == "{"
        depth -= char == "}"
        current.append(char)
    parts.append("".join(current))
    return parts


def _closing(pattern: str, start: int, opener: str, closer: str) -> int:
    depth = 0
    for index in range(start, len(pattern)):
        if pattern[index] == opener:
            depth += 1
        elif pattern[index] == closer:
            depth -= 1
            if depth == 0:
                return index
    return -1


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/") and (i + 2 == n or pattern[i + 2] == "/"):
            out.append("(?:[^/]*(?:/[^/]*)*/)?" if i + 2 < n else ".*")
            i += 3
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out.append(f"[{'^/' if negate else ''}{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        elif char == "{" and (end := _closing(pattern, i, "{", "}")) > 0:
            out.append("(?:" + "|".join(_translate(part) for part in _split_braces(pattern[i + 1 : end])) + ")")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


class GlobPattern:
    """One compiled glob pattern."""

    def __init__(self, pattern: str) -> None:
        cleaned = pattern.strip().removeprefix("./").lstrip("/")
        self.pattern = pattern
        self.by_name = "/" not in cleaned.rstrip("/")
        self._regex = re.compile("(?s:" + _translate(cleaned.rstrip("/") or "*") + r")\Z")

    def matches(self, relative_path: str) -> bool:
        """True when the entry at `relative_path` (relative, `/`-separated) matches."""
        target = relative_path.rsplit("/", 1)[-1] if self.by_name else relative_path
        return self._regex.match(target) is not None


def any_match(patterns: list[GlobPattern], relative_path: str) -> bool:
    """True when at least one of `patterns` matches."""
    return any(pattern.matches(relative_path) for pattern in patterns)
