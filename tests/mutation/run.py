"""Mutation testing of the security- and protocol-critical modules, with cosmic-ray (run by bin/mutate).

For each target: copy the working tree into `.mutation/<name>/tree` (cosmic-ray rewrites the modules
in place, so the real tree is never touched, and the copy is what the test subprocesses import
through PYTHONPATH: servers started by the tests run the mutant too), check that the target's bounded
test selection passes unmutated, create every mutant of its modules, mark as skipped the ones inside
type annotations (never evaluated under `from __future__ import annotations`, so equivalent by
construction) and, for a target with a focus, the ones outside the functions that hold its decision
(a whole run of such a target takes well over an hour on 2 cores; `--every-function` lifts the focus),
run the selection against each mutant (`-x`: the first failing test kills it), and print the survivors
with their diffs. The session database stays in `.mutation/<name>.sqlite` for `cr-report` or `cr-html`.

Usage: bin/mutate [--every-function] [jsonrpc|dispatcher|http_security|sandbox ...]   (default: all four)
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / ".mutation"
BIN = Path(sys.executable).parent
MUTANT_TIMEOUT = 90.0  # seconds per mutant; a hang counts as killed


@dataclass(frozen=True)
class Target:
    """The modules to mutate, the tests that must notice, and (optionally) the functions to focus on.

    `focus` maps a module to the functions (by name, as cosmic-ray names the definition a mutant is
    in) whose mutants are run; a module missing from `focus`, or a target without one, is mutated whole.
    """

    modules: tuple[str, ...]
    tests: tuple[str, ...]
    focus: dict[str, frozenset[str]] = field(default_factory=dict)


SANDBOX_TESTS = (
    "tests/servers/filesystem/test_filesystem_sandbox.py",
    "tests/servers/filesystem/test_filesystem_near_misses.py",
    "tests/servers/filesystem/test_filesystem_race_attacks.py",
    "tests/servers/filesystem/test_filesystem_platforms.py",
)

TARGETS = {
    "jsonrpc": Target(
        ("mcp_kit/_protocol/jsonrpc.py",), ("tests/protocol/test_jsonrpc.py", "tests/protocol/test_dispatcher.py")
    ),
    # Focused on what decides that every request is answered exactly once, and cancellation: starting and
    # tracking a request, running it, cancelling it, batches. Left out: outbound requests, closing.
    "dispatcher": Target(
        ("mcp_kit/_protocol/dispatcher.py",),
        (
            "tests/protocol/test_dispatcher_cancellation.py",
            "tests/protocol/test_dispatcher.py",
            "tests/protocol/test_dispatcher_cancel_race.py",
        ),
        focus={
            "mcp_kit/_protocol/dispatcher.py": frozenset(
                {
                    "feed",
                    "_track",
                    "_start",
                    "_run",
                    "_finished",
                    "_answer",
                    "_send_quietly",
                    "_substitute",
                    "_notification",
                    "_batch",
                    "_run_batch",
                    "_answer_batch",
                    "cancel",
                    "was_cancelled",
                    "stop",
                    "wait_idle",
                }
            )
        },
    ),
    "http_security": Target(("mcp_kit/_transports/http_security.py",), ("tests/transports/test_http_security.py",)),
    # The containment decision: which allowed directory a path is under (anchors), the walk that
    # never leaves it (resolver), the descriptor calls that never follow a link (native/posix), and
    # the policy in front of them (sandbox). Focused on the functions that decide containment.
    "sandbox": Target(
        (
            "servers/filesystem/anchors.py",
            "servers/filesystem/resolver.py",
            "servers/filesystem/native/posix.py",
            "servers/filesystem/sandbox.py",
        ),
        SANDBOX_TESTS,
        focus={
            "servers/filesystem/anchors.py": frozenset({"split_components", "parts_of", "anchor_of"}),
            "servers/filesystem/resolver.py": frozenset({"locate", "hop"}),
            "servers/filesystem/native/posix.py": frozenset({"open_directory", "_is_link", "open_file"}),
            "servers/filesystem/sandbox.py": frozenset(),
        },
    ),
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


def skip_mutants(session: Path, tree: Path, focus: dict[str, frozenset[str]]) -> tuple[int, int]:
    """Mark as skipped the mutants that only change a type annotation, and those outside the focus.

    Returns (annotation mutants, out-of-focus mutants)."""
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    spans: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    in_annotations = out_of_focus = 0
    with use_db(str(session)) as db:
        for item in list(db.pending_work_items):
            mutation = item.mutations[0]
            module = Path(mutation.module_path).as_posix()
            if module not in spans:
                spans[module] = annotation_spans((tree / module).read_text(encoding="utf-8"))
            start = (mutation.start_pos[0], mutation.start_pos[1])
            if any(low <= start < high for low, high in spans[module]):
                reason, in_annotations = "type annotation: not evaluated at run time", in_annotations + 1
            elif module in focus and mutation.definition_name not in focus[module]:
                reason, out_of_focus = "outside the target's focus functions", out_of_focus + 1
            else:
                continue
            db.set_result(item.job_id, WorkResult(output=reason, worker_outcome=WorkerOutcome.SKIPPED))
    return in_annotations, out_of_focus


def run_target(name: str, target: Target, every_function: bool = False) -> dict[str, int]:
    """Mutate one target's modules; print and write its survivors; return the counts."""
    work = OUT / name
    tree = work / "tree"
    copy_tree(tree)
    config, session = work / "config.toml", OUT / f"{name}.sqlite"
    session.unlink(missing_ok=True)
    test_command = " ".join([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                             "-o", "timeout=60", *target.tests])
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(list(target.modules))}\n"
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
    in_annotations, out_of_focus = skip_mutants(session, tree, {} if every_function else target.focus)
    cosmic_ray("exec", str(config), str(session))
    counts, survivors = summarise(session, env, tree)
    counts["skipped (annotations)"] = in_annotations
    if out_of_focus:
        counts["skipped (outside the focus)"] = out_of_focus
    minutes = (time.monotonic() - started) / 60
    report = [f"{name}: {' '.join(target.modules)}, tests {' '.join(target.tests)}",
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
            survivors.append(
                f"  survived: {mutation['module_path']}:{line_no}:{column} in {mutation['definition_name']}"
                f" ({mutation['operator_name']}, occurrence {mutation['occurrence']})"
            )
            diff = [row for row in (result.get("diff") or "").splitlines() if row.startswith(("+", "-"))
                    and not row.startswith(("+++", "---"))]
            survivors += [f"      {row}" for row in diff]
    return counts, survivors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Mutation testing of the critical modules (cosmic-ray).")
    parser.add_argument("--every-function", action="store_true",
                        help="mutate every function of a focused target's modules, not only its focus")
    parser.add_argument(
        "targets", nargs="*", metavar="TARGET", help=f"one or more of: {', '.join(TARGETS)} (default: all)"
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.targets if name not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; choose from {', '.join(TARGETS)}")
    OUT.mkdir(exist_ok=True)
    totals: dict[str, dict[str, int]] = {}
    for name in args.targets or list(TARGETS):
        totals[name] = run_target(name, TARGETS[name], args.every_function)
    print("\nsummary")
    for name, counts in totals.items():
        print(f"  {name}: " + ", ".join(f"{count} {kind}" for kind, count in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
