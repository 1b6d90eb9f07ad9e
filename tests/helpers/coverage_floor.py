"""The coverage floor bin/test enforces: read coverage's JSON report, name every module below its floor.

Floors: at least 90% of the lines of `mcp_kit` and `servers` together, and no single module under 75%
(modules for another operating system excepted, see PLATFORM_ONLY).
Usage: python tests/helpers/coverage_floor.py coverage.json [--report-only]   (exit 1 when a floor is missed,
unless --report-only). Not a pytest module: it reads the data the whole run produced.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

TOTAL_FLOOR = 90.0
MODULE_FLOOR = 75.0
PACKAGES = ("mcp_kit", "servers")
# Modules that only run on another operating system: reported, but held to no floor elsewhere (their
# tests run where they can: CI on that system). Main has the Windows filesystem seam since its merge.
PLATFORM_ONLY = {"servers.filesystem.native.windows": "win32"}
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class ModuleCoverage:
    """Covered and measured lines of one module."""

    name: str
    covered: int
    statements: int

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.statements if self.statements else 100.0


def module_name(path: str) -> str:
    """`mcp_kit/_transports/http.py` -> `mcp_kit._transports.http` (paths may be absolute)."""
    relative = Path(path)
    if relative.is_absolute():
        relative = relative.relative_to(ROOT) if relative.is_relative_to(ROOT) else relative
    parts = list(relative.with_suffix("").parts)
    for index, part in enumerate(parts):
        if part in PACKAGES:
            return ".".join(parts[index:])
    return ".".join(parts)


def read_modules(report: dict) -> list[ModuleCoverage]:
    """Every measured module of our packages, from coverage's JSON report."""
    modules = []
    for path, data in report["files"].items():
        name = module_name(path)
        if name.split(".")[0] not in PACKAGES or PLATFORM_ONLY.get(name, sys.platform) != sys.platform:
            continue
        summary = data["summary"]
        modules.append(ModuleCoverage(name, summary["covered_lines"], summary["num_statements"]))
    return sorted(modules, key=lambda m: m.name)


def shortfalls(modules: list[ModuleCoverage]) -> tuple[float, list[ModuleCoverage]]:
    """The combined percentage, and the modules under MODULE_FLOOR."""
    covered = sum(m.covered for m in modules)
    statements = sum(m.statements for m in modules)
    total = 100.0 * covered / statements if statements else 0.0
    return total, [m for m in modules if m.statements and m.percent < MODULE_FLOOR]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="coverage's JSON report (coverage json -o FILE)")
    parser.add_argument("--report-only", action="store_true", help="print, but do not fail (partial runs)")
    args = parser.parse_args(argv)
    modules = read_modules(json.loads(args.report.read_text(encoding="utf-8")))
    if not modules:
        print("coverage floor: no data for mcp_kit or servers (was COVERAGE_PROCESS_START set?)", file=sys.stderr)
        return 0 if args.report_only else 1
    total, weak = shortfalls(modules)
    lines = sum(m.statements for m in modules)
    print(f"coverage: {total:.1f}% of {lines} lines in {' and '.join(PACKAGES)}, pytest and its subprocesses combined "
          f"(floor {TOTAL_FLOOR:.0f}%; every module at least {MODULE_FLOOR:.0f}%)")
    for module in sorted(modules, key=lambda m: m.percent)[:5]:
        print(f"  weakest: {module.name} {module.percent:.1f}% ({module.statements - module.covered} of "
              f"{module.statements} lines not run)")
    failed = total < TOTAL_FLOOR or bool(weak)
    if total < TOTAL_FLOOR:
        print(f"coverage floor missed: {total:.1f}% < {TOTAL_FLOOR:.0f}% overall", file=sys.stderr)
    for module in weak:
        print(f"coverage floor missed: {module.name} {module.percent:.1f}% < {MODULE_FLOOR:.0f}%", file=sys.stderr)
    if failed and args.report_only:
        print("(partial run: the floor is not enforced)", file=sys.stderr)
    return 1 if failed and not args.report_only else 0


if __name__ == "__main__":
    sys.exit(main())
