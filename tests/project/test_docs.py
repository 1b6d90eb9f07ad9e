"""The docs speak of the code as it is: no README, docs page or module docstring cites an issue number.

History lives in CHANGELOG.md and in git; a reader of the docs or a module should not need the tracker.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ISSUE = re.compile(r"\bissues #?\d+(?:,? (?:and )?#?\d+)+|\bissue[ -]?#?\d+", re.IGNORECASE)
DOCS = ["README.md", "CHANGELOG.md", "bench/README.md", "conformance/README.md", *[
    str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").glob("*.md"))]]
CODE = ("mcp_kit", "servers", "tests", "bench", "examples", "demo")


def issue_mentions(text: str) -> list[str]:
    return [match.group(0) for match in ISSUE.finditer(text)]


@pytest.mark.parametrize("doc", DOCS)
def test_no_doc_cites_an_issue_number(doc: str) -> None:
    path = ROOT / doc
    if not path.exists():
        pytest.skip(f"{doc} does not exist")
    lines = [f"{doc}:{number}: {line.strip()[:120]}" for number, line in
             enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if issue_mentions(line)]
    assert lines == []


def test_no_module_docstring_cites_an_issue_number() -> None:
    found = []
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "node_modules" in path.parts or ".venvs" in path.parts:
                continue
            docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            found += [f"{path.relative_to(ROOT)}: {mention}" for mention in issue_mentions(docstring)]
    assert found == []


def test_the_check_finds_what_it_looks_for() -> None:
    assert issue_mentions("as issue 19 said; see issues 8 and 19; issue #12; Issue12") == [
        "issue 19", "issues 8 and 19", "issue #12", "Issue12"]
    assert issue_mentions("the AS issues 600 s tokens") == []
