"""Glob patterns used by search_files and excludePatterns."""

from __future__ import annotations

import pytest

from servers.filesystem.globmatch import GlobPattern

CASES = [
    ("*.py", "a.py", True),
    ("*.py", "deep/dir/a.py", True),  # no slash: matched against the name
    ("*.py", "a.pyc", False),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/x/a.py", False),
    ("src/**/*.py", "src/a.py", True),
    ("src/**/*.py", "src/x/y/a.py", True),
    ("**/*.md", "README.md", True),
    ("**", "any/thing", True),
    ("*.{js,ts}", "x.ts", True),
    ("*.{js,ts}", "x.rs", False),
    ("file?.txt", "file1.txt", True),
    ("file?.txt", "file10.txt", False),
    ("[ab]*.txt", "b1.txt", True),
    ("[!ab]*.txt", "b1.txt", False),
    (".env*", ".env.local", True),
    ("a+b(c).txt", "a+b(c).txt", True),
    ("./docs/*.md", "docs/x.md", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), CASES)
def test_glob_pattern(pattern: str, path: str, expected: bool) -> None:
    assert GlobPattern(pattern).matches(path) is expected
