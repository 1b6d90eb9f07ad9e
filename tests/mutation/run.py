"""Mutation testing of the security- and protocol-critical modules, with cosmic-ray (run by bin/mutate).

For each target module: copy the working tree into `.mutation/<name>/tree` (cosmic-ray rewrites the
module in place, so the real tree is never touched, and the copy is what the test subprocesses import
through PYTHONPATH: servers started by the tests run the mutant too), check that the module's bounded
test selection passes unmutated, create every mutant, mark as skipped the ones inside type annotations
(never evaluated under `from __future__ import annotations`, so equivalent by construction), run the
selection against each mutant (`-x`: the first failing test kills it), and print the survivors with their
diffs. The session database stays in `.mutation/<name>.sqlite` for `cr-report` or `cr-html`.

Usage: bin/mutate [jsonrpc|dispatcher|http_security|sandbox ...]   (default: all four, one after another)
Must not import mcp_kit or servers: it only runs cosmic-ray and pytest on a copy.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / ".mutation"
BIN = Path(sys.executable).parent
MUTANT_TIMEOUT = 90.0  # seconds per mutant; a hang counts as killed


@dataclass(frozen=True)
class Target:
    """A module to mutate and the tests that must notice."""

    module: str
    tests: tuple[str, ...]


TARGETS = {
    "jsonrpc": Target("mcp_kit/jsonrpc.py", ("tests/test_jsonrpc.py", "tests/test_dispatcher.py")),
    "dispatcher": Target("mcp_kit/dispatcher.py", ("tests/test_dispatcher_cancellation.py", "tests/test_dispatcher.py")),
    "http_security": Target("mcp_kit/transports/http_security.py", ("tests/test_http_security.py",)),
    "sandbox": Target("servers/filesystem/sandbox.py", (
        "tests/filesystem/test_filesystem_sandbox.py", "tests/filesystem/test_filesystem_near_misses.py",
        "tests/filesystem/test_filesystem_race_attacks.py")),
}


def copy_tree(destination: Path) -> None:
    """The working tree as it is (tracked and new files, not ignored ones) into `destination`."""
    if destination.exists():
        shutil.rmtree(destination)
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions of every annotation in `source`: parameters, returns, annotated names."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        annotations: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
            annotations = [a.annotation for a in every if a is not None] + [node.returns]
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        for annotation in filter(None, annotations):
            spans.append(((annotation.lineno, annotation.col_offset),
                          (annotation.end_lineno or annotation.lineno, annotation.end_col_offset or 0)))
    return spans


def skip_annotation_mutants(session: Path, module_source: str) -> int:
    """Mark the mutants that only change a type annotation as skipped; returns how many."""
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    spans = annotation_spans(module_source)
    skipped = 0
    with use_db(str(session)) as db:
        for item in list(db.pending_work_items):
            mutation = item.mutations[0]
            start = (mutation.start_pos[0], mutation.start_pos[1])
            if any(low <= start < high for low, high in spans):
                db.set_result(item.job_id, WorkResult(output="type annotation: not evaluated at run time",
                                                      worker_outcome=WorkerOutcome.SKIPPED))
                skipped += 1
    return skipped


def run_target(name: str, target: Target) -> dict[str, int]:
    """Mutate one module; print and write its survivors; return the counts."""
    work = OUT / name
    tree = work / "tree"
    copy_tree(tree)
    config, session = work / "config.toml", OUT / f"{name}.sqlite"
    session.unlink(missing_ok=True)
    test_command = " ".join([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                             "-o", "timeout=60", *target.tests])
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(target.module)}\n"
        f"timeout = {MUTANT_TIMEOUT}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(test_command)}\n\n"
        "[cosmic-ray.distributor]\n"
        'name = "local"\n', encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("COVERAGE_", "PYTEST_ADDOPTS"))}
    env["PYTHONPATH"] = str(tree)

    def cosmic_ray(*args: str) -> None:
        subprocess.run([str(BIN / "cosmic-ray"), *args], cwd=tree, env=env, check=True)

    started = time.monotonic()
    cosmic_ray("baseline", str(config))  # the selection must pass before any mutant is judged
    cosmic_ray("init", str(config), str(session))
    skipped = skip_annotation_mutants(session, (tree / target.module).read_text(encoding="utf-8"))
    cosmic_ray("exec", str(config), str(session))
    counts, survivors = summarise(session, env, tree)
    counts["skipped (annotations)"] = skipped
    minutes = (time.monotonic() - started) / 60
    report = [f"{name}: {target.module}, tests {' '.join(target.tests)}",
              "  " + ", ".join(f"{count} {kind}" for kind, count in counts.items()) + f"; {minutes:.1f} min"]
    report += survivors
    (OUT / f"{name}-survivors.txt").write_text("\n".join(report) + "\n", encoding="utf-8")
    print("\n".join(report), flush=True)
    return counts


def summarise(session: Path, env: dict[str, str], tree: Path) -> tuple[dict[str, int], list[str]]:
    """Counts by outcome and a readable entry (position, operator, diff) for each survivor."""
    dump = subprocess.run([str(BIN / "cosmic-ray"), "dump", str(session)], cwd=tree, env=env, check=True,
                          capture_output=True, text=True).stdout
    counts = {"mutants": 0, "killed": 0, "survived": 0, "incompetent": 0}
    survivors = []
    for line in dump.splitlines():
        item, result = json.loads(line)
        if result is None or result["worker_outcome"] == "skipped":
            continue
        counts["mutants"] += 1
        outcome = result.get("test_outcome") or result["worker_outcome"]
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome == "survived":
            mutation = item["mutations"][0]
            line_no, column = mutation["start_pos"]
            survivors.append(f"  survived: {mutation['module_path']}:{line_no}:{column} in {mutation['definition_name']}"
                             f" ({mutation['operator_name']}, occurrence {mutation['occurrence']})")
            diff = [row for row in (result.get("diff") or "").splitlines() if row.startswith(("+", "-"))
                    and not row.startswith(("+++", "---"))]
            survivors += [f"      {row}" for row in diff]
    return counts, survivors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Mutation testing of the critical modules (cosmic-ray).")
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"one or more of: {', '.join(TARGETS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.targets if name not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; choose from {', '.join(TARGETS)}")
    OUT.mkdir(exist_ok=True)
    totals: dict[str, dict[str, int]] = {}
    for name in args.targets or list(TARGETS):
        totals[name] = run_target(name, TARGETS[name])
    print("\nsummary")
    for name, counts in totals.items():
        print(f"  {name}: " + ", ".join(f"{count} {kind}" for kind, count in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
