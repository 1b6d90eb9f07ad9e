"""Summarise a conformance output directory: one line per non-passing check.

Usage: python conformance/summarize.py RESULTS_DIR

The suite writes RESULTS_DIR/server-<scenario>-<timestamp>/checks.json (a JSON
list of checks with id, status, errorMessage). This prints every FAILURE and
WARNING as `scenario | check id | status | message`, then a count line.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

NOT_PASSING = ("FAILURE", "WARNING")
DIR_PATTERN = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def scenario_name(directory: Path) -> str:
    """Scenario name from a result directory name."""
    match = DIR_PATTERN.match(directory.name)
    return match.group("scenario") if match else directory.name


def summarize(results_dir: Path) -> tuple[list[str], int, int]:
    """Return (lines, scenarios seen, scenarios not passing)."""
    lines: list[str] = []
    scenarios = 0
    bad_scenarios = 0
    for checks_file in sorted(results_dir.glob("*/checks.json")):
        scenarios += 1
        scenario = scenario_name(checks_file.parent)
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        bad = [c for c in checks if c.get("status") in NOT_PASSING]
        if bad:
            bad_scenarios += 1
        for check in bad:
            message = (check.get("errorMessage") or check.get("description") or "").replace("\n", " ")
            lines.append(f"  {scenario} | {check.get('id')} | {check.get('status')} | {message[:400]}")
    return lines, scenarios, bad_scenarios


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lines, scenarios, bad = summarize(Path(argv[1]))
    for line in lines:
        print(line)
    print(f"  {scenarios} scenarios with results, {bad} with failures or warnings")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
