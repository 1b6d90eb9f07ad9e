"""conformance/summarize.py: a leg's summary shows the scenarios its expected-failures file lists as not
applicable, never with the failure mark, and keeps every other failure as one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.support import ROOT

CONSOLE = """noise
=== SUMMARY ===
✓ ping: 1 passed, 0 failed
✗ dns-rebinding-protection: 1 passed, 1 failed
{extra}
Total: 2 passed, {failed} failed
"""


def run(tmp_path: Path, extra: str = "", failed: int = 1) -> str:
    (tmp_path / "console.log").write_text(CONSOLE.format(extra=extra, failed=failed), encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "conformance" / "summarize.py"), str(tmp_path), "--expected",
                           str(ROOT / "conformance" / "expected-failures-stdio.yml")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_expected_scenario_is_shown_as_not_applicable(tmp_path: Path) -> None:
    out = run(tmp_path)
    assert "✗" not in out
    assert "- dns-rebinding-protection: not applicable to this leg (expected-failures-stdio.yml says why)" in out
    assert "Total: 2 passed, 1 not applicable" in out


def test_any_other_failure_keeps_its_mark_and_the_total_its_count(tmp_path: Path) -> None:
    out = run(tmp_path, extra="✗ tools-list: 0 passed, 1 failed", failed=2)
    assert "✗ tools-list: 0 passed, 1 failed" in out and "Total: 2 passed, 2 failed" in out
