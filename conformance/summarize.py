"""Summarise a conformance output directory: one line per non-passing check.

Usage: python conformance/summarize.py RESULTS_DIR [--extensions-executed] [--expected FILE]

The suite writes RESULTS_DIR/server-<scenario>-<timestamp>/checks.json (a JSON
list of checks with id, status, errorMessage). This prints every FAILURE and
WARNING as `scenario | check id | status | message`, then a count line.

With --expected FILE (the leg's expected-failures file) it first prints the suite's own summary from
RESULTS_DIR/console.log, with each scenario FILE lists shown as not applicable to this leg instead of
as a failure (the file says why), and marks those scenarios' checks the same way.

With --extensions-executed it also lists every SKIPPED check of a tasks-* or
sep-2640-* scenario and exits 1 if there is any (or if a FAILURE or WARNING was
seen, or no extension scenario ran at all). The one exception is
tasks-status-notifications, which the harness skips whatever the server does
(its single check awaits a rewrite against subscriptions/listen): it is listed
as "skipped by the harness" and tolerated.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

NOT_PASSING = ("FAILURE", "WARNING")
EXTENSION_PREFIXES = ("tasks-", "sep-2640-")
HARNESS_SKIPS = frozenset({"tasks-status-notifications"})
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


def extension_skips(results_dir: Path) -> tuple[list[str], int, list[str]]:
    """(unexpected SKIPPED checks of extension scenarios, extension scenarios seen, harness skips)."""
    unexpected: list[str] = []
    tolerated: list[str] = []
    seen = 0
    for checks_file in sorted(results_dir.glob("*/checks.json")):
        scenario = scenario_name(checks_file.parent)
        if not scenario.startswith(EXTENSION_PREFIXES):
            continue
        seen += 1
        for check in json.loads(checks_file.read_text(encoding="utf-8")):
            if check.get("status") != "SKIPPED":
                continue
            message = (check.get("errorMessage") or check.get("description") or "").replace("\n", " ")[:200]
            line = f"  {scenario} | {check.get('id')} | SKIPPED | {message}"
            (tolerated if scenario in HARNESS_SKIPS else unexpected).append(line)
    return unexpected, seen, tolerated


def expected_scenarios(path: Path) -> list[str]:
    """The scenario names an expected-failures file lists (`  - name` lines)."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("- ") and not line.lstrip().startswith("#"):
            found.append(line.strip()[2:].split("#")[0].strip())
    return found


def console_summary(results_dir: Path, expected: list[str], source: str) -> list[str]:
    """The suite's `=== SUMMARY ===` block, expected scenarios shown as not applicable rather than failed."""
    console = results_dir / "console.log"
    text = console.read_text(encoding="utf-8", errors="replace") if console.exists() else ""
    block = text[text.find("=== SUMMARY ==="):] if "=== SUMMARY ===" in text else ""
    shown, not_applicable = [], 0
    for line in block.splitlines():
        match = re.match(r"^✗ (?P<scenario>[\w-]+): (?P<passed>\d+) passed, (?P<failed>\d+) failed$", line)
        if match and match.group("scenario") in expected:
            not_applicable += int(match.group("failed"))
            line = f"- {match.group('scenario')}: not applicable to this leg ({source} says why)"
        total = re.match(r"^Total: (?P<passed>\d+) passed, (?P<failed>\d+) failed$", line)
        if total and int(total.group("failed")) == not_applicable:
            line = f"Total: {total.group('passed')} passed, {not_applicable} not applicable"
        shown.append(line)
    return shown


def main(argv: list[str]) -> int:
    expected: list[str] = []
    source = ""
    if "--expected" in argv:
        at = argv.index("--expected")
        source = argv[at + 1]
        expected = expected_scenarios(Path(source))
        argv = argv[:at] + argv[at + 2:]
    args = [a for a in argv[1:] if a != "--extensions-executed"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if source:
        for line in console_summary(Path(args[0]), expected, Path(source).name):
            print(line)
    lines, scenarios, bad = summarize(Path(args[0]))
    for line in lines:
        scenario = line.strip().split(" | ", 1)[0]
        if scenario in expected:
            line += f" [not applicable to this leg: {Path(source).name}]"
        print(line)
    named = sum(1 for line in lines if line.strip().split(" | ", 1)[0] in expected) if expected else 0
    suffix = f" ({named} checks of scenarios not applicable to this leg)" if named else ""
    print(f"  {scenarios} scenarios with results, {bad} with failures or warnings{suffix}")
    if "--extensions-executed" not in argv:
        return 0
    unexpected, seen, tolerated = extension_skips(Path(args[0]))
    for line in tolerated:
        print(line + " (skipped by the harness itself)")
    for line in unexpected:
        print(line)
    print(f"  {seen} extension scenarios (tasks-*, sep-2640-*) ran, {len(unexpected)} unexpected skipped checks")
    return 1 if unexpected or bad or seen == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
